package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/fsnotify/fsnotify"
	bolterrors "go.etcd.io/bbolt/errors"
)

// IndexDir is the name of the bleve index inside the data directory.
const IndexDir = "errors.bleve"

// Timing of the bleve lock. Scorch holds an exclusive flock on root.bolt for
// as long as the index is open. bbolt polls that flock every 50ms until its
// Timeout (which scorch takes from the runtime config key "bolt_timeout"),
// which would make a lookup that arrives while another process writes wait
// up to 50ms after the writer is done. So every attempt is a single try,
// and open polls itself, from minLockPoll up to maxLockPoll; the total wait
// bounds how long a caller can be held up by another process.
const (
	defaultLockWait = 2 * time.Second
	minLockPoll     = time.Millisecond
	maxLockPoll     = 8 * time.Millisecond
	// defaultTurnWait bounds the wait for the other operations of the same
	// Search. Each of them is itself bounded by the lock wait, so this only
	// trips if the process floods the index with work.
	defaultTurnWait = 10 * time.Second
	// queueReserve is kept back from a ctx deadline so that, after giving up
	// on the lock, there is still time to park the docs in sqlite.
	queueReserve = 250 * time.Millisecond
	// flushChunk bounds one batch of queued entries, so a long backlog does
	// not build one huge in-memory batch.
	flushChunk = 2000
	// analyzerName is the analyzer every text field uses (see newMapping).
	analyzerName = "kodyls_error"
)

// ErrBusy means the search index could not be opened within the wait,
// because another process held it (or, rarely, because this process had too
// many operations in flight). Search and Count return it; Index and Delete
// park their work in the queue instead.
var ErrBusy = errors.New("search index is busy")

// Doc is one document of the search index. Fields are free text, for example
// "message", "code", "language", "template" and "root_cause".
type Doc struct {
	ID     string
	Fields map[string]string
}

// Hit is one search result with its relevance score and stored fields.
type Hit struct {
	ID     string
	Score  float64
	Fields map[string]string
}

// Search is the bleve index at <dir>/errors.bleve. It does not hold the
// index open between operations: each operation opens it with a short lock
// timeout, works and closes it, so other kodyls processes can use it too.
// Operations of one Search take turns, because a second open from the same
// process would conflict on the same flock. Time spent waiting for a turn
// counts against the lock wait: a caller whose wait has run out by the time
// its turn comes makes a single attempt, so callers queued behind an
// operation that found the index busy fail (or queue) promptly instead of
// each waiting in full.
type Search struct {
	store *Store
	dir   string
	path  string

	// The waits are fields rather than constants so tests can change them.
	lockWait  time.Duration
	turnWait  time.Duration
	applyWait time.Duration
	// flushErr, when set, makes applying the queue fail as a full disk
	// would; tests use it.
	flushErr error

	// turn is a one-slot semaphore rather than a sync.Mutex so that waiting
	// for it can give up at the deadline or when ctx is done.
	turn chan struct{}

	// queued counts changes this Search parked in the queue, for tests
	// and diagnostics.
	queued atomic.Int64
	// ownQueued counts the changes this process parked in the queue since
	// it last applied it (0: none), so that its next read tries to apply
	// them (see applyDue). A flush clears it only if no change was parked
	// meanwhile.
	ownQueued atomic.Int64

	// log receives what the user should know about the index (rebuilds).
	log *slog.Logger

	// token names the marker this Search leaves in WantDir.
	token string
	// fill, when set, writes every document the index should hold; it is
	// how a new, deleted or damaged index is rebuilt from sqlite.
	fill func(ctx context.Context, idx bleve.Index) (int, error)

	// created: OpenSearch found no index and this Search made the new one
	// (another process may have made it first).
	created bool
	// rebuilt: this Search replaced a missing or damaged index, which the
	// next fill is to report.
	rebuilt bool
	// repaired is why this Search last replaced a damaged index (nil:
	// never); `kodyls doctor` reports it.
	repaired error
	// opened is the root.bolt of the index open just opened, to tell a
	// damaged index from one another process has rebuilt since.
	opened os.FileInfo

	// The holder's state (see Hold), used only with the turn.
	held       bleve.Index
	holdIdle   time.Duration // 0: open the index per operation
	lastUse    time.Time
	idleTimer  *time.Timer
	yieldUntil time.Time
	heldFile   os.FileInfo // the root.bolt held reads (see dropIfReplaced)
	lastApply  time.Time   // the last read that failed to apply the queue
	closed     bool
	watcher    *fsnotify.Watcher
	stop       chan struct{}
	watchDone  chan struct{}
}

// OpenSearch prepares the index in dir, creating it if it does not exist.
// The queue of writes that could not reach the index lives in store.
func OpenSearch(store *Store, dir string) (*Search, error) {
	return openSearch(store, dir, nil)
}

// openSearch is OpenSearch reporting a rebuild to log (nil: slog's
// default logger).
func openSearch(store *Store, dir string, log *slog.Logger) (*Search, error) {
	if store == nil {
		return nil, errors.New("open search index: nil store")
	}
	x := &Search{
		store:     store,
		dir:       dir,
		path:      filepath.Join(dir, IndexDir),
		lockWait:  defaultLockWait,
		turnWait:  defaultTurnWait,
		applyWait: applyWait,
		turn:      make(chan struct{}, 1),
		token:     newToken(),
		log:       log,
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open search index: create data dir %s: %w", dir, err)
	}
	if err := x.ensure(); err != nil {
		return nil, err
	}
	return x, nil
}

// SetLogger sets where x reports rebuilding the index; slog's default
// logger otherwise.
func (x *Search) SetLogger(l *slog.Logger) { x.log = l }

func (x *Search) logger() *slog.Logger {
	if x.log != nil {
		return x.log
	}
	return slog.Default()
}

// Path is the directory of the bleve index.
func (x *Search) Path() string { return x.path }

// ensure creates the index if it is missing. It builds the index in a
// private temporary directory and renames it into place, because two
// processes running bleve.New on the same path at once would interleave
// their files. rename(2) of a directory onto a non-empty directory fails, so
// exactly one process wins and the others use its index.
func (x *Search) ensure() error {
	meta := filepath.Join(x.path, "index_meta.json")
	if _, err := os.Stat(meta); err == nil {
		return nil
	}
	if fi, err := os.Stat(x.path); err == nil {
		if !fi.IsDir() {
			return x.rebuild(errNotDir)
		}
		if entries, _ := os.ReadDir(x.path); len(entries) > 0 {
			return x.rebuild(errors.New("index_meta.json is missing"))
		}
	}
	won, err := x.create()
	x.created = won
	return err
}

// create builds a new, empty index and renames it into place (see ensure).
// won is false when another process created the index first.
func (x *Search) create() (won bool, err error) {
	meta := filepath.Join(x.path, "index_meta.json")
	x.removeStaleTemps()

	tmp, err := os.MkdirTemp(x.dir, IndexDir+".tmp-")
	if err != nil {
		return false, fmt.Errorf("create search index: %w", err)
	}
	defer os.RemoveAll(tmp)
	build := filepath.Join(tmp, "index")
	m, err := newMapping()
	if err != nil {
		return false, fmt.Errorf("create search index: %w", err)
	}
	var idx bleve.Index
	err = guard(func() (err error) {
		idx, err = bleve.NewUsing(build, m, scorch.Name, scorch.Name, nil)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("create search index: %w", err)
	}
	if err := closeIndex(idx); err != nil {
		return false, fmt.Errorf("create search index: %w", err)
	}
	if err := os.Rename(build, x.path); err != nil {
		if _, statErr := os.Stat(meta); statErr == nil {
			// Another process created the index first; use theirs.
			return false, nil
		}
		if fi, statErr := os.Stat(x.path); statErr == nil && !fi.IsDir() {
			return false, x.notDirError()
		}
		return false, fmt.Errorf("create search index %s: %w", x.path, err)
	}
	return true, nil
}

// removeStaleTemps deletes build directories left behind by a process that
// died while creating the index. Only old ones are removed, so that a build
// in progress in another process is left alone.
func (x *Search) removeStaleTemps() {
	matches, _ := filepath.Glob(filepath.Join(x.dir, IndexDir+".tmp-*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > time.Hour {
			_ = os.RemoveAll(m)
		}
	}
}

// newMapping is the mapping of a new index. Every field is dynamic text,
// stored and included in the composite "_all" field, so a match query
// without a field searches all of them. The analyzer splits on anything that
// is not a letter, digit or underscore: the standard (UAX#29) tokenizer
// would keep "foo.Bar" as one token, so a search for "Bar" would miss it.
func newMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomTokenizer("kodyls_word", map[string]interface{}{
		"type":   regexp.Name,
		"regexp": `[\p{L}\p{N}_]+`,
	}); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if err := m.AddCustomAnalyzer(analyzerName, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     "kodyls_word",
		"token_filters": []string{lowercase.Name},
	}); err != nil {
		return nil, fmt.Errorf("analyzer: %w", err)
	}
	m.DefaultAnalyzer = analyzerName
	return m, nil
}

// op is one pending change to the index, either from a caller or from the
// queue.
type op struct {
	id     string
	fields map[string]string // nil for a delete
	delete bool
}

// Index adds or replaces docs in one batch. If the index stays busy for the
// whole wait, the docs are parked in the sqlite queue and nil is returned:
// the next process to open the index applies them. If ctx ends first, the
// error says so and nothing is queued, since the caller has given up.
func (x *Search) Index(ctx context.Context, docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	ops := make([]op, len(docs))
	for i, d := range docs {
		if d.ID == "" {
			return fmt.Errorf("index: document %d has an empty ID", i)
		}
		f := d.Fields
		if f == nil {
			f = map[string]string{}
		}
		ops[i] = op{id: d.ID, fields: f}
	}
	return x.write(ctx, "index", ops)
}

// Delete removes documents by ID. Like Index, it queues the deletes if the
// index is busy, so that a deleted document cannot come back.
func (x *Search) Delete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	ops := make([]op, len(ids))
	for i, id := range ids {
		if id == "" {
			return fmt.Errorf("delete: ID %d is empty", i)
		}
		ops[i] = op{id: id, delete: true}
	}
	return x.write(ctx, "delete", ops)
}

func (x *Search) write(ctx context.Context, what string, ops []op) error {
	err := x.withMode(ctx, modeWrite, func(idx bleve.Index) error {
		return applyOps(idx, ops)
	})
	if errors.Is(err, ErrBusy) && ctx.Err() == nil {
		if qerr := x.enqueue(ctx, ops); qerr != nil {
			return fmt.Errorf("%s: index busy and queueing failed: %w", what, qerr)
		}
		x.queued.Add(int64(len(ops)))
		x.ownQueued.Add(1)
		slog.Debug("search index busy, queued", "op", what, "docs", len(ops), "path", x.path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Search runs a match query for text over all fields and returns the top k
// hits (k <= 0 means 10) with their stored fields. text is analysed, never
// parsed as query syntax, so raw compiler output is safe to pass. If the
// index stays busy for the whole wait it returns an error wrapping ErrBusy.
func (x *Search) Search(ctx context.Context, text string, k int) ([]Hit, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if k <= 0 {
		k = 10
	}
	var hits []Hit
	err := x.with(ctx, func(idx bleve.Index) error {
		q := bleve.NewMatchQuery(text)
		req := bleve.NewSearchRequestOptions(q, k, 0, false)
		req.Fields = []string{"*"}
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return err
		}
		hits = make([]Hit, 0, len(res.Hits))
		for _, h := range res.Hits {
			f := make(map[string]string, len(h.Fields))
			for name, v := range h.Fields {
				f[name] = fieldString(v)
			}
			hits = append(hits, Hit{ID: h.ID, Score: h.Score, Fields: f})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// fieldString turns a stored field back into text. Fields are indexed as
// single strings, but bleve returns a slice if a name repeats.
func fieldString(v interface{}) string {
	switch t := v.(type) {
	case string:
		return t
	case []interface{}:
		parts := make([]string, len(t))
		for i, p := range t {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, "\n")
	default:
		return fmt.Sprint(v)
	}
}

// Count returns the number of documents in the index, after applying the
// queue.
func (x *Search) Count(ctx context.Context) (uint64, error) {
	var n uint64
	err := x.withMode(ctx, modeWrite, func(idx bleve.Index) error {
		var err error
		n, err = idx.DocCount()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}

// Pending returns how many queued changes are waiting for the index.
func (x *Search) Pending(ctx context.Context) (int, error) {
	var n int
	if err := x.store.Reader().QueryRowContext(ctx, "SELECT count(*) FROM index_queue").Scan(&n); err != nil {
		return 0, fmt.Errorf("pending: %w", err)
	}
	return n, nil
}

// Flush applies queued changes if the index can be opened. It is what every
// other operation does first; it exists on its own for idle-time callers.
func (x *Search) Flush(ctx context.Context) error {
	if err := x.withMode(ctx, modeWrite, func(bleve.Index) error { return nil }); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// TryFlush applies queued changes if the index is free right now, without
// waiting for (or asking) other processes; it returns ErrBusy otherwise,
// and the changes stay queued for whoever reads next. It is what a process
// does after writing to the history, so that no process waits on another
// to write.
func (x *Search) TryFlush(ctx context.Context) error {
	if err := x.withMode(ctx, modeTryWrite, func(bleve.Index) error { return nil }); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// compactDoc is the ID of the empty document Compact adds for the length
// of a merge; it is no history document (it has no docKindField).
const compactDoc = "compact:"

// Compact applies queued changes and merges the index's segments into
// one, which drops the documents deleted from them: until then a deleted
// document's text stays in its segment's file. It waits for the index
// like a write (and fails with ErrBusy when it stays in use).
func (x *Search) Compact(ctx context.Context) error {
	err := x.withMode(ctx, modeWrite, func(idx bleve.Index) error {
		ai, err := idx.Advanced()
		if err != nil {
			return err
		}
		s, ok := ai.(*scorch.Scorch)
		if !ok {
			return nil
		}
		// Scorch merges two segments or more, and only segments written
		// to disk, never rewrites one alone: an empty document makes a
		// second one, and goes once merged.
		if err := idx.Index(compactDoc, map[string]string{}); err != nil {
			return err
		}
		if err := x.settle(ctx, s, false, nil); err != nil {
			return err
		}
		if err := s.ForceMerge(ctx, nil); err != nil {
			return err
		}
		// The files of the merged segments are removed in the background
		// once the snapshots that read them are let go of; a change (the
		// delete, again if need be) has the index look for them.
		nudge := func() error { return idx.Delete(compactDoc) }
		if err := nudge(); err != nil {
			return err
		}
		return x.settle(ctx, s, true, nudge)
	})
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// settle waits, at most settleWait, until every segment of s is written
// to disk, and with merged until they are at most one and their files
// the only segment files left on disk; nudge, if not nil, is called
// every 50 ms meanwhile.
func (x *Search) settle(ctx context.Context, s *scorch.Scorch, merged bool, nudge func() error) error {
	start, nudged := time.Now(), time.Now()
	for {
		m := s.StatsMap()
		mem, _ := m["num_root_memorysegments"].(uint64)
		files, _ := m["num_root_filesegments"].(uint64)
		onDisk, err := x.segmentFiles()
		if err != nil {
			return err
		}
		if mem == 0 && (!merged || files <= 1 && onDisk == files) {
			return nil
		}
		if time.Since(start) > settleWait {
			return fmt.Errorf("the index did not write or merge its segments in %s", settleWait)
		}
		if nudge != nil && time.Since(nudged) > 50*time.Millisecond {
			nudged = time.Now()
			if err := nudge(); err != nil {
				return err
			}
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// settleWait bounds the wait for the index to write and merge segments.
const settleWait = 10 * time.Second

// segmentFiles counts the index's segment files.
func (x *Search) segmentFiles() (uint64, error) {
	ents, err := os.ReadDir(filepath.Join(x.path, "store"))
	if err != nil {
		return 0, err
	}
	n := uint64(0)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".zap") {
			n++
		}
	}
	return n, nil
}

// Warm opens the index for reading ahead of the first lookup (and fills
// it from sqlite if it is new); queued changes are left to the lookups.
func (x *Search) Warm(ctx context.Context) error {
	if err := x.withMode(ctx, modeWarm, func(bleve.Index) error { return nil }); err != nil {
		return fmt.Errorf("open search index: %w", err)
	}
	return nil
}

// mode is how an operation uses the index.
//
// Scorch locks root.bolt with flock: a reader opened read-only takes a
// shared lock, so any number of processes read at once; a writer takes an
// exclusive one. So readers never make each other wait, and writes by a
// process that finds the index in use are parked in the sqlite queue
// instead of waiting: the next reader that can take the index exclusively
// for a moment applies them (at most once per applyEvery, so a process
// writing often cannot make another one's lookups pay for every write).
type mode int

const (
	// modeRead reads through a shared handle, applying the queue first
	// when it is due (see applyDue).
	modeRead mode = iota
	// modeWrite takes the index exclusively, asking holders in other
	// processes to let go and waiting up to the lock wait.
	modeWrite
	// modeTryWrite takes the index exclusively if it is free right now.
	modeTryWrite
	// modeWarm opens the shared handle without applying the queue.
	modeWarm
)

const (
	// applyEvery is how often, at most, a reader stops to apply changes
	// other processes queued: their errors become searchable within it.
	applyEvery = time.Second
	// applyWait bounds how long a reader applying the queue waits for
	// other processes' readers to let go; if they have not, it reads what
	// the index has and tries again after applyEvery.
	applyWait = 50 * time.Millisecond
)

// with runs a read (see modeRead).
func (x *Search) with(ctx context.Context, fn func(idx bleve.Index) error) error {
	return x.withMode(ctx, modeRead, fn)
}

// withMode opens the index (or uses the shared handle Hold keeps open),
// runs fn and, unless holding, closes it. An exclusive operation applies
// the queue before fn, so that changes parked earlier can never overwrite
// the newer ones fn makes; it never keeps the index, so that other
// processes can read. fn may run twice: when it finds the index damaged
// (bleve panicked or failed, and a segment fails its checksum), the index
// is rebuilt from sqlite and fn runs again on the new one.
func (x *Search) withMode(ctx context.Context, m mode, fn func(idx bleve.Index) error) error {
	err := x.withModeOnce(ctx, m, fn)
	var d *damageError
	if !errors.As(err, &d) || !d.inUse || ctx.Err() != nil {
		return err
	}
	if err := x.repair(ctx, d); err != nil {
		return err
	}
	return x.withModeOnce(ctx, m, fn)
}

// repair replaces the index that an operation found damaged (see rebuild).
func (x *Search) repair(ctx context.Context, d *damageError) error {
	start := time.Now()
	if err := x.acquire(ctx, start, start.Add(x.turnWait)); err != nil {
		return err
	}
	defer func() { <-x.turn }()
	x.closeHeld("the index is damaged")
	return x.rebuild(d)
}

// withModeOnce is withMode without the rebuild.
func (x *Search) withModeOnce(ctx context.Context, m mode, fn func(idx bleve.Index) error) (err error) {
	start := time.Now()
	deadline := start.Add(x.lockWait)
	turnDeadline := start.Add(x.turnWait)
	if d, ok := ctx.Deadline(); ok {
		deadline = earliest(deadline, d.Add(-queueReserve))
		turnDeadline = earliest(turnDeadline, d.Add(-queueReserve))
	}
	if err := x.acquire(ctx, start, turnDeadline); err != nil {
		return err
	}
	defer func() { <-x.turn }()

	if m == modeRead {
		if due, ask := x.applyDue(ctx); due {
			x.closeHeld("applying queued changes")
			until := time.Time{} // one try
			if ask {
				until = earliest(deadline, start.Add(x.applyWait))
			}
			idx, err := x.open(ctx, start, until, true)
			if err == nil {
				bolt := x.opened
				err = x.run(idx, bolt, func(idx bleve.Index) error { return x.applyQueue(ctx, idx) })
				if err == nil {
					return x.closing(idx, bolt, fn)
				}
				_ = closeIndex(idx)
				if inUseDamage(err) {
					return err
				}
			}
			if ctx.Err() != nil {
				return fmt.Errorf("open search index: %w", ctx.Err())
			}
			// In use by other readers, or the queue cannot be applied (a
			// full disk, an index this user cannot write): read what the
			// index has, and try again after applyEvery.
			x.lastApply = time.Now()
			if errors.Is(err, ErrBusy) {
				slog.Debug("search index queue not applied yet, in use", "path", x.path)
			} else {
				x.logger().Warn("queued changes not applied to the search index; lookups use it as it is", "path", x.path, "error", err)
			}
		}
		x.dropIfReplaced()
	}
	if m == modeWrite || m == modeTryWrite {
		// Our own shared handle would block our exclusive open.
		x.closeHeld("writing")
		until := deadline
		if m == modeTryWrite {
			until = time.Time{}
		}
		idx, err := x.open(ctx, start, until, true)
		if err != nil {
			if m == modeTryWrite && errors.Is(err, ErrBusy) {
				x.ownQueued.Add(1)
			}
			return err
		}
		return x.exclusively(ctx, idx, x.opened, fn)
	}
	idx, bolt := x.held, x.heldFile
	if idx == nil {
		if idx, err = x.open(ctx, start, deadline, false); err != nil {
			return err
		}
		bolt = x.opened
	}
	if x.holdIdle > 0 && !x.closed {
		err := x.run(idx, bolt, fn)
		if p := (*panicError)(nil); inUseDamage(err) || errors.As(err, &p) {
			// A handle bleve panicked in is not kept.
			if idx == x.held {
				x.closeHeld("the index is damaged")
			} else {
				_ = closeIndex(idx)
			}
			return err
		}
		x.kept(idx)
		return err
	}
	return x.closing(idx, bolt, fn)
}

// exclusively applies the queue to idx, opened exclusively, runs fn and
// closes idx. The caller has the turn.
func (x *Search) exclusively(ctx context.Context, idx bleve.Index, bolt os.FileInfo, fn func(idx bleve.Index) error) error {
	return x.closing(idx, bolt, func(idx bleve.Index) error {
		if err := x.applyQueue(ctx, idx); err != nil {
			return err
		}
		return fn(idx)
	})
}

// run runs fn on idx, which is open; bolt is its root.bolt. A panic of
// bleve comes back as an error. When fn fails, the segments of idx are
// checked: if one is damaged, the error is a damageError that withMode
// repairs.
func (x *Search) run(idx bleve.Index, bolt os.FileInfo, fn func(idx bleve.Index) error) error {
	err := guard(func() error { return fn(idx) })
	if !suspect(err) {
		return err
	}
	if cerr := checkOpen(idx); errors.Is(cerr, errSegmentDamaged) {
		return &damageError{err: fmt.Errorf("%w (%v)", cerr, err), bolt: bolt, inUse: true}
	}
	if p := (*panicError)(nil); errors.As(err, &p) {
		x.logger().Error("the search index library failed on an index whose files are intact", "path", x.path, "panic", fmt.Sprint(p.value))
		slog.Debug("search index panic", "stack", string(p.stack))
	}
	return err
}

// inUseDamage reports whether err is damage found by run.
func inUseDamage(err error) bool {
	var d *damageError
	return errors.As(err, &d) && d.inUse
}

// applyQueue applies the queue to idx, opened exclusively. The caller has
// the turn.
func (x *Search) applyQueue(ctx context.Context, idx bleve.Index) error {
	own := x.ownQueued.Load()
	if err := x.flush(ctx, idx); err != nil {
		return err
	}
	x.ownQueued.CompareAndSwap(own, 0)
	return nil
}

// closing runs fn on idx (see run) and closes it.
func (x *Search) closing(idx bleve.Index, bolt os.FileInfo, fn func(idx bleve.Index) error) (err error) {
	defer func() {
		if cerr := closeIndex(idx); cerr != nil && err == nil {
			err = fmt.Errorf("close search index: %w", cerr)
		}
	}()
	return x.run(idx, bolt, fn)
}

// dropIfReplaced lets go of the held handle when the index on disk is no
// longer the one it reads: another process rebuilt a deleted or damaged
// index and wrote to the new one without asking, since nobody held it.
// The caller has the turn.
func (x *Search) dropIfReplaced() {
	if x.held == nil || x.heldFile == nil {
		return
	}
	if fi, err := os.Stat(x.rootBolt()); err != nil || !os.SameFile(fi, x.heldFile) {
		x.closeHeld("the index was replaced")
	}
}

// applyDue reports whether a read should first apply the queue, and
// whether to ask other processes to let go for it:
//   - changes queued at least applyEvery ago: yes, asking, so that every
//     process's changes become searchable within about applyEvery, while
//     a process writing often makes the others apply its changes about
//     once per applyEvery, not once per write;
//   - changes this process queued: yes, in one try, so that it reads its
//     own writes when nobody else reads at that moment.
//
// After a try that found the index in use, reads do not try again for
// applyEvery. The caller has the turn.
func (x *Search) applyDue(ctx context.Context) (due, ask bool) {
	if time.Since(x.lastApply) < applyEvery {
		return false, false
	}
	var queuedAt int64
	err := x.store.Reader().QueryRowContext(ctx, `SELECT queued_at FROM index_queue ORDER BY id LIMIT 1`).Scan(&queuedAt)
	if err != nil {
		return false, false
	}
	// A time in the future (the clock stepped back) counts as old: the
	// queue must not wait for the clock to catch up.
	if age := time.Since(time.UnixMilli(queuedAt)); age >= applyEvery || age < 0 {
		return true, true
	}
	return x.ownQueued.Load() != 0, false
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// acquire waits for this Search's turn until deadline.
func (x *Search) acquire(ctx context.Context, start, deadline time.Time) error {
	select {
	case x.turn <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case x.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("open search index: %w", ctx.Err())
	case <-t.C:
		return fmt.Errorf("%w: this kodyls process has too many search index operations in flight (waited %s); try again shortly",
			ErrBusy, time.Since(start).Round(time.Millisecond))
	}
}

// open opens the index, exclusively or shared, retrying while another
// process holds a conflicting lock, until deadline. It always makes at
// least one attempt, even if deadline has already passed while waiting for
// a turn. The first attempt does not wait; when it finds the index locked,
// open asks the holder to let go (see Hold) and keeps trying, unless
// deadline is zero: then the one attempt is all. An index that is missing
// or cannot be read is rebuilt (see rebuild); one that has not been filled
// from sqlite is filled first, which takes it exclusively.
func (x *Search) open(ctx context.Context, start, deadline time.Time, exclusive bool) (bleve.Index, error) {
	if !deadline.IsZero() && time.Now().Before(x.yieldUntil) {
		// We just let go for another process; give it the first go, but
		// only until it has taken the index: sleeping out the whole grace
		// once it has would delay this lookup for nothing.
		if err := x.awaitAskers(ctx, earliest(x.yieldUntil, deadline)); err != nil {
			return nil, fmt.Errorf("open search index: %w", err)
		}
	}
	rebuilt, fills := false, 0
	poll := minLockPoll
	var unask func()
	defer func() {
		if unask != nil {
			unask()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("open search index: %w", err)
		}
		// A bolt_timeout under bbolt's 50ms poll makes a single try; it
		// must never be 0, which bbolt reads as "wait forever".
		cfg := map[string]interface{}{"bolt_timeout": time.Millisecond.String()}
		if !exclusive {
			cfg["read_only"] = true
		}
		idx, err := x.openIndex(cfg)
		if err == nil {
			if exclusive {
				if err := guard(func() error { return x.fillIfNew(ctx, idx) }); err != nil {
					_ = closeIndex(idx)
					return nil, err
				}
				return idx, nil
			}
			var filled bool
			ferr := guard(func() (err error) { filled, err = x.filled(idx); return err })
			if ferr != nil || filled || fills > 0 {
				if ferr != nil {
					_ = closeIndex(idx)
					return nil, ferr
				}
				return idx, nil
			}
			// Not filled from sqlite yet: fill it exclusively, then
			// open it for reading again.
			_ = closeIndex(idx)
			fills++
			w, err := x.open(ctx, start, deadline, true)
			if err != nil {
				return nil, err
			}
			if err := closeIndex(w); err != nil {
				return nil, fmt.Errorf("close search index: %w", err)
			}
			continue
		}
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			// Held by another process (or another Search in this one).
			if unask == nil && !deadline.IsZero() {
				unask = x.ask(exclusive)
			}
		case !rebuilt && damaged(err):
			// Deleted, or damaged beyond opening: the index only mirrors
			// sqlite, so build it again rather than failing every
			// operation from now on.
			rebuilt = true
			if err := x.rebuild(err); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, fmt.Errorf("open search index %s: %w", x.path, err)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: another kodyls process held %s for more than %s; try again shortly",
				ErrBusy, x.path, time.Since(start).Round(time.Millisecond))
		}
		// Jitter keeps two waiting processes from trying in step.
		nap := poll + rand.N(poll/2+1)
		if err := sleepCtx(ctx, min(nap, max(time.Until(deadline), 0))); err != nil {
			return nil, fmt.Errorf("open search index: %w", err)
		}
		poll = min(2*poll, maxLockPoll)
	}
}

// openIndex opens the index with cfg, once. A panic of bleve, or a
// segment that fails its checksum or cannot be read (see checkedZap),
// comes back as a damageError. The caller has the turn.
func (x *Search) openIndex(cfg map[string]interface{}) (bleve.Index, error) {
	bolt, _ := os.Stat(x.rootBolt())
	store := filepath.Join(x.path, "store")
	since := segmentFaultCount(store)
	var idx bleve.Index
	err := guard(func() (err error) {
		idx, err = bleve.OpenUsing(x.path, cfg)
		return err
	})
	if p := (*panicError)(nil); errors.As(err, &p) {
		slog.Debug("opening the search index panicked", "path", x.path, "stack", string(p.stack))
		return nil, &damageError{err: err, bolt: bolt}
	}
	if ferr := segmentFaultSince(store, since); ferr != nil {
		// Scorch fell back to an older snapshot, which may itself fail.
		if err == nil {
			_ = closeIndex(idx)
		}
		if !damaged(ferr) {
			return nil, fmt.Errorf("open search index %s: %w", x.path, ferr)
		}
		return nil, &damageError{err: ferr, bolt: bolt}
	}
	if err != nil {
		return nil, err
	}
	x.opened = bolt
	return idx, nil
}

// askerPoll is how often a holder that let go looks whether the process
// it let go for has taken the index yet.
const askerPoll = time.Millisecond

// awaitAskers waits until no other process has a marker in WantDir, which
// it removes once it has opened the index (or given up), or until until.
func (x *Search) awaitAskers(ctx context.Context, until time.Time) error {
	dir := filepath.Join(x.dir, WantDir)
	for time.Now().Before(until) {
		if !othersAsking(dir, x.token) {
			return nil
		}
		if err := sleepCtx(ctx, min(askerPoll, time.Until(until))); err != nil {
			return err
		}
	}
	return nil
}

// othersAsking reports whether dir holds a marker, other than token's,
// of a process that wants the index exclusively.
func othersAsking(dir, token string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if wantsExclusive(e.Name(), token) {
			return true
		}
	}
	return false
}

// applyOps writes ops to idx as one batch. Later ops for the same ID win, as
// bleve applies a batch in order.
func applyOps(idx bleve.Index, ops []op) error {
	b := idx.NewBatch()
	for _, o := range ops {
		if o.delete {
			b.Delete(o.id)
			continue
		}
		doc := make(map[string]interface{}, len(o.fields))
		for k, v := range o.fields {
			doc[k] = v
		}
		if err := b.Index(o.id, doc); err != nil {
			return fmt.Errorf("document %q: %w", o.id, err)
		}
	}
	if err := idx.Batch(b); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	return nil
}

// enqueue parks ops in index_queue in one transaction.
func (x *Search) enqueue(ctx context.Context, ops []op) error {
	return x.store.Write(ctx, func(tx *sql.Tx) error { return enqueueTx(ctx, tx, ops) })
}

// enqueueTx parks ops in index_queue within tx, so that a change to sqlite
// and the index change that mirrors it commit together.
func enqueueTx(ctx context.Context, tx *sql.Tx, ops []op) error {
	now := time.Now().UnixMilli()
	stmt, err := tx.PrepareContext(ctx,
		`INSERT INTO index_queue (doc_id, op, body, queued_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, o := range ops {
		kind := "index"
		var body sql.NullString
		if o.delete {
			kind = "delete"
		} else {
			b, err := json.Marshal(o.fields)
			if err != nil {
				return fmt.Errorf("encode document %q: %w", o.id, err)
			}
			body = sql.NullString{String: string(b), Valid: true}
		}
		if _, err := stmt.ExecContext(ctx, o.id, kind, body, now); err != nil {
			return err
		}
	}
	return nil
}

// flush applies the queue to idx in id order and deletes what it applied.
// It must run while idx is open, because holding the index lock is what
// stops two processes from applying the same entries at once. If kodyls
// dies between the batch and the delete, the entries are applied again next
// time, which is harmless: indexing and deleting by ID are idempotent.
func (x *Search) flush(ctx context.Context, idx bleve.Index) error {
	if x.flushErr != nil {
		return fmt.Errorf("flush queue: %w", x.flushErr)
	}
	var last int64
	total := 0
	for {
		ops, maxID, err := x.readQueue(ctx, last)
		if err != nil {
			return err
		}
		if maxID == last {
			break
		}
		if len(ops) > 0 {
			if err := applyOps(idx, ops); err != nil {
				return fmt.Errorf("flush queue: %w", err)
			}
		}
		// Ids only grow (AUTOINCREMENT), so every row up to maxID has been
		// read and applied; rows queued meanwhile have larger ids.
		err = x.store.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM index_queue WHERE id <= ?`, maxID)
			return err
		})
		if err != nil {
			return fmt.Errorf("flush queue: %w", err)
		}
		last = maxID
		total += len(ops)
	}
	if total > 0 {
		slog.Debug("flushed search index queue", "entries", total, "path", x.path)
	}
	return nil
}

// readQueue reads up to flushChunk queue entries with id > after.
func (x *Search) readQueue(ctx context.Context, after int64) ([]op, int64, error) {
	rows, err := x.store.Reader().QueryContext(ctx,
		`SELECT id, doc_id, op, body FROM index_queue WHERE id > ? ORDER BY id LIMIT ?`, after, flushChunk)
	if err != nil {
		return nil, 0, fmt.Errorf("read queue: %w", err)
	}
	defer rows.Close()
	var ops []op
	maxID := after
	for rows.Next() {
		var (
			id   int64
			o    op
			kind string
			body sql.NullString
		)
		if err := rows.Scan(&id, &o.id, &kind, &body); err != nil {
			return nil, 0, fmt.Errorf("read queue: %w", err)
		}
		maxID = id
		if kind == "delete" {
			o.delete = true
		} else {
			if err := json.Unmarshal([]byte(body.String), &o.fields); err != nil {
				// A corrupt entry must not block the queue forever; skip it
				// (it is deleted with the rest) and say so.
				slog.Warn("dropping unreadable search queue entry", "id", id, "doc", o.id, "err", err)
				continue
			}
		}
		ops = append(ops, o)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read queue: %w", err)
	}
	return ops, maxID, nil
}
