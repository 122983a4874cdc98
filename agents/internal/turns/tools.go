package turns

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/prompts"
)

// PlanTools describes tools for a planning prompt: name, description and
// the JSON Schema of the arguments, since a plan writes the arguments
// without the tool definitions of native tool calling.
func PlanTools(tools []agent.Tool) []prompts.PlanTool {
	out := make([]prompts.PlanTool, len(tools))
	for i, t := range tools {
		out[i] = prompts.PlanTool{Name: t.Name, Description: t.Description, Parameters: schemaText(t.Parameters)}
	}
	return out
}

func schemaText(params any) string {
	switch p := params.(type) {
	case nil:
		return `{"type":"object"}`
	case json.RawMessage:
		return string(p)
	case []byte:
		return string(p)
	case *jsonschema.Schema:
		b, _ := json.Marshal(p)
		return string(b)
	}
	t := reflect.TypeOf(params)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return `{"type":"object"}`
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// Names lists the tools' names, as the values a plan's tool may take.
func Names(tools []agent.Tool) []any {
	out := make([]any, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
