// Package react is the ReAct (reason, act, observe) strategy of the agent
// core (package agent).
//
// The model is given the task's tools plus a final_answer tool and is
// called in a loop: its text is a thought, each tool call an action whose
// result goes back to it as an observation, and a final_answer call ends the
// run. Small and local models easily wander, so the loop is fenced by the
// core's guards (iteration and tool-call budgets, total and per-step
// timeouts, and loop detection); a guard that fires does not fail the run
// but asks the model for its best answer with every tool but final_answer
// switched off, because a hedged answer is more useful in the editor than
// an error.
//
// The answer's type is the strategy's type parameter: the final_answer
// tool takes its JSON Schema, and an answer type that implements
// agent.Checker validates itself.
//
// The loop runs on the graph engine (package graph) as the nodes reason
// (one model call), act (the tool calls of the reply) and force (the
// answer-only turn after a guard fired, or the repair turn), routed by the
// run's [State]. When the task names a thread and a checkpointer, the state
// is saved after every node, and an unfinished run of the same thread
// resumes where it stopped: the model calls already answered are not made
// again.
package react

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
)

// FinalAnswerTool is the name of the tool that ends a run.
const FinalAnswerTool = "final_answer"

// GraphName is the name of the ReAct graph; its checkpoints carry it.
const GraphName = "react"

// Prompts are what the strategy tells the model besides the task. Zero
// fields get generic defaults; a feature gives wording of its own domain.
type Prompts struct {
	// FinalAnswer is the final_answer tool's description.
	FinalAnswer string
	// Continue follows a reply that called no tool.
	Continue string
	// Stop follows "Stop investigating: <the guard's reason>. " when a
	// guard ends the loop.
	Stop string
	// Repair follows "Your final answer was not usable: <problem>. " in the
	// one repair turn.
	Repair string
}

var defaultPrompts = Prompts{
	FinalAnswer: "Give the final answer. Call it as soon as you know; it ends the investigation.",
	Continue:    "Continue the investigation with a tool call, or call final_answer if you know the answer.",
	Stop:        "Call final_answer now with your best answer from what you found so far.",
	Repair:      "Call final_answer again with arguments that match its parameters.",
}

func (p Prompts) withDefaults() Prompts {
	return Prompts{
		FinalAnswer: cmp.Or(p.FinalAnswer, defaultPrompts.FinalAnswer),
		Continue:    cmp.Or(p.Continue, defaultPrompts.Continue),
		Stop:        cmp.Or(p.Stop, defaultPrompts.Stop),
		Repair:      cmp.Or(p.Repair, defaultPrompts.Repair),
	}
}

// Strategy is the ReAct strategy for answers of type A. The zero value is
// ready to use.
type Strategy[A any] struct {
	Prompts Prompts
}

var _ agent.Strategy[struct{}] = Strategy[struct{}]{}

// Name implements agent.Strategy.
func (Strategy[A]) Name() string { return "react" }

// State is the state of one run: what a checkpoint saves and a resumed run
// continues from. It survives a JSON round trip whatever the model sent:
// tool-call arguments, which may not be valid JSON, are kept as strings.
type State[A any] struct {
	Messages  []Message        `json:"messages"`
	Iteration int              `json:"iteration"`
	ToolsUsed []string         `json:"toolsUsed,omitempty"`
	Guards    agent.GuardState `json:"guards"`
	Repaired  bool             `json:"repaired,omitempty"` // the one repair turn was used
	Pending   []ToolCall       `json:"pending,omitempty"`  // the calls act runs next
	Forced    bool             `json:"forced,omitempty"`
	Guard     string           `json:"guard,omitempty"`
	Answer    *A               `json:"answer,omitempty"`
	// Next is the node to run next (graph.End once answered); the graph's
	// edges route by it.
	Next string `json:"next"`
}

// Message is one message of the conversation, as the state keeps it.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is one tool call of the model; Arguments is its text as sent.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func (c ToolCall) llm() llm.ToolCall {
	return llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)}
}

func toolCalls(calls []llm.ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)}
	}
	return out
}

func llmMessages(msgs []Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, c.llm())
		}
	}
	return out
}

// Run runs the ReAct loop for the task and returns the model's final
// answer.
//
// Errors are returned only when no answer can be had: the gateway failed,
// a timeout expired, the context was canceled, or the final answer was
// malformed twice.
func (s Strategy[A]) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[A], error) {
	if task.Gateway == nil {
		return agent.Outcome[A]{}, errors.New("react: nil gateway")
	}
	task.Budget = task.Budget.WithDefaults()
	if task.Class == "" {
		task.Class = llm.TaskAgent
	}
	if emit == nil {
		emit = func(agent.Event) {}
	}
	exec, err := agent.NewExecutor(tools, task.Log, FinalAnswerTool)
	if err != nil {
		return agent.Outcome[A]{}, fmt.Errorf("react: %w", err)
	}
	p := s.Prompts.withDefaults()
	var zero A
	r := &run[A]{
		task:  task,
		p:     p,
		exec:  exec,
		final: llm.Tool{Name: FinalAnswerTool, Description: p.FinalAnswer, Parameters: zero},
	}
	r.all = append(exec.Tools(), r.final)
	init := State[A]{Guards: agent.BudgetGuards(task.Budget).State(), Next: graph.NodeReason}
	if task.System != "" {
		init.Messages = append(init.Messages, Message{Role: "system", Content: task.System})
	}
	init.Messages = append(init.Messages, Message{Role: "user", Content: task.User})

	g, err := graph.ReAct(GraphName, graph.ReActNodes[State[A]]{
		Reason: r.reason, Act: r.act, Force: r.finalTurn,
		Next: func(s State[A]) string { return s.Next },
		// Each iteration is a reason and an act; the forced turn and its
		// repair add two.
		MaxSteps: 2*task.Budget.MaxIterations + 4,
	})
	if err != nil {
		return agent.Outcome[A]{}, fmt.Errorf("react: %w", err)
	}
	opt := graph.Options{Emit: agentEvents(emit)}
	if task.Thread != "" && task.Checkpoints != nil {
		opt.Thread, opt.Checkpointer = task.Thread, lenient{task.Checkpoints, r.log()}
	}

	ctx, cancel := context.WithTimeout(ctx, task.Budget.Timeout)
	defer cancel()
	res, err := g.Run(ctx, init, opt)
	out := outcome(res.State)
	switch {
	case err == nil && res.State.Answer == nil:
		return out, errors.New("react: the run ended without an answer")
	case err == nil:
		return out, nil
	case r.err != nil:
		// A node's own error says what failed in the loop's terms; the
		// engine's wrapping adds nothing for the user.
		return out, r.err
	case ctx.Err() != nil:
		return out, r.ctxErr(ctx.Err())
	}
	return out, fmt.Errorf("react: %w", err)
}

func outcome[A any](s State[A]) agent.Outcome[A] {
	out := agent.Outcome[A]{Iterations: s.Iteration, ToolsUsed: slices.Clone(s.ToolsUsed), ToolCalls: len(s.Guards.Actions), Forced: s.Forced, Guard: s.Guard, Path: GraphName}
	if s.Answer != nil {
		out.Answer = *s.Answer
	}
	return out
}

// agentEvents passes on the events of the loop, tagged with the node that
// emitted them, and the engine's resume; the engine's per-node events are
// of no interest to a strategy's caller.
func agentEvents(emit func(agent.Event)) func(agent.Event) {
	node := ""
	return func(e agent.Event) {
		switch e.Kind {
		case graph.EventNodeStarted:
			node = e.Node
			return
		case graph.EventNodeFinished:
			return
		}
		if e.Node == "" {
			e.Node = node
		}
		emit(e)
	}
}

// lenient keeps a run going when its checkpoints cannot be saved or read
// (a busy or broken store): the explanation matters more than the ability
// to resume it.
type lenient struct {
	cp  agent.Checkpointer
	log *slog.Logger
}

func (l lenient) Put(ctx context.Context, c agent.Checkpoint) error {
	if err := l.cp.Put(ctx, c); err != nil && ctx.Err() == nil {
		l.log.Warn("cannot save the agent's checkpoint; the run continues without it", "thread", c.Thread, "error", err)
	}
	return nil
}

func (l lenient) Get(ctx context.Context, thread string) (agent.Checkpoint, bool, error) {
	c, ok, err := l.cp.Get(ctx, thread)
	if err != nil {
		l.log.Warn("cannot read the agent's checkpoint; starting over", "thread", thread, "error", err)
		return agent.Checkpoint{}, false, nil
	}
	return c, ok, nil
}

func (l lenient) Delete(ctx context.Context, thread string) error { return l.cp.Delete(ctx, thread) }

// run holds what the nodes of one [Strategy.Run] share; the state of the
// loop itself is the graph's [State].
type run[A any] struct {
	task  agent.Task
	p     Prompts
	exec  *agent.Executor
	all   []llm.Tool // the tools offered during the loop
	final llm.Tool
	err   error // the error a node failed with
}

func (r *run[A]) log() *slog.Logger {
	if r.task.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.task.Log
}

func (r *run[A]) fail(err error) error {
	r.err = err
	return err
}

// reason is one iteration's model call.
func (r *run[A]) reason(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	it := s.Iteration + 1
	s.Iteration = it
	emit(agent.Event{Kind: agent.EventIteration, Iteration: it})
	resp, err := r.chat(ctx, s.Messages, r.all, "auto")
	if err != nil {
		return s, r.fail(err)
	}
	if resp.Content != "" {
		emit(agent.Event{Kind: agent.EventThought, Iteration: it, Text: resp.Content})
	}
	calls := withIDs(resp.ToolCalls, it)
	if len(calls) == 0 {
		// Without a tool call the conversation cannot progress; an empty
		// assistant message is rejected by some endpoints, so only a
		// thought is kept, and the model is reminded how to finish.
		if resp.Content != "" {
			s.Messages = append(s.Messages, Message{Role: "assistant", Content: resp.Content})
		}
		s.Messages = append(s.Messages, Message{Role: "user", Content: r.p.Continue})
		return r.nextIteration(s, emit), nil
	}
	s.Messages = append(s.Messages, Message{Role: "assistant", Content: resp.Content, ToolCalls: toolCalls(calls)})
	if i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool }); i >= 0 {
		// The model is done: other calls of the same reply are not run,
		// but each still needs its tool message for the conversation to
		// stay valid should a repair turn follow.
		return r.finish(s, emit, calls, i)
	}
	s.Pending = toolCalls(calls)
	s.Next = graph.NodeAct
	return s, nil
}

// nextIteration routes to the next iteration, or to the forced answer when
// the iterations are used up.
func (r *run[A]) nextIteration(s State[A], emit func(agent.Event)) State[A] {
	if s.Iteration >= r.task.Budget.MaxIterations {
		return r.force(s, emit, agent.GuardMaxIterations,
			fmt.Sprintf("the investigation reached its limit of %d iterations", r.task.Budget.MaxIterations))
	}
	s.Next = graph.NodeReason
	return s
}

// act runs the pending tool calls and records their observations.
func (r *run[A]) act(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	it := s.Iteration
	guards := agent.RestoreGuards(s.Guards)
	calls := s.Pending
	s.Pending = nil
	for i, pc := range calls {
		c := pc.llm()
		if guard, why := guards.Check(c); guard != "" {
			s.Messages = skip(s.Messages, calls[i:], "not run: "+why)
			s.Guards = guards.State()
			return r.force(s, emit, guard, why), nil
		}
		emit(agent.Event{Kind: agent.EventAction, Iteration: it, Tool: c.Name, Input: pc.Arguments})
		obs, ok := r.exec.Run(ctx, c)
		guards.Record(c, ok)
		if r.exec.Has(c.Name) && !slices.Contains(s.ToolsUsed, c.Name) {
			s.ToolsUsed = append(s.ToolsUsed, c.Name)
		}
		emit(agent.Event{Kind: agent.EventObservation, Iteration: it, Tool: c.Name, Text: obs})
		s.Messages = append(s.Messages, Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: obs})
		if guard, why := guards.Stop(); guard != "" && ctx.Err() == nil {
			// Failing calls end the investigation at once, the rest of
			// the reply's calls included.
			s.Messages = skip(s.Messages, calls[i+1:], "not run: "+why)
			s.Guards = guards.State()
			return r.force(s, emit, guard, why), nil
		}
	}
	s.Guards = guards.State()
	if err := ctx.Err(); err != nil {
		return s, r.fail(r.ctxErr(err))
	}
	return r.nextIteration(s, emit), nil
}

// chat makes one model call bounded by the step timeout.
func (r *run[A]) chat(ctx context.Context, history []Message, tools []llm.Tool, choice string) (*llm.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, r.ctxErr(err)
	}
	step, cancel := context.WithTimeout(ctx, r.task.Budget.StepTimeout)
	defer cancel()
	resp, err := r.task.Gateway.Chat(step, llm.ChatRequest{
		Feature:    r.task.Feature,
		Task:       r.task.Class,
		Messages:   llmMessages(history),
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
			return nil, fmt.Errorf("%w after %s: %w", agent.ErrStepTimeout, r.task.Budget.StepTimeout, err)
		}
		return nil, fmt.Errorf("react: model call: %w", err)
	}
	return resp, nil
}

func (r *run[A]) ctxErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s: %w", agent.ErrTimeout, r.task.Budget.Timeout, err)
	}
	return fmt.Errorf("react: %w", err)
}

// skip answers calls that will not run, keeping the conversation valid.
func skip(history []Message, calls []ToolCall, why string) []Message {
	for _, c := range calls {
		history = append(history, Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: why})
	}
	return history
}

// force stops the investigation: the next node asks for the final answer
// with every other tool switched off.
func (r *run[A]) force(s State[A], emit func(agent.Event), guard, why string) State[A] {
	s.Forced, s.Guard = true, guard
	emit(agent.Event{Kind: agent.EventGuard, Iteration: s.Iteration, Text: guard + ": " + why})
	s.Messages = append(s.Messages, Message{Role: "user", Content: "Stop investigating: " + why + ". " + r.p.Stop})
	s.Next = graph.NodeForce
	return s
}

// finalTurn makes a call that may only answer with final_answer.
func (r *run[A]) finalTurn(ctx context.Context, s State[A], emit func(agent.Event)) (State[A], error) {
	it := s.Iteration
	resp, err := r.chat(ctx, s.Messages, []llm.Tool{r.final}, FinalAnswerTool)
	if err != nil {
		return s, r.fail(err)
	}
	if resp.Content != "" {
		emit(agent.Event{Kind: agent.EventThought, Iteration: it, Text: resp.Content})
	}
	calls := withIDs(resp.ToolCalls, it)
	i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool })
	if i < 0 {
		// Endpoints that ignore tool_choice may answer in text; a JSON
		// answer there is as good as a tool call.
		if a, err := agent.DecodeAnswer[A](json.RawMessage(resp.Content)); err == nil {
			return r.done(s, emit, a), nil
		}
		if len(calls) > 0 {
			s.Messages = append(s.Messages, Message{Role: "assistant", Content: resp.Content, ToolCalls: toolCalls(calls)})
			s.Messages = skip(s.Messages, toolCalls(calls), "not run: only final_answer may be called now")
		} else if resp.Content != "" {
			s.Messages = append(s.Messages, Message{Role: "assistant", Content: resp.Content})
		}
		return r.repair(s, "the reply did not call final_answer")
	}
	s.Messages = append(s.Messages, Message{Role: "assistant", Content: resp.Content, ToolCalls: toolCalls(calls)})
	return r.finish(s, emit, calls, i)
}

// finish validates the final_answer call calls[i]; the assistant message
// holding calls is already in the history.
func (r *run[A]) finish(s State[A], emit func(agent.Event), calls []llm.ToolCall, i int) (State[A], error) {
	a, err := agent.DecodeAnswer[A](calls[i].Arguments)
	if err == nil {
		return r.done(s, emit, a), nil
	}
	for j, c := range calls {
		msg := "not run: final_answer was called in the same reply"
		if j == i {
			msg = "error: final answer rejected: " + err.Error()
		}
		s.Messages = append(s.Messages, Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: msg})
	}
	return r.repair(s, err.Error())
}

// repair gives the model one chance to fix its final answer.
func (r *run[A]) repair(s State[A], problem string) (State[A], error) {
	if s.Repaired {
		return s, r.fail(fmt.Errorf("%w after a repair turn: %s", agent.ErrMalformedAnswer, problem))
	}
	s.Repaired = true
	s.Messages = append(s.Messages, Message{Role: "user", Content: "Your final answer was not usable: " + problem + ". " + r.p.Repair})
	s.Next = graph.NodeForce
	return s, nil
}

func (r *run[A]) done(s State[A], emit func(agent.Event), a A) State[A] {
	s.Answer = &a
	s.Next = graph.End
	emit(agent.Event{Kind: agent.EventDone, Iteration: s.Iteration, Text: summary(a)})
	return s
}

// summary is the text of the done event: the answer's String when it has
// one, else nothing.
func summary(a any) string {
	if s, ok := a.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
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
