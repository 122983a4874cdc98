package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// History is the error history as its users see it: the RCA agent records
// errors, reuses and stores explanations and looks up similar ones; the
// language server and `kodyls history` search, count, forget and prune.
// [LocalHistory] (sqlite and bleve on this machine) is the implementation
// today; a shared team backend may be another.
type History interface {
	// Record remembers one occurrence of an error and returns its id.
	Record(ctx context.Context, e ErrorRecord) (int64, error)
	// Explain stores an explanation of the error errorID.
	Explain(ctx context.Context, errorID int64, ex Explanation) error
	// Cached returns the latest usable explanation of the same error
	// (fingerprint and message hash) in the same code, younger than maxAge.
	Cached(ctx context.Context, workspace, fingerprint, contentHash, messageHash string, maxAge time.Duration) (*Explanation, bool, error)
	// Similar returns up to k remembered errors like e, exact matches first.
	Similar(ctx context.Context, workspace string, e ErrorRecord, k int) ([]HistoryEntry, error)
	// Search finds remembered errors of workspace ("" = every workspace)
	// matching text, best first.
	Search(ctx context.Context, workspace, text string, k int) ([]HistoryEntry, error)
	// Stats counts the history.
	Stats(ctx context.Context) (Stats, error)
	// Index reports the search index beside the history; it fails when
	// the history works without one.
	Index(ctx context.Context) (IndexStatus, error)
	// Forget deletes the errors of workspace ("" = all).
	Forget(ctx context.Context, workspace string) (int, error)
	// Prune keeps the maxErrors most recently seen errors.
	Prune(ctx context.Context, maxErrors int) (int, error)
}

var _ History = (*LocalHistory)(nil)

// HistoryOptions says how [OpenHistory] opens the history.
type HistoryOptions struct {
	// RequireIndex makes OpenHistory fail when the search index cannot be
	// opened. Otherwise the history works without it: similar errors by
	// fingerprint only, and Search fails.
	RequireIndex bool
	// Limit, when positive, prunes the history to that many distinct
	// errors once, on opening.
	Limit int
	// Log receives warnings about what could not be done; nil discards.
	Log *slog.Logger
	// Hold keeps the search index open between lookups (see Search.Hold)
	// and opens it in the background right away. Long-lived processes
	// want it; the history must then be closed.
	Hold bool
}

// OpenHistory opens the error history kept in st, with the search index
// beside it. Only a missing store, or a missing index when
// opts.RequireIndex is set, is an error: a failed prune is logged, since
// the history works all the same.
func OpenHistory(ctx context.Context, st *Store, opts HistoryOptions) (*LocalHistory, error) {
	if st == nil {
		return nil, errors.New("open history: no local store")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Whether the history had errors before the index was made: another
	// process may record one while this one creates the index.
	var had bool
	if _, err := os.Stat(filepath.Join(st.Dir(), IndexDir, "index_meta.json")); err != nil {
		_ = st.Reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM errors)`).Scan(&had)
	}
	search, err := openSearch(st, st.Dir(), log)
	if err != nil {
		if opts.RequireIndex {
			return nil, fmt.Errorf("open the error index: %w", err)
		}
		log.Warn("error index unavailable; similar errors by fingerprint only", "error", err)
		search = nil
	}
	h := newLocalHistory(st, search)
	h.log = log
	if search != nil {
		search.SetLogger(log)
		if search.created && !search.rebuilt && had {
			// This process made a new index beside a history that had
			// errors: the index was deleted. Say so; the first open
			// fills it.
			log.Warn("the search index of the error history is missing; rebuilding it from the history database", "path", search.Path())
			search.rebuilt = true
		}
		if opts.Hold {
			if err := search.Hold(DefaultHoldIdle); err != nil {
				log.Warn("search index opened per lookup", "error", err)
			}
		}
	}
	if opts.Limit > 0 {
		if _, err := h.Prune(ctx, opts.Limit); err != nil {
			if ctx.Err() != nil {
				// The caller is gone (a session that ended at once): no
				// fault; the next open prunes.
				log.Debug("cannot prune the error history", "error", err)
			} else {
				log.Warn("cannot prune the error history", "error", err)
			}
		}
	}
	if search != nil && opts.Hold {
		h.warm()
	}
	return h, nil
}
