// Package planmode is plan mode: a model writes a plan of steps up front
// (the generator), the steps run through tools in the order their
// dependencies allow (the executor), a reflection assesses the outcome
// (the reflector) and, when the work is not done, an adjustment derives
// the next version of the plan (the adjuster). The orchestrator runs these
// four on the graph engine (graph.PlanMode), bounded by a number of
// reflection cycles, and keeps every version of the plan.
//
// Plans are values: every change returns a new Plan and leaves the old one
// as it was, so a version kept in the history never changes afterwards.
// The whole run state is JSON, which is what the graph's checkpointer saves
// and resumes from.
package planmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PlanStatus is the state of a plan version.
type PlanStatus string

// Plan states. A generated plan is a draft until it validates (approved);
// it is executing while its steps run, and completed or failed when the
// orchestrator is done with it. An adjusted plan is a new version derived
// from a reflection, waiting to run.
const (
	PlanDraft     PlanStatus = "draft"
	PlanApproved  PlanStatus = "approved"
	PlanExecuting PlanStatus = "executing"
	PlanCompleted PlanStatus = "completed"
	PlanFailed    PlanStatus = "failed"
	PlanAdjusted  PlanStatus = "adjusted"
)

// StepStatus is the state of one step.
type StepStatus string

// Step states.
const (
	StepPending StepStatus = "pending"
	StepRunning StepStatus = "running"
	StepDone    StepStatus = "done"
	StepFailed  StepStatus = "failed"
	StepSkipped StepStatus = "skipped"
)

// Step is one unit of a plan: a tool call, or, with no tool, a note of
// reasoning that needs no action.
type Step struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Tool        string          `json:"tool,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	DependsOn   []string        `json:"dependsOn,omitempty"`
	Status      StepStatus      `json:"status"`
	Result      string          `json:"result,omitempty"`
	// Attempts counts the runs of the step over every version of the plan.
	Attempts int `json:"attempts,omitempty"`
}

// Plan is one version of a plan.
type Plan struct {
	ID      string     `json:"id"`
	Version int        `json:"version"`
	Status  PlanStatus `json:"status"`
	Goal    string     `json:"goal"`
	Steps   []Step     `json:"steps"`
	// Reason says why the version exists (generated, a fallback, the
	// reflection behind an adjustment) or, once failed, why it failed.
	Reason string `json:"reason,omitempty"`
}

// clone copies p deeply, so that the copy can change without touching p.
func (p Plan) clone() Plan {
	c := p
	c.Steps = make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		s.Input = slices.Clone(s.Input)
		s.DependsOn = slices.Clone(s.DependsOn)
		c.Steps[i] = s
	}
	return c
}

func (p Plan) withStatus(st PlanStatus, reason string) Plan {
	c := p.clone()
	c.Status = st
	if reason != "" {
		c.Reason = reason
	}
	return c
}

// Approve marks a validated draft ready to run.
func (p Plan) Approve() Plan { return p.withStatus(PlanApproved, "") }

// Start marks the plan executing.
func (p Plan) Start() Plan { return p.withStatus(PlanExecuting, "") }

// Complete marks the plan completed; its Reason stays why it was made.
func (p Plan) Complete() Plan { return p.withStatus(PlanCompleted, "") }

// Fail marks the plan failed and says why.
func (p Plan) Fail(reason string) Plan { return p.withStatus(PlanFailed, reason) }

// Terminal reports whether the plan is completed or failed.
func (p Plan) Terminal() bool { return p.Status == PlanCompleted || p.Status == PlanFailed }

// WithStep returns the plan with the step of the same ID replaced by s.
func (p Plan) WithStep(s Step) Plan {
	c := p.clone()
	if i := c.index(s.ID); i >= 0 {
		s.Input = slices.Clone(s.Input)
		s.DependsOn = slices.Clone(s.DependsOn)
		c.Steps[i] = s
	}
	return c
}

// Step returns the step with the given ID.
func (p Plan) Step(id string) (Step, bool) {
	if i := p.index(id); i >= 0 {
		return p.Steps[i], true
	}
	return Step{}, false
}

func (p Plan) index(id string) int {
	return slices.IndexFunc(p.Steps, func(s Step) bool { return s.ID == id })
}

// satisfied reports whether a dependency lets its dependents run: it is
// done, or was skipped on purpose.
func satisfied(s Step) bool { return s.Status == StepDone || s.Status == StepSkipped }

// Ready returns the pending steps whose dependencies are all satisfied, in
// plan order.
func (p Plan) Ready() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Status != StepPending {
			continue
		}
		ok := true
		for _, d := range s.DependsOn {
			if dep, found := p.Step(d); !found || !satisfied(dep) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// HasPending reports whether some step has not run yet.
func (p Plan) HasPending() bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Status == StepPending })
}

// AllDone reports whether every step is done or skipped.
func (p Plan) AllDone() bool {
	for _, s := range p.Steps {
		if !satisfied(s) {
			return false
		}
	}
	return true
}

// Stuck returns the IDs of the steps that failed as stuck: run
// MaxAttempts times without getting through.
func (p Plan) Stuck() []string {
	var out []string
	for _, s := range p.Steps {
		if s.Status == StepFailed && strings.HasPrefix(s.Result, stuckReason) {
			out = append(out, s.ID)
		}
	}
	return out
}

// Validate checks the plan's structure: at least one step, unique
// non-empty IDs, known dependencies, no dependency cycle, and, when known
// is set, tools it knows (a step without a tool is always allowed).
func (p Plan) Validate(known func(tool string) bool) error {
	if len(p.Steps) == 0 {
		return errors.New("the plan has no steps")
	}
	ids := map[string]bool{}
	var errs []error
	for i, s := range p.Steps {
		switch {
		case strings.TrimSpace(s.ID) == "":
			errs = append(errs, fmt.Errorf("step %d has no id", i+1))
		case ids[s.ID]:
			errs = append(errs, fmt.Errorf("step id %q is used twice", s.ID))
		}
		ids[s.ID] = true
		if s.Tool != "" && known != nil && !known(s.Tool) {
			errs = append(errs, fmt.Errorf("step %q uses the unknown tool %q", s.ID, s.Tool))
		}
	}
	for _, s := range p.Steps {
		for _, d := range s.DependsOn {
			if !ids[d] {
				errs = append(errs, fmt.Errorf("step %q depends on the unknown step %q", s.ID, d))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return p.checkCycles()
}

// CheckSize reports a plan of more than max steps.
func (p Plan) CheckSize(max int) error {
	if max > 0 && len(p.Steps) > max {
		return fmt.Errorf("the plan has %d steps; at most %d are allowed", len(p.Steps), max)
	}
	return nil
}

// checkCycles reports a dependency cycle, naming a step on it.
func (p Plan) checkCycles() error {
	const (
		unseen = iota
		visiting
		finished
	)
	state := map[string]int{}
	var visit func(id string) error
	visit = func(id string) error {
		switch state[id] {
		case visiting:
			return fmt.Errorf("the steps depend on each other in a cycle through %q", id)
		case finished:
			return nil
		}
		state[id] = visiting
		s, _ := p.Step(id)
		for _, d := range s.DependsOn {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[id] = finished
		return nil
	}
	for _, s := range p.Steps {
		if err := visit(s.ID); err != nil {
			return err
		}
	}
	return nil
}

// String renders the plan one step per line, as plan events and the CLI
// show it.
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan v%d (%s)", p.Version, p.Status)
	if p.Reason != "" {
		fmt.Fprintf(&b, ": %s", p.Reason)
	}
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "\n  %d. [%s] %s: %s", i+1, s.Status, s.ID, s.Description)
		if s.Tool != "" {
			fmt.Fprintf(&b, " (%s)", s.Tool)
		}
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, " after %s", strings.Join(s.DependsOn, ", "))
		}
	}
	return b.String()
}
