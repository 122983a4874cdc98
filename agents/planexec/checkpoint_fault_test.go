package planexec_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/planexec"
)

// fullDisk is a checkpointer on a disk with no room left.
type fullDisk struct{ puts atomic.Int32 }

func (f *fullDisk) Put(context.Context, agent.Checkpoint) error {
	f.puts.Add(1)
	return errors.New("database or disk is full")
}

func (f *fullDisk) Get(context.Context, string) (agent.Checkpoint, bool, error) {
	return agent.Checkpoint{}, false, nil
}

func (f *fullDisk) Delete(context.Context, string) error { return nil }

// TestFullDiskDoesNotFailThePlan: plan-execute on a store that cannot
// save checkpoints still runs its steps and answers.
func TestFullDiskDoesNotFailThePlan(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(step("1", "read_file", map[string]any{"path": "main.go", "line": 6})))
	s.On(isAnswer, final(goodAnswer))
	cp := &fullDisk{}
	tk := task(g)
	tk.Thread, tk.Checkpoints = "explain-1", cp
	out, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, ts, nil)
	if err != nil {
		t.Fatalf("a full disk failed the run: %v", err)
	}
	if out.Answer.RootCause != "the map m is nil when main writes to it" || calls.Load() != 1 || cp.puts.Load() != 1 {
		t.Fatalf("answer %+v, %d tool runs, %d saves tried", out.Answer, calls.Load(), cp.puts.Load())
	}
}
