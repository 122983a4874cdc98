package llmtest

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// ToolCall is a function call made by the model (in a Reply) or recorded
// in the conversation history (in a Message). In a Reply an empty ID is
// replaced by a generated "call_…" id, as every real server sends one.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Usage is the token accounting reported with a reply. TotalTokens is always
// the sum, as OpenAI reports it.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Reply is one scripted answer. The zero Reply is a successful, empty
// assistant message.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	// FinishReason defaults to "stop", or "tool_calls" when ToolCalls is set.
	FinishReason string
	// Usage defaults to an estimate of about four characters per token.
	Usage *Usage
	// Latency is waited before anything is sent (time to first byte); the
	// wait ends early when the client disconnects.
	Latency time.Duration
	// Status other than 0 and 200 answers with an OpenAI error body.
	Status int
	// ErrorMessage, ErrorType and ErrorCode fill the error body; empty ones
	// get what OpenAI sends for Status.
	ErrorMessage string
	ErrorType    string
	ErrorCode    string
	// RetryAfter sets the Retry-After header (seconds or an HTTP date).
	RetryAfter string
	// RawBody is sent verbatim with status 200 instead of a completion, with
	// ContentType (default application/json, or text/event-stream for a
	// streamed request).
	RawBody     string
	ContentType string
	// Hang never answers; the handler returns once the client disconnects
	// or the server is closed.
	Hang bool
	// CutBody announces the whole completion's length, sends half of it
	// and closes the connection, as a crashing server or a dropped proxy
	// connection does.
	CutBody bool
	// HugeBody, when > 0, answers 200 with a JSON body of that many bytes
	// (a completion whose content is padded), streamed without buffering
	// it, as a misbehaving server that sends far more than any model
	// would. The handler stops when the client disconnects.
	HugeBody int
	// ChunkSize is how many characters each streamed delta carries
	// (default 5, roughly a token or two).
	ChunkSize int
	// ChunkDelay is waited between streamed chunks, to make streams long
	// enough to cancel half-way.
	ChunkDelay time.Duration
}

// Text answers with plain text content.
func Text(s string) Reply { return Reply{Content: s} }

// JSON answers with v marshalled as the message content, as a model in JSON
// or structured-output mode does. If v cannot be marshalled the reply is a
// 500 naming the problem, so the test fails visibly rather than panicking.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply{Status: 500, ErrorMessage: fmt.Sprintf("llmtest: JSON(%T): %v", v, err)}
	}
	return Reply{Content: string(b)}
}

// WrongSchema answers with valid JSON that is not what was asked for, as a
// weak model in json_object mode does. With v == nil a fixed unrelated
// object is sent.
func WrongSchema(v any) Reply {
	if v == nil {
		v = map[string]any{"llmtest_wrong_schema": true, "note": "this object does not follow the requested schema"}
	}
	return JSON(v)
}

// Truncated answers with the first half of v's JSON and finish_reason
// "length", as a model that ran out of max_tokens does.
func Truncated(v any) Reply {
	r := JSON(v)
	if r.Status != 0 {
		return r
	}
	return r.Truncate()
}

// Truncate returns r with the first half of its content and finish_reason
// "length", for truncating text replies too.
func (r Reply) Truncate() Reply {
	r.Content = cutHalf(r.Content)
	r.FinishReason = "length"
	return r
}

// Tools answers with tool calls (finish_reason "tool_calls").
func Tools(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Throttle answers 429 with Retry-After set, like a rate-limited endpoint.
func Throttle(retryAfter string) Reply {
	return Reply{Status: 429, RetryAfter: retryAfter}
}

// ServerError answers 500 with OpenAI's generic server error body.
func ServerError() Reply { return Reply{Status: 500} }

// Malformed answers 200 with a completion body cut off mid-JSON, as a proxy
// that drops the connection or a crashing server produces.
func Malformed() Reply {
	return Reply{RawBody: `{"id":"x","choices":[{"message":{"content":`}
}

// cutHalf keeps the first half of s without splitting a UTF-8 sequence.
func cutHalf(s string) string {
	n := len(s) / 2
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (r Reply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// errorDefaults gives the type, code and message OpenAI sends for status.
func errorDefaults(status int) (typ, code, msg string) {
	switch {
	case status == 401:
		return "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
	case status == 403:
		return "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"
	case status == 404:
		return "invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."
	case status == 429:
		return "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."
	case status == 503:
		return "server_error", "", "The engine is currently overloaded, please try again later"
	case status >= 500:
		return "server_error", "", "The server had an error while processing your request. Sorry about that!"
	default:
		return "invalid_request_error", "", fmt.Sprintf("Request failed with status %d", status)
	}
}

func (r Reply) apiError() *apiError {
	typ, code, msg := errorDefaults(r.Status)
	e := &apiError{Status: r.Status, Type: typ, Code: code, Message: msg}
	if r.ErrorType != "" {
		e.Type = r.ErrorType
	}
	if r.ErrorCode != "" {
		e.Code = r.ErrorCode
	}
	if r.ErrorMessage != "" {
		e.Message = r.ErrorMessage
	}
	return e
}

// toolCallsWithIDs fills in missing ids. IDs are generated per request, as
// a real model would produce new ones every time.
func (r Reply) toolCallsWithIDs() []ToolCall {
	calls := make([]ToolCall, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		if tc.ID == "" {
			tc.ID = "call_" + randomID(12)
		}
		calls[i] = tc
	}
	return calls
}

// estimateTokens uses the common four-characters-per-token rule of thumb;
// only the order of magnitude matters to clients that budget tokens.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

func (r Reply) usageFor(req *ChatRequest, calls []ToolCall) Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	prompt := 3 // every reply is primed with a few tokens
	for _, m := range req.Messages {
		prompt += 4 + estimateTokens(m.Content)
		for _, tc := range m.ToolCalls {
			prompt += estimateTokens(tc.Name + tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		prompt += estimateTokens(t.Function.Name+t.Function.Description) + estimateTokens(string(t.Function.Parameters))
	}
	completion := estimateTokens(r.Content)
	for _, tc := range calls {
		completion += 3 + estimateTokens(tc.Name+tc.Arguments)
	}
	if completion == 0 {
		completion = 1 // even an empty answer costs the end-of-turn token
	}
	return Usage{PromptTokens: prompt, CompletionTokens: completion}
}

// Response wire shapes. Pointers stand for fields OpenAI sends as null.
type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func toWireUsage(u Usage) *wireUsage {
	return &wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

type wireCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []wireChoice `json:"choices"`
	Usage             *wireUsage   `json:"usage"`
	SystemFingerprint string       `json:"system_fingerprint"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireRespMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type wireRespMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Choices           []wireChunkChoice `json:"choices"`
	// Usage is raw so that it can be absent (include_usage off), null
	// (include_usage on, not the last chunk) or the figures, as OpenAI does.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

const fingerprint = "fp_llmtest"

func completionBody(id string, created int64, req *ChatRequest, r Reply, calls []ToolCall) wireCompletion {
	msg := wireRespMessage{Role: "assistant"}
	// OpenAI sends content null, not "", when the model only calls tools.
	if r.Content != "" || len(calls) == 0 {
		c := r.Content
		msg.Content = &c
	}
	for _, tc := range calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
			Function: wireFunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return wireCompletion{
		ID: id, Object: "chat.completion", Created: created, Model: req.Model,
		Choices:           []wireChoice{{Index: 0, Message: msg, FinishReason: r.finishReason()}},
		Usage:             toWireUsage(r.usageFor(req, calls)),
		SystemFingerprint: fingerprint,
	}
}

// streamChunks builds the chunk sequence OpenAI sends for r: a role chunk,
// content deltas, for each tool call a header fragment (index, id, type,
// name, empty arguments) followed by argument fragments, a final chunk with
// finish_reason and, with include_usage, a usage chunk with no choices.
func streamChunks(id string, created int64, req *ChatRequest, r Reply, calls []ToolCall) []wireChunk {
	size := r.ChunkSize
	if size <= 0 {
		size = 5
	}
	var usageNull json.RawMessage
	if req.IncludeUsage {
		usageNull = json.RawMessage("null")
	}
	chunk := func(d wireDelta, finish *string) wireChunk {
		return wireChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			SystemFingerprint: fingerprint, Usage: usageNull,
			Choices: []wireChunkChoice{{Index: 0, Delta: d, FinishReason: finish}}}
	}
	var out []wireChunk
	roleSent := false
	if r.Content != "" || len(calls) == 0 {
		empty := ""
		out = append(out, chunk(wireDelta{Role: "assistant", Content: &empty}, nil))
		roleSent = true
		for _, piece := range splitRunes(r.Content, size) {
			p := piece
			out = append(out, chunk(wireDelta{Content: &p}, nil))
		}
	}
	for i, tc := range calls {
		idx := i
		head := wireDelta{ToolCalls: []wireToolCall{{Index: &idx, ID: tc.ID, Type: "function",
			Function: wireFunctionCall{Name: tc.Name}}}}
		if !roleSent {
			head.Role = "assistant"
			roleSent = true
		}
		out = append(out, chunk(head, nil))
		for _, piece := range splitRunes(tc.Arguments, size) {
			out = append(out, chunk(wireDelta{ToolCalls: []wireToolCall{{Index: &idx,
				Function: wireFunctionCall{Arguments: piece}}}}, nil))
		}
	}
	finish := r.finishReason()
	out = append(out, chunk(wireDelta{}, &finish))
	if req.IncludeUsage {
		u, _ := json.Marshal(toWireUsage(r.usageFor(req, calls)))
		out = append(out, wireChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			SystemFingerprint: fingerprint, Choices: []wireChunkChoice{}, Usage: u})
	}
	return out
}

// splitRunes cuts s into pieces of at most n runes, never inside a UTF-8
// sequence, so every delta is valid text on its own.
func splitRunes(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
