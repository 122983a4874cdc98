package lsp

import (
	"context"
	"sync"

	"github.com/kodustech/kodyls/editors/contract"
)

// tracker counts the work pending per document URI ("" for work on the
// whole workspace: rule reloads, builds, configuration), so that
// kodyls/awaitIdle can answer once a document's checks, reviews, builds and
// explanations are done. Work is added synchronously where it is scheduled
// (on the read loop for notifications), so a request that follows a
// notification on the wire sees the work the notification started.
type tracker struct {
	mu      sync.Mutex
	pending map[string]int
	changed chan struct{} // closed and replaced on every decrement
}

func newTracker() *tracker {
	return &tracker{pending: map[string]int{}, changed: make(chan struct{})}
}

// add records one piece of pending work for key and returns the function
// that ends it; calling that function more than once is harmless.
func (t *tracker) add(key string) (done func()) {
	t.mu.Lock()
	t.pending[key]++
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			if t.pending[key]--; t.pending[key] <= 0 {
				delete(t.pending, key)
			}
			close(t.changed)
			t.changed = make(chan struct{})
			t.mu.Unlock()
		})
	}
}

// busy reports whether work is pending for key and the workspace, or for
// anything when key is "".
func (t *tracker) busyLocked(key string) bool {
	if key == "" {
		return len(t.pending) > 0
	}
	return t.pending[key] > 0 || t.pending[""] > 0
}

// wait blocks until no work is pending for key (see busyLocked).
func (t *tracker) wait(ctx context.Context, key string) error {
	for {
		t.mu.Lock()
		if !t.busyLocked(key) {
			t.mu.Unlock()
			return nil
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// awaitIdle answers kodyls/awaitIdle once the document (or, without a URI,
// every document and the workspace) has no pending work.
func (s *Server) awaitIdle(ctx context.Context, p *contract.AwaitIdleParams) (*contract.AwaitIdleResult, error) {
	if err := s.work.wait(ctx, string(p.URI)); err != nil {
		return nil, err
	}
	return &contract.AwaitIdleResult{}, nil
}
