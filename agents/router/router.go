// Package router is the adaptive routing of the agent core: a strategy
// that works a task on a fast path (ReAct) first and hands it to a planner
// only when the fast path shows that the task is harder than it looked.
//
// The fast path escalates when it runs past its step threshold, when its
// tool calls keep failing, when one of its loop guards fires, when it
// fails, or when its answer's confidence stays low. Escalation happens at
// most once and only forward: the planner is told what the fast path found
// and is never routed back, and when the planner fails the fast path's
// answer stands. A quick, confident answer never pays for planning.
//
// The task's budget is the whole run's: the planner gets the steps and
// tool calls the fast path left, and is not started when too little is
// left (MinPlannerSteps, one tool call).
package router

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
	"github.com/kodustech/kodyls/agents/redact"
)

// Defaults of the zero fields of [Strategy].
const (
	// DefaultMaxSteps leaves the planner 4 of the default budget's 10
	// steps (agent.DefaultMaxIterations): a plan, two steps and an answer.
	DefaultMaxSteps      = 6
	DefaultMaxFailures   = 2
	DefaultMinConfidence = 0.5
)

// MinPlannerSteps is the least the planner must have left of the task's
// steps for an escalation: a plan, one step and an answer. With less, or
// with no tool call left, the fast path's answer stands.
const MinPlannerSteps = 3

// Confident is implemented by answer types that carry the model's
// confidence, from 0 to 1; the router escalates a low-confidence answer.
type Confident interface {
	ConfidenceScore() float64
}

// Strategy runs Fast and escalates to Planner. Fast and Planner are
// required.
type Strategy[A any] struct {
	Fast    agent.Strategy[A]
	Planner agent.Strategy[A]
	// MaxSteps bounds the fast path's iterations (default DefaultMaxSteps,
	// and never more than the task's budget); reaching it escalates.
	MaxSteps int
	// MaxFailures is how many failed tool calls the fast path may make
	// (default DefaultMaxFailures); one more stops it and escalates.
	MaxFailures int
	// MinConfidence is the confidence below which a Confident answer is
	// escalated (default DefaultMinConfidence; negative: never).
	MinConfidence float64
}

var _ agent.Strategy[struct{}] = Strategy[struct{}]{}

// Name implements agent.Strategy.
func (s Strategy[A]) Name() string { return "routed" }

// Observation limits of the hand-over to the planner.
const (
	handoverObservations = 8
	handoverChars        = 400
)

// Run implements agent.Strategy. The outcome's Path says which path
// answered and why the task was escalated.
//
// The task's budget bounds the whole run: the planner gets the steps and
// tool calls the fast path left, and the outcome counts both paths'.
func (s Strategy[A]) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[A], error) {
	if s.Fast == nil || s.Planner == nil {
		return agent.Outcome[A]{}, errors.New("router: a fast path and a planner are both required")
	}
	if emit == nil {
		emit = func(agent.Event) {}
	}
	maxSteps := cmp.Or(s.MaxSteps, DefaultMaxSteps)
	budget := task.Budget.WithDefaults()
	fastTask := task
	fastTask.Budget = budget
	fastTask.Budget.MaxIterations = min(budget.MaxIterations, maxSteps)
	// The call that fails once too often stops the fast path there,
	// instead of at the end of its steps.
	fastTask.Budget.StopAfterFailedCalls = s.maxFailures() + 1

	planTask := task
	if task.Thread != "" {
		// The planner's checkpoints must not overwrite the fast path's.
		planTask.Thread = task.Thread + "/" + s.Planner.Name()
	}
	var (
		out    agent.Outcome[A]
		err    error
		reason string
	)
	if h, ok := s.loadHandover(ctx, task); ok {
		// Interrupted after the hand-over: the fast path's work is in the
		// planner's task; go straight back to the planner.
		out.Answer, out.Iterations, out.ToolsUsed, out.ToolCalls, out.Path = h.Answer, h.Iterations, h.ToolsUsed, h.ToolCalls, h.FastPath
		if h.FastErr != "" {
			err = errors.New(h.FastErr)
		}
		reason, planTask.User = h.Reason, h.PlannerUser
		emit(agent.Event{Kind: graph.EventResumed, Iteration: h.Iterations, Text: "continuing the escalated investigation: " + reason})
	} else {
		var seen trail
		out, err = s.Fast.Run(ctx, fastTask, tools, func(e agent.Event) {
			seen.see(e)
			emit(e)
		})
		if ctx.Err() != nil {
			// The caller gave up: nothing is escalated.
			if err == nil {
				err = ctx.Err()
			}
			return out, err
		}
		// A resumed fast path reports only what it did since; its outcome
		// counts every call.
		out.ToolCalls = max(out.ToolCalls, len(seen.steps))
		reason = s.reason(out, err, seen.failures, fastTask.Budget.MaxIterations)
		if reason == "" {
			out.Path = cmp.Or(out.Path, s.Fast.Name())
			return out, err
		}
		if why := s.noRoom(budget, out); why != "" {
			// The explanation's budget is spent: the fast path's answer
			// (or failure) is the run's.
			fastPath := cmp.Or(out.Path, s.Fast.Name())
			if err != nil {
				return out, fmt.Errorf("router: %s: %w (not escalated: %s)", fastPath, err, why)
			}
			out.Path = fmt.Sprintf("%s (%s; not escalated: %s)", fastPath, reason, why)
			return out, nil
		}
		emit(agent.Event{Kind: agent.EventEscalated, Iteration: out.Iterations, Text: reason})
		planTask.User = task.User + "\n\n" + handover(&seen, reason, out, err)
		s.saveHandover(ctx, task, routeState[A]{
			Answer: out.Answer, Iterations: out.Iterations, ToolsUsed: out.ToolsUsed, ToolCalls: out.ToolCalls, FastPath: out.Path,
			FastErr: errText(err), Reason: reason, PlannerUser: planTask.User,
		}, false)
	}
	// The planner works with what the fast path left of the budget.
	planTask.Budget = budget
	planTask.Budget.MaxIterations = max(budget.MaxIterations-out.Iterations, 1)
	planTask.Budget.MaxToolCalls = max(budget.MaxToolCalls-out.ToolCalls, 1)
	fastPath := cmp.Or(out.Path, s.Fast.Name())
	pout, perr := s.Planner.Run(ctx, planTask, tools, emit)
	if ctx.Err() == nil {
		s.saveHandover(ctx, task, routeState[A]{}, true)
	}
	planPath := cmp.Or(pout.Path, s.Planner.Name())
	if perr != nil {
		if err != nil || ctx.Err() != nil {
			return out, fmt.Errorf("router: %s: %w; then %s: %w", fastPath, err, planPath, perr)
		}
		// Never worse than the fast path alone: its answer stands.
		out.Path = fmt.Sprintf("%s → %s (%s; it failed, the first answer stands)", fastPath, s.Planner.Name(), reason)
		out.Iterations += pout.Iterations
		out.ToolCalls += pout.ToolCalls
		return out, nil
	}
	pout.Iterations += out.Iterations
	pout.ToolCalls += out.ToolCalls
	used := slices.Clone(out.ToolsUsed)
	for _, t := range pout.ToolsUsed {
		if !slices.Contains(used, t) {
			used = append(used, t)
		}
	}
	pout.ToolsUsed = used
	// The reason follows the planner's name; what the planner itself
	// handed on to (a fallback after an unusable plan) follows that:
	// "react → plan-execute (low confidence 0.20) → react (plan unusable)".
	rest := ""
	if after, ok := strings.CutPrefix(planPath, s.Planner.Name()); ok {
		planPath, rest = s.Planner.Name(), after
	}
	pout.Path = fmt.Sprintf("%s → %s (%s)%s", fastPath, planPath, reason, rest)
	return pout, nil
}

func (s Strategy[A]) maxFailures() int { return cmp.Or(s.MaxFailures, DefaultMaxFailures) }

// noRoom says why the fast path's outcome leaves the planner too little
// of budget to work with, or "" when it may escalate.
func (s Strategy[A]) noRoom(budget agent.Budget, out agent.Outcome[A]) string {
	switch {
	case budget.MaxToolCalls-out.ToolCalls < 1:
		return fmt.Sprintf("all %d tool calls of the budget are used", budget.MaxToolCalls)
	case budget.MaxIterations-out.Iterations < MinPlannerSteps:
		return fmt.Sprintf("%d of the budget's %d steps are left", max(budget.MaxIterations-out.Iterations, 0), budget.MaxIterations)
	}
	return ""
}

// reason says why the fast path's outcome is escalated, or "" when it
// stands.
func (s Strategy[A]) reason(out agent.Outcome[A], err error, failures, steps int) string {
	switch {
	case err != nil && errors.Is(err, agent.ErrMalformedAnswer):
		return "the first path failed: " + err.Error()
	case err != nil:
		// The endpoint failed (down, cut answers, timeouts): a planner
		// would ask the same endpoint and fail the same way.
		return ""
	case out.Forced && out.Guard == agent.GuardMaxIterations:
		return fmt.Sprintf("ran past %d steps", steps)
	case out.Forced && out.Guard == agent.GuardFailedCalls:
		// A resumed fast path's events miss the failures before the
		// interruption; the guard fired on one more than allowed.
		return fmt.Sprintf("%d failed tool calls", max(failures, s.maxFailures()+1))
	case failures > s.maxFailures():
		return fmt.Sprintf("%d failed tool calls", failures)
	case out.Forced:
		return "loop guard " + out.Guard
	}
	floor := s.MinConfidence
	if floor == 0 {
		floor = DefaultMinConfidence
	}
	if c, ok := any(out.Answer).(Confident); ok && c.ConfidenceScore() < floor {
		return fmt.Sprintf("low confidence %.2f", c.ConfidenceScore())
	}
	return ""
}

// trail is what the router saw of the fast path: its tool calls and their
// observations, and how many failed.
type trail struct {
	steps    []step
	failures int
}

type step struct{ tool, input, obs string }

func (t *trail) see(e agent.Event) {
	switch e.Kind {
	case agent.EventAction:
		t.steps = append(t.steps, step{tool: e.Tool, input: e.Input})
	case agent.EventObservation:
		// The executor reports every failure of a call, whatever its
		// cause, as an observation starting with "error: ".
		if strings.HasPrefix(e.Text, "error: ") {
			t.failures++
		}
		if n := len(t.steps); n > 0 && t.steps[n-1].obs == "" {
			t.steps[n-1].obs = e.Text
		}
	}
}

// handover tells the planner what the fast path found, so that it starts
// from there instead of repeating the same calls.
func handover[A any](t *trail, reason string, out agent.Outcome[A], err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A quick first investigation handed this task over (%s).", reason)
	steps := t.steps
	if len(steps) > handoverObservations {
		fmt.Fprintf(&b, " It made %d tool calls; the last %d are below.", len(steps), handoverObservations)
		steps = steps[len(steps)-handoverObservations:]
	}
	if len(steps) > 0 {
		b.WriteString(" What it found (build on it; calls that failed may need other arguments):\n")
		for _, st := range steps {
			fmt.Fprintf(&b, "- %s %s → %s\n", st.tool, clip(st.input, 120), clip(st.obs, handoverChars))
		}
	} else {
		b.WriteString(" It made no tool calls.\n")
	}
	if err == nil {
		fmt.Fprintf(&b, "Its tentative answer")
		if c, ok := any(out.Answer).(Confident); ok {
			fmt.Fprintf(&b, " (confidence %.2f)", c.ConfidenceScore())
		}
		if str, ok := any(out.Answer).(fmt.Stringer); ok && str.String() != "" {
			fmt.Fprintf(&b, ": %s", clip(str.String(), handoverChars))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// clip shortens s to n bytes on one line, at a rune boundary.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	head, cut := redact.Cut(s, n)
	if cut {
		return head + "…"
	}
	return head // redacted when it fits only so
}

// routeState is the router's checkpoint: what the fast path handed over,
// saved once it escalated, so that a run interrupted while the planner
// works does not redo the fast path.
type routeState[A any] struct {
	Answer      A        `json:"answer"`
	Iterations  int      `json:"iterations"`
	ToolsUsed   []string `json:"toolsUsed"`
	ToolCalls   int      `json:"toolCalls,omitempty"`
	FastPath    string   `json:"fastPath"`
	FastErr     string   `json:"fastErr,omitempty"`
	Reason      string   `json:"reason"`
	PlannerUser string   `json:"plannerUser"`
}

// routeGraph names the router's checkpoints.
const routeGraph = "router"

func routeThread(task agent.Task) string { return task.Thread + "/route" }

func (s Strategy[A]) loadHandover(ctx context.Context, task agent.Task) (routeState[A], bool) {
	var h routeState[A]
	if task.Thread == "" || task.Checkpoints == nil {
		return h, false
	}
	c, ok, err := task.Checkpoints.Get(ctx, routeThread(task))
	if err != nil || !ok || c.Done || c.Graph != routeGraph {
		return h, false
	}
	if json.Unmarshal(c.State, &h) != nil || h.PlannerUser == "" {
		return h, false
	}
	return h, true
}

// saveHandover records the hand-over, or (done) that the planner ran to
// its end. A checkpoint that cannot be saved only costs the resume.
func (s Strategy[A]) saveHandover(ctx context.Context, task agent.Task, h routeState[A], done bool) {
	if task.Thread == "" || task.Checkpoints == nil {
		return
	}
	c := agent.Checkpoint{Thread: routeThread(task), Graph: routeGraph, Step: 1, Next: "planner", State: []byte("{}")}
	if done {
		c.Next, c.Done = graph.End, true
	} else if data, err := json.Marshal(h); err == nil {
		c.State = data
	} else {
		return
	}
	if err := task.Checkpoints.Put(ctx, c); err != nil && task.Log != nil {
		task.Log.Warn("cannot save the router's checkpoint", "thread", c.Thread, "error", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
