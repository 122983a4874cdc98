package workspace_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
)

type verdict struct {
	Summary string `json:"summary"`
	Score   int    `json:"score"`
}

// TestCacheSurvivesRestart: the same structured request from services opened
// again on the same data directory (as a new process would) is answered from the cache with zero calls.
func TestCacheSurvivesRestart(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.JSON(verdict{Summary: "fine", Score: 7}))
	dir := filepath.Join(t.TempDir(), "data")
	cfg := contract.Resolve(func(k string) string {
		return map[string]string{"KODYLS_LLM_BASE_URL": fake.URL, "KODYLS_LLM_MODEL": "fake-model"}[k]
	}, nil, nil).Settings

	ask := func() (verdict, llm.Result) {
		svc := workspace.Open(context.Background(), workspace.Config{Settings: cfg, Getenv: func(k string) string {
			return map[string]string{"KODYLS_DATA_DIR": dir}[k]
		}})
		defer svc.Close()
		if svc.StoreErr != nil {
			t.Fatal(svc.StoreErr)
		}
		g, err := svc.Gateway()
		if err != nil || g == nil {
			t.Fatalf("gateway %v, %v", g, err)
		}
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

