package index

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapv17 "github.com/blevesearch/zapx/v17"
)

// Scorch (bleve's index) does not check its segment files: a segment whose
// bytes were damaged makes it panic while it opens the index or runs a
// query (slice bounds out of range in a posting list), or answer a query
// with "error loading roaring bitmap", or silently fall back to an older
// snapshot of the index. Every zap segment ends with the CRC-32 of all the
// bytes before it, so kodyls checks a segment file against it before scorch
// opens it (through checkedZap, which replaces scorch's default segment
// plugin) and again, uncached, when an operation on an open index panics or
// fails. A damaged index is then rebuilt from sqlite like a deleted one.
//
// Scorch's own goroutines (the persister and merger of an index opened for
// writing) read only segments that passed the check, so they do not meet a
// damaged file unless it is damaged while open; their panics could not be
// recovered.

// damageError means the files of the search index are damaged.
type damageError struct {
	err error
	// bolt is the root.bolt of the damaged index, to tell whether another
	// process has replaced the index since (see rebuild); nil if unknown.
	bolt os.FileInfo
	// inUse: found while an operation used the open index (not while
	// opening it, where open rebuilds it itself).
	inUse bool
}

func (e *damageError) Error() string { return "the search index is damaged: " + e.err.Error() }
func (e *damageError) Unwrap() error { return e.err }

// panicError is a panic of bleve, recovered.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("the search index library panicked: %v", e.value)
}

// guard runs fn, turning a panic into a panicError.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return fn()
}

// closeIndex closes idx; a panic while closing is returned as an error.
func closeIndex(idx bleve.Index) error {
	return guard(idx.Close)
}

// suspect reports whether err, from an operation on the open index, may
// come from damaged files: anything but the caller giving up or the index
// being busy. Whether it does is decided by checking the segments.
func suspect(err error) bool {
	return err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrBusy)
}

// checkOpen checks the segment files of idx's current snapshot against
// their checksums, uncached: the files may have been damaged since they
// were opened.
func checkOpen(idx bleve.Index) error {
	return guard(func() error {
		ai, err := idx.Advanced()
		if err != nil {
			return nil
		}
		s, ok := ai.(*scorch.Scorch)
		if !ok {
			return nil
		}
		r, err := s.Reader()
		if err != nil {
			return nil
		}
		defer r.Close()
		snap, ok := r.(*scorch.IndexSnapshot)
		if !ok {
			return nil
		}
		for _, ss := range snap.Segments() {
			if p, ok := ss.Segment().(segment.PersistedSegment); ok {
				if err := checkSegment(p.Path()); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// errSegmentDamaged: a segment file does not match its checksum.
var errSegmentDamaged = errors.New("damaged")

// zapFooterMin is the smallest a zap footer can be (see zapv17.FooterSize).
const zapFooterMin = zapv17.FooterSize

// checkSegment compares a zap segment file with the CRC-32 at its end.
func checkSegment(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	name := filepath.Base(path)
	if fi.Size() < zapFooterMin {
		return fmt.Errorf("segment %s is %w: cut short (%d bytes)", name, errSegmentDamaged, fi.Size())
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size()-4)); err != nil {
		return fmt.Errorf("read segment %s: %w", name, err)
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], fi.Size()-4); err != nil {
		return fmt.Errorf("read segment %s: %w", name, err)
	}
	want := uint32(tail[0])<<24 | uint32(tail[1])<<16 | uint32(tail[2])<<8 | uint32(tail[3])
	if got := h.Sum32(); got != want {
		return fmt.Errorf("segment %s is %w (checksum %08x, expected %08x)", name, errSegmentDamaged, got, want)
	}
	return nil
}

// checked remembers the segment files that passed checkSegment in this
// process: segments never change once written, so each is read once
// (about 8 ms for the 55 MB of an index of 100,000 errors).
var checked = struct {
	sync.Mutex
	files map[string]os.FileInfo
}{files: map[string]os.FileInfo{}}

// maxChecked bounds checked: past it, entries of files gone (merged away)
// are dropped.
const maxChecked = 4096

// checkSegmentOnce is checkSegment, skipped for a file that passed already.
func checkSegmentOnce(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	checked.Lock()
	old, ok := checked.files[path]
	checked.Unlock()
	if ok && os.SameFile(old, fi) && old.Size() == fi.Size() && old.ModTime().Equal(fi.ModTime()) {
		return nil
	}
	if err := checkSegment(path); err != nil {
		return err
	}
	checked.Lock()
	defer checked.Unlock()
	if len(checked.files) >= maxChecked {
		for p := range checked.files {
			if _, err := os.Stat(p); err != nil {
				delete(checked.files, p)
			}
		}
	}
	checked.files[path] = fi
	return nil
}

// segmentFaults counts, per index store directory, the segments scorch
// could not open, and keeps the latest reason. Scorch does not fail to
// open an index whose newest snapshot has such a segment: it logs it and
// falls back to an older snapshot (or none), so open compares the count
// before and after.
var segmentFaults = struct {
	sync.Mutex
	n    map[string]uint64
	last map[string]error
}{n: map[string]uint64{}, last: map[string]error{}}

func noteSegmentFault(path string, err error) {
	dir := filepath.Clean(filepath.Dir(path))
	segmentFaults.Lock()
	defer segmentFaults.Unlock()
	segmentFaults.n[dir]++
	segmentFaults.last[dir] = err
}

// segmentFaultCount is the number of faults noted in the store dir.
func segmentFaultCount(dir string) uint64 {
	segmentFaults.Lock()
	defer segmentFaults.Unlock()
	return segmentFaults.n[filepath.Clean(dir)]
}

// segmentFaultSince returns the latest fault noted in dir if there was one
// after the count was since.
func segmentFaultSince(dir string, since uint64) error {
	dir = filepath.Clean(dir)
	segmentFaults.Lock()
	defer segmentFaults.Unlock()
	if segmentFaults.n[dir] == since {
		return nil
	}
	return segmentFaults.last[dir]
}

// checkedZap is zap v17, the segment format of new indexes, with each
// segment file checked before it is opened and a panic while opening it
// turned into an error.
type checkedZap struct{ *zapv17.ZapPlugin }

func (p checkedZap) Open(path string) (segment.Segment, error) { return p.OpenUsing(path, nil) }

func (p checkedZap) OpenUsing(path string, config map[string]interface{}) (seg segment.Segment, err error) {
	if err := checkSegmentOnce(path); err != nil {
		noteSegmentFault(path, err)
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			seg, err = nil, fmt.Errorf("segment %s cannot be read: %v", filepath.Base(path), r)
		}
		if err != nil {
			noteSegmentFault(path, err)
		}
	}()
	return p.ZapPlugin.OpenUsing(path, config)
}

func init() {
	scorch.RegisterSegmentPlugin(checkedZap{&zapv17.ZapPlugin{}}, true)
}
