package llm

import (
	"errors"
	"strings"
	"text/template"
)

// Names of the prompts the gateway renders itself through [WithPrompts].
const (
	PromptJSONRepair         = "json_repair"
	PromptJSONObjectFallback = "json_object_fallback"
)

// FallbackPrompt is the data of the json_object_fallback prompt, appended
// to the system message when the endpoint cannot enforce a JSON Schema.
type FallbackPrompt struct {
	SchemaName string
	Schema     string // compact JSON Schema
}

// RepairPrompt is the data of the json_repair prompt, sent as a user
// message after the invalid reply.
type RepairPrompt struct {
	SchemaName string
	Schema     string
	Reply      string // the invalid reply
	Error      string // why it was rejected
	Truncated  bool   // the reply was cut off at the token limit
}

var defaultPrompts = template.Must(template.New("").Parse(`
{{- define "json_object_fallback" -}}
Answer with one JSON document and nothing else: no prose before or after it, no code fences.
It must conform to this JSON Schema (named {{.SchemaName}}):
{{.Schema}}
Use null for optional properties you have no value for.
{{- end -}}
{{- define "json_repair" -}}
{{if .Truncated -}}
Your previous reply was cut off at the token limit, so it is not complete JSON.
Reply again with a shorter answer: fewer items and more concise text.
{{- else -}}
Your previous reply could not be used: {{.Error}}
{{- end}}
Reply with only the corrected JSON document matching the schema {{.SchemaName}}: no prose, no code fences.
{{- end -}}
`))

// render renders a gateway prompt with the caller's renderer when set,
// else (or when it fails) with the built-in text.
func (g *Gateway) render(name string, data any) string {
	if g.prompts != nil {
		s, err := g.prompts(name, data)
		if err == nil && strings.TrimSpace(s) != "" {
			return s
		}
		if err == nil {
			err = errors.New("rendered an empty prompt")
		}
		g.log.Warn("custom llm prompt failed; using the built-in text", "prompt", name, "err", err)
	}
	var b strings.Builder
	if err := defaultPrompts.ExecuteTemplate(&b, name, data); err != nil {
		// The built-in templates are fixed and tested; this cannot happen
		// short of a programming error, which the log makes visible.
		g.log.Error("built-in llm prompt failed", "prompt", name, "err", err)
	}
	return b.String()
}

func (g *Gateway) fallbackPrompt(sch *schemaInfo, name string) string {
	return g.render(PromptJSONObjectFallback, FallbackPrompt{SchemaName: name, Schema: sch.promptJS})
}

func (g *Gateway) repairPrompt(sch *schemaInfo, name string, resp *ChatResponse, cause error) string {
	return g.render(PromptJSONRepair, RepairPrompt{
		SchemaName: name,
		Schema:     sch.promptJS,
		Reply:      resp.Content,
		Error:      cause.Error(),
		Truncated:  errors.Is(cause, errTruncated),
	})
}
