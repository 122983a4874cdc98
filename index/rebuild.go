package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bolterrors "go.etcd.io/bbolt/errors"
)

// filledKey is an internal key of the index, set once fill has written
// every document. An index without it (new, rebuilt, or made by an older
// kodyls) is filled from sqlite when it is first opened.
var filledKey = []byte("kodyls_filled_from_store")

// damaged reports whether err, from opening the index, means its files are
// missing or unreadable, rather than locked by another process or out of
// reach for reasons rebuilding would not fix (permissions, a read-only or
// full disk, too many open files).
func damaged(err error) bool {
	var d *damageError
	if errors.As(err, &d) || errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		return true
	}
	for _, e := range []error{
		bolterrors.ErrTimeout, context.Canceled, context.DeadlineExceeded,
		fs.ErrPermission, syscall.EROFS, syscall.ENOSPC, syscall.EDQUOT,
		syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EIO,
	} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// errNotDir: a file stands where the index directory belongs.
var errNotDir = errors.New("not a directory")

// notDirError says what to do about a file that stands where the index
// belongs and cannot be moved aside.
func (x *Search) notDirError() error {
	return fmt.Errorf("%s is a file, not the search index of the error history: move it away or delete it, and kodyls will rebuild the index from the history database", x.path)
}

// rebuild replaces a missing or damaged index with a new one, which the
// next open fills from sqlite. The damaged one is moved aside first, so a
// concurrent ensure cannot mistake it for a good index, and then deleted:
// everything in it is in sqlite. So that an index another process has just
// rebuilt is not thrown away, it is checked once more just before, or,
// when cause is a damageError that knows the damaged index's root.bolt,
// it is moved only if it still is that one. A file where the index belongs
// is left alone (kodyls did not make it) and the error says what to do.
func (x *Search) rebuild(cause error) error {
	fi, err := os.Stat(x.path)
	switch {
	case err != nil:
		won, err := x.create()
		if err != nil {
			return err
		}
		if won {
			// Another process that rebuilt it first says so itself.
			x.logger().Warn("the search index of the error history is missing; rebuilding it from the history database", "path", x.path)
			x.rebuilt = true
		}
		return nil
	case !fi.IsDir():
		// Not an index kodyls made: it is the user's to remove.
		return x.notDirError()
	default:
		var d *damageError
		if errors.As(cause, &d) && d.bolt != nil {
			if cur, err := os.Stat(x.rootBolt()); err != nil || !os.SameFile(cur, d.bolt) {
				return nil // replaced since: use the new one
			}
		} else {
			idx, err := x.openIndex(map[string]interface{}{"bolt_timeout": "1ms"})
			if err == nil {
				return closeIndex(idx)
			}
			if !damaged(err) {
				return nil
			}
		}
		aside := x.path + ".damaged-" + x.token
		if err := os.Rename(x.path, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("search index %s is damaged (%v) and cannot be moved aside: %w; remove that directory and kodyls will rebuild it", x.path, cause, err)
		}
		defer os.RemoveAll(aside)
		x.logger().Warn("the search index of the error history was damaged; rebuilding it from the history database",
			"path", x.path, "cause", cause.Error())
	}
	if _, err := x.create(); err != nil {
		return err
	}
	x.rebuilt = true
	x.repaired = cause
	var d *damageError
	if errors.As(cause, &d) {
		x.repaired = d.err
	}
	return nil
}

// filled reports whether idx has been filled from sqlite (always, when
// this Search has nothing to fill it with).
func (x *Search) filled(idx bleve.Index) (bool, error) {
	if x.fill == nil {
		return true, nil
	}
	v, err := idx.GetInternal(filledKey)
	if err != nil {
		return false, fmt.Errorf("open search index %s: %w", x.path, err)
	}
	return v != nil, nil
}

// fillIfNew fills an index that has not been filled from sqlite yet.
func (x *Search) fillIfNew(ctx context.Context, idx bleve.Index) error {
	if x.fill == nil {
		return nil
	}
	v, err := idx.GetInternal(filledKey)
	if err != nil {
		return fmt.Errorf("open search index %s: %w", x.path, err)
	}
	if v != nil {
		return nil
	}
	n, err := x.fill(ctx, idx)
	if err != nil {
		return fmt.Errorf("rebuild search index from the history: %w", err)
	}
	if err := idx.SetInternal(filledKey, []byte{1}); err != nil {
		return fmt.Errorf("rebuild search index from the history: %w", err)
	}
	// The fill wrote many small segments; merge them into one now rather
	// than leave scorch to merge them across later opens, each of which
	// would restart the merges (and pay for them) again.
	if ai, err := idx.Advanced(); err == nil && n > 0 {
		if s, ok := ai.(*scorch.Scorch); ok {
			if err := s.ForceMerge(ctx, nil); err != nil {
				x.logger().Debug("merging the rebuilt search index", "err", err)
			}
		}
	}
	if x.rebuilt {
		x.rebuilt = false
		x.logger().Warn("search index rebuilt from the history database", "path", x.path, "errors", n)
	}
	return nil
}
