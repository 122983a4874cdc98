// Package rewoo is the ReWoo strategy (reasoning without observation) of
// the agent core (package agent), built on the graph engine (graph.ReWoo).
//
// The model writes every tool call up front in one structured call, as
// evidence steps E1, E2, … whose arguments may use the output of an
// earlier step by its label ("#E1"). The work node runs the calls in
// dependency waves, the calls of a wave concurrently under a cap, with no
// model call in between; the solve node makes one call that answers from
// the task and the evidence and names the evidence it rests on. A model is
// called twice whatever the number of tools, which is what makes ReWoo
// cheap where the evidence needed can be foreseen.
//
// An unusable plan (invalid twice, an unknown tool, a reference to a later
// step) hands the task to the Fallback strategy, ReAct by default.
//
// Gather runs the plan and the work without the solve call, for a feature
// whose own structured call uses the evidence (the pull-request Kody Rules
// check).
package rewoo

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/internal/turns"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/react"
	"github.com/kodustech/kodyls/prompts"
)

// Name is the strategy's name.
const Name = "rewoo"

// SchemaPlan is the schema name of the plan call.
const SchemaPlan = "rewoo_plan"

// Defaults of the zero fields of [Strategy].
const (
	DefaultConcurrency = 4
	DefaultMaxSteps    = 6
)

// ErrUnusablePlan means the model gave no usable plan (see Gather).
var ErrUnusablePlan = turns.ErrUnusablePlan

// Wording is what the strategy tells the model about the answer. Zero
// fields get generic defaults; a feature gives wording of its own domain.
type Wording = turns.Wording

// defaultFinalAnswer describes final_answer when the feature does not.
const defaultFinalAnswer = "Give the final answer to the task from the evidence, with the labels of the evidence it rests on."

// Strategy is ReWoo for answers of type A. The zero value is ready to use.
type Strategy[A any] struct {
	// Concurrency caps the tool calls running at once (default
	// DefaultConcurrency).
	Concurrency int
	// MaxSteps bounds the evidence steps of the plan (default
	// DefaultMaxSteps, and never more than the budget's tool calls).
	MaxSteps int
	// Prompts renders rewoo_plan and rewoo_solve; nil: the builtins.
	Prompts *prompts.Set
	Wording Wording
	// Fallback works the task when no usable plan can be had; nil: ReAct.
	Fallback agent.Strategy[A]
	// CachePlan lets the gateway's response cache answer the plan call:
	// for tasks whose plan depends on their text alone, such as a review
	// of an unchanged change set. The evidence is gathered anew each run.
	CachePlan bool
}

var _ agent.Strategy[struct{}] = Strategy[struct{}]{}

// Name implements agent.Strategy.
func (Strategy[A]) Name() string { return Name }

// Evidence is one planned call and, after the work, what it gave.
type Evidence struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"` // as planned, with the #E references
	Reason string          `json:"reason,omitempty"`
	Deps   []string        `json:"deps,omitempty"`
	Done   bool            `json:"done,omitempty"`
	Failed bool            `json:"failed,omitempty"`
	Text   string          `json:"text,omitempty"`
}

// Ref is the evidence as the prompts show it.
func (e Evidence) Ref() prompts.EvidenceRef {
	return prompts.EvidenceRef{ID: e.ID, Tool: e.Tool, Args: string(e.Args), Reason: e.Reason, Text: e.Text, Failed: e.Failed}
}

// State is the graph's state: what a checkpoint holds.
type State[A any] struct {
	Evidence  []Evidence `json:"evidence"`
	Fallback  string     `json:"fallback,omitempty"`
	ToolsUsed []string   `json:"toolsUsed,omitempty"`
	Answer    *A         `json:"answer,omitempty"`
	Citations []string   `json:"citations,omitempty"`
	Forced    bool       `json:"forced,omitempty"`
	Guard     string     `json:"guard,omitempty"`
	// FallbackIterations are the fallback strategy's iterations.
	FallbackIterations int `json:"fallbackIterations,omitempty"`
	// FallbackToolCalls are the fallback strategy's tool calls.
	FallbackToolCalls int `json:"fallbackToolCalls,omitempty"`
	// FallbackPath is the path the fallback strategy reported.
	FallbackPath string `json:"fallbackPath,omitempty"`
}

// calls is the number of evidence calls that ran.
func (s *State[A]) calls() int {
	n := 0
	for _, e := range s.Evidence {
		if e.Done && !strings.HasPrefix(e.Text, "not run: ") {
			n++
		}
	}
	return n
}

// Result is a run's outcome with the evidence and the labels of the
// evidence the answer cites.
type Result[A any] struct {
	agent.Outcome[A]
	Evidence  []Evidence
	Citations []string // e.g. ["E1", "E3"], in label order
}

type plan struct {
	Steps []planStep `json:"steps"`
}

type planStep struct {
	ID     string         `json:"id" jsonschema:"the evidence label: E1, E2, … in order"`
	Tool   string         `json:"tool" jsonschema:"the tool the step calls"`
	Args   map[string]any `json:"args" jsonschema:"the tool's arguments; a string may use an earlier step's output as #E1"`
	Reason string         `json:"reason" jsonschema:"what this evidence shows"`
}

// Run implements agent.Strategy.
func (s Strategy[A]) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[A], error) {
	r, err := s.Solve(ctx, task, tools, emit)
	return r.Outcome, err
}

// Solve runs plan → work → solve and returns the answer with the evidence
// and the citations.
func (s Strategy[A]) Solve(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (Result[A], error) {
	r, err := s.start(task, tools)
	if err != nil {
		return Result[A]{}, err
	}
	g, err := graph.ReWoo(Name, graph.ReWooNodes[State[A]]{Plan: r.plan, Work: r.work, Solve: r.solve})
	if err != nil {
		return Result[A]{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.task.Budget.Timeout)
	defer cancel()
	res, err := g.Run(ctx, State[A]{}, graph.Options{Thread: task.Thread, Checkpointer: task.Checkpoints, Emit: orDiscard(emit), Log: task.Log})
	st := res.State
	out := Result[A]{
		Outcome:   agent.Outcome[A]{Iterations: res.Steps + st.FallbackIterations, ToolsUsed: st.ToolsUsed, ToolCalls: st.calls() + st.FallbackToolCalls, Forced: st.Forced, Guard: st.Guard, Path: Name},
		Evidence:  st.Evidence,
		Citations: st.Citations,
	}
	if st.Fallback != "" {
		out.Path = fmt.Sprintf("%s → %s (plan unusable)", Name, cmp.Or(st.FallbackPath, r.s.Fallback.Name()))
	}
	if st.Answer != nil {
		out.Answer = *st.Answer
	}
	if err != nil {
		return out, fmt.Errorf("rewoo: %w", err)
	}
	return out, nil
}

// Gather runs the plan and the work only, and returns the evidence. It
// returns ErrUnusablePlan when the model gave no usable plan; the caller
// then goes on without evidence.
func (s Strategy[A]) Gather(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) ([]Evidence, error) {
	r, err := s.start(task, tools)
	if err != nil {
		return nil, err
	}
	g, err := graph.New[State[A]](Name+"-gather").
		Node(graph.NodePlan, r.plan).
		Node(graph.NodeWork, r.work).
		Edge(graph.NodePlan, graph.NodeWork).
		Edge(graph.NodeWork, graph.End).
		Compile()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.task.Budget.Timeout)
	defer cancel()
	res, err := g.Run(ctx, State[A]{}, graph.Options{Thread: task.Thread, Checkpointer: task.Checkpoints, Emit: orDiscard(emit), Log: task.Log})
	if err != nil {
		return res.State.Evidence, fmt.Errorf("rewoo: %w", err)
	}
	if res.State.Fallback != "" {
		return nil, fmt.Errorf("rewoo: %w: %s", ErrUnusablePlan, strings.TrimPrefix(res.State.Fallback, ErrUnusablePlan.Error()+": "))
	}
	return res.State.Evidence, nil
}

func orDiscard(emit func(agent.Event)) func(agent.Event) {
	if emit == nil {
		return func(agent.Event) {}
	}
	return emit
}

func (s Strategy[A]) start(task agent.Task, tools []agent.Tool) (*run[A], error) {
	if task.Gateway == nil {
		return nil, errors.New("rewoo: nil gateway")
	}
	task.Budget = task.Budget.WithDefaults()
	if task.Class == "" {
		task.Class = llm.TaskAgent
	}
	x, err := agent.NewExecutor(tools, task.Log, turns.FinalAnswerTool)
	if err != nil {
		return nil, fmt.Errorf("rewoo: %w", err)
	}
	if s.Concurrency <= 0 {
		s.Concurrency = DefaultConcurrency
	}
	if s.MaxSteps <= 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	s.MaxSteps = min(s.MaxSteps, task.Budget.MaxToolCalls)
	if s.Prompts == nil {
		s.Prompts = prompts.Builtin()
	}
	s.Wording = s.Wording.WithDefaults(defaultFinalAnswer)
	if s.Fallback == nil {
		s.Fallback = react.Strategy[A]{}
	}
	return &run[A]{s: s, task: task, tools: tools, x: x}, nil
}

type run[A any] struct {
	s     Strategy[A]
	task  agent.Task
	tools []agent.Tool
	x     *agent.Executor
}

// refRE matches an evidence reference in arguments.
var refRE = regexp.MustCompile(`#(E[0-9]+)`)

var idRE = regexp.MustCompile(`^E[0-9]+$`)

// labelRE matches an evidence label cited in an answer's text.
var labelRE = regexp.MustCompile(`\b(E[0-9]+)\b`)

// check says, in words meant for the model, what makes a plan unusable.
func (r *run[A]) check(p *plan) error {
	if len(p.Steps) > r.s.MaxSteps {
		return fmt.Errorf("the plan has %d steps; at most %d are allowed", len(p.Steps), r.s.MaxSteps)
	}
	var problems []string
	seen := map[string]bool{}
	for i := range p.Steps {
		st := &p.Steps[i]
		st.ID = strings.TrimPrefix(strings.TrimSpace(st.ID), "#")
		if !idRE.MatchString(st.ID) {
			problems = append(problems, fmt.Sprintf("step %d has the id %q; use E%d", i+1, st.ID, i+1))
		}
		if seen[st.ID] {
			problems = append(problems, fmt.Sprintf("the id %s is used twice", st.ID))
		}
		t := slices.IndexFunc(r.tools, func(t agent.Tool) bool { return t.Name == st.Tool })
		if t < 0 {
			problems = append(problems, fmt.Sprintf("%s calls %q, which is not one of the tools", st.ID, st.Tool))
		}
		raw, _ := json.Marshal(st.Args)
		for _, m := range refRE.FindAllStringSubmatch(string(raw), -1) {
			if !seen[m[1]] {
				problems = append(problems, fmt.Sprintf("%s uses #%s, which is not an earlier step", st.ID, m[1]))
			}
		}
		if t >= 0 && !refRE.Match(raw) {
			// Arguments with references are checked once substituted.
			if _, err := llm.PrepareToolArgs(llm.Tool{Name: st.Tool, Parameters: r.tools[t].Parameters}, raw); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", st.ID, err))
			}
		}
		seen[st.ID] = true
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// plan writes every call up front; two unusable plans hand the task to the
// fallback.
func (r *run[A]) plan(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	if len(r.tools) == 0 {
		return s, nil
	}
	text, err := r.s.Prompts.Render("rewoo_plan", prompts.ReWooPlanData{Tools: turns.PlanTools(r.tools), MaxSteps: r.s.MaxSteps})
	if err != nil {
		return s, err
	}
	msgs := append(turns.Base(r.task), llm.Message{Role: "user", Content: text.Text})
	allowed := map[string][]any{"steps.tool": turns.Names(r.tools)}
	p, err := turns.Plan(ctx, r.task, SchemaPlan, allowed, msgs, 2, r.s.CachePlan, r.check)
	if errors.Is(err, turns.ErrUnusablePlan) {
		s.Fallback = err.Error()
		emit(agent.Event{Kind: agent.EventGuard, Node: graph.NodePlan, Text: "plan_unusable: " + err.Error() + "; handing the task to " + r.s.Fallback.Name()})
		return s, nil
	}
	if err != nil {
		return s, err
	}
	var lines []string
	for _, ps := range p.Steps {
		args, _ := json.Marshal(ps.Args)
		if ps.Args == nil {
			args = []byte("{}")
		}
		e := Evidence{ID: ps.ID, Tool: ps.Tool, Args: args, Reason: ps.Reason}
		for _, m := range refRE.FindAllStringSubmatch(string(args), -1) {
			if !slices.Contains(e.Deps, m[1]) {
				e.Deps = append(e.Deps, m[1])
			}
		}
		s.Evidence = append(s.Evidence, e)
		lines = append(lines, fmt.Sprintf("%s = %s %s: %s", e.ID, e.Tool, e.Args, e.Reason))
	}
	if len(lines) == 0 {
		lines = []string{"(no evidence needed: the task shows enough)"}
	}
	emit(agent.Event{Kind: agent.EventPlanCreated, Node: graph.NodePlan, Text: strings.Join(lines, "\n")})
	return s, nil
}

// work runs the calls in dependency waves, a wave's calls concurrently.
// Events are collected per call and reported after each wave in plan
// order, on the caller's goroutine as the core requires.
func (r *run[A]) work(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	s.Evidence = slices.Clone(s.Evidence)
	byID := map[string]int{}
	for i, e := range s.Evidence {
		byID[e.ID] = i
	}
	for wave := 1; ; wave++ {
		var ready []int
		for i, e := range s.Evidence {
			if e.Done {
				continue
			}
			waiting := false
			for _, d := range e.Deps {
				if !s.Evidence[byID[d]].Done {
					waiting = true
				}
			}
			if !waiting {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			break
		}
		evs := make([][]agent.Event, len(ready))
		sem := make(chan struct{}, r.s.Concurrency)
		var wg sync.WaitGroup
		for k, i := range ready {
			e := &s.Evidence[i]
			args, blocked := substitute(e, s.Evidence, byID)
			if blocked != "" {
				e.Done, e.Failed, e.Text = true, true, "not run: "+blocked
				evs[k] = append(evs[k], agent.Event{Kind: agent.EventStepDone, Node: graph.NodeWork, Iteration: wave, Tool: e.Tool, Text: e.ID + " skipped: " + blocked})
				continue
			}
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					e.Done, e.Failed, e.Text = true, true, "error: "+ctx.Err().Error()
					return
				}
				defer func() { <-sem }()
				evs[k] = append(evs[k], agent.Event{Kind: agent.EventAction, Node: graph.NodeWork, Iteration: wave, Tool: e.Tool, Input: string(args)})
				obs, ok := turns.RunTool(ctx, r.task, r.x, llm.ToolCall{ID: "evidence_" + e.ID, Name: e.Tool, Arguments: args})
				e.Done, e.Failed, e.Text = true, !ok, obs
				status := "done"
				if !ok {
					status = "failed"
				}
				evs[k] = append(evs[k],
					agent.Event{Kind: agent.EventObservation, Node: graph.NodeWork, Iteration: wave, Tool: e.Tool, Text: obs},
					agent.Event{Kind: agent.EventStepDone, Node: graph.NodeWork, Iteration: wave, Tool: e.Tool, Text: e.ID + " " + status})
			})
		}
		wg.Wait()
		for _, es := range evs {
			for _, ev := range es {
				emit(ev)
			}
		}
		for _, i := range ready {
			if e := s.Evidence[i]; !strings.HasPrefix(e.Text, "not run: ") && !slices.Contains(s.ToolsUsed, e.Tool) {
				s.ToolsUsed = append(slices.Clone(s.ToolsUsed), e.Tool)
			}
		}
		if err := ctx.Err(); err != nil {
			return s, turns.CtxErr(r.task, err)
		}
	}
	return s, nil
}

// substitute replaces the #E references in e's arguments by the evidence
// texts. blocked says why the call cannot run: an input failed.
func substitute(e *Evidence, all []Evidence, byID map[string]int) (json.RawMessage, string) {
	if len(e.Deps) == 0 {
		return e.Args, ""
	}
	for _, d := range e.Deps {
		if dep := all[byID[d]]; dep.Failed {
			return nil, fmt.Sprintf("its input #%s failed", d)
		}
	}
	var v any
	if err := json.Unmarshal(e.Args, &v); err != nil {
		return e.Args, ""
	}
	var walk func(any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			return refRE.ReplaceAllStringFunc(t, func(ref string) string {
				if i, ok := byID[ref[1:]]; ok {
					return strings.TrimSpace(all[i].Text)
				}
				return ref
			})
		case map[string]any:
			for k, x := range t {
				t[k] = walk(x)
			}
		case []any:
			for k, x := range t {
				t[k] = walk(x)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return e.Args, ""
	}
	return out, ""
}

// solve answers from the evidence, or runs the fallback strategy when the
// plan was given up.
func (r *run[A]) solve(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	if s.Fallback != "" {
		// The fallback checkpoints under a thread of its own: under the
		// parent's, each would overwrite the other's checkpoint, and a
		// fallback cut short would start over instead of resuming.
		fb := r.task
		if fb.Thread != "" {
			fb.Thread += "/fallback/" + r.s.Fallback.Name()
		}
		// It works with what the run left of the budget: the plan, the
		// work and this node are steps taken.
		fb.Budget.MaxIterations = r.task.Budget.MaxIterations - 3
		fb.Budget.MaxToolCalls = r.task.Budget.MaxToolCalls - s.calls()
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
	refs := make([]prompts.EvidenceRef, len(s.Evidence))
	for i, e := range s.Evidence {
		refs[i] = e.Ref()
	}
	text, err := r.s.Prompts.Render("rewoo_solve", prompts.ReWooSolveData{Evidence: refs})
	if err != nil {
		return s, err
	}
	msgs := append(turns.Base(r.task), llm.Message{Role: "user", Content: text.Text})
	a, raw, err := turns.Answer[A](ctx, r.task, msgs, r.s.Wording.FinalAnswer, answerSchema[A](), r.s.Wording.Repair)
	if err != nil {
		return s, err
	}
	s.Answer = &a
	s.Citations = citations(raw, s.Evidence)
	emit(agent.Event{Kind: agent.EventDone, Node: graph.NodeSolve, Text: strings.TrimSpace(turns.Summary(a) + " [" + strings.Join(s.Citations, ", ") + "]")})
	return s, nil
}

// answerSchema is A's schema with an "evidence" list of the labels the
// answer rests on; nil (A's own schema) when A is not an object.
func answerSchema[A any]() any {
	sch, err := jsonschema.ForType(reflect.TypeFor[A](), nil)
	if err != nil || sch.Type != "object" || sch.Properties == nil {
		return nil
	}
	if _, taken := sch.Properties["evidence"]; taken {
		return nil
	}
	sch.Properties["evidence"] = &jsonschema.Schema{
		Type:        "array",
		Items:       &jsonschema.Schema{Type: "string"},
		Description: "the labels of the evidence the answer rests on, e.g. E1",
	}
	sch.Required = append(sch.Required, "evidence")
	return sch
}

// citations are the evidence labels the answer names: in its evidence
// list or in its text (#E2), known ones only, in label order.
func citations(raw json.RawMessage, ev []Evidence) []string {
	known := map[string]bool{}
	for _, e := range ev {
		known[e.ID] = true
	}
	found := map[string]bool{}
	var listed struct {
		Evidence []string `json:"evidence"`
	}
	_ = json.Unmarshal(raw, &listed)
	for _, l := range listed.Evidence {
		l = strings.TrimPrefix(strings.Trim(strings.TrimSpace(l), "[]"), "#")
		if known[l] {
			found[l] = true
		}
	}
	for _, m := range labelRE.FindAllStringSubmatch(string(raw), -1) {
		if known[m[1]] {
			found[m[1]] = true
		}
	}
	out := make([]string, 0, len(found))
	for l := range found {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i][1:])
		b, _ := strconv.Atoi(out[j][1:])
		return a < b
	})
	return out
}
