package lsp

import (
	"context"
	"sync"
)

// scheduler runs one job per key at a time and coalesces triggers that
// arrive while a job runs into one more run with the latest state. A burst
// of keystrokes therefore costs at most two runs, the last of which sees the
// final text, and the typing path (the trigger) never waits for a job.
// Each key's runs count as pending work in the tracker from the trigger to
// the end of the last run.
type scheduler struct {
	ctx  context.Context
	run  func(ctx context.Context, key string)
	work *tracker

	mu      sync.Mutex
	running map[string]bool
	pending map[string]bool
	stopped bool
	wg      sync.WaitGroup
}

func newScheduler(ctx context.Context, run func(ctx context.Context, key string), work *tracker) *scheduler {
	return &scheduler{ctx: ctx, run: run, work: work, running: map[string]bool{}, pending: map[string]bool{}}
}

// Trigger asks for a run of key's job.
func (q *scheduler) Trigger(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	if q.running[key] {
		q.pending[key] = true
		return
	}
	q.running[key] = true
	q.wg.Add(1)
	go q.loop(key, q.work.add(key))
}

func (q *scheduler) loop(key string, done func()) {
	defer q.wg.Done()
	defer done()
	for {
		if q.ctx.Err() == nil {
			q.run(q.ctx, key)
		}
		q.mu.Lock()
		if q.pending[key] && !q.stopped {
			delete(q.pending, key)
			q.mu.Unlock()
			continue
		}
		delete(q.pending, key)
		delete(q.running, key)
		q.mu.Unlock()
		return
	}
}

// Stop refuses new triggers and waits for running jobs, which observe the
// scheduler's context.
func (q *scheduler) Stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.wg.Wait()
}
