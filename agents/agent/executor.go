package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/kodustech/kodyls/agents/llm"
)

// Executor runs a model's tool calls. Every failure becomes an
// observation starting with "error: " that says what went wrong, so the
// model can correct itself instead of the run failing: an unknown tool,
// arguments that are not JSON (after a lenient extraction) or do not match
// the tool's schema (after normalisation, see llm.PrepareToolArgs), a tool
// error and a tool panic.
type Executor struct {
	tools map[string]Tool
	defs  []llm.Tool
	names []string // sorted, reserved names included: what the model may call
	log   *slog.Logger
}

// NewExecutor returns the executor of tools. reserved names the tools the
// caller answers itself, such as a strategy's final_answer: no tool may
// take such a name, and they are listed to a model that calls an unknown
// tool. log receives tool panics; nil discards them.
func NewExecutor(tools []Tool, log *slog.Logger, reserved ...string) (*Executor, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Executor{tools: make(map[string]Tool, len(tools)), log: log}
	for _, t := range tools {
		_, dup := x.tools[t.Name]
		switch {
		case t.Name == "":
			return nil, errors.New("agent: a tool has no name")
		case slices.Contains(reserved, t.Name):
			return nil, fmt.Errorf("agent: tool name %q is reserved", t.Name)
		case dup:
			return nil, fmt.Errorf("agent: tool %q given twice", t.Name)
		case t.Run == nil:
			return nil, fmt.Errorf("agent: tool %q has no Run function", t.Name)
		}
		x.tools[t.Name] = t
		x.defs = append(x.defs, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		x.names = append(x.names, t.Name)
	}
	x.names = append(x.names, reserved...)
	slices.Sort(x.names)
	return x, nil
}

// Tools returns the definitions to offer the model, in the order given.
func (x *Executor) Tools() []llm.Tool { return slices.Clone(x.defs) }

// Has reports whether name is one of the executor's tools.
func (x *Executor) Has(name string) bool {
	_, ok := x.tools[name]
	return ok
}

// Run runs one call and returns the observation for the model; ok is false
// when the call failed, whatever the reason. An empty output becomes
// "(no output)", because some endpoints reject empty tool messages.
func (x *Executor) Run(ctx context.Context, c llm.ToolCall) (obs string, ok bool) {
	t, known := x.tools[c.Name]
	if !known {
		return fmt.Sprintf("error: there is no tool named %q; available tools: %s", c.Name, strings.Join(x.names, ", ")), false
	}
	args, err := llm.PrepareToolArgs(llm.Tool{Name: t.Name, Parameters: t.Parameters}, c.Arguments)
	if err != nil {
		return "error: " + err.Error(), false
	}
	defer func() {
		if p := recover(); p != nil {
			// A bug in one tool must not take the language server down; the
			// model learns the tool failed and the log keeps the details.
			x.log.Error("agent tool panicked", "tool", c.Name, "panic", p)
			obs, ok = fmt.Sprintf("error: tool %s failed unexpectedly", c.Name), false
		}
	}()
	out, err := t.Run(ctx, args)
	if err != nil {
		return "error: " + err.Error(), false
	}
	if out == "" {
		return "(no output)", true
	}
	return out, true
}
