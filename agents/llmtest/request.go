package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ChatRequest is the parsed body of POST /v1/chat/completions: the fields
// scripts match on, plus Raw for anything else a test wants to inspect.
type ChatRequest struct {
	Model    string
	Stream   bool
	Messages []Message
	Tools    []Tool
	// ToolChoice is kept raw because it is either a string ("auto", "none",
	// "required") or an object naming a function.
	ToolChoice     json.RawMessage
	ResponseFormat *ResponseFormat
	// MaxTokens is max_tokens, or max_completion_tokens when only the newer
	// name was sent (go-openai and reasoning models use the latter).
	MaxTokens   int
	Temperature *float64
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	Raw          []byte
}

// Message is one entry of "messages". Content is flattened to a string: for
// array content (the multi-part form) the text parts are joined with "\n"
// and other parts (images, audio) are dropped.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// Tool is one entry of "tools".
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function describes a callable tool.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ResponseFormat is "response_format": Type is "text", "json_object" or
// "json_schema"; JSONSchema is set for the last.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// Text returns every message's content and every tool-call argument string,
// joined with "\n". Tests use it to assert that something (a secret, a file
// excerpt) did or did not reach the model; arguments are included because
// they are sent back to the model too.
func (r *ChatRequest) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Arguments)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// SchemaName returns response_format.json_schema.name, or "" when the
// request did not ask for a JSON schema.
func (r *ChatRequest) SchemaName() string {
	if r == nil || r.ResponseFormat == nil || r.ResponseFormat.JSONSchema == nil {
		return ""
	}
	return r.ResponseFormat.JSONSchema.Name
}

// LastMessage returns the final message, or a zero Message when there is none.
func (r *ChatRequest) LastMessage() Message {
	if r == nil || len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Wire shapes, kept separate from the public types so that the public API
// can flatten content and tool calls.
type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools               []Tool          `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
}

// wireToolCall serves both directions. In a streamed delta OpenAI sends id,
// type and name only in the first fragment of a call, hence the omitempty.
type wireToolCall struct {
	Index    *int             `json:"index,omitempty"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function wireFunctionCall `json:"function"`
}

type wireFunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// apiError is an error to be sent in the OpenAI shape.
type apiError struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

func (e *apiError) Error() string { return e.Message }

func invalidRequest(param, code, format string, args ...any) *apiError {
	return &apiError{Status: 400, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Param: param, Code: code}
}

// parseChatRequest decodes a chat completion body. Errors are worded the way
// OpenAI words them so client code that surfaces them sees realistic text.
func parseChatRequest(body []byte) (*ChatRequest, *apiError) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalidRequest(te.Field, "invalid_type",
				"Invalid type for '%s': expected %s, but got %s instead.", te.Field, goTypeKind(te.Type), jsonValueKind(te.Value))
		}
		return nil, invalidRequest("", "",
			"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)")
	}
	r := &ChatRequest{
		Model:          w.Model,
		Stream:         w.Stream,
		Tools:          w.Tools,
		ToolChoice:     w.ToolChoice,
		ResponseFormat: w.ResponseFormat,
		MaxTokens:      w.MaxTokens,
		Temperature:    w.Temperature,
		IncludeUsage:   w.StreamOptions != nil && w.StreamOptions.IncludeUsage,
		Raw:            body,
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = w.MaxCompletionTokens
	}
	for i, wm := range w.Messages {
		content, err := flattenContent(wm.Content)
		if err != nil {
			return nil, invalidRequest(fmt.Sprintf("messages[%d].content", i), "invalid_type",
				"Invalid type for 'messages[%d].content': expected one of a string or array of objects, but got %s instead.", i, err.Error())
		}
		m := Message{Role: wm.Role, Content: content, ToolCallID: wm.ToolCallID, Name: wm.Name}
		for _, tc := range wm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, m)
	}
	return r, nil
}

// flattenContent turns a message's content (string, null or array of parts)
// into text. The error text names what was sent instead.
func flattenContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errors.New("an invalid string")
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", errors.New("an array that is not of objects")
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n"), nil
	case '{':
		return "", errors.New("an object")
	case 't', 'f':
		return "", errors.New("a boolean")
	default:
		return "", errors.New("a number")
	}
}

// goTypeKind names, in OpenAI's words, the JSON kind a Go field expects.
func goTypeKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	default:
		return "a number"
	}
}

// jsonValueKind adds the article to json.UnmarshalTypeError.Value.
func jsonValueKind(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	case "":
		return "something else"
	default:
		return "a " + v
	}
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// validate applies the checks real OpenAI performs that client code most
// often gets wrong, so that a fake that accepts anything does not hide bugs
// a real endpoint would reveal.
func (r *ChatRequest) validate() *apiError {
	if r.Model == "" {
		return invalidRequest("", "", "you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return invalidRequest("messages", "empty_array",
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	for i, m := range r.Messages {
		if !validRoles[m.Role] {
			return invalidRequest(fmt.Sprintf("messages[%d].role", i), "invalid_value",
				"Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
	}
	if err := r.validateToolSequence(); err != nil {
		return err
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return invalidRequest(fmt.Sprintf("tools[%d].type", i), "invalid_value",
				"Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
		}
		if !validFunctionName(t.Function.Name) {
			return invalidRequest(fmt.Sprintf("tools[%d].function.name", i), "invalid_value",
				"Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", i)
		}
		if t.Function.Strict {
			if p := strictSchemaProblem(t.Function.Parameters); p != "" {
				return invalidRequest(fmt.Sprintf("tools[%d].function.parameters", i), "invalid_function_parameters",
					"Invalid schema for function '%s': %s", t.Function.Name, p)
			}
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text":
		case "json_object":
			// OpenAI refuses JSON mode unless the prompt mentions JSON,
			// because the model otherwise may emit whitespace forever.
			if !strings.Contains(strings.ToLower(r.Text()), "json") {
				return invalidRequest("messages", "",
					"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
			}
		case "json_schema":
			if rf.JSONSchema == nil {
				return invalidRequest("response_format.json_schema", "missing_required_parameter",
					"Missing required parameter: 'response_format.json_schema'.")
			}
			if rf.JSONSchema.Name == "" {
				return invalidRequest("response_format.json_schema.name", "missing_required_parameter",
					"Missing required parameter: 'response_format.json_schema.name'.")
			}
			if rf.JSONSchema.Strict {
				if p := strictSchemaProblem(rf.JSONSchema.Schema); p != "" {
					return invalidRequest("response_format", "",
						"Invalid schema for response_format '%s': %s", rf.JSONSchema.Name, p)
				}
			}
		default:
			return invalidRequest("response_format.type", "invalid_value",
				"Invalid value: '%s'. Supported values are: 'json_object', 'json_schema', and 'text'.", rf.Type)
		}
	}
	if t := r.Temperature; t != nil {
		if *t > 2 {
			return invalidRequest("temperature", "decimal_above_max_value",
				"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got %v instead.", *t)
		}
		if *t < 0 {
			return invalidRequest("temperature", "decimal_below_min_value",
				"Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got %v instead.", *t)
		}
	}
	if !r.Stream && hasNonNullField(r.Raw, "stream_options") {
		return invalidRequest("stream_options", "",
			"The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	return nil
}

// validateToolSequence enforces OpenAI's pairing rule: an assistant message
// with tool_calls must be followed by one tool message per call id, and a
// tool message must answer such a call. Agents that drop or reorder tool
// results fail on real endpoints with exactly these messages.
func (r *ChatRequest) validateToolSequence() *apiError {
	for i := 0; i < len(r.Messages); i++ {
		m := r.Messages[i]
		if m.Role == "tool" {
			return invalidRequest(fmt.Sprintf("messages.[%d].role", i), "",
				"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		pending := map[string]bool{}
		for _, tc := range m.ToolCalls {
			pending[tc.ID] = true
		}
		j := i + 1
		for ; j < len(r.Messages) && r.Messages[j].Role == "tool"; j++ {
			id := r.Messages[j].ToolCallID
			if !pending[id] {
				return invalidRequest(fmt.Sprintf("messages.[%d].tool_call_id", j), "",
					"Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", id)
			}
			delete(pending, id)
		}
		if len(pending) > 0 {
			var missing []string
			for _, tc := range m.ToolCalls {
				if pending[tc.ID] {
					missing = append(missing, tc.ID)
				}
			}
			return invalidRequest(fmt.Sprintf("messages.[%d].role", i), "",
				"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(missing, ", "))
		}
		i = j - 1
	}
	return nil
}

func validFunctionName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		ok := c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

func hasNonNullField(body []byte, field string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	v, ok := m[field]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// summary describes a request in one readable block, for the "no script
// matches" error and logs.
func (r *ChatRequest) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model=%q stream=%v", r.Model, r.Stream)
	if rf := r.ResponseFormat; rf != nil {
		fmt.Fprintf(&b, " response_format=%s", rf.Type)
		if rf.JSONSchema != nil {
			fmt.Fprintf(&b, "(%s)", rf.JSONSchema.Name)
		}
	}
	if len(r.Tools) > 0 {
		var names []string
		for _, t := range r.Tools {
			names = append(names, t.Function.Name)
		}
		fmt.Fprintf(&b, " tools=[%s]", strings.Join(names, ","))
	}
	fmt.Fprintf(&b, " messages=%d", len(r.Messages))
	for i, m := range r.Messages {
		fmt.Fprintf(&b, "\n  [%d] %s: %s", i, m.Role, shorten(m.Content, 160))
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "\n      tool_call %s %s(%s)", tc.ID, tc.Name, shorten(tc.Arguments, 80))
		}
	}
	return b.String()
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(%d chars)", string(r[:n]), len(s))
}
