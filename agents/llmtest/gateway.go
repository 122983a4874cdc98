package llmtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// Start starts a fake endpoint and a gateway to it for model "fake-model"
// (5 s timeout, no retries, its own idle connections closed at the end),
// both closed when the test ends: the setup of a test that drives an
// agent or a pipeline against scripted replies.
func Start(t testing.TB) (*Server, *llm.Gateway) {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	g, err := llm.New(llm.Config{BaseURL: s.URL, Model: "fake-model", Timeout: 5 * time.Second, MaxRetries: -1},
		llm.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	t.Cleanup(g.Close)
	return s, g
}
