package planmode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planmode"
)

// longPlan is a plan of n independent lookups.
func longPlan(n int) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"id":"s%d","description":"look up a","tool":"lookup","input":{"key":"a"},"dependsOn":[]}`, i+1)
	}
	return `{"steps":[` + strings.Join(steps, ",") + `]}`
}

// TestHostileLongPlanFallsBack: a 300-step plan is rejected like any
// unusable plan, and the generator's fallback runs instead.
func TestHostileLongPlanFallsBack(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(longPlan(300)))
	s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"complete","reasoning":"done","adjustments":[]}`))
	w := &world{values: map[string]string{"a": "1"}}
	st, err := orchestrator(t, g, w).Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.calls) != 1 || st.Plan.Steps[0].ID != "basic" || !strings.Contains(st.Versions[0].Reason, "the plan has 300 steps; at most 20 are allowed") {
		t.Fatalf("%d tool calls; plan %s", len(w.calls), st.Versions[0])
	}
}

// TestToolCallBudget: the tool calls of every version count against one
// budget; when it is spent the run stops, without a reflection the
// model would be asked for.
func TestToolCallBudget(t *testing.T) {
	t.Run("within one version", func(t *testing.T) {
		s, g := setup(t)
		s.On(llmtest.SchemaName("plan"), llmtest.Text(longPlan(15)))
		reflect := s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"complete","reasoning":"done","adjustments":[]}`))
		w := &world{values: map[string]string{"a": "1"}}
		o := orchestrator(t, g, w)
		o.Budget.MaxToolCalls = 10
		st, err := o.Run(context.Background(), "goal", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.calls) != 10 || st.ToolCalls != 10 || reflect.Times() != 0 {
			t.Fatalf("%d tool calls (state %d), %d reflections", len(w.calls), st.ToolCalls, reflect.Times())
		}
		if st.Plan.Status != planmode.PlanFailed || !strings.Contains(st.Plan.Reason, "the budget of 10 tool calls is spent") {
			t.Errorf("plan %s", st.Plan)
		}
	})
	t.Run("across versions", func(t *testing.T) {
		s, g := setup(t)
		s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
		reflect := s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"again","adjustments":[{"type":"RETRY","stepId":"second","reason":"r"}]}`))
		w := &world{values: map[string]string{"a": "b"}}
		o := orchestrator(t, g, w)
		o.MaxCycles = 10
		o.Budget.MaxToolCalls = 3
		st, err := o.Run(context.Background(), "goal", nil)
		if err != nil {
			t.Fatal(err)
		}
		// Version 1 runs two steps, version 2 retries one, version 3 may
		// run nothing.
		if got := strings.Join(w.calls, ","); got != "a,wrong,wrong" || reflect.Times() != 2 {
			t.Fatalf("tool calls %s, %d reflections", got, reflect.Times())
		}
		if len(st.Versions) != 3 || st.Plan.Status != planmode.PlanFailed || !strings.Contains(st.Plan.Reason, "the budget of 3 tool calls is spent") {
			t.Errorf("%d versions; plan %s", len(st.Versions), st.Plan)
		}
	})
	t.Run("the default", func(t *testing.T) {
		// 15 steps retried every cycle: no step runs MaxAttempts times
		// before the 20 tool calls are spent.
		var retry []string
		for i := 1; i <= 15; i++ {
			retry = append(retry, fmt.Sprintf(`{"type":"RETRY","stepId":"s%d","reason":"r"}`, i))
		}
		s, g := setup(t)
		s.On(llmtest.SchemaName("plan"), llmtest.Text(longPlan(15)))
		s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"again","adjustments":[`+strings.Join(retry, ",")+`]}`))
		w := &world{values: map[string]string{"a": "1"}}
		o := orchestrator(t, g, w)
		o.MaxCycles = 100
		if _, err := o.Run(context.Background(), "goal", nil); err != nil {
			t.Fatal(err)
		}
		if len(w.calls) != agent.DefaultMaxToolCalls {
			t.Fatalf("%d tool calls, want the default budget %d", len(w.calls), agent.DefaultMaxToolCalls)
		}
	})
}

// TestAdjustmentPastTheStepLimitIsSkipped: a reflection cannot grow a
// plan past the limit either.
func TestAdjustmentPastTheStepLimitIsSkipped(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(longPlan(3)))
	s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"more","adjustments":[{"type":"ADD_AFTER","stepId":"s1","step":{"id":"more","description":"more","tool":"lookup","input":{"key":"a"},"dependsOn":[]},"reason":"r"}]}`))
	w := &world{values: map[string]string{"a": "1"}}
	o := orchestrator(t, g, w)
	o.MaxSteps = 3
	o.MaxCycles = 2
	st, err := o.Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Versions) != 1 || len(st.Notes) == 0 || !strings.Contains(st.Notes[0], "the plan has 4 steps; at most 3 are allowed") || len(w.calls) != 3 {
		t.Fatalf("versions %d notes %v calls %d", len(st.Versions), st.Notes, len(w.calls))
	}
}

// TestRunTimeout: the run's time limit ends a step that does not return,
// and says it was the limit.
func TestRunTimeout(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[{"id":"wait","description":"wait","tool":"wait","input":{},"dependsOn":[]}]}`))
	wait := agent.Tool{Name: "wait", Description: "waits for ever", Parameters: struct{}{}, Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	x, err := planmode.NewExecutor([]agent.Tool{wait}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &planmode.Orchestrator{
		Generator: &planmode.ModelGenerator{Gateway: g, Feature: "test", User: "wait", Tools: []string{"wait"}},
		Executor:  x,
		Reflector: &planmode.ModelReflector{Gateway: g, Feature: "test", Prompt: func(planmode.State) (string, string, error) { return "", "assess", nil }},
		Budget:    agent.Budget{Timeout: 50 * time.Millisecond},
	}
	_, err = o.Run(context.Background(), "goal", nil)
	if !errors.Is(err, agent.ErrTimeout) || !strings.Contains(err.Error(), "after 50ms") {
		t.Fatalf("err %v, want the run's time limit", err)
	}
}

// TestStuckStepEndsTheRun: a reflection that retries the same failing
// step for ever is stopped by the seed's loop prevention, well within the
// reflection cycles and the tool calls allowed: the step runs three times,
// fails as stuck, the last reflection is told so, and the run ends.
func TestStuckStepEndsTheRun(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	reflect := s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"try again","adjustments":[{"type":"RETRY","stepId":"second","reason":"maybe it works now"}]}`))
	w := &world{values: map[string]string{"a": "b"}}
	o := orchestrator(t, g, w)
	o.MaxCycles = 10
	var stuck []agent.Event
	st, err := o.Run(context.Background(), "goal", func(e agent.Event) {
		if e.Kind == planmode.EventStuck {
			stuck = append(stuck, e)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.calls, ","); got != "a,wrong,wrong,wrong" {
		t.Fatalf("tool calls %s, want the second step three times", got)
	}
	second, _ := st.Plan.Step("second")
	if second.Status != planmode.StepFailed || second.Attempts != planmode.MaxAttempts || !strings.HasPrefix(second.Result, "stuck: 3 attempts: ") {
		t.Errorf("second step %+v", second)
	}
	if st.Plan.Status != planmode.PlanFailed || st.Plan.Reason != "stuck: second failed after 3 attempts" || !st.Done {
		t.Errorf("plan %s", st.Plan)
	}
	// Ended by the stuck step, not by a budget.
	if st.Cycles != 3 || st.Stopped != "" || st.ToolCalls != 4 || len(st.Versions) != 3 {
		t.Errorf("%d cycles, %d tool calls, %d versions, stopped %q", st.Cycles, st.ToolCalls, len(st.Versions), st.Stopped)
	}
	if len(stuck) != 1 || stuck[0].Node != graph.NodeExecute || !strings.Contains(stuck[0].Text, "second failed 3 times") {
		t.Errorf("stuck events %+v", stuck)
	}
	// Only the last reflection was told the step is stuck.
	var told []bool
	for _, r := range s.ChatRequests() {
		if r.Chat.SchemaName() == "reflection" {
			told = append(told, strings.Contains(r.Chat.Text(), "Stuck: second ran 3 times"))
		}
	}
	if reflect.Times() != 3 || fmt.Sprint(told) != "[false false true]" {
		t.Errorf("%d reflections, told stuck: %v", reflect.Times(), told)
	}
}

// TestStepRetriedAfterItsLastAttemptIsRefused: a step that got through on
// its third run is not run a fourth time.
func TestStepRetriedAfterItsLastAttemptIsRefused(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"read it again","adjustments":[{"type":"RETRY","stepId":"first","reason":"again"},{"type":"SKIP","stepId":"second","reason":"not needed"}]}`))
	w := &world{values: map[string]string{"a": "b"}}
	o := orchestrator(t, g, w)
	o.MaxCycles = 10
	st, err := o.Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.calls, ","); got != "a,wrong,a,a" {
		t.Fatalf("tool calls %s, want the first step three times", got)
	}
	first, _ := st.Plan.Step("first")
	if first.Status != planmode.StepFailed || first.Attempts != 3 || first.Result != "stuck: 3 attempts: asked to run again" {
		t.Errorf("first step %+v", first)
	}
	if st.Plan.Status != planmode.PlanFailed || !strings.HasPrefix(st.Plan.Reason, "stuck: first") || st.Cycles != 4 {
		t.Errorf("plan %s after %d cycles", st.Plan, st.Cycles)
	}
}
