package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
)

// TestCheckBlamesTheBaseURL: a base URL whose path is wrong (/v1 twice,
// missing, or the chat path itself) is reported as the base URL's
// problem, saying what it must be, not as the model's.
func TestCheckBlamesTheBaseURL(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
	root := strings.TrimSuffix(s.URL, "/v1")
	for _, c := range []struct{ url, hint string }{
		{s.URL + "/v1", "/v1 appears twice"},
		{root, "it does not end in /v1"},
		{s.URL + "/chat/completions", "without /chat/completions"},
	} {
		rep := newGateway(t, c.url, nil).Check(context.Background(), "")
		all := strings.Join(rep.Problems, "\n")
		if len(rep.Problems) != 1 || !strings.Contains(all, "the base URL "+c.url+" is not the API root ("+c.hint) ||
			!strings.Contains(all, "must be the API root, which ends in /v1 on most servers (e.g. http://localhost:11434/v1)") ||
			strings.Contains(all, "KODYLS_LLM_MODEL") {
			t.Errorf("%s: problems\n%s\nwant the base URL blamed (%s), not the model", c.url, all, c.hint)
		}
	}
}

// TestCheckBlamesTheBaseURLWhenNoPathIsFound: an endpoint that answers
// 404 without saying why on /models and on the chat path (llama.cpp's
// "File Not Found", vLLM's "Not Found") has a wrong base URL; one whose
// chat 404 names the model has a wrong model.
func TestCheckBlamesTheBaseURLWhenNoPathIsFound(t *testing.T) {
	for body, wantURL := range map[string]bool{
		`{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`:   true,
		`{"error":{"message":"model \"fake-model\" not found, try pulling it first"}}`: false,
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			if r.URL.Path == "/v1/models" {
				_, _ = w.Write([]byte(`{"detail":"Not Found"}`))
				return
			}
			_, _ = w.Write([]byte(body))
		}))
		rep := newGateway(t, hs.URL+"/v1", nil).Check(context.Background(), "")
		hs.Close()
		all := strings.Join(rep.Problems, "\n")
		if got := strings.Contains(all, "is not the API root"); got != wantURL || len(rep.Problems) != 1 {
			t.Errorf("chat 404 %s: problems\n%s\nwant the base URL blamed: %v", body, all, wantURL)
		}
		if !wantURL && !strings.Contains(all, `model "fake-model" is not served`) {
			t.Errorf("chat 404 %s: problems\n%s\nwant the model blamed", body, all)
		}
	}
}

// TestCheckNotAnAPI: a server that answers with a web page is said to
// answer, but not as an OpenAI-compatible API, not to be unreachable;
// the gateway does not retry such an answer.
func TestCheckNotAnAPI(t *testing.T) {
	var calls atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>Open WebUI</title>"))
	}))
	defer hs.Close()
	g := newGateway(t, hs.URL, nil)
	rep := g.Check(context.Background(), "")
	all := strings.Join(rep.Problems, "\n")
	if len(rep.Problems) != 1 || !strings.Contains(all, "answers, but not as an OpenAI-compatible API (got text/html from /models, not JSON)") ||
		!strings.Contains(all, "ends in /v1") || strings.Contains(all, "not reachable") || strings.Contains(all, "start the server") {
		t.Errorf("problems:\n%s", all)
	}
	calls.Store(0)
	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "not as an OpenAI-compatible API (got text/html") || calls.Load() != 1 {
		t.Errorf("chat: %d calls, err %v; want one call and the answer named", calls.Load(), err)
	}
}

// TestKeyWithAControlCharacter: a key that an HTTP header cannot carry
// fails at once, not retried as a connection failure, says what to fix,
// and counts as a set-up error; doctor's check says the same.
func TestKeyWithAControlCharacter(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text("hi"))
	g := newGateway(t, s.URL, func(c *llm.Config) { c.APIKey = "sk-abc\ndef" })
	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if !errors.Is(err, llm.ErrKeyNotSendable) || !llm.IsSetupError(err) || !strings.Contains(err.Error(), "llm.apiKey or KODYLS_LLM_API_KEY") ||
		strings.Contains(err.Error(), "attempts") || strings.Contains(err.Error(), "sk-abc") {
		t.Errorf("err = %v", err)
	}
	if st := g.Status(); st.State != llm.StateOK {
		t.Errorf("the breaker counted a key error as the endpoint's failure: %+v", st)
	}
	rep := g.Check(context.Background(), "")
	all := strings.Join(rep.Problems, "\n")
	if len(rep.Problems) != 1 || !strings.Contains(all, "API key cannot be sent") || strings.Contains(all, "not reachable") {
		t.Errorf("check problems:\n%s", all)
	}
}
