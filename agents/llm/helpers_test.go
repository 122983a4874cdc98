package llm_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"go.uber.org/goleak"
)

// TestMain checks that the gateway leaves no goroutine behind: it starts
// none of its own, and idle HTTP connections are closed by each test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Suggestion and Review mirror the shape of Kodus's code-review replies.
type Suggestion struct {
	ID       string `json:"id"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

type Review struct {
	Summary         string       `json:"summary"`
	CodeSuggestions []Suggestion `json:"codeSuggestions"`
}

func sampleReview() Review {
	return Review{
		Summary: "two problems",
		CodeSuggestions: []Suggestion{
			{ID: "s1", File: "main.go", Line: 10, Severity: "high", Message: "nil map write"},
			{ID: "s2", File: "main.go", Line: 22, Severity: "low", Message: "unused variable", Fix: "remove it"},
		},
	}
}

// newServer starts a fake endpoint that is closed when the test ends.
func newServer(t testing.TB) *llmtest.Server {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s
}

// newGateway builds a gateway for url with test-friendly timings: retries
// back off by milliseconds, and the test's idle connections are closed at
// its end so goleak sees no transport goroutines.
func newGateway(t testing.TB, url string, mod func(*llm.Config), opts ...llm.Option) *llm.Gateway {
	t.Helper()
	cfg := llm.Config{BaseURL: url, Model: "fake-model", Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	opts = append([]llm.Option{llm.WithHTTPClient(&http.Client{Transport: tr})}, opts...)
	g, err := llm.New(cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	llm.SetBackoffForTest(g, time.Millisecond, 10*time.Millisecond)
	return g
}

func reviewRequest() llm.StructuredRequest {
	return llm.StructuredRequest{
		ChatRequest: llm.ChatRequest{
			Feature: "review",
			Task:    llm.TaskReview,
			Messages: []llm.Message{
				{Role: "system", Content: "You review Go code and answer in JSON."},
				{Role: "user", Content: "Review this diff:\n+ m[k] = v"},
			},
			PromptName:    "review",
			PromptVersion: 1,
		},
		SchemaName: "review",
	}
}

func chatRequest(text string) llm.ChatRequest {
	return llm.ChatRequest{Feature: "chat", Messages: []llm.Message{{Role: "user", Content: text}}}
}

// memCache is an in-memory llm.Cache.
type memCache struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func newMemCache() *memCache { return &memCache{m: map[string][]byte{}} }

func (c *memCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok, nil
}

func (c *memCache) Put(_ context.Context, key string, value []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = value
	c.puts++
	return nil
}

// usageLog is an llm.UsageSink that keeps every record.
type usageLog struct {
	mu  sync.Mutex
	all []llm.Usage
}

func (l *usageLog) RecordUsage(_ context.Context, u llm.Usage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, u)
	return nil
}

func (l *usageLog) records() []llm.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]llm.Usage(nil), l.all...)
}

// replacer is a Redactor that replaces one secret.
type replacer struct{ secret string }

func (r replacer) String(s string) string { return strings.ReplaceAll(s, r.secret, "[REDACTED]") }

// statusLog collects status-hook calls.
type statusLog struct {
	mu     sync.Mutex
	states []string
}

func (l *statusLog) hook(st llm.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, st.State)
}

func (l *statusLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.states...)
}

// lastChat returns the last recorded chat request.
func lastChat(t *testing.T, s *llmtest.Server) *llmtest.ChatRequest {
	t.Helper()
	reqs := s.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("no chat request was recorded")
	}
	return reqs[len(reqs)-1].Chat
}

// deadURL returns the base URL of a port nobody listens on, so connecting
// is refused.
func deadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}
