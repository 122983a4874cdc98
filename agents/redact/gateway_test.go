package redact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
)

// TestCorpusNeverReachesTheEndpoint sends every snippet of the secrets
// corpus through the LLM gateway with the default redactor, as a user
// message, as the content of a tool result and inside a structured
// request, and checks that no generated secret appears in any request the
// (fake) endpoint recorded.
func TestCorpusNeverReachesTheEndpoint(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.LastMessageRole("tool"), llmtest.Text("noted"))
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"x"}`}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1}, llm.WithRedactor(Default()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cases := loadCorpus(t)
	var all []string
	for _, c := range cases {
		text, secrets := c.expand()
		all = append(all, secrets...)
		if err := toolRound(context.Background(), g, text); err != nil {
			t.Fatalf("%s: %v", c.title, err)
		}
	}
	if fake.CountChat() < 2*len(cases) {
		t.Fatalf("only %d requests for %d cases", fake.CountChat(), len(cases))
	}
	for _, r := range fake.Requests() {
		body := string(r.Body)
		for _, s := range all {
			if len(s) >= 8 && strings.Contains(body, s) {
				t.Fatalf("a corpus secret (%d bytes, starting %q) reached the endpoint", len(s), s[:4])
			}
		}
	}
	t.Logf("%d corpus cases, %d secrets, %d requests: none leaked", len(cases), len(all), fake.CountChat())
}

// toolRound sends text as a user message, and then, when the model calls
// a tool, as that tool's result.
func toolRound(ctx context.Context, g *llm.Gateway, text string) error {
	req := llm.ChatRequest{
		Feature: "test", NoCache: true,
		Messages: []llm.Message{{Role: "system", Content: "review"}, {Role: "user", Content: text}},
		Tools:    []llm.Tool{{Name: "read_file", Description: "read", Parameters: struct{ Path string }{}}},
	}
	resp, err := g.Chat(ctx, req)
	if err != nil {
		return err
	}
	req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
	for _, c := range resp.ToolCalls {
		req.Messages = append(req.Messages, llm.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: text})
	}
	_, err = g.Chat(ctx, req)
	return err
}

// TestURICredentialsNeverReachTheEndpoint sends the true-positive samples
// of the URI, query and connection-string categories (every password
// class, every seed; see samples_test.go) through the gateway, as user
// messages and tool results, and checks that no password, nor 8 bytes of
// one, reached the fake endpoint, in plain or JSON-escaped form ('&',
// '<' and '>' travel as \u0026…).
func TestURICredentialsNeverReachTheEndpoint(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.LastMessageRole("tool"), llmtest.Text("noted"))
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"x"}`}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1}, llm.WithRedactor(Default()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var (
		secrets []string
		batch   []string
		rounds  int
	)
	send := func() {
		if len(batch) == 0 {
			return
		}
		if err := toolRound(context.Background(), g, strings.Join(batch, "\n")); err != nil {
			t.Fatal(err)
		}
		rounds++
		batch = batch[:0]
	}
	for _, c := range sampleCategories {
		if c.minRecall < 1 {
			continue // the generic rule's recall is measured, not total
		}
		for _, tpl := range c.tps {
			for _, class := range c.classes {
				for seed := range seedsPerClass {
					in, s := expandSample(tpl, class, seed)
					secrets = append(secrets, s...)
					if batch = append(batch, in); len(batch) == 40 {
						send()
					}
				}
			}
		}
	}
	send()
	if fake.CountChat() < 2*rounds {
		t.Fatalf("only %d requests for %d rounds", fake.CountChat(), rounds)
	}
	for _, r := range fake.Requests() {
		body := string(r.Body)
		for _, s := range secrets {
			esc, _ := json.Marshal(s)
			if leaked(body, s) || leaked(body, strings.Trim(string(esc), `"`)) {
				t.Fatalf("a sample password (%d bytes, starting %q) reached the endpoint", len(s), s[:3])
			}
		}
	}
	t.Logf("%d samples with a password, %d requests: none leaked", len(secrets), fake.CountChat())
}
