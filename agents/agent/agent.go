// Package agent is the core the kodyls agents are built on: the tools a
// model may call, the events a run reports, the budget that bounds it, the
// loop guards, one executor that runs a model's tool calls, and the
// Strategy interface that ReAct (package react) and later strategies
// implement.
//
// The core knows the LLM gateway but no feature: what an answer means (a
// root cause, a plan) is the strategy's type parameter, chosen by the
// feature that runs it.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a Go value whose type the JSON Schema of the arguments
	// is inferred from, or a schema itself (see llm.Tool).
	Parameters any
	Run        func(ctx context.Context, args json.RawMessage) (string, error)
}

// Event kinds, in the order a run emits them for each step.
const (
	EventIteration   = "iteration"
	EventThought     = "thought"
	EventAction      = "action"
	EventObservation = "observation"
	EventGuard       = "guard"
	EventDone        = "done" // the answer was accepted

	// Plan events, from the strategies that plan (plan-execute, ReWoo,
	// plan mode).
	EventPlanCreated = "plan_created" // Text: the plan, one step per line
	EventStepDone    = "step_done"    // Tool: the step's tool; Text: its status and result
	EventReflected   = "reflected"    // Text: the assessment and its reason
	EventAdjusted    = "adjusted"     // Text: the adjustments applied
	EventEscalated   = "escalated"    // Text: why the fast path handed over
)

// Event reports the progress of a run, for streaming to the editor.
type Event struct {
	Kind      string // one of the Event* constants
	Iteration int
	Node      string // the graph node that emitted it, when a graph runs
	Tool      string // action and observation events
	Input     string // action events: the arguments as the model sent them
	Text      string // thought, observation, guard (rule: reason) and done (a summary of the answer)
}

// Defaults applied to zero fields of [Budget].
const (
	DefaultMaxIterations = 10
	DefaultMaxToolCalls  = 20
	DefaultTimeout       = 2 * time.Minute
	DefaultStepTimeout   = 45 * time.Second
)

// Budget bounds a run. Zero fields get the defaults above.
type Budget struct {
	MaxIterations int
	MaxToolCalls  int
	Timeout       time.Duration // the whole run
	StepTimeout   time.Duration // each model call
	// StopAfterFailedCalls stops the investigation once that many tool
	// calls have failed: the run asks for its best answer, as after any
	// other guard (GuardFailedCalls). 0: failures never stop a run.
	StopAfterFailedCalls int
}

// WithDefaults returns b with its zero fields set to the defaults.
func (b Budget) WithDefaults() Budget {
	if b.MaxIterations <= 0 {
		b.MaxIterations = DefaultMaxIterations
	}
	if b.MaxToolCalls <= 0 {
		b.MaxToolCalls = DefaultMaxToolCalls
	}
	if b.Timeout <= 0 {
		b.Timeout = DefaultTimeout
	}
	if b.StepTimeout <= 0 {
		b.StepTimeout = DefaultStepTimeout
	}
	return b
}

// Task is one piece of work for a strategy: the model to use, the prompts
// that state the work, and the bounds of the run.
type Task struct {
	Gateway *llm.Gateway
	System  string        // may be empty
	User    string        // the work itself
	Feature string        // accounting key for the gateway
	Class   llm.TaskClass // model selection; default llm.TaskAgent
	Budget  Budget
	Log     *slog.Logger // tool panics; nil discards
	// Thread names the run for Checkpoints: a strategy that runs on the
	// graph engine saves its state after every node under it and resumes
	// an unfinished run of the same thread. Empty: no checkpoints.
	Thread      string
	Checkpoints Checkpointer
}

// Outcome is what a run ends with.
type Outcome[A any] struct {
	Answer     A
	Iterations int      // loop iterations; forced and repair turns are not counted
	ToolsUsed  []string // tools that ran, each once, in order of first use
	ToolCalls  int      // tool calls made, failed ones included, whatever tool
	Forced     bool     // a guard forced the answer
	Guard      string   // the guard that fired, when Forced
	// Path says which strategies ran, for the user: "react", or, when a
	// router escalated, "react → plan-execute (3 failed tool calls)".
	Path string
}

// Strategy is a way of working a task with tools to an answer of type A:
// ReAct today, ReWoo or plan-and-execute later. emit may be nil; when set
// it is called synchronously, in order, on the caller's goroutine.
type Strategy[A any] interface {
	Name() string
	Run(ctx context.Context, task Task, tools []Tool, emit func(Event)) (Outcome[A], error)
}

// Checker is implemented by answer types that validate and normalise
// themselves after decoding; the error says, in words meant for the model,
// what is wrong, so that it can send a better answer.
type Checker interface {
	Check() error
}

// DecodeAnswer decodes a final answer and, when *A is a [Checker], checks
// it.
func DecodeAnswer[A any](args json.RawMessage) (A, error) {
	var a A
	if err := json.Unmarshal(args, &a); err != nil {
		return a, fmt.Errorf("the arguments are not a valid JSON object (%w)", err)
	}
	if c, ok := any(&a).(Checker); ok {
		if err := c.Check(); err != nil {
			return a, err
		}
	}
	return a, nil
}

var (
	// ErrMalformedAnswer means the model's final answer was still unusable
	// after the one repair turn.
	ErrMalformedAnswer = errors.New("agent: malformed final answer")
	// ErrStepTimeout means one model call took longer than
	// Budget.StepTimeout.
	ErrStepTimeout = errors.New("agent: model step timed out")
	// ErrTimeout means the run took longer than Budget.Timeout.
	ErrTimeout = errors.New("agent: run timed out")
)

// Checkpoint is the saved state of a thread after a node ran.
type Checkpoint struct {
	Thread    string
	Graph     string
	Step      int    // node runs so far
	Next      string // the node to run next; "__end__" (graph.End) when Done
	State     json.RawMessage
	Done      bool
	UpdatedAt time.Time // set by the checkpointer
}

// Checkpointer keeps the latest checkpoint of each thread.
type Checkpointer interface {
	Put(ctx context.Context, c Checkpoint) error
	// Get returns the thread's latest checkpoint; ok is false when there
	// is none.
	Get(ctx context.Context, thread string) (c Checkpoint, ok bool, err error)
	Delete(ctx context.Context, thread string) error
}
