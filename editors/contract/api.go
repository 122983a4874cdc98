package contract

//go:generate go run ./gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// APIFile is where the generator writes API(), relative to the module root.
const APIFile = "editors/shared/kodyls-api.json"

// Markers around the generated settings table in README.md.
const (
	SettingsBeginMarker = "<!-- settings:begin -->"
	SettingsEndMarker   = "<!-- settings:end -->"
)

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// API returns the published contract, the content of editors/shared/kodyls-api.json:
// the settings as a JSON Schema, the commands, notifications and requests
// with JSON Schemas of their arguments, params and results, and the schema
// of the data of kodyls's diagnostics. The
// output is deterministic, indented and ends with a newline.
func API() ([]byte, error) {
	doc := apiDoc{
		Comment:  "Generated from package editors/contract by `go run ./editors/contract/gen`; do not edit.",
		Settings: SettingsSchema(),
	}
	for _, c := range Commands {
		ac := apiCommand{Name: c.Name, Title: c.Title, Description: c.Description, Progress: c.Progress}
		if c.Args != nil {
			s, err := typeSchema(c.Args)
			if err != nil {
				return nil, fmt.Errorf("%s arguments: %w", c.Name, err)
			}
			for _, keys := range c.ArgsRequire {
				s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Required: keys})
			}
			ac.Arguments = s
		}
		s, err := typeSchema(c.Result)
		if err != nil {
			return nil, fmt.Errorf("%s result: %w", c.Name, err)
		}
		ac.Result = s
		doc.Commands = append(doc.Commands, ac)
	}
	var err error
	if doc.Notifications, err = apiMessages(Notifications); err != nil {
		return nil, err
	}
	if doc.Requests, err = apiMessages(Requests); err != nil {
		return nil, err
	}
	if doc.DiagnosticData, err = typeSchema(reflect.TypeFor[DiagnosticData]()); err != nil {
		return nil, fmt.Errorf("diagnostic data: %w", err)
	}
	doc.DiagnosticData.Description = "The data of every diagnostic with source \"kody\" (a Kody Rule violation or a review finding)."
	doc.DiagnosticData.Properties["kind"].Enum = []any{DiagnosticKindReview}
	if doc.ClientCapabilities, err = typeSchema(reflect.TypeFor[ClientExperimental]()); err != nil {
		return nil, fmt.Errorf("client capabilities: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode the contract: %w", err)
	}
	return buf.Bytes(), nil
}

type apiDoc struct {
	Comment       string             `json:"$comment"`
	Settings      *jsonschema.Schema `json:"settings"`
	Commands      []apiCommand       `json:"commands"`
	Notifications []apiMessage       `json:"notifications"`
	Requests      []apiMessage       `json:"requests"`
	// DiagnosticData is the schema of Diagnostic.data in the diagnostics
	// kodyls publishes.
	DiagnosticData *jsonschema.Schema `json:"diagnosticData"`
	// ClientCapabilities is the schema of capabilities.experimental.kodyls
	// in initialize.
	ClientCapabilities *jsonschema.Schema `json:"clientCapabilities"`
}

type apiCommand struct {
	Name        string             `json:"name"`
	Title       string             `json:"title"`
	Description string             `json:"description"`
	Progress    bool               `json:"progress,omitempty"`
	Arguments   *jsonschema.Schema `json:"arguments,omitempty"`
	Result      *jsonschema.Schema `json:"result"`
}

type apiMessage struct {
	Method      string             `json:"method"`
	Direction   string             `json:"direction"`
	Description string             `json:"description"`
	Params      *jsonschema.Schema `json:"params"`
	Result      *jsonschema.Schema `json:"result,omitempty"`
}

func apiMessages(ms []Message) ([]apiMessage, error) {
	var out []apiMessage
	for _, m := range ms {
		am := apiMessage{Method: m.Method, Direction: m.Direction, Description: m.Description}
		var err error
		if am.Params, err = typeSchema(m.Params); err != nil {
			return nil, fmt.Errorf("%s params: %w", m.Method, err)
		}
		if m.Result != nil {
			if am.Result, err = typeSchema(m.Result); err != nil {
				return nil, fmt.Errorf("%s result: %w", m.Method, err)
			}
		}
		out = append(out, am)
	}
	return out, nil
}

// typeSchema infers the JSON Schema of a Go type of the contract.
func typeSchema(t reflect.Type) (*jsonschema.Schema, error) {
	states := make([]any, len(States))
	for i, s := range States {
		states[i] = string(s)
	}
	return jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[State](): {Type: "string", Enum: states, Description: stateDoc},
	}})
}

const stateDoc = "offline: no model is configured, only local checks run; ready: a model is configured and no review is running; " +
	"reviewing: at least one review or explanation is running; degraded: the last review lost model stages, to bad answers or to an endpoint that failed; " +
	"endpointDown: the endpoint does not answer, only local checks run until it does"

// SettingsSchema returns the JSON Schema (draft 2020-12) of the kodyls
// section: one property per key of SettingsTable, the dotted keys nested in
// objects.
func SettingsSchema() *jsonschema.Schema {
	root := &jsonschema.Schema{
		Schema:               draft202012,
		Title:                "kodyls settings",
		Description:          "The `kodyls` section of initializationOptions and workspace/configuration.",
		Type:                 TypeObject,
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: falseSchema(),
	}
	for _, st := range SettingsTable {
		parent, name := root, st.Key
		if group, sub, nested := strings.Cut(st.Key, "."); nested {
			parent, name = root.Properties[group], sub
			if parent == nil {
				parent = &jsonschema.Schema{
					Type:                 TypeObject,
					Description:          SettingGroups[group],
					Properties:           map[string]*jsonschema.Schema{},
					AdditionalProperties: falseSchema(),
				}
				root.Properties[group] = parent
				root.PropertyOrder = append(root.PropertyOrder, group)
			}
		}
		parent.Properties[name] = st.schema()
		parent.PropertyOrder = append(parent.PropertyOrder, name)
	}
	return root
}

func (st Setting) schema() *jsonschema.Schema {
	s := &jsonschema.Schema{Type: st.Type, Description: st.Description, Default: mustJSON(st.Default)}
	if st.Example != nil {
		s.Examples = []any{st.Example}
	}
	for _, v := range st.Enum {
		s.Enum = append(s.Enum, v)
	}
	if st.Minimum != nil {
		s.Minimum = jsonschema.Ptr(float64(*st.Minimum))
	}
	if st.Maximum != nil {
		s.Maximum = jsonschema.Ptr(float64(*st.Maximum))
	}
	if st.Type == TypeObject {
		defaults, _ := st.Default.(map[string]string)
		s.Properties = map[string]*jsonschema.Schema{}
		s.AdditionalProperties = falseSchema()
		for _, k := range st.Keys {
			p := &jsonschema.Schema{Type: TypeString}
			if d, ok := defaults[k]; ok {
				p.Default = mustJSON(d)
			}
			for _, v := range st.Values {
				p.Enum = append(p.Enum, v)
			}
			s.Properties[k] = p
			s.PropertyOrder = append(s.PropertyOrder, k)
		}
	}
	return s
}

// falseSchema accepts nothing; as additionalProperties it rejects unknown keys.
func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// mustJSON marshals a default of the table: a string, an int or a
// map[string]string, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("contract: marshal %v: %v", v, err))
	}
	return b
}

// SettingsMarkdown returns the README's settings table: key, default and
// meaning of every setting.
func SettingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | default | meaning |\n| --- | --- | --- |\n")
	for _, st := range SettingsTable {
		meaning := st.Description
		if st.Minimum != nil && st.Maximum != nil {
			meaning += fmt.Sprintf(" (%d..%d)", *st.Minimum, *st.Maximum)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", st.Key, cell(st.defaultMarkdown()), cell(meaning))
	}
	return b.String()
}

func (st Setting) defaultMarkdown() string {
	if st.DefaultDoc != "" {
		return st.DefaultDoc
	}
	switch d := st.Default.(type) {
	case string:
		if d == "" {
			return "none"
		}
		return "`" + d + "`"
	case map[string]string:
		if len(d) == 0 {
			return "none"
		}
		var parts []string
		for _, k := range st.Keys {
			if v, ok := d[k]; ok {
				parts = append(parts, k+"→"+v)
			}
		}
		return strings.Join(parts, ", ")
	default:
		return fmt.Sprintf("`%v`", d)
	}
}

// cell escapes the pipes that would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ReplaceSettingsTable returns readme with the text between
// SettingsBeginMarker and SettingsEndMarker replaced by SettingsMarkdown.
func ReplaceSettingsTable(readme []byte) ([]byte, error) {
	return replaceBetween(readme, SettingsBeginMarker, SettingsEndMarker, SettingsMarkdown(), "the settings table")
}
