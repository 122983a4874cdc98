// Package turns holds the model calls the planning strategies (package
// planexec and package rewoo) share: a structured plan with a bounded
// number of attempts, and the final answer of the strategy's answer type
// through a final_answer tool with one repair turn.
package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
)

// FinalAnswerTool is the name of the tool the answer turn forces.
const FinalAnswerTool = "final_answer"

// Call bounds ctx by the task's step timeout and maps the errors of a
// model call the way the ReAct strategy does, so that every strategy
// reports timeouts alike.
func Call[T any](ctx context.Context, task agent.Task, call func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, CtxErr(task, err)
	}
	step, cancel := context.WithTimeout(ctx, task.Budget.StepTimeout)
	defer cancel()
	v, err := call(step)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return zero, fmt.Errorf("%w: %w", CtxErr(task, ctx.Err()), err)
		case errors.Is(step.Err(), context.DeadlineExceeded):
			return zero, fmt.Errorf("%w after %s: %w", agent.ErrStepTimeout, task.Budget.StepTimeout, err)
		}
		return zero, err
	}
	return v, nil
}

// CtxErr names the end of the run's context.
func CtxErr(task agent.Task, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w after %s: %w", agent.ErrTimeout, task.Budget.Timeout, err)
	}
	return err
}

// Base is the conversation every call of a run starts from: the task's
// system prompt, when it has one, and the work itself.
func Base(task agent.Task) []llm.Message {
	var msgs []llm.Message
	if task.System != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: task.System})
	}
	return append(msgs, llm.Message{Role: "user", Content: task.User})
}

// Plan asks for a structured T after msgs, at most attempts times: a reply
// the gateway cannot validate against T's schema (after its own repair
// round) or that check rejects is a failed attempt, and the next attempt
// is told what was wrong. It returns the first plan check accepts or,
// when every attempt failed, ErrUnusablePlan with the last problem; an
// endpoint failure is returned as it is.
// cache lets the gateway's response cache answer the first attempt, for
// plans that depend on their prompt alone.
func Plan[T any](ctx context.Context, task agent.Task, schema string, allowed map[string][]any, msgs []llm.Message, attempts int, cache bool, check func(*T) error) (T, error) {
	var zero T
	var problem error
	for try := 0; try < max(attempts, 1); try++ {
		conv := slices.Clone(msgs)
		if problem != nil {
			conv = append(conv, llm.Message{Role: "user", Content: "The previous plan was not usable: " + problem.Error() + ". Write the plan again and fix that."})
		}
		req := llm.StructuredRequest{
			ChatRequest: llm.ChatRequest{Feature: task.Feature, Task: task.Class, Messages: conv, NoCache: !cache || problem != nil},
			SchemaName:  schema,
			Allowed:     allowed,
		}
		p, err := Call(ctx, task, func(ctx context.Context) (T, error) {
			v, _, err := llm.Structured[T](ctx, task.Gateway, req, nil)
			return v, err
		})
		if err != nil {
			if !errors.Is(err, llm.ErrInvalidReply) {
				// The endpoint failed, not the plan: another attempt would
				// fail alike, and the caller decides what that means.
				return zero, err
			}
			problem = err
			continue
		}
		if err := check(&p); err != nil {
			problem = err
			continue
		}
		return p, nil
	}
	return zero, fmt.Errorf("%w: %w", ErrUnusablePlan, problem)
}

// ErrUnusablePlan means every attempt at a plan failed validation.
var ErrUnusablePlan = errors.New("the plan is unusable")

// Answer asks for the final answer of type A after msgs, offering only the
// final_answer tool with A's JSON Schema (or params, when not nil). The
// answer is decoded with agent.DecodeAnswer (so an A that is an
// agent.Checker checks itself); an unusable one gets one repair turn that
// says what was wrong. It returns the answer and the raw arguments the
// model sent, for callers that read more than A from them.
func Answer[A any](ctx context.Context, task agent.Task, msgs []llm.Message, description string, params any, repair string) (A, json.RawMessage, error) {
	var zero A
	if params == nil {
		params = zero
	}
	tool := llm.Tool{Name: FinalAnswerTool, Description: description, Parameters: params}
	conv := slices.Clone(msgs)
	for turn := 0; turn < 2; turn++ {
		resp, err := Call(ctx, task, func(ctx context.Context) (*llm.ChatResponse, error) {
			return task.Gateway.Chat(ctx, llm.ChatRequest{
				Feature: task.Feature, Task: task.Class, Messages: slices.Clone(conv),
				Tools: []llm.Tool{tool}, ToolChoice: FinalAnswerTool, NoCache: true,
			})
		})
		if err != nil {
			return zero, nil, fmt.Errorf("model call: %w", err)
		}
		calls := withIDs(resp.ToolCalls)
		i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == FinalAnswerTool })
		var problem string
		switch {
		case i >= 0:
			a, err := agent.DecodeAnswer[A](calls[i].Arguments)
			if err == nil {
				return a, calls[i].Arguments, nil
			}
			problem = err.Error()
			conv = append(conv, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})
			for j, c := range calls {
				msg := "not run: final_answer was called in the same reply"
				if j == i {
					msg = "error: final answer rejected: " + problem
				}
				conv = append(conv, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: msg})
			}
		default:
			// Endpoints that ignore tool_choice may answer in text; a JSON
			// answer there is as good as a tool call.
			if a, err := agent.DecodeAnswer[A](json.RawMessage(resp.Content)); err == nil {
				return a, json.RawMessage(resp.Content), nil
			}
			problem = "the reply did not call final_answer"
			if len(calls) > 0 {
				conv = append(conv, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})
				for _, c := range calls {
					conv = append(conv, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: "not run: only final_answer may be called now"})
				}
			} else if resp.Content != "" {
				conv = append(conv, llm.Message{Role: "assistant", Content: resp.Content})
			}
		}
		if turn == 1 {
			return zero, nil, fmt.Errorf("%w after a repair turn: %s", agent.ErrMalformedAnswer, problem)
		}
		conv = append(conv, llm.Message{Role: "user", Content: "Your final answer was not usable: " + problem + ". " + repair})
	}
	return zero, nil, agent.ErrMalformedAnswer
}

// withIDs gives id-less calls an id; some local servers omit them, and
// tool messages must refer to one.
func withIDs(calls []llm.ToolCall) []llm.ToolCall {
	out := slices.Clone(calls)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_final_%d", i+1)
		}
	}
	return out
}

// RunTool runs one tool call through the executor, bounded by the task's
// step timeout.
func RunTool(ctx context.Context, task agent.Task, x *agent.Executor, c llm.ToolCall) (string, bool) {
	step, cancel := context.WithTimeout(ctx, task.Budget.StepTimeout)
	defer cancel()
	obs, ok := x.Run(step, c)
	if ok && step.Err() != nil && ctx.Err() == nil {
		return fmt.Sprintf("error: %s did not finish within %s", c.Name, task.Budget.StepTimeout), false
	}
	return obs, ok
}

// Summary is the text of a done event: the answer's String when it has
// one, else nothing.
func Summary(a any) string {
	if s, ok := a.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
}

// Wording is what a planning strategy tells the model about the answer.
// Zero fields get the defaults WithDefaults is given.
type Wording struct {
	// FinalAnswer is the final_answer tool's description.
	FinalAnswer string
	// Repair follows "Your final answer was not usable: <problem>. " in
	// the one repair turn.
	Repair string
}

// DefaultRepair is the repair wording when a feature gives none.
const DefaultRepair = "Call final_answer again with arguments that match its parameters."

// WithDefaults fills the zero fields: finalAnswer for the answer's
// description, DefaultRepair for the repair turn.
func (w Wording) WithDefaults(finalAnswer string) Wording {
	if w.FinalAnswer == "" {
		w.FinalAnswer = finalAnswer
	}
	if w.Repair == "" {
		w.Repair = DefaultRepair
	}
	return w
}
