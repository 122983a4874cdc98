package planexec_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
)

// The outcome's path says who answered: the plan, or the fallback it was
// given up for.
func TestPathNamesTheFallback(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, llmtest.JSON(map[string]any{}))
	s.On(isReAct, final(goodAnswer))
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != "plan-execute → react (plan unusable)" {
		t.Errorf("path %q after an unusable plan", out.Path)
	}

	s, g = setup(t)
	s.On(isPlan, planReply(step("1", "read_file", map[string]any{"path": "main.go"})))
	s.On(isAnswer, final(goodAnswer))
	out, err = planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, nil)
	if err != nil || out.Path != "plan-execute" || out.ToolCalls != 1 {
		t.Errorf("outcome %+v (%v): want path plan-execute after one call", out, err)
	}
}

// The fallback gets what the run left of the task's budget: its steps
// (less the plan and the answer) and its tool calls, not a budget of its
// own.
func TestFallbackWorksWithinTheBudget(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, llmtest.JSON(map[string]any{}))
	s.On(isAnswer, final(goodAnswer)) // ReAct's answer-only turn after a guard
	var reads []llmtest.Reply
	for i := range 20 {
		reads = append(reads, llmtest.Tools(
			llmtest.ToolCall{Name: "search_workspace", Arguments: fmt.Sprintf(`{"query":"q%d"}`, i)},
			llmtest.ToolCall{Name: "list_files", Arguments: fmt.Sprintf(`{"dir":"d%d"}`, i)}))
	}
	s.On(isReAct, reads...)
	tk := task(g)
	tk.Budget = agent.Budget{MaxIterations: 6, MaxToolCalls: 5}
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), tk, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 5 || out.ToolCalls != 5 || out.Iterations > 6 {
		t.Errorf("%d tool runs (outcome %d), %d steps: want at most the task's 5 calls and 6 steps", calls.Load(), out.ToolCalls, out.Iterations)
	}

	// With room for no more steps the fallback would have none: the
	// steps bound it before the tool calls do.
	s, g = setup(t)
	s.On(isPlan, llmtest.JSON(map[string]any{}))
	s.On(isAnswer, final(goodAnswer))
	s.On(isReAct, reads...)
	tk = task(g)
	tk.Budget = agent.Budget{MaxIterations: 4}
	calls.Store(0)
	out, err = planexec.Strategy[answer]{}.Run(context.Background(), tk, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Iterations != 4 || calls.Load() != 4 || out.Guard != agent.GuardMaxIterations {
		t.Errorf("outcome %+v after %d tool runs: want 4 steps in all (plan, 2 of react, answer)", out, calls.Load())
	}
}

// A plan is asked to fit in the steps the budget leaves, and a failed step
// is not replanned when no step would be left to run.
func TestPlanFitsTheBudget(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(
		step("1", "read_file", map[string]any{"path": "nope.go"}),
		step("2", "read_file", map[string]any{"path": "main.go"})))
	replan := s.On(isReplan, planReply(step("1", "read_file", map[string]any{"path": "main.go"})))
	s.On(isAnswer, final(goodAnswer))
	tk := task(g)
	tk.Budget = agent.Budget{MaxIterations: 4}
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), tk, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if replan.Times() != 0 || out.Iterations > 4 {
		t.Errorf("%d replans, %d steps: the budget of 4 leaves no room to revise a plan of 2", replan.Times(), out.Iterations)
	}
	first := ""
	for _, r := range s.ChatRequests() {
		if isPlan(r.Chat) {
			first = r.Chat.Text()
			break
		}
	}
	if !strings.Contains(first, "At most 2 steps") {
		t.Errorf("the plan request does not ask for the 2 steps the budget leaves:\n%s", first)
	}
	last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
	if !strings.Contains(last, "no room to revise the plan") {
		t.Errorf("the answer request does not say why the plan stopped:\n%s", last)
	}
}
