package llm_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
)

func TestRedactionReachesEveryRequest(t *testing.T) {
	const secret = "SECRET123"
	s := newServer(t)
	s.On(llmtest.All(llmtest.LastMessageRole("user"), llmtest.HasTool("env")), llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "env", Arguments: `{}`}))
	s.On(llmtest.Any(), llmtest.Text("done"), llmtest.WrongSchema(nil), llmtest.Text(`{"score": 1, "confidence": 1, "relevant": true}`))
	g := newGateway(t, s.URL, nil, llm.WithRedactor(replacer{secret}), llm.WithCache(newMemCache()))
	ctx := context.Background()

	// Plain messages, then an earlier assistant tool call and a tool
	// result carrying the secret.
	req := chatRequest("token=" + secret)
	req.Tools = []llm.Tool{{Name: "env"}}
	resp, err := g.Chat(ctx, req)
	if err != nil || len(resp.ToolCalls) != 1 {
		t.Fatalf("first round: %v %+v", err, resp)
	}
	c := resp.ToolCalls[0]
	req.Messages = append(req.Messages,
		llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls},
		llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: "API_TOKEN=" + secret})
	if _, err := g.Chat(ctx, req); err != nil {
		t.Fatalf("second round: %v", err)
	}
	// Parts and a structured call with a repair round.
	_, _, err = llm.Structured(ctx, g, llm.StructuredRequest{ChatRequest: llm.ChatRequest{
		Parts: []llm.Part{
			{Role: "system", Text: "Score. Key " + secret, Priority: 10},
			{Text: "diff with " + secret, Priority: 5},
		},
	}}, func(error) Scores { return Scores{} })
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (2 tool rounds, a structured call and its repair)", len(reqs))
	}
	for i, r := range reqs {
		if bytes.Contains(r.Body, []byte(secret)) {
			t.Errorf("request %d carries the secret:\n%s", i, r.Body)
		}
	}
	if !strings.Contains(reqs[1].Chat.Text(), "API_TOKEN=[REDACTED]") {
		t.Errorf("tool result not redacted in place: %s", reqs[1].Chat.Text())
	}
}

func TestUsageIsRecordedPerCallAndSummed(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.PromptContains("fail"), llmtest.Reply{Status: 400, ErrorMessage: "bad request"})
	s.On(llmtest.Any(), llmtest.Reply{Content: "ok", Usage: &llmtest.Usage{PromptTokens: 100, CompletionTokens: 7}})
	usage := &usageLog{}
	g := newGateway(t, s.URL, nil, llm.WithUsage(usage), llm.WithCache(newMemCache()))
	ctx := context.Background()

	req := chatRequest("hello")
	req.Feature = "review"
	for range 2 { // the second is a cache hit
		if _, err := g.Chat(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	req.NoCache = true
	if _, err := g.Chat(ctx, req); err != nil {
		t.Fatal(err)
	}
	bad := chatRequest("fail please")
	bad.Feature = "rules"
	if _, err := g.Chat(ctx, bad); err == nil {
		t.Fatal("want the 400")
	}

	recs := usage.records()
	if len(recs) != 4 {
		t.Fatalf("records = %d, want 4 (miss, hit, uncached, failure)", len(recs))
	}
	if r := recs[0]; r.Feature != "review" || r.Model != "fake-model" || r.PromptTokens != 100 || r.CompletionTokens != 7 ||
		r.Attempts != 1 || r.Cached || r.Latency <= 0 || r.At.IsZero() {
		t.Errorf("first record = %+v", r)
	}
	if r := recs[1]; !r.Cached || r.Attempts != 0 || r.PromptTokens != 0 {
		t.Errorf("cache-hit record = %+v", r)
	}
	if r := recs[3]; r.Feature != "rules" || r.Err == "" || r.Attempts != 1 {
		t.Errorf("failure record = %+v", r)
	}
	tot := g.Totals()
	if r := tot["review"]; r.Calls != 3 || r.CachedCalls != 1 || r.PromptTokens != 200 || r.CompletionTokens != 14 || r.Attempts != 2 || r.Failures != 0 {
		t.Errorf("review totals = %+v", r)
	}
	if r := tot["rules"]; r.Calls != 1 || r.Failures != 1 {
		t.Errorf("rules totals = %+v", r)
	}
}

// An endpoint that reports no usage gets an estimate, and a reply that is
// all tool calls, as an agent's replies are, is not counted as nothing.
func TestUsageEstimateCountsToolCalls(t *testing.T) {
	s := newServer(t)
	none := &llmtest.Usage{}
	args := `{"path":"internal/server/handlers.go","line":120,"reason":"read the handler that panics"}`
	s.On(llmtest.PromptContains("tools"), llmtest.Reply{Usage: none, ToolCalls: []llmtest.ToolCall{
		{Name: "read_file", Arguments: args}, {Name: "search_workspace", Arguments: `{"query":"nil map"}`}}})
	s.On(llmtest.Any(), llmtest.Reply{Usage: none, Content: "ok"})
	g := newGateway(t, s.URL, nil)
	resp, err := g.Chat(context.Background(), chatRequest("use the tools"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.CountTokens("fake-model", "read_file") + llm.CountTokens("fake-model", args)
	if len(resp.ToolCalls) != 2 || resp.Usage.CompletionTokens < want || resp.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v of a reply of 2 tool calls: want at least %d completion tokens", resp.Usage, want)
	}
	text, err := g.Chat(context.Background(), chatRequest("say ok"))
	if err != nil || text.Usage.CompletionTokens != llm.CountTokens("fake-model", "ok") {
		t.Errorf("usage %+v (%v) of a text reply", text.Usage, err)
	}
}

func TestCountTokens(t *testing.T) {
	// o200k_base: "hello" " world"; the same text is two tokens in cl100k.
	if n := llm.CountTokens("gpt-4o", "hello world"); n != 2 {
		t.Errorf("gpt-4o: %d tokens, want 2", n)
	}
	if n := llm.CountTokens("gpt-4-0613", "hello world"); n != 2 {
		t.Errorf("gpt-4: %d tokens, want 2", n)
	}
	// A longer text where the tokenizer and the estimate differ.
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") }\n", 20)
	exact := llm.CountTokens("openai/gpt-4.1-mini", text)
	if est := (len(text)*2 + 6) / 7; exact == est || exact < 200 || exact > 400 {
		t.Errorf("gpt-4.1: %d tokens (estimate %d); want a real tokenizer count", exact, est)
	}
	// Unknown models get ceil(bytes/3.5).
	if n := llm.CountTokens("qwen2.5-coder:7b", "hello world"); n != 4 {
		t.Errorf("unknown model: %d, want ceil(11/3.5) = 4", n)
	}
	if n := llm.CountTokens("gpt-4o", ""); n != 0 {
		t.Errorf("empty text: %d", n)
	}
}

func TestContextWindowTable(t *testing.T) {
	for model, want := range map[string]int{
		"gpt-4o-mini": 128_000, "gpt-4.1": 1_047_576, "o3-mini": 200_000, "llama3:8b": 8_192,
		"llama3.1:70b": 131_072, "qwen2.5-coder:14b": 32_768, "Qwen/Qwen2.5-Coder-32B-Instruct": 32_768, "my-finetune": 8_192,
	} {
		if got := llm.ContextWindowFor(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
}

func TestPartsTrimmingDropsLowestPriorityFirst(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text("ok"))
	g := newGateway(t, s.URL, func(c *llm.Config) { c.ContextWindow = 400 })
	filler := func(word string) string { return strings.Repeat(word+" ", 150) }

	req := llm.ChatRequest{
		MaxTokens: 50,
		Parts: []llm.Part{
			{Role: "system", Text: "You are a reviewer.", Priority: 10, Label: "system"},
			{Text: "RULES " + filler("rule"), Priority: 5, Label: "rules"},
			{Text: "HISTORY " + filler("old"), Priority: 1, Label: "history"},
			{Text: "Question: is this safe?", Priority: 10, Label: "question"},
		},
	}
	resp, err := g.Chat(context.Background(), req)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	sent := lastChat(t, s)
	text := sent.Text()
	if strings.Contains(text, "HISTORY") || !strings.Contains(text, "RULES") || !strings.Contains(text, "Question") {
		t.Errorf("sent text should drop history only:\n%s", text)
	}
	if len(resp.Trimmed) != 1 || !strings.Contains(resp.Trimmed[0], "dropped history") {
		t.Errorf("trimmed = %q", resp.Trimmed)
	}
	// Consecutive user parts became one message, after the system one.
	if len(sent.Messages) != 2 || sent.Messages[0].Role != "system" || !strings.HasPrefix(sent.Messages[1].Content, "RULES") {
		t.Errorf("messages = %+v", sent.Messages)
	}

	// When even the dropped parts are not enough, the least important
	// remaining part is cut by lines.
	s.Reset()
	s.On(llmtest.Any(), llmtest.Text("ok"))
	req.Parts = []llm.Part{
		{Role: "system", Text: "You are a reviewer.", Priority: 10},
		{Text: strings.Repeat("line of the diff under review\n", 200), Priority: 10, Label: "diff"},
	}
	resp, err = g.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Trimmed) != 1 || !strings.Contains(resp.Trimmed[0], "truncated diff to") {
		t.Errorf("trimmed = %q", resp.Trimmed)
	}
	if text := lastChat(t, s).Text(); !strings.Contains(text, "lines trimmed to fit the context window") || llm.CountTokens("fake-model", text) > 400-50 {
		t.Errorf("sent %d tokens, want ≤ 350 with a trim marker", llm.CountTokens("fake-model", text))
	}
}

func TestChatCache(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text("cached answer"))
	g := newGateway(t, s.URL, nil, llm.WithCache(newMemCache()))
	ctx := context.Background()
	t0 := 0.0
	req := chatRequest("question")
	req.Temperature = &t0
	if _, err := g.Chat(ctx, req); err != nil {
		t.Fatal(err)
	}
	resp, err := g.Chat(ctx, req)
	if err != nil || !resp.Cached || resp.Content != "cached answer" {
		t.Errorf("second call: %+v %v, want a cache hit", resp, err)
	}
	t1 := 0.7
	req.Temperature = &t1
	if resp, _ := g.Chat(ctx, req); resp.Cached {
		t.Error("a different temperature hit the cache")
	}
	if s.CountChat() != 2 {
		t.Errorf("requests = %d, want 2", s.CountChat())
	}
	// A zero temperature reaches the wire (go-openai would drop a plain 0).
	if temp := s.ChatRequests()[0].Chat.Temperature; temp == nil || *temp > 1e-6 {
		t.Errorf("temperature sent = %v, want ~0", temp)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		cfg  llm.Config
		want string
	}{
		{llm.Config{}, "KODYLS_LLM_BASE_URL"},
		{llm.Config{BaseURL: "localhost:11434"}, `llm base URL "localhost:11434" is not an http(s) URL; example: http://localhost:11434/v1`},
		{llm.Config{BaseURL: "ftp://x/v1"}, "not an http(s) URL"},
		{llm.Config{BaseURL: "http://x/v1", Timeout: -1}, "negative"},
	}
	for _, c := range cases {
		_, err := llm.New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := llm.New(llm.Config{}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("empty config: %v, want ErrNotConfigured", err)
	}
	g, err := llm.New(llm.Config{BaseURL: "http://user:pw@localhost:11434/v1/", Model: "m", Models: map[llm.TaskClass]string{llm.TaskCheap: "small"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Endpoint() != "http://localhost:11434/v1" {
		t.Errorf("endpoint = %q, want no credentials and no trailing slash", g.Endpoint())
	}
	if g.Model(llm.TaskReview) != "m" || g.Model(llm.TaskCheap) != "small" {
		t.Errorf("models: review %q, cheap %q", g.Model(llm.TaskReview), g.Model(llm.TaskCheap))
	}

	// No model: calls fail with a clear ErrNotConfigured, without HTTP.
	s := newServer(t)
	g = newGateway(t, s.URL, func(c *llm.Config) { c.Model = "" })
	_, err = g.Chat(context.Background(), chatRequest("hi"))
	if !errors.Is(err, llm.ErrNotConfigured) || !strings.Contains(err.Error(), "KODYLS_LLM_MODEL") || len(s.Requests()) != 0 {
		t.Errorf("err = %v with %d requests", err, len(s.Requests()))
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	t.Run("healthy", func(t *testing.T) {
		s := newServer(t)
		s.SetModels("fake-model", "other")
		s.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
		g := newGateway(t, s.URL, nil)
		rep := g.Check(ctx, "")
		if !rep.Reachable || !rep.ModelListed || !rep.StructuredOK || !rep.JSONSchemaSupported || len(rep.Problems) != 0 || rep.Latency <= 0 {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("json_schema unsupported", func(t *testing.T) {
		s := newServer(t)
		s.RejectJSONSchema(true)
		s.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
		g := newGateway(t, s.URL, nil)
		rep := g.Check(ctx, "fake-model")
		if !rep.StructuredOK || rep.JSONSchemaSupported || len(rep.Problems) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "json_object") {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		s := newServer(t)
		s.SetModels("llama3:8b", "qwen2.5-coder:7b")
		s.RequireKnownModel(true)
		g := newGateway(t, s.URL, nil)
		rep := g.Check(ctx, "gpt-4o")
		if !rep.Reachable || rep.ModelListed || rep.StructuredOK || len(rep.Problems) == 0 {
			t.Fatalf("report = %+v", rep)
		}
		want := `model "gpt-4o" is not served by ` + s.URL + `; available: llama3:8b, qwen2.5-coder:7b — set KODYLS_LLM_MODEL`
		if rep.Problems[0] != want {
			t.Errorf("problem = %q\nwant      %q", rep.Problems[0], want)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		s := newServer(t)
		s.RequireAPIKey("sk-right")
		g := newGateway(t, s.URL, func(c *llm.Config) { c.APIKey = "sk-wrong" })
		rep := g.Check(ctx, "")
		if !rep.Reachable || len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], "401 from "+s.URL) ||
			!strings.Contains(rep.Problems[0], "set KODYLS_LLM_API_KEY") {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		url := deadURL(t)
		g := newGateway(t, url, nil)
		rep := g.Check(ctx, "")
		if rep.Reachable || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "is not reachable (connection refused)") ||
			!strings.Contains(rep.Problems[0], "ollama serve") || !strings.Contains(rep.Problems[0], "KODYLS_LLM_BASE_URL") {
			t.Errorf("report = %+v", rep)
		}
	})
}
