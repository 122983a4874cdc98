package planmode

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
)

// DefaultMaxCycles bounds the reflections of a run.
const DefaultMaxCycles = 3

// DefaultMaxSteps bounds the steps of one plan version: a longer plan is
// rejected (the model generator's fallback plan replaces it; an
// adjustment that grows a plan past it is skipped).
const DefaultMaxSteps = 20

// State is a plan-mode run: what the graph carries from node to node and
// what its checkpointer saves.
type State struct {
	Goal string `json:"goal"`
	// Plan is the current version.
	Plan Plan `json:"plan"`
	// Versions holds every version of the plan, each as it ended: the
	// plan's history.
	Versions    []Plan       `json:"versions"`
	Reflections []Reflection `json:"reflections"`
	// Cycles counts the reflections made.
	Cycles int `json:"cycles"`
	// Trail lists the nodes run, in order.
	Trail []string `json:"trail"`
	// Done is set by the reflection that ends the run.
	Done bool `json:"done"`
	// Notes records adjustments that could not be applied.
	Notes []string `json:"notes,omitempty"`
	// ToolCalls counts the steps that ran a tool, over every version,
	// against Budget.MaxToolCalls.
	ToolCalls int `json:"toolCalls"`
	// Stopped says why the run stopped before its plan was through (the
	// tool-call budget is spent); the plan then fails without a
	// reflection.
	Stopped string `json:"stopped,omitempty"`
}

// record keeps p in the history: it replaces the entry of the same
// version, or adds a new one.
func (s *State) record(p Plan) {
	s.Plan = p
	if n := len(s.Versions); n > 0 && s.Versions[n-1].Version == p.Version {
		s.Versions[n-1] = p
		return
	}
	s.Versions = append(s.Versions, p)
}

// Orchestrator runs generate → execute → reflect (→ adjust → execute →
// reflect)* until the plan is completed or failed or MaxCycles
// reflections were made.
type Orchestrator struct {
	// Name names the graph, which checkpoints record.
	Name      string
	Generator Generator
	Executor  *Executor
	Reflector Reflector
	// Normalize, when set, is applied to every new plan version (the
	// generated one and each adjusted one), e.g. to add a step the feature
	// always needs.
	Normalize func(Plan) Plan
	// MaxCycles bounds the reflections (default DefaultMaxCycles).
	MaxCycles int
	// MaxSteps bounds the steps of a plan version, those Normalize adds
	// included (default DefaultMaxSteps). A generator should reject a
	// longer plan itself (ModelGenerator.MaxSteps) and fall back.
	MaxSteps int
	// Budget bounds the run: MaxToolCalls counts every step that runs a
	// tool, in every version (zero: agent.DefaultMaxToolCalls); Timeout,
	// when set, ends the whole run. The other fields are not used.
	Budget agent.Budget
	// Thread and Checkpoints make the run resumable: the state is saved
	// after every node, and a run of an unfinished thread continues where
	// it stopped.
	Thread      string
	Checkpoints agent.Checkpointer
	// Log receives the warning when checkpoints cannot be saved (the run
	// goes on without them); nil discards it.
	Log *slog.Logger
}

// Run runs plan mode on goal. emit receives the plan events (plan_created,
// step_done, reflected, adjusted) and the graph's node events; it may be
// nil. The state reached is returned with any error.
func (o *Orchestrator) Run(ctx context.Context, goal string, emit func(agent.Event)) (State, error) {
	if emit == nil {
		emit = func(agent.Event) {}
	}
	maxCycles := o.MaxCycles
	if maxCycles <= 0 {
		maxCycles = DefaultMaxCycles
	}
	normalize := o.Normalize
	if normalize == nil {
		normalize = func(p Plan) Plan { return p }
	}
	maxSteps := o.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	maxCalls := o.Budget.MaxToolCalls
	if maxCalls <= 0 {
		maxCalls = agent.DefaultMaxToolCalls
	}
	runCtx := ctx
	if o.Budget.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, o.Budget.Timeout, fmt.Errorf("%w after %s", agent.ErrTimeout, o.Budget.Timeout))
		defer cancel()
	}
	node := func(name string, fn func(ctx context.Context, s State, emit func(agent.Event)) (State, error)) graph.Node[State] {
		return func(ctx context.Context, s State, emit func(agent.Event)) (State, error) {
			s = s.clone()
			s.Trail = append(s.Trail, name)
			return fn(ctx, s, func(e agent.Event) { e.Node = name; emit(e) })
		}
	}
	g, err := graph.PlanMode(o.name(), graph.PlanModeNodes[State]{
		Generate: node(graph.NodePlan, func(ctx context.Context, s State, emit func(agent.Event)) (State, error) {
			p, err := o.Generator.Generate(ctx, s.Goal)
			if err != nil {
				return s, err
			}
			p = normalize(p)
			if err := p.Validate(o.Executor.Has); err != nil {
				return s, fmt.Errorf("the plan is invalid: %w", err)
			}
			if err := p.CheckSize(maxSteps); err != nil {
				return s, fmt.Errorf("the plan is too long: %w", err)
			}
			s.record(p.Approve())
			emit(agent.Event{Kind: agent.EventPlanCreated, Iteration: p.Version, Text: s.Plan.String()})
			return s, nil
		}),
		Execute: node(graph.NodeExecute, func(ctx context.Context, s State, emit func(agent.Event)) (State, error) {
			p, calls, err := o.Executor.execute(ctx, s.Plan, emit, maxCalls-s.ToolCalls)
			s.ToolCalls += calls
			if err == nil && p.Status == PlanFailed && p.HasPending() && s.ToolCalls >= maxCalls {
				s.Stopped = fmt.Sprintf("the budget of %d tool calls is spent", maxCalls)
				p = p.Fail("stopped: " + s.Stopped)
			}
			s.record(p)
			return s, err
		}),
		Reflect: node(graph.NodeReflect, func(ctx context.Context, s State, emit func(agent.Event)) (State, error) {
			if s.Stopped != "" {
				// Nothing more may run: the run ends here, without asking
				// for a reflection whose adjustments could not run.
				r := Reflection{Version: s.Plan.Version, Assessment: AssessFailed, Reasoning: "stopped: " + s.Stopped}
				s.Cycles++
				s.Reflections = append(s.Reflections, r)
				s.Done = true
				s.record(s.Plan.Fail(r.Reasoning))
				emit(agent.Event{Kind: agent.EventReflected, Iteration: s.Cycles, Text: reflectedText(s.Plan, r)})
				return s, nil
			}
			r, err := o.Reflector.Reflect(ctx, s)
			if err != nil {
				return s, err
			}
			s.Cycles++
			s.Reflections = append(s.Reflections, r)
			p := s.Plan
			s.Done = true
			stuck := p.Stuck()
			switch {
			case r.Assessment == AssessComplete:
				p = p.Complete()
			case len(stuck) > 0:
				// Loop prevention: a stuck step ends the run, whatever the
				// reflection would retry.
				p = p.Fail(fmt.Sprintf("stuck: %s failed after %d attempts", strings.Join(stuck, ", "), MaxAttempts))
			case r.Assessment == AssessFailed:
				p = p.Fail(r.Reasoning)
			case r.Assessment == AssessOnTrack && !p.HasPending():
				// Nothing left to run and nothing to change: the plan ends
				// as its steps did.
				if p.AllDone() {
					p = p.Complete()
				} else {
					p = p.Fail(r.Reasoning)
				}
			case s.Cycles >= maxCycles:
				p = p.Fail(fmt.Sprintf("stopped after %d reflection cycles: %s", s.Cycles, r.Reasoning))
			default:
				// Not done: the adjust node derives the next version.
				s.Done = false
			}
			s.record(p)
			emit(agent.Event{Kind: agent.EventReflected, Iteration: s.Cycles, Text: reflectedText(p, r)})
			return s, nil
		}),
		Adjust: node(graph.NodeAdjust, func(ctx context.Context, s State, emit func(agent.Event)) (State, error) {
			r := s.Reflections[len(s.Reflections)-1]
			if len(r.Adjustments) == 0 {
				emit(agent.Event{Kind: agent.EventAdjusted, Iteration: s.Plan.Version, Text: "no adjustment: continuing with plan v" + fmt.Sprint(s.Plan.Version)})
				return s, nil
			}
			next, err := Adjust(s.Plan, r.Adjustments, r.Reasoning)
			if err == nil {
				next = normalize(next)
				if verr := next.Validate(o.Executor.Has); verr != nil {
					err = fmt.Errorf("the adjusted plan is invalid: %w", verr)
				} else if serr := next.CheckSize(maxSteps); serr != nil {
					err = fmt.Errorf("the adjusted plan is too long: %w", serr)
				}
			}
			if err != nil {
				// The seed's rule: a bad adjustment is skipped and the run
				// continues; the next reflection sees the same results.
				note := "adjustment skipped: " + err.Error()
				s.Notes = append(s.Notes, note)
				emit(agent.Event{Kind: agent.EventAdjusted, Iteration: s.Plan.Version, Text: note})
				return s, nil
			}
			s.record(next)
			emit(agent.Event{Kind: agent.EventAdjusted, Iteration: next.Version, Text: describe(r.Adjustments) + "\n" + next.String()})
			return s, nil
		}),
		Next: func(s State) string {
			if s.Done {
				return graph.End
			}
			return graph.NodeAdjust
		},
		MaxSteps: 3 + 3*maxCycles,
	})
	if err != nil {
		return State{Goal: goal}, err
	}
	res, err := g.Run(runCtx, State{Goal: goal}, graph.Options{Thread: o.Thread, Checkpointer: o.Checkpoints, Emit: emit, Log: o.Log})
	if err != nil && ctx.Err() == nil && runCtx.Err() != nil {
		// The run's own time limit, not the caller's cancellation.
		err = context.Cause(runCtx)
	}
	return res.State, err
}

func (o *Orchestrator) name() string {
	if o.Name == "" {
		return "planmode"
	}
	return o.Name
}

// clone copies the state so that a node's changes never reach the state
// the graph holds until the node returns.
func (s State) clone() State {
	c := s
	c.Versions = make([]Plan, len(s.Versions))
	for i, p := range s.Versions {
		c.Versions[i] = p.clone()
	}
	c.Plan = s.Plan.clone()
	c.Reflections = append([]Reflection(nil), s.Reflections...)
	c.Trail = append([]string(nil), s.Trail...)
	c.Notes = append([]string(nil), s.Notes...)
	return c
}

func describe(adjs []Adjustment) string {
	parts := make([]string, len(adjs))
	for i, a := range adjs {
		parts[i] = string(a.Type) + " " + a.StepID
	}
	return strings.Join(parts, ", ")
}

// reflectedText is the text of a reflected event: the plan version with the
// state the reflection left it in, then the assessment and its reason.
func reflectedText(p Plan, r Reflection) string {
	return fmt.Sprintf("plan v%d (%s): %s: %s", p.Version, p.Status, r.Assessment, r.Reasoning)
}
