package planmode

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
)

// StepFunc runs a step that needs to see the plan, such as one that
// builds on what earlier steps produced. A returned error fails the step
// with the error's text as its result.
type StepFunc func(ctx context.Context, p Plan, s Step) (string, error)

// MaxAttempts is how many times one step may run over every version of a
// plan. A step that has run this often without the plan getting through is
// stuck (the seed's loop prevention): it fails and does not run again, and
// the run ends with the reflection that is told so.
const MaxAttempts = 3

// EventStuck reports a step that reached MaxAttempts; Text names it.
const EventStuck = "stuck"

// stuckReason is the result prefix of a stuck step.
var stuckReason = fmt.Sprintf("stuck: %d attempts", MaxAttempts)

// Executor runs a plan's steps through tools, one at a time, in plan order
// as their dependencies allow.
type Executor struct {
	tools *agent.Executor
	plan  map[string]StepFunc
}

// NewExecutor returns the executor of tools (run with their arguments
// checked against their schemas, see agent.Executor) and planTools (run
// with the plan). A name may not be both.
func NewExecutor(tools []agent.Tool, planTools map[string]StepFunc, log *slog.Logger) (*Executor, error) {
	var reserved []string
	for name := range planTools {
		reserved = append(reserved, name)
	}
	x, err := agent.NewExecutor(tools, log, reserved...)
	if err != nil {
		return nil, fmt.Errorf("planmode: %w", err)
	}
	return &Executor{tools: x, plan: planTools}, nil
}

// Has reports whether the executor knows a tool.
func (x *Executor) Has(name string) bool {
	_, ok := x.plan[name]
	return ok || x.tools.Has(name)
}

// Execute runs every step that can run and returns the plan after them:
// completed when every step is done or skipped, failed otherwise. A step
// whose dependency failed does not run; it stays pending, so that an
// adjustment can still let it run. When ctx ends the plan is returned as
// far as it got, with ctx's error.
func (x *Executor) Execute(ctx context.Context, p Plan, emit func(agent.Event)) (Plan, error) {
	p, _, err := x.execute(ctx, p, emit, -1)
	return p, err
}

// execute is Execute running at most calls steps that call a tool (no
// bound when calls < 0); it returns how many it ran. Steps left pending
// when the calls are spent fail the plan.
func (x *Executor) execute(ctx context.Context, p Plan, emit func(agent.Event), calls int) (Plan, int, error) {
	p = p.Start()
	used := 0
	for {
		ready := p.Ready()
		if len(ready) == 0 {
			break
		}
		spent := false
		for _, s := range ready {
			if err := ctx.Err(); err != nil {
				return p, used, err
			}
			if s.Attempts >= MaxAttempts {
				// Asked to run again after its last attempt: refused.
				s.Status, s.Result = StepFailed, stuckReason+": asked to run again"
				p = p.WithStep(s)
				emit(agent.Event{Kind: EventStuck, Tool: s.Tool, Text: fmt.Sprintf("%s %s", s.ID, s.Result)})
				emit(agent.Event{Kind: agent.EventStepDone, Tool: s.Tool, Input: string(s.Input), Text: fmt.Sprintf("%s %s: %s", s.ID, s.Status, s.Result)})
				continue
			}
			if s.Tool != "" {
				if calls >= 0 && used >= calls {
					spent = true
					break
				}
				used++
			}
			s.Status = StepRunning
			s.Attempts++
			p = p.WithStep(s)
			if s.Tool != "" {
				emit(agent.Event{Kind: agent.EventAction, Tool: s.Tool, Input: string(s.Input), Text: s.ID})
			}
			res, ok := x.run(ctx, p, s)
			if ctx.Err() != nil {
				s.Status = StepPending
				p = p.WithStep(s)
				return p, used, ctx.Err()
			}
			s.Result = res
			s.Status = StepDone
			stuck := false
			if !ok {
				s.Status = StepFailed
				if s.Attempts >= MaxAttempts {
					s.Result = stuckReason + ": " + res
					stuck = true
				}
			}
			p = p.WithStep(s)
			if stuck {
				emit(agent.Event{Kind: EventStuck, Tool: s.Tool, Text: fmt.Sprintf("%s failed %d times and will not run again", s.ID, s.Attempts)})
			}
			emit(agent.Event{Kind: agent.EventStepDone, Tool: s.Tool, Input: string(s.Input), Text: fmt.Sprintf("%s %s: %s", s.ID, s.Status, oneLine(s.Result, 200))})
		}
		if spent {
			break
		}
	}
	if p.AllDone() {
		return p.Complete(), used, nil
	}
	var failed []string
	for _, s := range p.Steps {
		if s.Status == StepFailed {
			failed = append(failed, s.ID)
		}
	}
	reason := "some steps could not run"
	if len(failed) > 0 {
		reason = "failed steps: " + strings.Join(failed, ", ")
	}
	return p.withStatus(PlanFailed, reason), used, nil
}

func (x *Executor) run(ctx context.Context, p Plan, s Step) (string, bool) {
	if s.Tool == "" {
		return "noted", true
	}
	if fn, ok := x.plan[s.Tool]; ok {
		out, err := fn(ctx, p, s)
		if err != nil {
			return "error: " + err.Error(), false
		}
		return out, true
	}
	args := s.Input
	if len(args) == 0 {
		args = []byte("{}")
	}
	return x.tools.Run(ctx, llm.ToolCall{ID: s.ID, Name: s.Tool, Arguments: args})
}

// oneLine shortens s to one line of at most n bytes, for events.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
