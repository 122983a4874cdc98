package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
)

// The script file's JSON shapes; see the package comment.
type entrySpec struct {
	Name    string      `json:"name"`
	Match   matchSpec   `json:"match"`
	Replies []replySpec `json:"replies"`
}

type matchSpec struct {
	Schema   string `json:"schema"`
	Prompt   string `json:"prompt"`
	Tool     string `json:"tool"`
	LastRole string `json:"lastRole"`
	Model    string `json:"model"`
}

type replySpec struct {
	Content      string          `json:"content"`
	JSON         json.RawMessage `json:"json"`
	ToolCalls    []toolCallSpec  `json:"toolCalls"`
	FinishReason string          `json:"finishReason"`
	Truncate     bool            `json:"truncate"`
	Status       int             `json:"status"`
	Error        string          `json:"error"`
	RetryAfter   string          `json:"retryAfter"`
	LatencyMs    int             `json:"latencyMs"`
	ChunkDelayMs int             `json:"chunkDelayMs"`
	RawBody      string          `json:"rawBody"`
	ContentType  string          `json:"contentType"`
	Hang         bool            `json:"hang"`
	Usage        *usageSpec      `json:"usage"`
}

type toolCallSpec struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type usageSpec struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

const knownKeys = `entry keys: name, match, replies; match keys: schema, prompt, tool, lastRole, model; ` +
	`reply keys: content, json, toolCalls, finishReason, truncate, status, error, retryAfter, latencyMs, ` +
	`chunkDelayMs, rawBody, contentType, hang, usage; toolCalls keys: id, name, arguments; usage keys: promptTokens, completionTokens`

// entry is a script entry ready for llmtest.Server.On.
type entry struct {
	name    string
	match   llmtest.Matcher
	replies []llmtest.Reply
}

func loadScript(path string) ([]entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return parseScript(path, data)
}

// parseScript decodes the script entry by entry, so that every error can
// name the file, the position and the entry it is in.
func parseScript(file string, data []byte) ([]entry, error) {
	// A first full pass reports syntax errors with their absolute offset.
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: the file is empty; it must hold a JSON array of script entries", file)
	}
	var all []json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			// Offset counts the bytes read, the offending one included.
			return nil, posError(file, data, int(se.Offset)-1, "invalid JSON: %v", se)
		case errors.As(err, &te):
			return nil, posError(file, data, firstNonSpace(data, 0), "the script must be a JSON array of entries "+
				`like {"match":{"prompt":"..."},"replies":[{"content":"..."}]}, not a JSON %s`, te.Value)
		default:
			return nil, fmt.Errorf("%s: invalid JSON: %v", file, err)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: the script has no entries, so every request would fail; add at least one", file)
	}

	starts := entryOffsets(data)
	var out []entry
	for i, raw := range all {
		start := 0
		if i < len(starts) {
			start = starts[i]
		}
		e, err := parseEntry(i, raw)
		if err != nil {
			var pe *posErr
			if errors.As(err, &pe) {
				return nil, posError(file, data, start+pe.offset, "entry %d: %s", i+1, pe.msg)
			}
			return nil, posError(file, data, start, "entry %d: %v", i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// posErr is an error at an offset within one entry's JSON.
type posErr struct {
	offset int
	msg    string
}

func (e *posErr) Error() string { return e.msg }

func parseEntry(i int, raw []byte) (entry, error) {
	var spec entrySpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Offset is just after the offending value.
			return entry{}, &posErr{int(te.Offset), fmt.Sprintf("%q has the wrong type: got a JSON %s, want %s", te.Field, te.Value, te.Type)}
		}
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			off := bytes.Index(raw, []byte(field))
			if off < 0 {
				off = 0
			}
			return entry{}, &posErr{off, fmt.Sprintf("unknown key %s (%s)", field, knownKeys)}
		}
		return entry{}, err
	}
	if len(spec.Replies) == 0 {
		return entry{}, errors.New(`"replies" is missing or empty; give at least one reply, e.g. {"content":"ok"}`)
	}
	e := entry{name: spec.Name, match: spec.Match.matcher()}
	if e.name == "" {
		e.name = fmt.Sprintf("#%d%s", i+1, spec.Match.describe())
	}
	for j, rs := range spec.Replies {
		r, err := rs.reply()
		if err != nil {
			return entry{}, fmt.Errorf("replies[%d]: %v", j, err)
		}
		e.replies = append(e.replies, r)
	}
	return e, nil
}

func (m matchSpec) matcher() llmtest.Matcher {
	var ms []llmtest.Matcher
	if m.Schema != "" {
		ms = append(ms, schemaIs(m.Schema))
	}
	if m.Prompt != "" {
		ms = append(ms, llmtest.PromptContains(m.Prompt))
	}
	if m.Tool != "" {
		ms = append(ms, llmtest.HasTool(m.Tool))
	}
	if m.LastRole != "" {
		ms = append(ms, llmtest.LastMessageRole(m.LastRole))
	}
	if m.Model != "" {
		ms = append(ms, llmtest.ModelIs(m.Model))
	}
	return llmtest.All(ms...)
}

// schemaIs matches requests for the JSON schema called name: by the name
// in response_format json_schema or, for a request that asks for no schema
// and offers no tools (a client that fell back from json_schema, as
// -reject-json-schema makes kodyls do), by the name as a word in a system
// message, where such clients describe the reply they want. A mention in a
// user or tool message never counts: that is code, error output or a
// file an agent read, which may well name a schema without asking for it.
func schemaIs(name string) llmtest.Matcher {
	return func(r *llmtest.ChatRequest) bool {
		if rf := r.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
			return rf.JSONSchema.Name == name
		}
		if len(r.Tools) > 0 {
			return false
		}
		for _, msg := range r.Messages {
			if (msg.Role == "system" || msg.Role == "developer") && containsWord(msg.Content, name) {
				return true
			}
		}
		return false
	}
}

// containsWord reports whether word occurs in s with no identifier
// character (letter, digit, _ or -) right before or after it, so that
// review_mode is not found in review_mode_select.
func containsWord(s, word string) bool {
	isIdent := func(c byte) bool {
		return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !isIdent(s[start-1])) && (end == len(s) || !isIdent(s[end])) {
			return true
		}
		i = start + 1
	}
}

// describe summarises the match for the default entry name in logs.
func (m matchSpec) describe() string {
	var parts []string
	for _, kv := range [][2]string{{"schema", m.Schema}, {"prompt", m.Prompt}, {"tool", m.Tool}, {"lastRole", m.LastRole}, {"model", m.Model}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", kv[0], kv[1]))
		}
	}
	if len(parts) == 0 {
		return " (any)"
	}
	return " (" + strings.Join(parts, " ") + ")"
}

func (rs replySpec) reply() (llmtest.Reply, error) {
	r := llmtest.Reply{
		Content:      rs.Content,
		FinishReason: rs.FinishReason,
		Status:       rs.Status,
		ErrorMessage: rs.Error,
		RetryAfter:   rs.RetryAfter,
		Latency:      time.Duration(rs.LatencyMs) * time.Millisecond,
		ChunkDelay:   time.Duration(rs.ChunkDelayMs) * time.Millisecond,
		RawBody:      rs.RawBody,
		ContentType:  rs.ContentType,
		Hang:         rs.Hang,
	}
	if len(rs.JSON) > 0 {
		if rs.Content != "" {
			return r, errors.New(`both "content" and "json" are set; use one`)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, rs.JSON); err != nil {
			return r, fmt.Errorf(`"json": %v`, err)
		}
		r.Content = b.String()
	}
	if rs.Status != 0 && (rs.Status < 100 || rs.Status > 599) {
		return r, fmt.Errorf(`"status" %d is not an HTTP status (100-599)`, rs.Status)
	}
	if rs.LatencyMs < 0 || rs.ChunkDelayMs < 0 {
		return r, errors.New(`"latencyMs" and "chunkDelayMs" cannot be negative`)
	}
	if rs.Usage != nil {
		if rs.Usage.PromptTokens < 0 || rs.Usage.CompletionTokens < 0 {
			return r, errors.New(`"usage" token counts cannot be negative`)
		}
		r.Usage = &llmtest.Usage{PromptTokens: rs.Usage.PromptTokens, CompletionTokens: rs.Usage.CompletionTokens}
	}
	for k, tc := range rs.ToolCalls {
		if tc.Name == "" {
			return r, fmt.Errorf(`toolCalls[%d]: "name" is required`, k)
		}
		args, err := argumentsString(tc.Arguments)
		if err != nil {
			return r, fmt.Errorf("toolCalls[%d]: %v", k, err)
		}
		r.ToolCalls = append(r.ToolCalls, llmtest.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	if rs.Truncate {
		if r.Content == "" {
			return r, errors.New(`"truncate" needs "content" or "json" to cut`)
		}
		finish := r.FinishReason
		r = r.Truncate()
		if finish != "" {
			r.FinishReason = finish
		}
	}
	return r, nil
}

// argumentsString accepts tool-call arguments written as a JSON object (the
// readable form) or as a string sent verbatim (to script invalid arguments).
func argumentsString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", err
		}
		return b.String(), nil
	default:
		return "", fmt.Errorf(`"arguments" must be a JSON object or a string, not %s`, raw)
	}
}

// entryOffsets returns where each element of the top-level array starts.
// The data is known to be valid JSON.
func entryOffsets(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var offs []int
	for dec.More() {
		offs = append(offs, firstNonSpace(data, int(dec.InputOffset())))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil && err != io.EOF {
			return offs
		}
	}
	return offs
}

// firstNonSpace skips whitespace and the comma between array elements.
func firstNonSpace(data []byte, i int) int {
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return i
}

// posError prefixes msg with file:line:column for offset.
func posError(file string, data []byte, offset int, format string, args ...any) error {
	offset = max(0, min(offset, len(data)))
	line := 1 + bytes.Count(data[:offset], []byte("\n"))
	col := offset - bytes.LastIndexByte(data[:offset], '\n')
	return fmt.Errorf("%s:%d:%d (byte offset %d): %s", file, line, col, offset, fmt.Sprintf(format, args...))
}
