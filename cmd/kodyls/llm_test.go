package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/lsptest"
	"github.com/kodustech/kodyls/prompts"
)

func TestDoctorChecksTheEndpoint(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.SetModels("qwen2.5-coder", "llama3")
	fake.RequireKnownModel(true) // like OpenAI: an unknown model is a 404
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{"ok": true}))
	repo := fixtureRepo(t)

	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=qwen2.5-coder")
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor against a healthy endpoint: code %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{fake.URL + " model qwen2.5-coder", "reachable", "2 models served", "json_schema accepted"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	env = append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=gpt-9")
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "gpt-9") || !strings.Contains(out, "qwen2.5-coder") || !strings.Contains(out, "KODYLS_LLM_MODEL") {
		t.Errorf("unknown model: code %d, want 1 and a problem naming the served models:\n%s", code, out)
	}

	fake.RejectJSONSchema(true)
	env = append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=llama3")
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 0 || !strings.Contains(out, "json_object fallback works") {
		t.Errorf("endpoint without json_schema: code %d:\n%s", code, out)
	}
}

func TestDoctorUnreachableEndpoint(t *testing.T) {
	repo := fixtureRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL=http://127.0.0.1:1/v1", "KODYLS_LLM_MODEL=m")
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "not reachable") || !strings.Contains(out, "KODYLS_LLM_BASE_URL") {
		t.Fatalf("unreachable endpoint: code %d:\n%s", code, out)
	}
}

type verdict struct {
	Summary string `json:"summary"`
	Score   int    `json:"score"`
}

// TestCacheSurvivesRestart: the same structured request after reopening the
// store (as a new process would) is answered from the cache with zero calls.
func TestCacheSurvivesRestart(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.JSON(verdict{Summary: "fine", Score: 7}))
	dir := filepath.Join(t.TempDir(), "data")
	cfg := contract.Resolve(func(k string) string {
		return map[string]string{"KODYLS_LLM_BASE_URL": fake.URL, "KODYLS_LLM_MODEL": "fake-model"}[k]
	}, nil, nil).Settings

	ask := func() (verdict, llm.Result) {
		st, err := index.OpenStore(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		g, err := newGateway(cfg, st, prompts.Builtin(), nil, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		v, res, err := llm.Structured[verdict](context.Background(), g, llm.StructuredRequest{
			SchemaName: "verdict",
			ChatRequest: llm.ChatRequest{Feature: "test", Task: llm.TaskCheap, PromptName: "t", PromptVersion: 1,
				Messages: []llm.Message{{Role: "user", Content: "judge this json"}}},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v, res
	}
	v1, r1 := ask()
	v2, r2 := ask()
	if fake.CountChat() != 1 {
		t.Fatalf("%d chat requests for two identical asks across a restart, want 1", fake.CountChat())
	}
	if v1 != v2 || r1.Source != llm.SourceModel || r2.Source != llm.SourceCache {
		t.Fatalf("first %+v (%s), second %+v (%s)", v1, r1.Source, v2, r2.Source)
	}
	st, _ := index.OpenStore(context.Background(), dir)
	defer st.Close()
	tot, _ := st.UsageTotals(context.Background(), time.Time{})
	if len(tot) != 1 || tot[0].Calls != 1 || tot[0].CachedCalls != 1 {
		t.Fatalf("usage log %+v, want 1 call and 1 cache hit", tot)
	}
}

// TestSecretsNeverLeaveThroughTheBinary: a changed file holding secrets is
// reviewed through the real binary; the fake endpoint never sees them.
func TestSecretsNeverLeaveThroughTheBinary(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	// Fake secrets generated at run time (random, like real ones) so that
	// no scanner flags this file.
	rng := rand.New(rand.NewPCG(1, 2))
	randStr := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	secrets := []string{
		"sk-proj-" + randStr(alnum, 48),
		"ghp_" + randStr(alnum, 36),
		"AKIA" + randStr("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
	}
	code := "package main\n\nvar (\n\topenAI = \"" + secrets[0] + "\"\n\tgh     = \"" + secrets[1] + "\"\n\tawsID  = \"" + secrets[2] + "\"\n)\n"
	repo := lsptest.NewRepo(t, map[string]string{"main.go": "package main\n"})
	repo.Write(map[string]string{"main.go": code})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, errOut, code := runBin(t, env, repo.Dir, "review", "main.go"); code != 0 {
		t.Fatalf("review: %d\n%s%s", code, out, errOut)
	}
	if fake.CountChat() == 0 {
		t.Fatal("nothing was sent: the test proves nothing")
	}
	for _, r := range fake.Requests() {
		for _, s := range secrets {
			if strings.Contains(string(r.Body), s) {
				t.Fatalf("secret %q reached the endpoint in %s", s[:8], r.Path)
			}
		}
	}
}
