package planmode_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planmode"
)

func setup(t *testing.T) (*llmtest.Server, *llm.Gateway) { return llmtest.Start(t) }

type lookupArgs struct {
	Key string `json:"key"`
}

// world is a tool whose answers the test controls, recording its calls.
type world struct {
	mu     sync.Mutex
	values map[string]string
	calls  []string
}

func (w *world) tool() agent.Tool {
	return agent.Tool{Name: "lookup", Description: "look a key up", Parameters: lookupArgs{}, Run: func(_ context.Context, raw json.RawMessage) (string, error) {
		var a lookupArgs
		_ = json.Unmarshal(raw, &a)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, a.Key)
		v, ok := w.values[a.Key]
		if !ok {
			return "", errors.New("no such key: " + a.Key)
		}
		return v, nil
	}}
}

func orchestrator(t *testing.T, g *llm.Gateway, w *world) *planmode.Orchestrator {
	t.Helper()
	x, err := planmode.NewExecutor([]agent.Tool{w.tool()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &planmode.Orchestrator{
		Name: "test",
		Generator: &planmode.ModelGenerator{Gateway: g, Feature: "test", User: "find the value", Tools: []string{"lookup"},
			Fallback: func(error) planmode.Plan {
				return planmode.Plan{Steps: []planmode.Step{{ID: "basic", Tool: "lookup", Input: json.RawMessage(`{"key":"a"}`)}}}
			}},
		Executor: x,
		Reflector: &planmode.ModelReflector{Gateway: g, Feature: "test", Prompt: func(s planmode.State) (string, string, error) {
			return "", "assess:\n" + s.Plan.String(), nil
		}},
		MaxCycles: 3,
	}
}

type trail struct {
	mu     sync.Mutex
	events []agent.Event
}

func (tr *trail) emit(e agent.Event) { tr.mu.Lock(); tr.events = append(tr.events, e); tr.mu.Unlock() }

func (tr *trail) kinds() string {
	var out []string
	for _, e := range tr.events {
		switch e.Kind {
		case agent.EventPlanCreated, agent.EventStepDone, agent.EventReflected, agent.EventAdjusted:
			out = append(out, e.Kind+"@"+e.Node)
		}
	}
	return strings.Join(out, " ")
}

const twoStepPlan = `{"steps":[
 {"id":"first","description":"look up a","tool":"lookup","input":{"key":"a"},"dependsOn":[]},
 {"id":"second","description":"look up the key a points to","tool":"lookup","input":{"key":"wrong"},"dependsOn":["first"]}]}`

// TestRunAdjustsAfterAFailedStep walks the whole cycle: the plan's second
// step fails, the reflection modifies it, version 2 runs only what
// changed and the next reflection completes the plan.
func TestRunAdjustsAfterAFailedStep(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"),
		llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"a points to b","adjustments":[{"type":"MODIFY","stepId":"second","input":{"key":"b"},"reason":"a points to b"}]}`),
		llmtest.Text(`{"assessment":"complete","reasoning":"b is 42","adjustments":[]}`))
	w := &world{values: map[string]string{"a": "b", "b": "42"}}
	var tr trail
	st, err := orchestrator(t, g, w).Run(context.Background(), "find the value", tr.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.Trail, " "); got != "plan execute reflect adjust execute reflect" {
		t.Errorf("trail %s", got)
	}
	if got := strings.Join(w.calls, ","); got != "a,wrong,b" {
		t.Errorf("tool calls %s: version 2 must rerun only the modified step", got)
	}
	if len(st.Versions) != 2 || st.Versions[0].Version != 1 || st.Versions[0].Status != planmode.PlanFailed ||
		st.Versions[1].Version != 2 || st.Versions[1].Status != planmode.PlanCompleted || st.Plan.Status != planmode.PlanCompleted {
		t.Fatalf("versions:\n%s\n%s", st.Versions[0], st.Versions[len(st.Versions)-1])
	}
	if s, _ := st.Versions[0].Step("second"); s.Status != planmode.StepFailed || !strings.Contains(s.Result, "no such key: wrong") {
		t.Errorf("version 1 keeps its failed step: %+v", s)
	}
	if s, _ := st.Plan.Step("second"); s.Status != planmode.StepDone || s.Result != "42" || s.Attempts != 2 {
		t.Errorf("version 2 step: %+v", s)
	}
	want := "plan_created@plan step_done@execute step_done@execute reflected@reflect adjusted@adjust step_done@execute reflected@reflect"
	if got := tr.kinds(); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	// The state is what a checkpoint holds: it survives JSON.
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back planmode.State
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Versions) != 2 || back.Plan.Steps[1].Result != "42" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// TestGeneratorFallsBack: a model that cannot produce a valid plan gets
// the basic plan, and the run still works through it.
func TestGeneratorFallsBack(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"malformed":    llmtest.Malformed(),
		"server error": llmtest.ServerError(),
		"cycle":        llmtest.Text(`{"steps":[{"id":"a","description":"x","tool":"lookup","input":{"key":"a"},"dependsOn":["a"]}]}`),
	} {
		t.Run(name, func(t *testing.T) {
			s, g := setup(t)
			s.On(llmtest.SchemaName("plan"), reply)
			s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"complete","reasoning":"done","adjustments":[]}`))
			w := &world{values: map[string]string{"a": "1"}}
			st, err := orchestrator(t, g, w).Run(context.Background(), "goal", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(st.Versions[0].Reason, "fallback plan: ") || st.Plan.Steps[0].ID != "basic" || st.Plan.Status != planmode.PlanCompleted {
				t.Fatalf("plan %s", st.Plan)
			}
		})
	}
}

// TestReflectionFallsBackToContinue: when the model cannot reflect, the
// run continues as planned and ends as its steps did.
func TestReflectionFallsBackToContinue(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"), llmtest.ServerError())
	w := &world{values: map[string]string{"a": "b", "wrong": "x"}}
	st, err := orchestrator(t, g, w).Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := st.Reflections[0]
	if !r.Fallback || r.Assessment != planmode.AssessOnTrack || st.Plan.Status != planmode.PlanCompleted || st.Cycles != 1 {
		t.Fatalf("reflection %+v plan %s", r, st.Plan)
	}
}

// TestUnusableAdjustmentIsSkipped: an adjustment naming no step leaves the
// plan as it was, and the cycle budget ends the run.
func TestUnusableAdjustmentIsSkipped(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"try again","adjustments":[{"type":"RETRY","stepId":"ghost","reason":"x"}]}`))
	w := &world{values: map[string]string{"a": "b"}}
	st, err := orchestrator(t, g, w).Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cycles != 3 || len(st.Versions) != 1 || st.Plan.Status != planmode.PlanFailed || len(st.Notes) != 2 || !strings.Contains(st.Notes[0], `no step "ghost"`) {
		t.Fatalf("cycles %d versions %d status %s notes %v", st.Cycles, len(st.Versions), st.Plan.Status, st.Notes)
	}
	if !strings.Contains(st.Plan.Reason, "stopped after 3 reflection cycles") {
		t.Errorf("reason %q", st.Plan.Reason)
	}
}

// TestResumeFromCheckpoint: a run interrupted after the first reflection
// resumes from its checkpoint without planning again.
func TestResumeFromCheckpoint(t *testing.T) {
	s, g := setup(t)
	plan := s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"),
		llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"a points to b","adjustments":[{"type":"MODIFY","stepId":"second","input":{"key":"b"},"reason":"r"}]}`),
		llmtest.Text(`{"assessment":"complete","reasoning":"b is 42","adjustments":[]}`))
	w := &world{values: map[string]string{"a": "b", "b": "42"}}
	cp := &graph.MemoryCheckpointer{}
	o := orchestrator(t, g, w)
	o.Thread, o.Checkpoints = "fix-1", cp
	ctx, cancel := context.WithCancel(context.Background())
	_, err := o.Run(ctx, "goal", func(e agent.Event) {
		if e.Kind == agent.EventAdjusted {
			cancel() // the process goes away after the adjustment
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	st, err := o.Run(context.Background(), "goal", nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Times() != 1 || st.Plan.Status != planmode.PlanCompleted || len(st.Versions) != 2 || strings.Join(st.Trail, " ") != "plan execute reflect adjust execute reflect" {
		t.Fatalf("plans %d status %s trail %v", plan.Times(), st.Plan.Status, st.Trail)
	}
}

// TestExecutorRespectsDependencies: a step waits for its dependencies,
// a step whose dependency failed does not run, and bad arguments fail a
// step with the reason instead of reaching the tool.
func TestExecutorRespectsDependencies(t *testing.T) {
	w := &world{values: map[string]string{"a": "1", "c": "3"}}
	var order []string
	x, err := planmode.NewExecutor([]agent.Tool{w.tool()}, map[string]planmode.StepFunc{
		"sum": func(_ context.Context, p planmode.Plan, s planmode.Step) (string, error) {
			order = append(order, s.ID)
			var parts []string
			for _, d := range s.DependsOn {
				ds, _ := p.Step(d)
				parts = append(parts, ds.Result)
			}
			return strings.Join(parts, "+"), nil
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := planmode.Plan{Version: 1, Status: planmode.PlanApproved, Steps: []planmode.Step{
		{ID: "total", Tool: "sum", DependsOn: []string{"c", "a"}, Status: planmode.StepPending},
		{ID: "a", Tool: "lookup", Input: json.RawMessage(`{"key":"a"}`), Status: planmode.StepPending},
		{ID: "c", Tool: "lookup", Input: json.RawMessage(`{"key":"c"}`), Status: planmode.StepPending},
		{ID: "bad", Tool: "lookup", Input: json.RawMessage(`{"key":7}`), Status: planmode.StepPending},
		{ID: "after-bad", Tool: "sum", DependsOn: []string{"bad"}, Status: planmode.StepPending},
	}}
	out, err := x.Execute(context.Background(), p, func(agent.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := out.Step("total"); s.Status != planmode.StepDone || s.Result != "3+1" {
		t.Errorf("total %+v", s)
	}
	if s, _ := out.Step("bad"); s.Status != planmode.StepFailed || !strings.Contains(s.Result, "error:") {
		t.Errorf("bad %+v", s)
	}
	if s, _ := out.Step("after-bad"); s.Status != planmode.StepPending {
		t.Errorf("after-bad ran: %+v", s)
	}
	if strings.Join(order, ",") != "total" || out.Status != planmode.PlanFailed || p.Status != planmode.PlanApproved {
		t.Errorf("order %v status %s (input plan %s)", order, out.Status, p.Status)
	}
}
