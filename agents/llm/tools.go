package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// PrepareToolArgs readies a model's arguments for a call of t: empty
// arguments become {}, arguments that are not JSON are extracted leniently
// from the text around them (models wrap JSON in fences or prose), and
// arguments are normalised to t's parameters schema (a "5" where a number
// is due becomes 5) and validated against it. The error says, in words
// meant for the model, what to send instead.
func PrepareToolArgs(t Tool, raw json.RawMessage) (json.RawMessage, error) {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		fixed, err := extractJSON(string(args), false)
		if err != nil {
			return nil, fmt.Errorf("the arguments for %s are not valid JSON (%v): %s; call it again with a JSON object that matches its parameters",
				t.Name, err, shorten(string(args), 200))
		}
		args = []byte(fixed)
	}
	ts, err := toolSchemaOf(t.Parameters)
	if err != nil || ts.resolved == nil {
		// A schema the gateway cannot check is sent as given; the tool
		// decodes what it gets.
		return json.RawMessage(args), nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(args), nil
	}
	v = normalize(v, ts.lenient)
	if err := ts.resolved.Validate(v); err != nil {
		return nil, fmt.Errorf("invalid arguments for %s: %s; call it again with arguments that match its parameters", t.Name, validationMessage(err))
	}
	if b, err := json.Marshal(v); err == nil {
		args = b
	}
	return json.RawMessage(args), nil
}
