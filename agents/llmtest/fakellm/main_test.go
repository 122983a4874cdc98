package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kodustech/kodyls/agents/llmtest"
)

// buildCommand compiles fakellm into a temporary directory, as a user would.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakellm")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer collects stderr while the process runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readLine returns the first line of r, failing after a timeout so a server
// that never prints its URL does not hang the test.
func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ch <- line
	}()
	select {
	case line := <-ch:
		return strings.TrimSpace(line)
	case <-time.After(20 * time.Second):
		t.Fatal("no URL printed on stdout")
		return ""
	}
}

func client(url, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = url
	return openai.NewClientWithConfig(cfg)
}

func TestCommandServesExampleScriptUntilSIGINT(t *testing.T) {
	bin := buildCommand(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-script", "example.json", "-models", "fake-model, qwen2.5-coder")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	url := readLine(t, stdout)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("stdout URL %q", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := client(url, "")

	models, err := c.ListModels(ctx)
	if err != nil || len(models.Models) != 2 || models.Models[1].ID != "qwen2.5-coder" {
		t.Fatalf("models: %v %+v", err, models)
	}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Review this diff in JSON."}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "review_suggestions", Schema: json.RawMessage(`{"type":"object"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var review struct {
		CodeSuggestions []struct{ ExistingCode string }
	}
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &review); err != nil || len(review.CodeSuggestions) != 1 || review.CodeSuggestions[0].ExistingCode != "os.Remove(path)" {
		t.Errorf("review content %q: %v", resp.Choices[0].Message.Content, err)
	}
	// The explain agent: a first turn reads a file, the turn after the
	// tool's result gives the final answer.
	tools := []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "final_answer", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	explain := openai.ChatCompletionRequest{Model: "fake-model", Tools: tools,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Explain this error: ./main.go:11:2: declared and not used: n"}}}
	resp, err = c.CreateChatCompletion(ctx, explain)
	if err != nil || len(resp.Choices[0].Message.ToolCalls) != 1 || resp.Choices[0].Message.ToolCalls[0].Function.Name != "read_file" {
		t.Fatalf("first explain turn: %v %+v", err, resp)
	}
	call := resp.Choices[0].Message.ToolCalls[0]
	explain.Messages = append(explain.Messages, resp.Choices[0].Message,
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: call.ID, Content: "package main\n"})
	resp, err = c.CreateChatCompletion(ctx, explain)
	if err != nil || len(resp.Choices[0].Message.ToolCalls) != 1 || resp.Choices[0].Message.ToolCalls[0].Function.Name != "final_answer" ||
		!strings.Contains(resp.Choices[0].Message.ToolCalls[0].Function.Arguments, "never used") {
		t.Errorf("second explain turn: %v %+v", err, resp)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	select {
	case err := <-waitc:
		exited = true
		if err != nil {
			t.Errorf("exit after SIGINT: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fakellm did not exit after SIGINT")
	}
	log := stderr.String()
	for _, want := range []string{
		"GET /v1/models model=- script=- status=200",
		"POST /v1/chat/completions model=fake-model script=review-analysis status=200",
		"script=explain-reads-the-file status=200",
		"script=explain-answers status=200",
		"interrupt: shutting down",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
}

func TestCommandRejectsBadScript(t *testing.T) {
	bin := buildCommand(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("[\n  {\"match\": {\"prompt\": \"x\"},\n   \"replies\": [{\"content\": \"a\",}]}\n]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-script", bad)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	msg := stderr.String()
	for _, want := range []string{bad + ":3:32", "byte offset 62", "invalid JSON", "looking for beginning of object key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q: %s", want, msg)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout should stay empty on failure: %q", stdout.String())
	}
}

// runInProcess starts run with its own stop channel and returns the URL.
func runInProcess(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	pr, pw := io.Pipe()
	stderr = &syncBuffer{}
	sig := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		code <- run(args, pw, stderr, sig)
		pw.Close()
	}()
	url = readLine(t, pr)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return url, stderr, func() int {
		sig <- syscall.SIGTERM
		select {
		case c := <-code:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after the signal")
			return -1
		}
	}
}

func TestRunFlags(t *testing.T) {
	url, stderr, stop := runInProcess(t, "-addr", "127.0.0.1:0", "-script", "example.json", "-api-key", "k1", "-reject-json-schema")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var apiErr *openai.APIError
	if _, err := client(url, "").ListModels(ctx); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Errorf("without key: %v", err)
	}
	c := client(url, "k1")
	_, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "fake-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "json please"}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "code_review", Schema: json.RawMessage(`{}`)}}})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Errorf("json_schema with -reject-json-schema: %v", err)
	}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "fake-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}}})
	if err != nil || !strings.Contains(resp.Choices[0].Message.Content, "Hello from fakellm") {
		t.Errorf("default entry: %v %+v", err, resp)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !strings.Contains(stderr.String(), "terminated: shutting down") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "-script FILE is required"},
		{[]string{"-script", "example.json", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
		{[]string{"-script", "does-not-exist.json"}, 1, "no such file"},
		{[]string{"-script", "example.json", "-addr", "256.0.0.1:bad"}, 1, "fakellm:"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr, nil); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"empty file", "  \n", "the file is empty"},
		{"not an array", `{"replies":[]}`, "s.json:1:1 (byte offset 0): the script must be a JSON array"},
		{"no entries", `[]`, "no entries"},
		{"unknown key", "[\n {\"replies\":[{\"conten\":\"a\"}]}]", `s.json:2:15 (byte offset 16): entry 1: unknown key "conten" (entry keys:`},
		{"wrong type", "[{\"replies\":[{\"content\":\"a\"}]},\n {\"replies\":[{\"status\":\"429\"}]}]", `s.json:2:29 (byte offset 60): entry 2: "replies.status" has the wrong type: got a JSON string, want int`},
		{"no replies", "[{\"replies\":[{\"content\":\"a\"}]},\n\n {\"match\":{}}]", `s.json:3:2 (byte offset 34): entry 2: "replies" is missing or empty`},
		{"content and json", `[{"replies":[{"content":"a","json":{}}]}]`, `entry 1: replies[0]: both "content" and "json" are set`},
		{"bad status", `[{"replies":[{"status":42}]}]`, `"status" 42 is not an HTTP status`},
		{"negative latency", `[{"replies":[{"latencyMs":-1}]}]`, "cannot be negative"},
		{"tool without name", `[{"replies":[{"toolCalls":[{"arguments":{}}]}]}]`, `toolCalls[0]: "name" is required`},
		{"bad arguments", `[{"replies":[{"toolCalls":[{"name":"f","arguments":true}]}]}]`, `"arguments" must be a JSON object or a string, not true`},
		{"truncate nothing", `[{"replies":[{"truncate":true}]}]`, `"truncate" needs "content" or "json"`},
		{"syntax", "[{\"replies\":[{\"content\":\"a\"}]}\n{}]", "s.json:2:1 (byte offset 31): invalid JSON: invalid character '{' after array element"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseScript("s.json", []byte(tc.script))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseScriptBuildsReplies(t *testing.T) {
	entries, err := parseScript("s.json", []byte(`[
	  {"name":"tools","match":{"tool":"read_file","lastRole":"user","model":"m"},"replies":[
	    {"toolCalls":[{"name":"read_file","arguments":{"path": "a.go"}},{"id":"call_1","name":"read_file","arguments":"{not json"}]},
	    {"json":{"b": [1, 2]},"truncate":true,"latencyMs":5,"chunkDelayMs":2,"usage":{"promptTokens":3,"completionTokens":4}},
	    {"status":503,"error":"busy","retryAfter":"2"},
	    {"rawBody":"<html>","contentType":"text/html","hang":true}
	  ]},
	  {"match":{"schema":"s","prompt":"p"},"replies":[{"content":"x"}]}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].name != "tools" || entries[1].name != `#2 (schema="s" prompt="p")` {
		t.Fatalf("entries %+v", entries)
	}
	r := entries[0].replies
	if tc := r[0].ToolCalls; len(tc) != 2 || tc[0].Arguments != `{"path":"a.go"}` || tc[1].Arguments != "{not json" || tc[1].ID != "call_1" {
		t.Errorf("tool calls %+v", r[0].ToolCalls)
	}
	if r[1].Content != `{"b":` || r[1].FinishReason != "length" || r[1].Latency != 5*time.Millisecond ||
		r[1].ChunkDelay != 2*time.Millisecond || r[1].Usage == nil || r[1].Usage.CompletionTokens != 4 {
		t.Errorf("truncated json reply %+v", r[1])
	}
	if r[2].Status != 503 || r[2].ErrorMessage != "busy" || r[2].RetryAfter != "2" {
		t.Errorf("error reply %+v", r[2])
	}
	if r[3].RawBody != "<html>" || r[3].ContentType != "text/html" || !r[3].Hang {
		t.Errorf("raw reply %+v", r[3])
	}
	req := &llmtest.ChatRequest{Model: "m", Tools: []llmtest.Tool{{Type: "function", Function: llmtest.Function{Name: "read_file"}}},
		Messages: []llmtest.Message{{Role: "user", Content: "hi"}}}
	if !entries[0].match(req) {
		t.Error("match should accept the request")
	}
	req.Model = "other"
	if entries[0].match(req) {
		t.Error("match should check the model")
	}
}

func TestExampleScriptIsValid(t *testing.T) {
	entries, err := loadScript("example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 3 {
		t.Errorf("example has %d entries", len(entries))
	}
}

// TestSchemaMatchesTheRequestedSchemaOnly: "schema" matches the schema a
// request asks for, in response_format or, after a fallback from
// structured outputs, in the system message; never a request that merely
// mentions the name, such as an agent's turn whose tool result is a file
// that defines it.
func TestSchemaMatchesTheRequestedSchemaOnly(t *testing.T) {
	entries, err := parseScript("s.json", []byte(`[{"match":{"schema":"review_mode"},"replies":[{"content":"{}"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	match := entries[0].match
	schema := func(typ, name string) *llmtest.ResponseFormat {
		rf := &llmtest.ResponseFormat{Type: typ}
		if name != "" {
			rf.JSONSchema = &llmtest.JSONSchema{Name: name}
		}
		return rf
	}
	tools := []llmtest.Tool{{Type: "function", Function: llmtest.Function{Name: "final_answer"}}}
	fallback := "Reply with exactly one JSON object that conforms to the JSON Schema below (review_mode)."
	for _, tc := range []struct {
		name string
		req  llmtest.ChatRequest
		want bool
	}{
		{"json_schema of that name", llmtest.ChatRequest{ResponseFormat: schema("json_schema", "review_mode"),
			Messages: []llmtest.Message{{Role: "user", Content: "diff"}}}, true},
		{"json_schema of another name mentioning it", llmtest.ChatRequest{ResponseFormat: schema("json_schema", "review_suggestions"),
			Messages: []llmtest.Message{{Role: "system", Content: fallback}}}, false},
		{"json_object, name in the system message", llmtest.ChatRequest{ResponseFormat: schema("json_object", ""),
			Messages: []llmtest.Message{{Role: "system", Content: "You review code.\n\n" + fallback}, {Role: "user", Content: "diff"}}}, true},
		{"no response_format, name in the system message", llmtest.ChatRequest{
			Messages: []llmtest.Message{{Role: "system", Content: fallback}, {Role: "user", Content: "diff"}}}, true},
		{"name in a user message", llmtest.ChatRequest{
			Messages: []llmtest.Message{{Role: "user", Content: `const SchemaMode = "review_mode"`}}}, false},
		{"agent turn whose tool result names it", llmtest.ChatRequest{Tools: tools, Messages: []llmtest.Message{
			{Role: "system", Content: "You explain errors."}, {Role: "user", Content: "Explain this error"},
			{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"review.go"}`}}},
			{Role: "tool", ToolCallID: "c1", Content: `SchemaMode = "review_mode"`}}}, false},
		{"agent turn with the name in its system message", llmtest.ChatRequest{Tools: tools,
			Messages: []llmtest.Message{{Role: "system", Content: fallback}}}, false},
		{"a longer name", llmtest.ChatRequest{
			Messages: []llmtest.Message{{Role: "system", Content: "Schema (review_mode_select)."}}}, false},
	} {
		if got := match(&tc.req); got != tc.want {
			t.Errorf("%s: match = %v, want %v", tc.name, got, tc.want)
		}
	}
}
