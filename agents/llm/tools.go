package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	openai "github.com/sashabaranov/go-openai"
)

// toolSchema is a tool's parameters schema for the wire and for checking
// the model's arguments.
type toolSchema struct {
	wire     json.RawMessage
	lenient  *jsonschema.Schema   // nil: arguments are not checked
	resolved *jsonschema.Resolved // nil: arguments are not checked
}

var (
	noParams        = json.RawMessage(`{"type":"object","properties":{}}`)
	toolSchemaCache sync.Map // reflect.Type → *toolSchema
)

// toolSchemaOf derives the schema of a Tool.Parameters value.
func toolSchemaOf(params any) (*toolSchema, error) {
	switch p := params.(type) {
	case nil:
		return &toolSchema{wire: noParams}, nil
	case json.RawMessage:
		return rawToolSchema(p)
	case []byte:
		return rawToolSchema(p)
	case *jsonschema.Schema:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		return rawToolSchema(b)
	}
	t := reflect.TypeOf(params)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := toolSchemaCache.Load(t); ok {
		return v.(*toolSchema), nil
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	ts, err := rawToolSchema(b)
	if err != nil {
		return nil, err
	}
	v, _ := toolSchemaCache.LoadOrStore(t, ts)
	return v.(*toolSchema), nil
}

func rawToolSchema(b []byte) (*toolSchema, error) {
	if !json.Valid(b) {
		return nil, errors.New("parameters schema is not valid JSON")
	}
	ts := &toolSchema{wire: json.RawMessage(b)}
	var s jsonschema.Schema
	if json.Unmarshal(b, &s) == nil {
		loosen(&s)
		if r, err := s.Resolve(nil); err == nil {
			ts.lenient, ts.resolved = &s, r
		}
	}
	return ts, nil
}

func validToolName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, c := range []byte(n) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// prepareTools converts tools and the tool choice for the wire.
func (g *Gateway) prepareTools(p *prepared, tools []Tool, choice string) error {
	var key bytes.Buffer
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if !validToolName(t.Name) {
			return fmt.Errorf("tool name %q is invalid: use 1 to 64 of a-z, A-Z, 0-9, _ and -", t.Name)
		}
		ts, err := toolSchemaOf(t.Parameters)
		if err != nil {
			return fmt.Errorf("tool %s: %w", t.Name, err)
		}
		p.tools = append(p.tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: ts.wire,
		}})
		for _, s := range []string{t.Name, t.Description, string(ts.wire)} {
			fmt.Fprintf(&key, "%d:%s", len(s), s)
		}
		names = append(names, t.Name)
	}
	p.toolsKey = key.Bytes()
	p.choiceKey = choice
	switch choice {
	case "":
	case "auto", "none", "required":
		if len(tools) == 0 {
			return fmt.Errorf("tool choice %q given without tools", choice)
		}
		p.toolChoice = choice
	default:
		if !slices.Contains(names, choice) {
			return fmt.Errorf("tool choice %q names no tool of the request (tools: %s)", choice, strings.Join(names, ", "))
		}
		p.toolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: choice}}
	}
	return nil
}

// ToolFunc runs one tool call. Its result, or "error: " and its error, is
// what the model sees as the observation.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// DefaultMaxRounds is used by [RunTools] when maxRounds is not positive.
const DefaultMaxRounds = 10

// RunTools runs the tool-calling loop of an agent: it calls the model,
// runs every tool call of the reply in order, appends the assistant
// message and one tool message per call, and repeats until the model
// answers without tool calls or maxRounds calls were made. It returns the
// last reply (its Usage summed over the rounds) and the whole conversation.
//
// The model never gets a broken conversation: an unknown tool, arguments
// that are not JSON or do not match the tool's schema, a tool error and a
// tool panic all become observations starting with "error: " that say what
// went wrong, so the model can correct itself. When maxRounds is reached
// the last round's tools have still run, so the returned history is
// complete, and the error wraps [ErrMaxRounds]. Parts are assembled (and
// so redacted and trimmed) once, before the first round; the returned
// history holds those assembled messages.
func RunTools(ctx context.Context, g *Gateway, req ChatRequest, funcs map[string]ToolFunc, maxRounds int) (*ChatResponse, []Message, error) {
	if maxRounds <= 0 {
		maxRounds = DefaultMaxRounds
	}
	var history []Message
	if len(req.Parts) > 0 && len(req.Messages) == 0 {
		// Assemble once, so later rounds extend the trimmed prompt rather
		// than re-trimming a growing conversation.
		history, _ = g.assemble(g.Model(req.Task), req.Parts, req.MaxTokens)
		req.Parts = nil
	} else {
		history = slices.Clone(req.Messages)
	}
	schemas := map[string]*toolSchema{}
	for _, t := range req.Tools {
		if ts, err := toolSchemaOf(t.Parameters); err == nil {
			schemas[t.Name] = ts
		}
	}
	var total Usage
	for round := 1; ; round++ {
		r := req
		r.Messages = history
		resp, err := g.Chat(ctx, r)
		if err != nil {
			return nil, history, err
		}
		total.add(resp.Usage)
		resp.Usage = total
		calls := make([]ToolCall, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			if c.ID == "" {
				// Some local servers omit ids; tool messages need one to
				// refer to.
				c.ID = fmt.Sprintf("call_%d_%d", round, i+1)
			}
			calls[i] = c
		}
		resp.ToolCalls = calls
		history = append(history, Message{Role: "assistant", Content: resp.Content, ToolCalls: calls})
		if len(calls) == 0 {
			return resp, history, nil
		}
		for _, c := range calls {
			obs := g.runTool(ctx, funcs, schemas, c)
			history = append(history, Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: obs})
		}
		if err := ctx.Err(); err != nil {
			return resp, history, fmt.Errorf("tool loop canceled: %w", err)
		}
		if round >= maxRounds {
			return resp, history, fmt.Errorf("%w: the model still asks for tools after %d rounds", ErrMaxRounds, maxRounds)
		}
	}
}

// runTool runs one call and returns the observation for the model.
func (g *Gateway) runTool(ctx context.Context, funcs map[string]ToolFunc, schemas map[string]*toolSchema, c ToolCall) (obs string) {
	f := funcs[c.Name]
	if f == nil {
		return fmt.Sprintf("error: there is no tool named %q; available tools: %s", c.Name, strings.Join(slices.Sorted(maps.Keys(funcs)), ", "))
	}
	args := bytes.TrimSpace(c.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		fixed, err := extractJSON(string(args), false)
		if err != nil {
			return fmt.Sprintf("error: the arguments for %s are not valid JSON (%v): %s; call it again with a JSON object that matches its parameters",
				c.Name, err, shorten(string(args), 200))
		}
		args = []byte(fixed)
	}
	if ts := schemas[c.Name]; ts != nil && ts.resolved != nil {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			v = normalize(v, ts.lenient)
			if err := ts.resolved.Validate(v); err != nil {
				return fmt.Sprintf("error: invalid arguments for %s: %s; call it again with arguments that match its parameters", c.Name, validationMessage(err))
			}
			if b, err := json.Marshal(v); err == nil {
				args = b
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			// A bug in one tool must not take the language server down; the
			// model learns the tool failed and the log keeps the details.
			g.log.Error("llm tool panicked", "tool", c.Name, "panic", r)
			obs = fmt.Sprintf("error: tool %s failed unexpectedly", c.Name)
		}
	}()
	out, err := f(ctx, json.RawMessage(args))
	if err != nil {
		return "error: " + err.Error()
	}
	if out == "" {
		// An empty tool message is rejected by some endpoints.
		return "(no output)"
	}
	return out
}
