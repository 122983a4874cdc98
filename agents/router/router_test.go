package router_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/router"
)

// answer is an answer that carries its confidence.
type answer struct {
	Cause string
	Conf  float64
}

func (a answer) ConfidenceScore() float64 { return a.Conf }
func (a answer) String() string           { return a.Cause }

// scripted is a strategy that emits scripted events and ends with a
// scripted outcome, remembering the task it was given.
type scripted struct {
	name   string
	events []agent.Event
	out    agent.Outcome[answer]
	err    error
	runs   int
	task   agent.Task
}

func (s *scripted) Name() string { return s.name }

func (s *scripted) Run(ctx context.Context, task agent.Task, _ []agent.Tool, emit func(agent.Event)) (agent.Outcome[answer], error) {
	s.runs++
	s.task = task
	for _, e := range s.events {
		emit(e)
	}
	if err := ctx.Err(); err != nil {
		return s.out, err
	}
	return s.out, s.err
}

func calls(results ...string) []agent.Event {
	var evs []agent.Event
	for i, r := range results {
		evs = append(evs,
			agent.Event{Kind: agent.EventAction, Tool: "read_file", Input: fmt.Sprintf(`{"path":"f%d.go"}`, i)},
			agent.Event{Kind: agent.EventObservation, Tool: "read_file", Text: r})
	}
	return evs
}

func TestRouting(t *testing.T) {
	confident := agent.Outcome[answer]{Answer: answer{"fast cause", 0.9}, Iterations: 2, ToolsUsed: []string{"read_file"}, Path: "react"}
	plan := agent.Outcome[answer]{Answer: answer{"planned cause", 0.8}, Iterations: 3, ToolsUsed: []string{"search", "read_file"}, Path: "plan-execute"}
	tests := []struct {
		name      string
		fast      scripted
		planner   scripted
		escalated string // the reason, "" for none
		cause     string
		path      string
		wantErr   bool
	}{
		{name: "quick confident answer stays on the fast path",
			fast:  scripted{events: calls("ok", "error: no such file"), out: confident},
			cause: "fast cause", path: "react"},
		{name: "two failed calls are tolerated",
			fast:  scripted{events: calls("error: a", "error: b", "ok"), out: confident},
			cause: "fast cause", path: "react"},
		{name: "three failed calls escalate",
			fast: scripted{events: calls("error: a", "error: b", "error: c"), out: confident}, planner: scripted{out: plan},
			escalated: "3 failed tool calls", cause: "planned cause", path: "react → plan-execute (3 failed tool calls)"},
		{name: "the step threshold escalates",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"hedged", 0.9}, Iterations: 6, Forced: true, Guard: agent.GuardMaxIterations}}, planner: scripted{out: plan},
			escalated: "ran past 6 steps", cause: "planned cause", path: "fast → plan-execute (ran past 6 steps)"},
		{name: "the failed-calls guard escalates",
			fast: scripted{events: calls("error: a", "error: b", "error: c"), out: agent.Outcome[answer]{Answer: answer{"hedged", 0.9}, Iterations: 2, Forced: true, Guard: agent.GuardFailedCalls}}, planner: scripted{out: plan},
			escalated: "3 failed tool calls", cause: "planned cause"},
		{name: "no escalation once the budget's tool calls are used",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"hedged", 0.9}, Iterations: 3, ToolCalls: 20, Forced: true, Guard: agent.GuardMaxToolCalls, Path: "react"}}, planner: scripted{out: plan},
			cause: "hedged", path: "react (loop guard max_tool_calls; not escalated: all 20 tool calls of the budget are used)"},
		{name: "no escalation when too few steps are left",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"a guess", 0.2}, Iterations: 8, Path: "react"}}, planner: scripted{out: plan},
			cause: "a guess", path: "react (low confidence 0.20; not escalated: 2 of the budget's 10 steps are left)"},
		{name: "a failed fast path with no budget left is an error",
			fast: scripted{err: agent.ErrMalformedAnswer, out: agent.Outcome[answer]{ToolCalls: 20}}, planner: scripted{out: plan},
			wantErr: true},
		{name: "a loop guard escalates",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"hedged", 0.9}, Forced: true, Guard: agent.GuardAlternation}}, planner: scripted{out: plan},
			escalated: "loop guard alternation", cause: "planned cause"},
		{name: "low confidence escalates",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"a guess", 0.2}}}, planner: scripted{out: plan},
			escalated: "low confidence 0.20", cause: "planned cause"},
		{name: "a failed fast path escalates",
			fast: scripted{err: agent.ErrMalformedAnswer}, planner: scripted{out: plan},
			escalated: "the first path failed: agent: malformed final answer", cause: "planned cause"},
		{name: "a failed planner leaves the fast answer",
			fast: scripted{out: agent.Outcome[answer]{Answer: answer{"a guess", 0.2}, Path: "react"}}, planner: scripted{err: errors.New("planner broke")},
			escalated: "low confidence 0.20", cause: "a guess", path: "planner (low confidence 0.20; it failed, the first answer stands)"},
		{name: "both failing is an error",
			fast: scripted{err: agent.ErrMalformedAnswer}, planner: scripted{err: errors.New("planner broke")},
			escalated: "the first path failed", wantErr: true},
		{name: "an endpoint failure is not escalated (the planner would ask the same endpoint)",
			fast: scripted{err: agent.ErrStepTimeout}, planner: scripted{out: plan},
			wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fast.name, tc.planner.name = "fast", "planner"
			r := router.Strategy[answer]{Fast: &tc.fast, Planner: &tc.planner}
			var escalations []agent.Event
			task := agent.Task{User: "explain: x declared and not used", Thread: "th", Budget: agent.Budget{MaxIterations: 10}}
			res, err := r.Run(context.Background(), task, nil, func(e agent.Event) {
				if e.Kind == agent.EventEscalated {
					escalations = append(escalations, e)
				}
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.fast.task.Budget.MaxIterations != router.DefaultMaxSteps || tc.fast.task.Budget.StopAfterFailedCalls != router.DefaultMaxFailures+1 {
				t.Errorf("fast path budget %+v, want the threshold %d and a stop after %d failed calls", tc.fast.task.Budget, router.DefaultMaxSteps, router.DefaultMaxFailures+1)
			}
			if tc.escalated == "" {
				if tc.planner.runs != 0 || len(escalations) != 0 {
					t.Fatalf("escalated (%d planner runs, events %v) although it should not", tc.planner.runs, escalations)
				}
			} else {
				if tc.planner.runs != 1 || len(escalations) != 1 || !strings.HasPrefix(escalations[0].Text, tc.escalated) {
					t.Fatalf("planner ran %d times, escalation events %+v; want one with %q", tc.planner.runs, escalations, tc.escalated)
				}
				pt := tc.planner.task
				if !strings.HasPrefix(pt.User, task.User+"\n\n") || !strings.Contains(pt.User, tc.escalated) {
					t.Errorf("planner task lacks the original task or the reason:\n%s", pt.User)
				}
				// One budget for the whole run: the planner gets what the
				// fast path left.
				calls := max(tc.fast.out.ToolCalls, len(tc.fast.events)/2)
				if pt.Thread == task.Thread || pt.Budget.MaxIterations != 10-tc.fast.out.Iterations || pt.Budget.MaxToolCalls != agent.DefaultMaxToolCalls-calls {
					t.Errorf("planner task thread %q budget %+v: want its own thread and what the fast path left of the task's budget", pt.Thread, pt.Budget)
				}
			}
			if tc.wantErr {
				return
			}
			if res.Answer.Cause != tc.cause {
				t.Errorf("answer %q, want %q", res.Answer.Cause, tc.cause)
			}
			if tc.path != "" && !strings.HasSuffix(res.Path, tc.path) {
				t.Errorf("path %q, want it to end with %q", res.Path, tc.path)
			}
		})
	}
}

// TestHandoverCarriesWhatTheFastPathFound: the planner's task includes the
// fast path's calls, their observations and its tentative answer; the
// outcome adds up both paths' work.
func TestHandoverCarriesWhatTheFastPathFound(t *testing.T) {
	fast := &scripted{name: "react", events: calls("package main\nfunc main() { x := 1 }", "error: no such file: util.go"),
		out: agent.Outcome[answer]{Answer: answer{"x is unused", 0.3}, Iterations: 3, ToolsUsed: []string{"read_file", "list_files"}}}
	planner := &scripted{name: "plan-execute", out: agent.Outcome[answer]{Answer: answer{"x is unused in main", 0.9}, Iterations: 4, ToolsUsed: []string{"search_workspace", "read_file"}}}
	res, err := router.Strategy[answer]{Fast: fast, Planner: planner}.Run(context.Background(), agent.Task{User: "task"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := planner.task.User
	for _, want := range []string{`read_file {"path":"f0.go"} → package main func main() { x := 1 }`, "error: no such file: util.go", "(confidence 0.30): x is unused", "low confidence 0.30"} {
		if !strings.Contains(u, want) {
			t.Errorf("hand-over lacks %q:\n%s", want, u)
		}
	}
	if planner.task.Thread != "" {
		t.Errorf("a task without a thread got planner thread %q", planner.task.Thread)
	}
	if res.Iterations != 7 || fmt.Sprint(res.ToolsUsed) != "[read_file list_files search_workspace]" || res.Path != "react → plan-execute (low confidence 0.30)" {
		t.Errorf("outcome = %+v", res)
	}
}

// TestCancelledNeverEscalates: when the caller gives up, the planner is not
// started.
func TestCancelledNeverEscalates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fast := &scripted{name: "react", out: agent.Outcome[answer]{Answer: answer{"guess", 0.1}}}
	planner := &scripted{name: "plan"}
	_, err := router.Strategy[answer]{Fast: fast, Planner: planner}.Run(ctx, agent.Task{}, nil, nil)
	if !errors.Is(err, context.Canceled) || planner.runs != 0 {
		t.Errorf("err %v, planner runs %d", err, planner.runs)
	}
}

// TestThresholdsAreSettings: a smaller task budget bounds the fast path,
// and the thresholds can be tuned.
func TestThresholdsAreSettings(t *testing.T) {
	fast := &scripted{name: "react", events: calls("error: a", "error: b", "error: c"), out: agent.Outcome[answer]{Answer: answer{"guess", 0.6}}}
	planner := &scripted{name: "plan"}
	r := router.Strategy[answer]{Fast: fast, Planner: planner, MaxFailures: 3, MinConfidence: 0.7, MaxSteps: 4}
	res, err := r.Run(context.Background(), agent.Task{Budget: agent.Budget{MaxIterations: 3}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fast.task.Budget.MaxIterations != 3 {
		t.Errorf("fast path got %d iterations, want the task's 3", fast.task.Budget.MaxIterations)
	}
	if !strings.Contains(res.Path, "low confidence 0.60") {
		t.Errorf("path %q: three failures are tolerated with MaxFailures 3, the confidence is below 0.7", res.Path)
	}
	r.MinConfidence = -1
	planner.runs = 0
	if res, _ := r.Run(context.Background(), agent.Task{}, nil, nil); planner.runs != 0 || res.Path != "react" {
		t.Errorf("escalated with confidence checks off: %q", res.Path)
	}
	if fast.task.Budget.MaxIterations != 4 {
		t.Errorf("fast path got %d iterations, want MaxSteps 4", fast.task.Budget.MaxIterations)
	}
}

// crashing is a planner whose first run dies with its process (the
// context is cancelled under it), and whose next run answers.
type crashing struct {
	scripted
	cancel context.CancelFunc
}

func (c *crashing) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[answer], error) {
	if c.cancel != nil {
		c.runs++
		c.cancel()
		c.cancel = nil
		return agent.Outcome[answer]{}, ctx.Err()
	}
	return c.scripted.Run(ctx, task, tools, emit)
}

// A run interrupted while the planner works resumes at the planner: the
// fast path is not run again and the planner gets the same hand-over.
func TestResumeAfterEscalationSkipsTheFastPath(t *testing.T) {
	unsure := agent.Outcome[answer]{Answer: answer{"maybe this", 0.2}, Iterations: 2, Path: "react"}
	fast := &scripted{name: "react", out: unsure, events: calls("package main")}
	planner := &crashing{scripted: scripted{name: "plan-execute", out: agent.Outcome[answer]{Answer: answer{"planned cause", 0.9}, Iterations: 3, Path: "plan-execute"}}}
	cp := &graph.MemoryCheckpointer{}
	r := router.Strategy[answer]{Fast: fast, Planner: planner}
	task := agent.Task{User: "why?", Thread: "t1", Checkpoints: cp}

	ctx, cancel := context.WithCancel(context.Background())
	planner.cancel = cancel
	if _, err := r.Run(ctx, task, nil, nil); err == nil {
		t.Fatal("the interrupted run reported no error")
	}
	handedOver := ""
	var resumed []agent.Event
	out, err := r.Run(context.Background(), task, nil, func(e agent.Event) {
		if e.Kind == graph.EventResumed {
			resumed = append(resumed, e)
		}
	})
	handedOver = planner.task.User
	if err != nil || out.Answer.Cause != "planned cause" {
		t.Fatalf("resumed: %+v %v", out, err)
	}
	if fast.runs != 1 || planner.runs != 2 {
		t.Fatalf("fast path ran %d times, planner %d: want 1 and 2", fast.runs, planner.runs)
	}
	if !strings.Contains(handedOver, "package main") || !strings.Contains(out.Path, "react → plan-execute (low confidence 0.20)") || len(resumed) != 1 {
		t.Fatalf("hand-over %q, path %q, resumed events %v", handedOver, out.Path, resumed)
	}
	// Done: the next run starts at the fast path again.
	if _, err := r.Run(context.Background(), task, nil, nil); err != nil || fast.runs != 2 {
		t.Fatalf("after completion the fast path ran %d times (%v)", fast.runs, err)
	}
}
