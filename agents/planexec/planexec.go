// Package planexec is the plan-and-execute strategy of the agent core
// (package agent), built on the graph engine (graph.PlanExecute).
//
// The model first writes a plan, one structured call validated against a
// JSON Schema whose tool names are limited to the tools given; every step
// then runs in order through the core's executor under its guards and
// budget, with no model call between steps; a failed step sends the run to
// a replan (at most MaxReplans times); and one last call turns the results
// into the answer of type A, through a final_answer tool with A's schema
// and one repair turn.
//
// Each node has its fallback: a plan that fails validation twice (or an
// unusable one, such as a step calling an unknown tool) hands the task to
// the Fallback strategy, ReAct by default; a replan that fails ends the
// plan and the answer is written from what was gathered; a guard that
// forbids a step (the tool-call budget, a duplicate call) does the same.
//
// The state is plain JSON, so a run given a task.Thread and
// task.Checkpoints is saved after every node and an interrupted run
// resumes where it stopped.
package planexec

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/internal/turns"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/react"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/prompts"
)

// Name is the strategy's name.
const Name = "plan-execute"

// SchemaPlan is the schema name of the plan and replan calls.
const SchemaPlan = "plan_execute_plan"

// Defaults of the zero fields of [Strategy].
const (
	DefaultMaxSteps   = 6
	DefaultMaxReplans = 2
)

// Step states.
const (
	StatusPending = "pending"
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Wording is what the strategy tells the model about the answer. Zero
// fields get generic defaults; a feature gives wording of its own domain.
type Wording = turns.Wording

// defaultFinalAnswer describes final_answer when the feature does not.
const defaultFinalAnswer = "Give the final answer to the task from the results of the plan."

// Strategy is plan-and-execute for answers of type A. The zero value is
// ready to use.
type Strategy[A any] struct {
	// MaxSteps bounds the steps of one plan (default DefaultMaxSteps).
	MaxSteps int
	// MaxReplans bounds the revisions after failed steps (default
	// DefaultMaxReplans; negative: none).
	MaxReplans int
	// Prompts renders plan_execute_plan, plan_execute_replan and
	// plan_execute_answer; nil: the builtins.
	Prompts *prompts.Set
	Wording Wording
	// Fallback works the task when no usable plan can be had; nil: ReAct.
	Fallback agent.Strategy[A]
}

var _ agent.Strategy[struct{}] = Strategy[struct{}]{}

// Name implements agent.Strategy.
func (Strategy[A]) Name() string { return Name }

// Step is one step of the plan with what came of it.
type Step struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"`
	Status      string          `json:"status"`
	Result      string          `json:"result,omitempty"`
}

// Call is a tool call that ran, as the loop guards remember it.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	OK   bool            `json:"ok"`
}

// State is the graph's state: what a checkpoint holds.
type State[A any] struct {
	Steps   []Step `json:"steps"`
	Replans int    `json:"replans"`
	// Failed is set when the last step failed, until a replan.
	Failed bool `json:"failed,omitempty"`
	// Note says why the plan stopped before its end.
	Note string `json:"note,omitempty"`
	// Fallback says why the plan was given up for the fallback strategy.
	Fallback  string   `json:"fallback,omitempty"`
	Calls     []Call   `json:"calls,omitempty"`
	ToolsUsed []string `json:"toolsUsed,omitempty"`
	Forced    bool     `json:"forced,omitempty"`
	Guard     string   `json:"guard,omitempty"`
	Answer    *A       `json:"answer,omitempty"`
	// FallbackIterations are the fallback strategy's iterations.
	FallbackIterations int `json:"fallbackIterations,omitempty"`
	// FallbackToolCalls are the fallback strategy's tool calls.
	FallbackToolCalls int `json:"fallbackToolCalls,omitempty"`
	// FallbackPath is the path the fallback strategy reported.
	FallbackPath string `json:"fallbackPath,omitempty"`
}

// taken is the number of graph steps the run has taken, each counted as an
// iteration of the outcome: the plan, every step run and every replan.
func (s *State[A]) taken() int {
	n := 1 + s.Replans
	for _, st := range s.Steps {
		if st.Status == StatusDone || st.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Pending is the index of the next step to run, or -1.
func (s *State[A]) Pending() int {
	return slices.IndexFunc(s.Steps, func(st Step) bool { return st.Status == StatusPending })
}

// plan is what the model writes.
type plan struct {
	Steps []planStep `json:"steps"`
}

type planStep struct {
	ID          string         `json:"id" jsonschema:"the step's label, e.g. 1"`
	Description string         `json:"description" jsonschema:"what the step finds out and why"`
	Tool        string         `json:"tool" jsonschema:"the tool the step calls"`
	Args        map[string]any `json:"args" jsonschema:"the tool's arguments"`
}

// Run implements agent.Strategy.
func (s Strategy[A]) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[A], error) {
	if task.Gateway == nil {
		return agent.Outcome[A]{}, errors.New("plan-execute: nil gateway")
	}
	task.Budget = task.Budget.WithDefaults()
	if task.Class == "" {
		task.Class = llm.TaskAgent
	}
	if emit == nil {
		emit = func(agent.Event) {}
	}
	x, err := agent.NewExecutor(tools, task.Log, turns.FinalAnswerTool)
	if err != nil {
		return agent.Outcome[A]{}, fmt.Errorf("plan-execute: %w", err)
	}
	r := &run[A]{s: s.withDefaults(), task: task, tools: tools, x: x}
	g, err := r.graph()
	if err != nil {
		return agent.Outcome[A]{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, task.Budget.Timeout)
	defer cancel()
	res, err := g.Run(ctx, State[A]{}, graph.Options{Thread: task.Thread, Checkpointer: task.Checkpoints, Emit: emit, Log: task.Log})
	st := res.State
	out := agent.Outcome[A]{Iterations: res.Steps + st.FallbackIterations, ToolsUsed: st.ToolsUsed, ToolCalls: len(st.Calls) + st.FallbackToolCalls, Forced: st.Forced, Guard: st.Guard, Path: Name}
	if st.Fallback != "" {
		out.Path = fmt.Sprintf("%s → %s (plan unusable)", Name, cmp.Or(st.FallbackPath, r.s.Fallback.Name()))
	}
	if st.Answer != nil {
		out.Answer = *st.Answer
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, agent.ErrTimeout) {
			err = fmt.Errorf("%w: %w", turns.CtxErr(task, ctx.Err()), err)
		}
		return out, fmt.Errorf("plan-execute: %w", err)
	}
	return out, nil
}

func (s Strategy[A]) withDefaults() Strategy[A] {
	if s.MaxSteps <= 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	if s.MaxReplans == 0 {
		s.MaxReplans = DefaultMaxReplans
	}
	s.MaxReplans = max(s.MaxReplans, 0)
	if s.Prompts == nil {
		s.Prompts = prompts.Builtin()
	}
	s.Wording = s.Wording.WithDefaults(defaultFinalAnswer)
	if s.Fallback == nil {
		s.Fallback = react.Strategy[A]{}
	}
	return s
}

// run holds what the nodes of one Run share besides the state.
type run[A any] struct {
	s     Strategy[A]
	task  agent.Task
	tools []agent.Tool
	x     *agent.Executor
}

func (r *run[A]) graph() (*graph.Graph[State[A]], error) {
	// Every step and replan is a node run: the bound leaves room for every
	// step of every revision, and stops a router bug from spinning.
	limit := (r.s.MaxReplans+1)*(r.s.MaxSteps+1) + 3
	return graph.PlanExecute(Name, graph.PlanExecuteNodes[State[A]]{
		Plan: r.plan, Execute: r.execute, Replan: r.replan, Answer: r.answer,
		Next: r.next, MaxSteps: limit,
	})
}

// next routes after the plan, a step and a replan.
func (r *run[A]) next(s State[A]) string {
	switch {
	case s.Answer != nil:
		return graph.End
	case s.Fallback != "" || s.Forced || s.Note != "":
		return graph.NodeAnswer
	case s.Failed:
		return graph.NodeReplan
	case s.Pending() >= 0:
		return graph.NodeExecute
	}
	return graph.NodeAnswer
}

func (r *run[A]) planTools() []prompts.PlanTool { return turns.PlanTools(r.tools) }

// room is how many steps a plan, or the revision a replan node is
// writing, may have: at most MaxSteps, and no more than the budget leaves
// of its iterations after the steps taken and the answer. (The tool-call
// budget is the guards': a step past it stops the plan.)
func (r *run[A]) room(s State[A]) int {
	return min(r.s.MaxSteps, r.task.Budget.MaxIterations-s.taken()-1)
}

// askPlan makes the plan or replan call after msgs.
func (r *run[A]) askPlan(ctx context.Context, msgs []llm.Message, attempts, maxSteps int) ([]Step, error) {
	allowed := map[string][]any{"steps.tool": turns.Names(r.tools)}
	p, err := turns.Plan(ctx, r.task, SchemaPlan, allowed, msgs, attempts, false, func(p *plan) error { return r.check(p, maxSteps) })
	if err != nil {
		return nil, err
	}
	steps := make([]Step, len(p.Steps))
	for i, ps := range p.Steps {
		args, _ := json.Marshal(ps.Args)
		if ps.Args == nil {
			args = []byte("{}")
		}
		steps[i] = Step{ID: ps.ID, Description: ps.Description, Tool: ps.Tool, Args: args, Status: StatusPending}
	}
	return steps, nil
}

// check says, in words meant for the model, what makes a plan unusable.
func (r *run[A]) check(p *plan, maxSteps int) error {
	if len(p.Steps) > maxSteps {
		return fmt.Errorf("the plan has %d steps; at most %d are allowed", len(p.Steps), maxSteps)
	}
	seen := map[string]bool{}
	var problems []string
	for i := range p.Steps {
		st := &p.Steps[i]
		st.ID = strings.TrimSpace(st.ID)
		if st.ID == "" {
			st.ID = fmt.Sprint(i + 1)
		}
		if seen[st.ID] {
			problems = append(problems, fmt.Sprintf("step id %q is used twice", st.ID))
		}
		seen[st.ID] = true
		t := slices.IndexFunc(r.tools, func(t agent.Tool) bool { return t.Name == st.Tool })
		if t < 0 {
			problems = append(problems, fmt.Sprintf("step %s calls %q, which is not one of the tools", st.ID, st.Tool))
			continue
		}
		raw, _ := json.Marshal(st.Args)
		if _, err := llm.PrepareToolArgs(llm.Tool{Name: st.Tool, Parameters: r.tools[t].Parameters}, raw); err != nil {
			problems = append(problems, fmt.Sprintf("step %s: %v", st.ID, err))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// plan writes the plan; two invalid plans hand the task to the fallback.
func (r *run[A]) plan(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	room := r.room(s)
	if len(r.tools) == 0 || room < 1 {
		return s, nil // nothing to plan, or no room for it: answer from the task
	}
	text, err := r.s.Prompts.Render("plan_execute_plan", prompts.PlanExecutePlanData{Tools: r.planTools(), MaxSteps: room})
	if err != nil {
		return s, err
	}
	msgs := append(turns.Base(r.task), llm.Message{Role: "user", Content: text.Text})
	steps, err := r.askPlan(ctx, msgs, 2, room)
	if errors.Is(err, turns.ErrUnusablePlan) {
		s.Fallback = err.Error()
		emit(agent.Event{Kind: agent.EventGuard, Node: graph.NodePlan, Text: "plan_unusable: " + err.Error() + "; handing the task to " + r.s.Fallback.Name()})
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.Steps = steps
	emit(agent.Event{Kind: agent.EventPlanCreated, Node: graph.NodePlan, Text: describe(steps)})
	return s, nil
}

// describe is a plan, one step per line.
func describe(steps []Step) string {
	if len(steps) == 0 {
		return "(no steps: the task shows enough)"
	}
	var b strings.Builder
	for _, st := range steps {
		fmt.Fprintf(&b, "%s. %s %s: %s\n", st.ID, st.Tool, st.Args, st.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}

// execute runs the next pending step.
func (r *run[A]) execute(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	i := s.Pending()
	if i < 0 {
		return s, nil
	}
	s.Steps = slices.Clone(s.Steps)
	st := &s.Steps[i]
	call := llm.ToolCall{ID: "step_" + st.ID, Name: st.Tool, Arguments: st.Args}
	guards := agent.NewGuards(r.task.Budget.MaxToolCalls)
	for _, c := range s.Calls {
		guards.Record(llm.ToolCall{Name: c.Tool, Arguments: c.Args}, c.OK)
	}
	if guard, why := guards.Check(call); guard != "" {
		s.Forced, s.Guard = true, guard
		s.Note = "the plan stopped before step " + st.ID + ": " + why
		skipRest(s.Steps, "not run: "+why)
		emit(agent.Event{Kind: agent.EventGuard, Node: graph.NodeExecute, Iteration: i + 1, Text: guard + ": " + why})
		return s, nil
	}
	emit(agent.Event{Kind: agent.EventAction, Node: graph.NodeExecute, Iteration: i + 1, Tool: st.Tool, Input: string(st.Args)})
	obs, ok := turns.RunTool(ctx, r.task, r.x, call)
	if err := ctx.Err(); err != nil {
		return s, turns.CtxErr(r.task, err)
	}
	emit(agent.Event{Kind: agent.EventObservation, Node: graph.NodeExecute, Iteration: i + 1, Tool: st.Tool, Text: obs})
	s.Calls = append(slices.Clone(s.Calls), Call{Tool: st.Tool, Args: st.Args, OK: ok})
	if !slices.Contains(s.ToolsUsed, st.Tool) {
		s.ToolsUsed = append(slices.Clone(s.ToolsUsed), st.Tool)
	}
	st.Result = obs
	st.Status = StatusDone
	if !ok {
		st.Status = StatusFailed
		s.Failed = true
		revised := s
		revised.Replans++
		switch {
		case s.Replans >= r.s.MaxReplans:
			s.Note = fmt.Sprintf("step %s failed and the plan was already revised %d times", st.ID, s.Replans)
			skipRest(s.Steps, "not run: the plan stopped after a failed step")
		case r.room(revised) < 1 || len(s.Calls) >= r.task.Budget.MaxToolCalls:
			s.Note = fmt.Sprintf("step %s failed and the budget leaves no room to revise the plan", st.ID)
			skipRest(s.Steps, "not run: the plan stopped after a failed step")
		}
	}
	emit(agent.Event{Kind: agent.EventStepDone, Node: graph.NodeExecute, Iteration: i + 1, Tool: st.Tool, Text: st.Status + ": " + firstLine(obs)})
	return s, nil
}

func skipRest(steps []Step, why string) {
	for i := range steps {
		if steps[i].Status == StatusPending {
			steps[i].Status, steps[i].Result = StatusSkipped, why
		}
	}
}

func firstLine(s string) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if cut {
		s += " …"
	}
	head, cut := redact.Cut(s, 200)
	if cut {
		return head + "…"
	}
	return head // redacted when it fits only so
}

// replan revises the rest of the plan after a failed step; a replan that
// fails ends the plan.
func (r *run[A]) replan(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	s.Replans++
	s.Failed = false
	s.Steps = slices.Clone(s.Steps)
	failed := -1
	for j := len(s.Steps) - 1; j >= 0; j-- {
		if s.Steps[j].Status == StatusFailed {
			failed = j
			break
		}
	}
	room := max(r.room(s), 1)
	data := prompts.PlanExecuteReplanData{Tools: r.planTools(), Steps: results(s.Steps), MaxSteps: room}
	if failed >= 0 {
		data.Failed = results(s.Steps[failed : failed+1])[0]
	}
	text, err := r.s.Prompts.Render("plan_execute_replan", data)
	if err != nil {
		return s, err
	}
	msgs := append(turns.Base(r.task), llm.Message{Role: "user", Content: text.Text})
	steps, err := r.askPlan(ctx, msgs, 1, room)
	if err != nil {
		if ctx.Err() != nil {
			return s, turns.CtxErr(r.task, ctx.Err())
		}
		s.Note = "the plan could not be revised: " + err.Error()
		skipRest(s.Steps, "not run: the plan could not be revised")
		emit(agent.Event{Kind: agent.EventGuard, Node: graph.NodeReplan, Text: "replan_failed: " + err.Error()})
		return s, nil
	}
	// The pending steps are replaced; the ids of the revision are made
	// distinct from those already used so events and results stay clear.
	kept := slices.DeleteFunc(s.Steps, func(st Step) bool { return st.Status == StatusPending })
	for i := range steps {
		steps[i].ID = fmt.Sprintf("r%d.%s", s.Replans, steps[i].ID)
	}
	s.Steps = append(kept, steps...)
	emit(agent.Event{Kind: agent.EventPlanCreated, Node: graph.NodeReplan, Iteration: s.Replans, Text: describe(steps)})
	return s, nil
}

func results(steps []Step) []prompts.PlanStepResult {
	out := make([]prompts.PlanStepResult, len(steps))
	for i, st := range steps {
		out[i] = prompts.PlanStepResult{ID: st.ID, Description: st.Description, Tool: st.Tool, Args: string(st.Args), Status: st.Status, Result: st.Result}
	}
	return out
}

// answer writes the answer from the results, or runs the fallback
// strategy when the plan was given up.
func (r *run[A]) answer(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	if s.Fallback != "" {
		// The fallback checkpoints under a thread of its own: under the
		// parent's, each would overwrite the other's checkpoint, and a
		// fallback cut short would start over instead of resuming.
		fb := r.task
		if fb.Thread != "" {
			fb.Thread += "/fallback/" + r.s.Fallback.Name()
		}
		// It works with what the run left of the budget: the steps
		// taken and this answer node count, and so do the calls made.
		fb.Budget.MaxIterations = r.task.Budget.MaxIterations - s.taken() - 1
		fb.Budget.MaxToolCalls = r.task.Budget.MaxToolCalls - len(s.Calls)
		if fb.Budget.MaxIterations < 1 || fb.Budget.MaxToolCalls < 1 {
			return s, fmt.Errorf("the plan is unusable and the budget leaves no room for %s (%s)", r.s.Fallback.Name(), s.Fallback)
		}
		out, err := r.s.Fallback.Run(ctx, fb, r.tools, emit)
		s.FallbackPath = cmp.Or(out.Path, r.s.Fallback.Name())
		if err != nil {
			return s, fmt.Errorf("%s after an unusable plan: %w", r.s.Fallback.Name(), err)
		}
		s.Answer, s.FallbackIterations, s.FallbackToolCalls = &out.Answer, out.Iterations, out.ToolCalls
		s.ToolsUsed, s.Forced, s.Guard = out.ToolsUsed, out.Forced, out.Guard
		return s, nil
	}
	text, err := r.s.Prompts.Render("plan_execute_answer", prompts.PlanExecuteAnswerData{Steps: results(s.Steps), Note: s.Note})
	if err != nil {
		return s, err
	}
	msgs := append(turns.Base(r.task), llm.Message{Role: "user", Content: text.Text})
	a, _, err := turns.Answer[A](ctx, r.task, msgs, r.s.Wording.FinalAnswer, nil, r.s.Wording.Repair)
	if err != nil {
		return s, err
	}
	s.Answer = &a
	emit(agent.Event{Kind: agent.EventDone, Node: graph.NodeAnswer, Text: turns.Summary(a)})
	return s, nil
}
