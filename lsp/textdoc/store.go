package textdoc

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Store maps URIs to the current snapshot of each open document. It is safe
// for concurrent use; the zero value is an empty store ready to use.
type Store struct {
	// mu is held for writing while a change is applied, not just while the
	// map is updated, so that two notifications for the same document can
	// never both start from the same snapshot and lose one of the edits.
	// Applying is fast enough (tens of microseconds on large buffers) that
	// serializing all documents behind one lock costs nothing noticeable.
	mu   sync.RWMutex
	docs map[string]*Document
	logs map[string][]logEntry
}

// logEntry records the edits from one version of a document to the next.
type logEntry struct {
	from  int32
	edits []Edit
}

// maxLog bounds the edits remembered per document. A result computed for
// a version older than the log reaches is dropped rather than moved.
const maxLog = 512

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{docs: make(map[string]*Document)}
}

// Open records text as the document at uri, replacing any snapshot already
// there whatever its version: didOpen carries the full text, so it is always
// the truth.
func (s *Store) Open(uri string, version int32, text string) *Document {
	d := New(uri, version, text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs == nil {
		s.docs = make(map[string]*Document)
	}
	s.docs[uri] = d
	delete(s.logs, uri)
	return d
}

// Change applies a didChange notification to the document at uri and
// returns the new snapshot. On error the stored snapshot is left as it was;
// the error wraps ErrNotOpen, ErrVersion or ErrOutOfRange and names the URI,
// the versions and the offending change and position.
func (s *Store) Change(uri string, version int32, changes []Change, enc Encoding) (*Document, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	if !ok {
		return nil, fmt.Errorf("change %s to version %d: %w", uri, version, ErrNotOpen)
	}
	nd, err := d.Apply(version, changes, enc)
	if err != nil {
		return nil, fmt.Errorf("change %s from version %d to %d: %w", uri, d.version, version, err)
	}
	s.docs[uri] = nd
	if s.logs == nil {
		s.logs = make(map[string][]logEntry)
	}
	log := append(s.logs[uri], logEntry{from: d.version, edits: nd.edits})
	if len(log) > maxLog {
		log = append(log[:0:0], log[len(log)-maxLog/2:]...)
	}
	s.logs[uri] = log
	return nd, nil
}

// EditsBetween returns the byte edits that turned version since of the
// document at uri into version upTo, in order, each in the offsets of the
// text the previous ones produced. upTo is the version a result is being
// moved to, not necessarily the current one: an edit that arrived after
// it must not be applied before its time. It reports false when the store
// does not know those edits (the document was reopened, or a version is
// too old or unknown).
func (s *Store) EditsBetween(uri string, since, upTo int32) ([]Edit, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.docs[uri]
	if !ok {
		return nil, false
	}
	if since == upTo {
		return nil, true
	}
	log := s.logs[uri]
	for i, e := range log {
		if e.from != since {
			continue
		}
		var out []Edit
		for _, e := range log[i:] {
			if e.from == upTo {
				return out, true
			}
			out = append(out, e.edits...)
		}
		return out, upTo == d.version
	}
	return nil, false
}

// Close forgets the document at uri. Closing a document that is not open
// does nothing, since there is nothing useful to report to a client.
func (s *Store) Close(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.docs, uri)
	delete(s.logs, uri)
}

// Get returns the current snapshot of the document at uri.
func (s *Store) Get(uri string) (*Document, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.docs[uri]
	return d, ok
}

// All returns the current snapshots of all open documents, sorted by URI so
// that callers iterating them behave deterministically.
func (s *Store) All() []*Document {
	s.mu.RLock()
	all := make([]*Document, 0, len(s.docs))
	for _, d := range s.docs {
		all = append(all, d)
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b *Document) int { return strings.Compare(a.uri, b.uri) })
	return all
}
