package planmode_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planmode"
)

// fullDisk is a checkpointer on a disk with no room left.
type fullDisk struct{ puts int }

func (f *fullDisk) Put(context.Context, agent.Checkpoint) error {
	f.puts++
	return errors.New("database or disk is full")
}

func (f *fullDisk) Get(context.Context, string) (agent.Checkpoint, bool, error) {
	return agent.Checkpoint{}, false, nil
}

func (f *fullDisk) Delete(context.Context, string) error { return nil }

// TestRunGoesOnWhenCheckpointsCannotBeSaved: plan mode on a store that
// cannot save walks the whole cycle to the same completed plan, and says
// once that it goes on without checkpoints.
func TestRunGoesOnWhenCheckpointsCannotBeSaved(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"),
		llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"a points to b","adjustments":[{"type":"MODIFY","stepId":"second","input":{"key":"b"},"reason":"r"}]}`),
		llmtest.Text(`{"assessment":"complete","reasoning":"b is 42","adjustments":[]}`))
	w := &world{values: map[string]string{"a": "b", "b": "42"}}
	var logs bytes.Buffer
	cp := &fullDisk{}
	o := orchestrator(t, g, w)
	o.Thread, o.Checkpoints, o.Log = "fix-1", cp, slog.New(slog.NewTextHandler(&logs, nil))
	st, err := o.Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatalf("a full disk failed the run: %v", err)
	}
	if st.Plan.Status != planmode.PlanCompleted || len(st.Versions) != 2 || strings.Join(st.Trail, " ") != "plan execute reflect adjust execute reflect" {
		t.Fatalf("status %s versions %d trail %v", st.Plan.Status, len(st.Versions), st.Trail)
	}
	if n := strings.Count(logs.String(), "cannot save the checkpoint"); n != 1 || cp.puts != 1 {
		t.Errorf("%d warnings, %d saves tried:\n%s", n, cp.puts, logs.String())
	}
}
