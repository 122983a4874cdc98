package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kodustech/kodyls/agents/llmtest"
)

// newClient returns a go-openai client for s, proving a real client library
// understands the fake.
func newClient(s *llmtest.Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

func start(t *testing.T) (*llmtest.Server, *openai.Client) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	s.SetLogf(t.Logf)
	return s, newClient(s, "")
}

func userMsg(s string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: s}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestURLEndsInV1(t *testing.T) {
	s, _ := start(t)
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/v1") {
		t.Fatalf("URL = %q", s.URL)
	}
}

func TestPlainCompletionWithEstimatedUsage(t *testing.T) {
	s, c := start(t)
	s.On(llmtest.Any(), llmtest.Text("Hello there, reviewer."))
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{
		Model:    "gpt-4o-mini",
		Messages: userMsg("Say hello to the reviewer, please, in one short sentence."),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Object != "chat.completion" || resp.Model != "gpt-4o-mini" || resp.Created == 0 {
		t.Errorf("envelope: id=%q object=%q model=%q created=%d", resp.ID, resp.Object, resp.Model, resp.Created)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "Hello there, reviewer." ||
		resp.Choices[0].Message.Role != "assistant" || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("choices = %+v", resp.Choices)
	}
	u := resp.Usage
	if u.PromptTokens < 10 || u.CompletionTokens < 4 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v, want plausible estimate", u)
	}
}

func TestExplicitUsage(t *testing.T) {
	s, c := start(t)
	r := llmtest.Text("x")
	r.Usage = &llmtest.Usage{PromptTokens: 1234, CompletionTokens: 56}
	s.On(nil, r)
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != 1234 || resp.Usage.CompletionTokens != 56 || resp.Usage.TotalTokens != 1290 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestStreamingContentAndUsage(t *testing.T) {
	s, c := start(t)
	const text = "Streaming works: ünïcødé is never split — 日本語 too."
	s.On(llmtest.Streaming(), llmtest.Text(text))
	stream, err := c.CreateChatCompletionStream(ctxT(t), openai.ChatCompletionRequest{
		Model: "m", Messages: userMsg("stream please"),
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var (
		got      strings.Builder
		deltas   int
		finish   openai.FinishReason
		usage    *openai.Usage
		role     string
		usageIdx = -1
		n        int
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.Object != "chat.completion.chunk" || chunk.Model != "m" || !strings.HasPrefix(chunk.ID, "chatcmpl-") {
			t.Errorf("chunk envelope %+v", chunk)
		}
		if chunk.Usage != nil {
			usage, usageIdx = chunk.Usage, n
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Role != "" {
				role = ch.Delta.Role
			}
			if ch.Delta.Content != "" {
				deltas++
				got.WriteString(ch.Delta.Content)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
		n++
	}
	if got.String() != text {
		t.Errorf("reassembled %q, want %q", got.String(), text)
	}
	if deltas < 5 {
		t.Errorf("content came in %d deltas, want several", deltas)
	}
	if role != "assistant" || finish != openai.FinishReasonStop {
		t.Errorf("role %q finish %q", role, finish)
	}
	if usage == nil || usageIdx != n-1 || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens || usage.CompletionTokens == 0 {
		t.Errorf("usage chunk %+v at %d of %d, want last with figures", usage, usageIdx, n)
	}
	if rec := s.ChatRequests(); len(rec) != 1 || !rec[0].Chat.Stream || !rec[0].Chat.IncludeUsage {
		t.Errorf("recorded %+v", rec)
	}
}

func TestStreamingWithoutIncludeUsageHasNoUsageChunk(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Text("short answer"))
	stream, err := c.CreateChatCompletionStream(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.Usage != nil || len(chunk.Choices) != 1 {
			t.Errorf("unexpected chunk %+v", chunk)
		}
	}
}

var weatherTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "read_file", Description: "Read a file of the repository",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}}

func TestToolCallsRoundTrip(t *testing.T) {
	s, c := start(t)
	first := s.On(llmtest.All(llmtest.HasTool("read_file"), llmtest.Not(llmtest.LastMessageRole("tool"))),
		llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go"}`},
			llmtest.ToolCall{ID: "call_fixed", Name: "read_file", Arguments: `{"path":"go.mod"}`}))
	second := s.On(llmtest.LastMessageRole("tool"), llmtest.Text("both files look fine"))

	msgs := userMsg("review main.go and go.mod")
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: msgs, Tools: []openai.Tool{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) != 2 || ch.Message.Content != "" {
		t.Fatalf("choice = %+v", ch)
	}
	tc := ch.Message.ToolCalls
	if !strings.HasPrefix(tc[0].ID, "call_") || len(tc[0].ID) < 10 || tc[1].ID != "call_fixed" ||
		tc[0].Type != openai.ToolTypeFunction || tc[0].Function.Name != "read_file" || tc[0].Function.Arguments != `{"path":"main.go"}` {
		t.Errorf("tool calls = %+v", tc)
	}

	msgs = append(msgs, ch.Message)
	for _, call := range tc {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: "package main"})
	}
	resp, err = c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: msgs, Tools: []openai.Tool{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "both files look fine" || first.Times() != 1 || second.Times() != 1 {
		t.Errorf("second turn %+v, times %d %d", resp.Choices[0], first.Times(), second.Times())
	}
	rec := s.ChatRequests()[1].Chat
	if got := rec.Messages[1].ToolCalls; len(got) != 2 || got[1].ID != "call_fixed" || got[0].Arguments != `{"path":"main.go"}` {
		t.Errorf("recorded history tool calls %+v", got)
	}
	if rec.Messages[2].ToolCallID != tc[0].ID || rec.Tools[0].Function.Name != "read_file" || !strings.Contains(string(rec.Tools[0].Function.Parameters), `"path"`) {
		t.Errorf("recorded request %+v", rec)
	}
}

func TestStreamedToolCallsReassemble(t *testing.T) {
	s, c := start(t)
	args0 := `{"path":"internal/very/long/path/to/a/file.go","reason":"check the error handling"}`
	args1 := `{"path":"README.md"}`
	s.On(llmtest.HasTool("read_file"), llmtest.Tools(
		llmtest.ToolCall{Name: "read_file", Arguments: args0},
		llmtest.ToolCall{Name: "read_file", Arguments: args1}))
	stream, err := c.CreateChatCompletionStream(ctxT(t), openai.ChatCompletionRequest{
		Model: "m", Messages: userMsg("go"), Tools: []openai.Tool{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	type acc struct {
		id, name, typ string
		args          strings.Builder
		fragments     int
	}
	calls := map[int]*acc{}
	var finish openai.FinishReason
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunk.Choices {
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("tool call delta without index: %+v", d)
				}
				a := calls[*d.Index]
				if a == nil {
					a = &acc{}
					calls[*d.Index] = a
					if d.ID == "" || d.Function.Name == "" || d.Type != openai.ToolTypeFunction {
						t.Errorf("first fragment of call %d lacks id/name/type: %+v", *d.Index, d)
					}
				} else if d.ID != "" || d.Function.Name != "" {
					t.Errorf("later fragment repeats id/name: %+v", d)
				}
				a.id += d.ID
				a.name += d.Function.Name
				a.typ += string(d.Type)
				a.args.WriteString(d.Function.Arguments)
				a.fragments++
			}
		}
	}
	if len(calls) != 2 || calls[0].args.String() != args0 || calls[1].args.String() != args1 ||
		calls[0].name != "read_file" || calls[0].id == calls[1].id || !strings.HasPrefix(calls[1].id, "call_") {
		t.Fatalf("reassembled calls: %+v %+v", calls[0], calls[1])
	}
	if calls[0].fragments < 5 {
		t.Errorf("arguments came in %d fragments, want several", calls[0].fragments)
	}
	if finish != openai.FinishReasonToolCalls {
		t.Errorf("finish = %q", finish)
	}
}

func TestThrottleIsAPIError429(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Throttle("7"), llmtest.Text("after the pause"))
	_, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Type != "requests" || apiErr.Code != "rate_limit_exceeded" || apiErr.Message == "" {
		t.Fatalf("err = %#v", err)
	}
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if err != nil || resp.Choices[0].Message.Content != "after the pause" {
		t.Fatalf("retry: %v %+v", err, resp)
	}
}

func TestThrottleRawHeaderAndBody(t *testing.T) {
	s, _ := start(t)
	s.On(nil, llmtest.Throttle("2"))
	res := post(t, s, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	body := readAll(t, res)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "2" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d headers %v", res.StatusCode, res.Header)
	}
	var e struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e.Error[k]; !ok {
			t.Errorf("error body lacks %q: %s", k, body)
		}
	}
	if e.Error["param"] != nil {
		t.Errorf("param should be null: %s", body)
	}
}

func TestStreamRequestThrottled(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Throttle("3"))
	_, err := c.CreateChatCompletionStream(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
		t.Fatalf("err = %#v", err)
	}
}

func TestStrictSchemaAccepted(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.JSON(map[string]any{"ok": true}))
	req := schemaRequest("r")
	req.ResponseFormat.JSONSchema.Schema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["items","note"],
		"properties":{"note":{"type":["string","null"]},"items":{"type":"array","items":{"$ref":"#/$defs/item"}}},
		"$defs":{"item":{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":false,"required":[],"properties":{}}]}}}}}`)
	if _, err := c.CreateChatCompletion(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
}

func TestServerError(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.ServerError())
	_, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Type != "server_error" {
		t.Fatalf("err = %#v", err)
	}
	// Custom errors keep their text.
	s.Reset()
	s.On(nil, llmtest.Reply{Status: 503, ErrorMessage: "overloaded, go away", ErrorType: "overloaded_error"})
	_, err = c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || apiErr.Message != "overloaded, go away" || apiErr.Type != "overloaded_error" {
		t.Fatalf("err = %#v", err)
	}
}

func TestMalformedBodyIsDecodeError(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Malformed())
	_, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	var apiErr *openai.APIError
	if err == nil || errors.As(err, &apiErr) {
		t.Fatalf("err = %#v, want a JSON decode error", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "unexpected") {
		t.Errorf("err = %v", err)
	}
}

func TestRawBodyWithContentType(t *testing.T) {
	s, _ := start(t)
	s.On(nil, llmtest.Reply{RawBody: "<html><body>502 Bad Gateway</body></html>", ContentType: "text/html"})
	res := post(t, s, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html" || !strings.Contains(string(body), "Bad Gateway") {
		t.Errorf("status %d ct %q body %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}

func TestTruncatedAndWrongSchema(t *testing.T) {
	s, c := start(t)
	v := map[string]any{"findings": []string{"a long finding text", "another one — with ünïcode"}}
	s.On(llmtest.PromptContains("cut"), llmtest.Truncated(v))
	s.On(llmtest.PromptContains("wrong"), llmtest.WrongSchema(nil))
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("cut")})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(v)
	got := resp.Choices[0].Message.Content
	if resp.Choices[0].FinishReason != openai.FinishReasonLength || !strings.HasPrefix(string(full), got) ||
		len(got) == 0 || len(got) > len(full)/2 || json.Valid([]byte(got)) {
		t.Errorf("truncated: finish %q content %q", resp.Choices[0].FinishReason, got)
	}
	resp, err = c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("wrong")})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0].Message.Content; !json.Valid([]byte(c)) || strings.Contains(c, "findings") {
		t.Errorf("wrong schema content %q", c)
	}
}

func TestJSONUnmarshallableIsVisible500(t *testing.T) {
	r := llmtest.JSON(make(chan int))
	if r.Status != 500 || !strings.Contains(r.ErrorMessage, "chan int") {
		t.Errorf("JSON(chan) = %+v", r)
	}
}

func schemaRequest(name string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "m",
		Messages: userMsg("Review this diff and answer in JSON."),
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: name, Strict: true,
				Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`),
			},
		},
	}
}

func TestSchemaNameAndRejectJSONSchema(t *testing.T) {
	s, c := start(t)
	review := s.On(llmtest.SchemaName("code_review"), llmtest.JSON(map[string]bool{"ok": true}))

	resp, err := c.CreateChatCompletion(ctxT(t), schemaRequest("code_review"))
	if err != nil || resp.Choices[0].Message.Content != `{"ok":true}` {
		t.Fatalf("json_schema: %v %+v", err, resp)
	}
	rec := s.ChatRequests()[0].Chat
	if rec.ResponseFormat.Type != "json_schema" || rec.SchemaName() != "code_review" || !rec.ResponseFormat.JSONSchema.Strict ||
		!strings.Contains(string(rec.ResponseFormat.JSONSchema.Schema), "additionalProperties") {
		t.Errorf("recorded response_format %+v", rec.ResponseFormat)
	}

	s.RejectJSONSchema(true)
	_, err = c.CreateChatCompletion(ctxT(t), schemaRequest("code_review"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Param == nil || *apiErr.Param != "response_format" ||
		apiErr.Message != "response_format type json_schema is not supported" || apiErr.Type != "invalid_request_error" {
		t.Fatalf("err = %#v", err)
	}

	// The client's fallback: json_object with the schema described in the prompt.
	resp, err = c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{
		Model:          "m",
		Messages:       userMsg("Answer with JSON matching the schema code_review: {\"ok\": boolean}"),
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
	})
	if err != nil || resp.Choices[0].Message.Content != `{"ok":true}` {
		t.Fatalf("json_object fallback: %v %+v", err, resp)
	}
	if review.Times() != 2 {
		t.Errorf("review.Times() = %d, want 2 (the rejected request was not answered by it)", review.Times())
	}
	// A request for another schema does not match even if its prompt names this one.
	s.RejectJSONSchema(false)
	req := schemaRequest("summary")
	req.Messages = userMsg("like code_review but shorter, in JSON")
	_, err = c.CreateChatCompletion(ctxT(t), req)
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("other schema: err = %v", err)
	}
}

func TestModels(t *testing.T) {
	s, c := start(t)
	list, err := c.ListModels(ctxT(t))
	if err != nil || len(list.Models) != 1 || list.Models[0].ID != "fake-model" || list.Models[0].Object != "model" ||
		list.Models[0].OwnedBy != "llmtest" || list.Models[0].CreatedAt == 0 {
		t.Fatalf("default models: %v %+v", err, list)
	}
	s.SetModels("qwen2.5-coder", "llama3")
	list, err = c.ListModels(ctxT(t))
	if err != nil || len(list.Models) != 2 || list.Models[1].ID != "llama3" {
		t.Fatalf("models: %v %+v", err, list)
	}
	m, err := c.GetModel(ctxT(t), "llama3")
	if err != nil || m.ID != "llama3" {
		t.Errorf("GetModel: %v %+v", err, m)
	}
	_, err = c.GetModel(ctxT(t), "gpt-9")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("GetModel unknown: %#v", err)
	}

	// RequireKnownModel rejects chat requests for unlisted models.
	s.On(nil, llmtest.Text("ok"))
	s.RequireKnownModel(true)
	if _, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "gpt-9", Messages: userMsg("x")}); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 {
		t.Errorf("unknown model chat: %v", err)
	}
	if _, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "llama3", Messages: userMsg("x")}); err != nil {
		t.Errorf("known model chat: %v", err)
	}
	if got := s.Requests()[0]; got.Path != "/v1/models" || got.Chat != nil || got.Method != "GET" || got.Status != 200 {
		t.Errorf("recorded models request %+v", got)
	}
}

func TestRequireAPIKey(t *testing.T) {
	s, anon := start(t)
	s.RequireAPIKey("sk-test-0123456789abcdef")
	s.On(nil, llmtest.Text("ok"))
	var apiErr *openai.APIError
	_, err := anon.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || !strings.Contains(apiErr.Message, "didn't provide an API key") {
		t.Fatalf("no key: %#v", err)
	}
	_, err = newClient(s, "sk-wrong-key-000000").ListModels(ctxT(t))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || apiErr.Code != "invalid_api_key" || strings.Contains(apiErr.Message, "sk-wrong-key-000000") {
		t.Fatalf("wrong key: %#v", err)
	}
	good := newClient(s, "sk-test-0123456789abcdef")
	if _, err := good.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")}); err != nil {
		t.Fatal(err)
	}
	if h := s.ChatRequests()[1].Header.Get("Authorization"); h != "Bearer sk-test-0123456789abcdef" {
		t.Errorf("recorded Authorization %q", h)
	}
}

func TestHangAndCancelIsADisconnect(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Reply{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
		errc <- err
	}()
	if !s.WaitRequests(1, 5*time.Second) {
		t.Fatal("request never arrived")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client err = %v", err)
	}
	if !s.WaitDisconnects(1, time.Second) {
		t.Fatalf("Disconnects() = %d within 1s, want 1", s.Disconnects())
	}
	rec := s.Requests()[0]
	if !rec.ClientGone || rec.Status != 0 || rec.End.IsZero() {
		t.Errorf("recorded %+v", rec)
	}
}

func TestClientTimeoutDuringLatency(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Reply{Content: "too late", Latency: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	if !s.WaitDisconnects(1, time.Second) {
		t.Fatal("no disconnect recorded")
	}
	if d := s.Requests()[0].End.Sub(begin); d > 2*time.Second {
		t.Errorf("handler kept waiting %v after the client left", d)
	}
}

func TestLatencyHonoured(t *testing.T) {
	s, c := start(t)
	const latency = 150 * time.Millisecond
	s.On(nil, llmtest.Reply{Content: "slow", Latency: latency})
	begin := time.Now()
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if err != nil || resp.Choices[0].Message.Content != "slow" {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < latency {
		t.Errorf("answered after %v, want ≥ %v", d, latency)
	}
	if s.Disconnects() != 0 {
		t.Errorf("Disconnects() = %d", s.Disconnects())
	}
}

func TestStreamCancelledMidway(t *testing.T) {
	s, c := start(t)
	s.On(nil, llmtest.Reply{Content: strings.Repeat("word ", 200), ChunkDelay: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	stream.Close()
	if !s.WaitDisconnects(1, time.Second) {
		t.Fatal("mid-stream cancel not recorded as a disconnect")
	}
}

func TestScriptsInOrderWithRepeatAndTimes(t *testing.T) {
	s, c := start(t)
	a := s.On(llmtest.PromptContains("alpha"), llmtest.Text("a1"), llmtest.Text("a2")).Named("alpha")
	b := s.On(llmtest.Any(), llmtest.Text("fallback"))
	// Added later, never reached: Any above catches everything first.
	never := s.On(llmtest.PromptContains("beta"), llmtest.Text("beta"))
	ask := func(p string) string {
		t.Helper()
		resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg(p)})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Message.Content
	}
	got := []string{ask("alpha"), ask("beta"), ask("alpha"), ask("alpha again"), ask("alpha")}
	want := []string{"a1", "fallback", "a2", "a2", "a2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replies %v, want %v", got, want)
	}
	if a.Times() != 4 || b.Times() != 1 || never.Times() != 0 {
		t.Errorf("Times = %d %d %d", a.Times(), b.Times(), never.Times())
	}
	recs := s.ChatRequests()
	if recs[0].Script != "alpha" || recs[1].Script != "#2" || a.Name() != "alpha" {
		t.Errorf("recorded script names %q %q", recs[0].Script, recs[1].Script)
	}
	if s.CountChat() != 5 {
		t.Errorf("CountChat = %d", s.CountChat())
	}
	s.Reset()
	if s.CountChat() != 0 || len(s.Requests()) != 0 {
		t.Error("Reset kept records")
	}
	_, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("alpha")})
	if err == nil {
		t.Error("Reset kept scripts")
	}
}

func TestUnmatchedIsReadable500(t *testing.T) {
	s, c := start(t)
	s.On(llmtest.SchemaName("code_review"), llmtest.Text("x"))
	_, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are a careful reviewer."},
			{Role: "user", Content: "Please explain this compiler error"},
		}})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Fatalf("err = %#v", err)
	}
	for _, want := range []string{"llmtest: no script matches", `model="m"`, "[1] user", "explain this compiler error"} {
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, apiErr.Message)
		}
	}
}

func TestMultiPartContentAndText(t *testing.T) {
	s, c := start(t)
	s.On(llmtest.PromptContains("second part"), llmtest.Text("seen"))
	resp, err := c.CreateChatCompletion(ctxT(t), openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "secret-token-XYZ must not leak"},
		{Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "first part"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}},
			{Type: openai.ChatMessagePartTypeText, Text: "second part"},
		}},
	}})
	if err != nil || resp.Choices[0].Message.Content != "seen" {
		t.Fatal(err)
	}
	chat := s.ChatRequests()[0].Chat
	if chat.Messages[1].Content != "first part\nsecond part" {
		t.Errorf("flattened content %q", chat.Messages[1].Content)
	}
	if txt := chat.Text(); !strings.Contains(txt, "secret-token-XYZ") || !strings.Contains(txt, "second part") {
		t.Errorf("Text() = %q", txt)
	}
}

func TestOpenAIValidation(t *testing.T) {
	s, _ := start(t)
	s.On(nil, llmtest.Text("ok"))
	cases := []struct{ name, body, want string }{
		{"not json", `{"model":`, "could not parse the JSON body"},
		{"bad type", `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`, "Invalid type for 'stream'"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "you must provide a model parameter"},
		{"no messages", `{"model":"m","messages":[]}`, "empty array"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "Invalid value: 'robot'"},
		{"orphan tool", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "must be a response to a preceeding message with 'tool_calls'"},
		{"unanswered call", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}]}`, "did not have response messages: c1"},
		{"wrong call id", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"r"}]}`, "'tool_call_id' of 'c2' not found"},
		{"bad tool name", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"read file"}}]}`, "does not match pattern"},
		{"json mode without json", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`, "must contain the word 'json'"},
		{"schema without name", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, "response_format.json_schema.name"},
		{"strict schema without additionalProperties", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}}`,
			"Invalid schema for response_format 'r': In context=(), 'additionalProperties' is required to be supplied and to be false."},
		{"strict schema with optional nested property", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"object","additionalProperties":false,"required":["x"],"properties":{"x":{"type":"object","additionalProperties":false,"properties":{"y":{"type":"string"}}}}}}}}`,
			"In context=('properties', 'x'), 'required' is required to be supplied and to be an array including every key in properties. Missing 'y'."},
		{"strict schema not an object", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"array","items":{"type":"string"}}}}}`,
			`schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'`},
		{"strict tool", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{"p":{"type":"string"}},"required":["p"]}}}]}`,
			"Invalid schema for function 'f': In context=(), 'additionalProperties'"},
		{"temperature", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":3}`, "decimal above maximum value"},
		{"stream_options without stream", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, "only allowed when 'stream' is enabled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := post(t, s, "/chat/completions", tc.body)
			body := readAll(t, res)
			if res.StatusCode != 400 || !strings.Contains(string(body), tc.want) || !strings.Contains(string(body), `"type":"invalid_request_error"`) {
				t.Errorf("status %d body %s, want 400 with %q", res.StatusCode, body, tc.want)
			}
		})
	}
	// Lax servers accept such requests.
	s.ValidateRequests(false)
	res := post(t, s, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`)
	if body := readAll(t, res); res.StatusCode != 200 {
		t.Errorf("with validation off: %d %s", res.StatusCode, body)
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	s, _ := start(t)
	res := post(t, s, "/embeddings", `{}`)
	if body := readAll(t, res); res.StatusCode != 404 || !strings.Contains(string(body), "Invalid URL (POST /v1/embeddings)") {
		t.Errorf("%d %s", res.StatusCode, body)
	}
	res, err := http.Get(s.URL + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, res); res.StatusCode != 405 {
		t.Errorf("%d %s", res.StatusCode, body)
	}
}

// TestRawWireFormat checks the bytes a client without a library would parse.
func TestRawWireFormat(t *testing.T) {
	s, _ := start(t)
	s.On(llmtest.Not(llmtest.Streaming()), llmtest.Tools(llmtest.ToolCall{Name: "f", Arguments: `{"a":1}`}))
	s.On(llmtest.Streaming(), llmtest.Text("abcdefghij"))

	res := post(t, s, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)
	var plain map[string]any
	if err := json.Unmarshal(readAll(t, res), &plain); err != nil {
		t.Fatal(err)
	}
	msg := plain["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if c, ok := msg["content"]; !ok || c != nil {
		t.Errorf("content should be null with tool calls: %v", msg)
	}
	if plain["object"] != "chat.completion" || plain["usage"] == nil || plain["system_fingerprint"] == nil {
		t.Errorf("envelope %v", plain)
	}

	res = post(t, s, "/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`)
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	var lines []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var events []string
	for i, l := range lines {
		if i%2 == 1 {
			if l != "" {
				t.Fatalf("events not separated by a blank line: %q", lines)
			}
			continue
		}
		if !strings.HasPrefix(l, "data: ") {
			t.Fatalf("line %q lacks data: prefix", l)
		}
		events = append(events, strings.TrimPrefix(l, "data: "))
	}
	if events[len(events)-1] != "[DONE]" {
		t.Errorf("last event %q", events[len(events)-1])
	}
	if !strings.Contains(events[0], `"usage":null`) || !strings.Contains(events[0], `"role":"assistant"`) {
		t.Errorf("first chunk %s", events[0])
	}
	if u := events[len(events)-2]; !strings.Contains(u, `"choices":[]`) || !strings.Contains(u, `"total_tokens"`) {
		t.Errorf("usage chunk %s", u)
	}
	if f := events[len(events)-3]; !strings.Contains(f, `"finish_reason":"stop"`) || !strings.Contains(f, `"delta":{}`) {
		t.Errorf("finish chunk %s", f)
	}
}

func TestConcurrentRequests(t *testing.T) {
	s, c := start(t)
	s.SetLogf(nil) // keep -v output short
	sc := s.On(nil, llmtest.Reply{Content: "concurrent answer", Latency: 5 * time.Millisecond})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			req := openai.ChatCompletionRequest{Model: "m", Messages: userMsg(fmt.Sprintf("request %d", i))}
			if i%2 == 0 {
				resp, err := c.CreateChatCompletion(context.Background(), req)
				if err == nil && resp.Choices[0].Message.Content != "concurrent answer" {
					err = fmt.Errorf("content %q", resp.Choices[0].Message.Content)
				}
				errs <- err
				return
			}
			stream, err := c.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				errs <- err
				return
			}
			defer stream.Close()
			var b strings.Builder
			for {
				chunk, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					errs <- err
					return
				}
				for _, ch := range chunk.Choices {
					b.WriteString(ch.Delta.Content)
				}
			}
			if b.String() != "concurrent answer" {
				err = fmt.Errorf("stream content %q", b.String())
			}
			errs <- err
		})
		// Readers run alongside the requests to exercise the locking.
		_ = s.Requests()
		_ = s.Disconnects()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if sc.Times() != n || s.CountChat() != n || !s.WaitRequests(n, time.Second) {
		t.Errorf("Times %d CountChat %d", sc.Times(), s.CountChat())
	}
}

func TestCloseReleasesHangingRequests(t *testing.T) {
	s := llmtest.NewServer()
	s.On(nil, llmtest.Reply{Hang: true})
	c := newClient(s, "")
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: userMsg("x")})
		errc <- err
	}()
	if !s.WaitRequests(1, 5*time.Second) {
		t.Fatal("no request")
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close blocked on a hanging request")
	}
	if err := <-errc; err == nil {
		t.Error("hanging request succeeded after Close")
	}
	if s.Disconnects() != 0 {
		t.Error("server shutdown counted as a client disconnect")
	}
	s.Close() // idempotent
}

func TestWaitRequestsTimesOut(t *testing.T) {
	s, _ := start(t)
	begin := time.Now()
	if s.WaitRequests(1, 50*time.Millisecond) {
		t.Error("WaitRequests reported a request that never came")
	}
	if time.Since(begin) < 50*time.Millisecond {
		t.Error("WaitRequests returned early")
	}
}

func post(t *testing.T, s *llmtest.Server, path, body string) *http.Response {
	t.Helper()
	res, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
