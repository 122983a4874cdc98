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
package react

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
)

// FinalAnswerTool is the name of the tool that ends a run.
const FinalAnswerTool = "final_answer"

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
		task:   task,
		p:      p,
		emit:   emit,
		exec:   exec,
		guards: agent.NewGuards(task.Budget.MaxToolCalls),
		final:  llm.Tool{Name: FinalAnswerTool, Description: p.FinalAnswer, Parameters: zero},
	}
	r.all = append(exec.Tools(), r.final)
	if task.System != "" {
		r.history = append(r.history, llm.Message{Role: "system", Content: task.System})
	}
	r.history = append(r.history, llm.Message{Role: "user", Content: task.User})

	ctx, cancel := context.WithTimeout(ctx, task.Budget.Timeout)
	defer cancel()
	return r.loop(ctx)
}

// run holds the state of one [Strategy.Run].
type run[A any] struct {
	task     agent.Task
	p        Prompts
	emit     func(agent.Event)
	exec     *agent.Executor
	guards   *agent.Guards
	all      []llm.Tool // the tools offered during the loop
	final    llm.Tool
	history  []llm.Message
	res      agent.Outcome[A]
	repaired bool
}

func (r *run[A]) loop(ctx context.Context) (agent.Outcome[A], error) {
	for it := 1; it <= r.task.Budget.MaxIterations; it++ {
		r.res.Iterations = it
		r.emit(agent.Event{Kind: agent.EventIteration, Iteration: it})
		resp, err := r.chat(ctx, r.all, "auto")
		if err != nil {
			return r.res, err
		}
		if resp.Content != "" {
			r.emit(agent.Event{Kind: agent.EventThought, Iteration: it, Text: resp.Content})
		}
		calls := withIDs(resp.ToolCalls, it)
		if len(calls) == 0 {
			// Without a tool call the conversation cannot progress; an empty
			// assistant message is rejected by some endpoints, so only a
			// thought is kept, and the model is reminded how to finish.
			if resp.Content != "" {
				r.history = append(r.history, llm.Message{Role: "assistant", Content: resp.Content})
			}
			r.history = append(r.history, llm.Message{Role: "user", Content: r.p.Continue})
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
			if guard, why := r.guards.Check(c); guard != "" {
				r.skip(calls[i:], "not run: "+why)
				return r.force(ctx, it, guard, why)
			}
			r.act(ctx, it, c)
		}
		if err := ctx.Err(); err != nil {
			return r.res, r.ctxErr(err)
		}
	}
	return r.force(ctx, r.res.Iterations, agent.GuardMaxIterations,
		fmt.Sprintf("the investigation reached its limit of %d iterations", r.task.Budget.MaxIterations))
}

// chat makes one model call bounded by the step timeout.
func (r *run[A]) chat(ctx context.Context, tools []llm.Tool, choice string) (*llm.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, r.ctxErr(err)
	}
	step, cancel := context.WithTimeout(ctx, r.task.Budget.StepTimeout)
	defer cancel()
	resp, err := r.task.Gateway.Chat(step, llm.ChatRequest{
		Feature:    r.task.Feature,
		Task:       r.task.Class,
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

// act runs one tool call and records its observation.
func (r *run[A]) act(ctx context.Context, it int, c llm.ToolCall) {
	r.emit(agent.Event{Kind: agent.EventAction, Iteration: it, Tool: c.Name, Input: string(c.Arguments)})
	obs, ok := r.exec.Run(ctx, c)
	r.guards.Record(c, ok)
	if r.exec.Has(c.Name) && !slices.Contains(r.res.ToolsUsed, c.Name) {
		r.res.ToolsUsed = append(r.res.ToolsUsed, c.Name)
	}
	r.emit(agent.Event{Kind: agent.EventObservation, Iteration: it, Tool: c.Name, Text: obs})
	r.history = append(r.history, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: obs})
}

// skip answers calls that will not run, keeping the conversation valid.
func (r *run[A]) skip(calls []llm.ToolCall, why string) {
	for _, c := range calls {
		r.history = append(r.history, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: why})
	}
}

// force asks for the final answer with every other tool switched off.
func (r *run[A]) force(ctx context.Context, it int, guard, why string) (agent.Outcome[A], error) {
	r.res.Forced, r.res.Guard = true, guard
	r.emit(agent.Event{Kind: agent.EventGuard, Iteration: it, Text: guard + ": " + why})
	r.history = append(r.history, llm.Message{Role: "user", Content: "Stop investigating: " + why + ". " + r.p.Stop})
	return r.finalTurn(ctx, it)
}

// finalTurn makes a call that may only answer with final_answer.
func (r *run[A]) finalTurn(ctx context.Context, it int) (agent.Outcome[A], error) {
	resp, err := r.chat(ctx, []llm.Tool{r.final}, FinalAnswerTool)
	if err != nil {
		return r.res, err
	}
	if resp.Content != "" {
		r.emit(agent.Event{Kind: agent.EventThought, Iteration: it, Text: resp.Content})
	}
	calls := withIDs(resp.ToolCalls, it)
	i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool })
	if i < 0 {
		// Endpoints that ignore tool_choice may answer in text; a JSON
		// answer there is as good as a tool call.
		if a, err := agent.DecodeAnswer[A](json.RawMessage(resp.Content)); err == nil {
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
func (r *run[A]) finish(ctx context.Context, it int, calls []llm.ToolCall, i int) (agent.Outcome[A], error) {
	a, err := agent.DecodeAnswer[A](calls[i].Arguments)
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
func (r *run[A]) repair(ctx context.Context, it int, problem string) (agent.Outcome[A], error) {
	if r.repaired {
		return r.res, fmt.Errorf("%w after a repair turn: %s", agent.ErrMalformedAnswer, problem)
	}
	r.repaired = true
	r.history = append(r.history, llm.Message{Role: "user", Content: "Your final answer was not usable: " + problem + ". " + r.p.Repair})
	return r.finalTurn(ctx, it)
}

func (r *run[A]) done(it int, a A) agent.Outcome[A] {
	r.res.Answer = a
	r.emit(agent.Event{Kind: agent.EventDone, Iteration: it, Text: summary(a)})
	return r.res
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
