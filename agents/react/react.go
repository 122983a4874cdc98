// Package react is the ReAct (reason, act, observe) engine behind kodyls'
// "explain this error" feature.
//
// The model is given the workspace tools plus a final_answer tool and is
// called in a loop: its text is a thought, each tool call an action whose
// result goes back to it as an observation, and a final_answer call ends the
// run. Small and local models easily wander, so the loop is fenced by guards
// (iteration and tool-call budgets, total and per-step timeouts, and loop
// detection); a guard that fires does not fail the run but asks the model
// for its best answer with every tool but final_answer switched off, because
// a hedged answer is more useful in the editor than an error.
package react

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a Go value whose type the JSON Schema of the arguments
	// is inferred from (see llm.Tool).
	Parameters any
	Run        func(ctx context.Context, args json.RawMessage) (string, error)
}

// FinalAnswer is what the model hands back through the final_answer tool.
type FinalAnswer struct {
	RootCause     string   `json:"rootCause" jsonschema:"the root cause of the error, in one or two sentences"`
	FixGuidelines []string `json:"fixGuidelines" jsonschema:"concrete steps that fix the error"`
	Confidence    float64  `json:"confidence" jsonschema:"how sure you are, from 0 to 1"`
}

// Event kinds, in the order a run emits them for each step.
const (
	EventIteration   = "iteration"
	EventThought     = "thought"
	EventAction      = "action"
	EventObservation = "observation"
	EventGuard       = "guard"
	EventDone        = "done"
)

// Event reports the progress of a run, for streaming to the editor.
type Event struct {
	Kind      string // one of the Event* constants
	Iteration int
	Tool      string // action and observation events
	Input     string // action events: the arguments as the model sent them
	Text      string // thought, observation, guard (rule: reason) and done (root cause)
}

// Guard names reported in [Result.Guard] and guard events.
const (
	GuardMaxIterations  = "max_iterations"
	GuardMaxToolCalls   = "max_tool_calls"
	GuardRepeatedAction = "repeated_action" // the same action three times in a row
	GuardAlternation    = "alternation"     // A, B, A
	GuardDuplicateCall  = "duplicate_call"  // a call whose answer the model already has
)

// Defaults applied to zero fields of [Config].
const (
	DefaultMaxIterations = 10
	DefaultMaxToolCalls  = 20
	DefaultTimeout       = 2 * time.Minute
	DefaultStepTimeout   = 45 * time.Second
)

// FinalAnswerTool is the name of the tool that ends a run.
const FinalAnswerTool = "final_answer"

// Config bounds a run. Zero fields get the defaults above.
type Config struct {
	MaxIterations int
	MaxToolCalls  int
	Timeout       time.Duration // the whole run
	StepTimeout   time.Duration // each model call
	Feature       string        // accounting key for the gateway
	Task          llm.TaskClass // model selection; default llm.TaskAgent
}

// Result is the outcome of a run.
type Result struct {
	Answer     FinalAnswer
	Iterations int      // loop iterations; the forced and repair turns are not counted
	ToolsUsed  []string // tools that ran, each once, in order of first use
	Forced     bool     // a guard forced the answer
	Guard      string   // the guard that fired, when Forced
}

var (
	// ErrMalformedAnswer means the model's final answer was still unusable
	// after the one repair turn.
	ErrMalformedAnswer = errors.New("react: malformed final answer")
	// ErrStepTimeout means one model call took longer than Config.StepTimeout.
	ErrStepTimeout = errors.New("react: model step timed out")
	// ErrTimeout means the run took longer than Config.Timeout.
	ErrTimeout = errors.New("react: run timed out")
)

// action is one tool call as the loop detector sees it.
type action struct {
	key string // tool name and normalised arguments
	ok  bool   // the call ran and did not fail
}

// run holds the state of one [Run].
type run struct {
	g        *llm.Gateway
	cfg      Config
	emit     func(Event)
	tools    map[string]Tool
	all      []llm.Tool // the tools offered during the loop
	final    llm.Tool
	history  []llm.Message
	actions  []action
	calls    int // tool calls that ran
	res      Result
	repaired bool
	parent   context.Context // the run's context, to tell step from run timeouts
}

// Run runs the ReAct loop for the system and user prompts and returns the
// model's final answer. emit may be nil; it is called synchronously, in
// order, on the caller's goroutine.
//
// Errors are returned only when no answer can be had: the gateway failed,
// a timeout expired, the context was canceled, or the final answer was
// malformed twice.
func Run(ctx context.Context, g *llm.Gateway, system, user string, tools []Tool, cfg Config, emit func(Event)) (Result, error) {
	if g == nil {
		return Result{}, errors.New("react: nil gateway")
	}
	cfg = withDefaults(cfg)
	if emit == nil {
		emit = func(Event) {}
	}
	r := &run{g: g, cfg: cfg, emit: emit, tools: map[string]Tool{}}
	r.final = llm.Tool{Name: FinalAnswerTool, Description: "Give the final answer: the root cause of the error, how to fix it, and your confidence. Call it as soon as you know; it ends the investigation.", Parameters: FinalAnswer{}}
	for _, t := range tools {
		if t.Name == FinalAnswerTool {
			return Result{}, fmt.Errorf("react: tool name %q is reserved", t.Name)
		}
		if _, dup := r.tools[t.Name]; dup {
			return Result{}, fmt.Errorf("react: tool %q given twice", t.Name)
		}
		if t.Run == nil {
			return Result{}, fmt.Errorf("react: tool %q has no Run function", t.Name)
		}
		r.tools[t.Name] = t
		r.all = append(r.all, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	r.all = append(r.all, r.final)
	if system != "" {
		r.history = append(r.history, llm.Message{Role: "system", Content: system})
	}
	r.history = append(r.history, llm.Message{Role: "user", Content: user})

	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	r.parent = ctx
	return r.loop(ctx)
}

func withDefaults(cfg Config) Config {
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultMaxIterations
	}
	if cfg.MaxToolCalls <= 0 {
		cfg.MaxToolCalls = DefaultMaxToolCalls
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = DefaultStepTimeout
	}
	if cfg.Task == "" {
		cfg.Task = llm.TaskAgent
	}
	return cfg
}

func (r *run) loop(ctx context.Context) (Result, error) {
	for it := 1; it <= r.cfg.MaxIterations; it++ {
		r.res.Iterations = it
		r.emit(Event{Kind: EventIteration, Iteration: it})
		resp, err := r.chat(ctx, r.all, "auto")
		if err != nil {
			return r.res, err
		}
		if resp.Content != "" {
			r.emit(Event{Kind: EventThought, Iteration: it, Text: resp.Content})
		}
		calls := withIDs(resp.ToolCalls, it)
		if len(calls) == 0 {
			// Without a tool call the conversation cannot progress; an empty
			// assistant message is rejected by some endpoints, so only a
			// thought is kept, and the model is reminded how to finish.
			if resp.Content != "" {
				r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content})
			}
			r.history = append(r.history, llm.Message{Role: "user", Content: "Continue the investigation with a tool call, or call final_answer if you know the root cause."})
			continue
		}
		r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})

		if i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool }); i >= 0 {
			// The model is done: other calls of the same reply are not run,
			// but each still needs its tool message for the conversation to
			// stay valid should a repair turn follow.
			return r.finish(ctx, it, calls, i)
		}
		for i, c := range calls {
			if guard, why := r.check(c); guard != "" {
				r.skip(calls[i:], "not run: "+why)
				return r.force(ctx, it, guard, why)
			}
			r.act(ctx, it, c)
		}
		if err := ctx.Err(); err != nil {
			return r.res, r.ctxErr(err)
		}
	}
	return r.force(ctx, r.res.Iterations, GuardMaxIterations,
		fmt.Sprintf("the investigation reached its limit of %d iterations", r.cfg.MaxIterations))
}

// chat makes one model call bounded by the step timeout.
func (r *run) chat(ctx context.Context, tools []llm.Tool, choice string) (*llm.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, r.ctxErr(err)
	}
	step, cancel := context.WithTimeout(ctx, r.cfg.StepTimeout)
	defer cancel()
	resp, err := r.g.Chat(step, llm.ChatRequest{
		Feature:    r.cfg.Feature,
		Task:       r.cfg.Task,
		Messages:   slices.Clone(r.history),
		Tools:      tools,
		ToolChoice: choice,
		// Every step extends a unique conversation; caching it only fills
		// the cache.
		NoCache: true,
	})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: %w", r.ctxErr(ctx.Err()), err)
		case errors.Is(step.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("%w after %s: %w", ErrStepTimeout, r.cfg.StepTimeout, err)
		}
		return nil, fmt.Errorf("react: model call: %w", err)
	}
	return resp, nil
}

func (r *run) ctxErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s: %w", ErrTimeout, r.cfg.Timeout, err)
	}
	return fmt.Errorf("react: %w", err)
}

// check applies the budgets and loop detection to the call about to run.
func (r *run) check(c llm.ToolCall) (guard, why string) {
	if r.calls >= r.cfg.MaxToolCalls {
		return GuardMaxToolCalls, fmt.Sprintf("the investigation reached its limit of %d tool calls", r.cfg.MaxToolCalls)
	}
	key := c.Name + " " + normalize(c.Arguments)
	n := len(r.actions)
	if n >= 2 && r.actions[n-1].key == key && r.actions[n-2].key == key {
		return GuardRepeatedAction, fmt.Sprintf("%s was called with the same arguments three times in a row", c.Name)
	}
	if n >= 2 && r.actions[n-2].key == key && r.actions[n-1].key != key {
		return GuardAlternation, fmt.Sprintf("the investigation alternates between the same two actions (%s again)", c.Name)
	}
	// A retry after a failure may succeed (a timeout, a typo fixed in a
	// file meanwhile), so only a call that already succeeded is a
	// duplicate: its answer is in the conversation.
	for _, a := range r.actions {
		if a.key == key && a.ok {
			return GuardDuplicateCall, fmt.Sprintf("%s was already called with the same input and its result is above", c.Name)
		}
	}
	return "", ""
}

// act runs one tool call and records its observation.
func (r *run) act(ctx context.Context, it int, c llm.ToolCall) {
	r.emit(Event{Kind: EventAction, Iteration: it, Tool: c.Name, Input: string(c.Arguments)})
	obs, ok := r.runTool(ctx, c)
	r.calls++
	r.actions = append(r.actions, action{key: c.Name + " " + normalize(c.Arguments), ok: ok})
	if _, known := r.tools[c.Name]; known && !slices.Contains(r.res.ToolsUsed, c.Name) {
		r.res.ToolsUsed = append(r.res.ToolsUsed, c.Name)
	}
	r.emit(Event{Kind: EventObservation, Iteration: it, Tool: c.Name, Text: obs})
	r.history = append(r.history, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: obs})
}

// runTool turns every failure into an observation, so the model can
// correct itself instead of the run failing.
func (r *run) runTool(ctx context.Context, c llm.ToolCall) (obs string, ok bool) {
	t, known := r.tools[c.Name]
	if !known {
		names := make([]string, 0, len(r.tools)+1)
		for _, t := range r.all {
			names = append(names, t.Name)
		}
		return fmt.Sprintf("error: there is no tool named %q; available tools: %s", c.Name, strings.Join(names, ", ")), false
	}
	args := bytes.TrimSpace(c.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return fmt.Sprintf("error: the arguments for %s are not valid JSON; call it again with a JSON object that matches its parameters", c.Name), false
	}
	defer func() {
		if p := recover(); p != nil {
			// A bug in one tool must not take the language server down.
			obs, ok = fmt.Sprintf("error: tool %s failed unexpectedly: %v", c.Name, p), false
		}
	}()
	out, err := t.Run(ctx, json.RawMessage(args))
	if err != nil {
		return "error: " + err.Error(), false
	}
	if out == "" {
		// Some endpoints reject empty tool messages.
		return "(no output)", true
	}
	return out, true
}

// skip answers calls that will not run, keeping the conversation valid.
func (r *run) skip(calls []llm.ToolCall, why string) {
	for _, c := range calls {
		r.history = append(r.history, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: why})
	}
}

// force asks for the final answer with every other tool switched off.
func (r *run) force(ctx context.Context, it int, guard, why string) (Result, error) {
	r.res.Forced, r.res.Guard = true, guard
	r.emit(Event{Kind: EventGuard, Iteration: it, Text: guard + ": " + why})
	r.history = append(r.history, llm.Message{Role: "user", Content: "Stop investigating: " + why +
		". Call final_answer now with your best root cause and fix guidelines from what you found so far; lower your confidence if unsure."})
	return r.finalTurn(ctx, it)
}

// finalTurn makes a call that may only answer with final_answer.
func (r *run) finalTurn(ctx context.Context, it int) (Result, error) {
	resp, err := r.chat(ctx, []llm.Tool{r.final}, FinalAnswerTool)
	if err != nil {
		return r.res, err
	}
	if resp.Content != "" {
		r.emit(Event{Kind: EventThought, Iteration: it, Text: resp.Content})
	}
	calls := withIDs(resp.ToolCalls, it)
	i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool })
	if i < 0 {
		// Endpoints that ignore tool_choice may answer in text; a JSON
		// answer there is as good as a tool call.
		if a, err := parseAnswer(json.RawMessage(resp.Content)); err == nil {
			return r.done(it, a), nil
		}
		if len(calls) > 0 {
			r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})
			r.skip(calls, "not run: only final_answer may be called now")
		} else if resp.Content != "" {
			r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content})
		}
		return r.repair(ctx, it, "the reply did not call final_answer")
	}
	r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})
	return r.finish(ctx, it, calls, i)
}

// finish validates the final_answer call calls[i]; the assistant message
// holding calls is already in the history.
func (r *run) finish(ctx context.Context, it int, calls []llm.ToolCall, i int) (Result, error) {
	a, err := parseAnswer(calls[i].Arguments)
	if err == nil {
		return r.done(it, a), nil
	}
	for j, c := range calls {
		msg := "not run: final_answer was called in the same reply"
		if j == i {
			msg = "error: final answer rejected: " + err.Error()
		}
		r.history = append(r.history, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: msg})
	}
	return r.repair(ctx, it, err.Error())
}

// repair gives the model one chance to fix its final answer.
func (r *run) repair(ctx context.Context, it int, problem string) (Result, error) {
	if r.repaired {
		return r.res, fmt.Errorf("%w after a repair turn: %s", ErrMalformedAnswer, problem)
	}
	r.repaired = true
	r.history = append(r.history, llm.Message{Role: "user", Content: "Your final answer was not usable: " + problem +
		`. Call final_answer again with {"rootCause": non-empty string, "fixGuidelines": array of strings, "confidence": number from 0 to 1}.`})
	return r.finalTurn(ctx, it)
}

func (r *run) done(it int, a FinalAnswer) Result {
	r.res.Answer = a
	r.emit(Event{Kind: EventDone, Iteration: it, Text: a.RootCause})
	return r.res
}

// parseAnswer decodes and validates a final answer.
func parseAnswer(args json.RawMessage) (FinalAnswer, error) {
	var a FinalAnswer
	if err := json.Unmarshal(bytes.TrimSpace(args), &a); err != nil {
		return a, fmt.Errorf("the arguments are not a valid JSON object (%w)", err)
	}
	a.RootCause = strings.TrimSpace(a.RootCause)
	if a.RootCause == "" {
		return a, errors.New("rootCause is missing or empty")
	}
	fixes := []string{} // never null in the JSON the editor receives
	for _, f := range a.FixGuidelines {
		if f = strings.TrimSpace(f); f != "" {
			fixes = append(fixes, f)
		}
	}
	a.FixGuidelines = fixes
	// Models often say 85 for 0.85, or nothing sensible; clamping keeps
	// the UI honest without failing a useful answer.
	switch {
	case math.IsNaN(a.Confidence) || a.Confidence < 0:
		a.Confidence = 0
	case a.Confidence > 1:
		a.Confidence = 1
	}
	return a, nil
}

// normalize makes arguments that differ only in key order or spacing
// compare equal.
func normalize(args json.RawMessage) string {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return string(bytes.TrimSpace(args))
	}
	b, err := json.Marshal(v) // map keys come out sorted
	if err != nil {
		return string(args)
	}
	return string(b)
}

// withIDs gives id-less calls an id; some local servers omit them, and
// tool messages must refer to one.
func withIDs(calls []llm.ToolCall, it int) []llm.ToolCall {
	out := slices.Clone(calls)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d_%d", it, i+1)
		}
	}
	return out
}
