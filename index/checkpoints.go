package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
)

// CheckpointAge is how long an unfinished thread's checkpoint is kept: an
// explanation interrupted longer ago than that is started over rather
// than resumed, and its checkpoint goes with the next prune.
const CheckpointAge = 7 * 24 * time.Hour

// Checkpoints is the agents' checkpointer kept in the store: the latest
// checkpoint of each thread, shared by every kodyls process of the data
// directory, so that a server started after a crash resumes what the
// crashed one was doing.
type Checkpoints struct{ s *Store }

var _ agent.Checkpointer = Checkpoints{}

// Checkpoints returns the store's checkpointer.
func (s *Store) Checkpoints() Checkpoints { return Checkpoints{s} }

// Put saves c as its thread's latest checkpoint, replacing the previous
// one. A finished thread's checkpoint (c.Done) is kept, marked done, until
// the next prune, so that it is never resumed.
func (c Checkpoints) Put(ctx context.Context, cp agent.Checkpoint) error {
	if cp.Thread == "" {
		return errors.New("save checkpoint: empty thread")
	}
	state := cp.State
	if state == nil {
		state = []byte("null")
	}
	now := time.Now().UnixMilli()
	err := c.s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO checkpoints (thread, graph, step, next, state, done, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread) DO UPDATE SET graph = excluded.graph, step = excluded.step, next = excluded.next,
	state = excluded.state, done = excluded.done, updated_at = excluded.updated_at`,
			cp.Thread, cp.Graph, cp.Step, cp.Next, []byte(state), boolInt(cp.Done), now)
		return err
	})
	if err != nil {
		return fmt.Errorf("save checkpoint of %s: %w", cp.Thread, err)
	}
	return nil
}

// Get returns the thread's latest checkpoint.
func (c Checkpoints) Get(ctx context.Context, thread string) (agent.Checkpoint, bool, error) {
	cp := agent.Checkpoint{Thread: thread}
	var done int
	var at int64
	var state []byte
	err := c.s.r.QueryRowContext(ctx, `SELECT graph, step, next, state, done, updated_at FROM checkpoints WHERE thread = ?`, thread).
		Scan(&cp.Graph, &cp.Step, &cp.Next, &state, &done, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return agent.Checkpoint{}, false, nil
	}
	if err != nil {
		return agent.Checkpoint{}, false, fmt.Errorf("read checkpoint of %s: %w", thread, c.s.Fault(err))
	}
	cp.State, cp.Done, cp.UpdatedAt = state, done != 0, time.UnixMilli(at)
	return cp, true, nil
}

// Delete forgets the thread.
func (c Checkpoints) Delete(ctx context.Context, thread string) error {
	err := c.s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE thread = ?`, thread)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete checkpoint of %s: %w", thread, err)
	}
	return nil
}

// Prune deletes the checkpoints of finished threads, of threads not
// touched for maxAge, and of all but the maxThreads most recent ones; it
// returns how many it deleted.
func (c Checkpoints) Prune(ctx context.Context, maxThreads int, maxAge time.Duration) (int, error) {
	if maxThreads <= 0 {
		return 0, fmt.Errorf("prune checkpoints: max threads must be positive, got %d", maxThreads)
	}
	var n int64
	err := c.s.Write(ctx, func(tx *sql.Tx) error {
		cutoff := time.Now().Add(-maxAge).UnixMilli()
		res, err := tx.ExecContext(ctx, `
DELETE FROM checkpoints WHERE done != 0 OR updated_at < ?
	OR thread IN (SELECT thread FROM checkpoints WHERE done = 0 AND updated_at >= ?
		ORDER BY updated_at DESC, thread LIMIT -1 OFFSET ?)`,
			cutoff, cutoff, maxThreads)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune checkpoints: %w", err)
	}
	return int(n), nil
}
