package workspace_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/review"
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

func TestSetSettingsRebuildsReviewersOnlyForTheModel(t *testing.T) {
	svc := offlineServices(t)
	f := svc.Folder(t.TempDir())
	base := svc.Settings()
	base.LLM.BaseURL, base.LLM.Model = "http://127.0.0.1:1/v1", "model-a"
	svc.SetSettings(base)

	tests := []struct {
		name   string
		change func(*contract.Settings)
		want   bool
	}{
		{"nothing", func(*contract.Settings) {}, false},
		{"base ref", func(s *contract.Settings) { s.BaseRef = "origin/main" }, false},
		{"rules scope", func(s *contract.Settings) { s.Rules.Scope = contract.ScopeFile }, false},
		{"review trigger", func(s *contract.Settings) { s.Review.Trigger = "manual" }, false},
		{"severity map", func(s *contract.Settings) { s.Severity = map[string]string{"low": "hint"} }, false},
		{"llm.model", func(s *contract.Settings) { s.LLM.Model = "model-b" }, true},
		{"llm.baseUrl", func(s *contract.Settings) { s.LLM.BaseURL = "http://127.0.0.1:2/v1" }, true},
		{"llm.apiKey", func(s *contract.Settings) { s.LLM.APIKey = "sk-other" }, true},
		{"llm.timeoutMs", func(s *contract.Settings) { s.LLM.TimeoutMS++ }, true},
		{"llm.maxConcurrent", func(s *contract.Settings) { s.LLM.MaxConcurrent++ }, true},
		{"llm.models", func(s *contract.Settings) { s.LLM.Models = map[string]string{"cheap": "model-c"} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc.SetSettings(base) // from the same starting point each time
			before, _ := f.Reviewer()
			next := base
			tt.change(&next)
			if got := svc.SetSettings(next); got != tt.want {
				t.Fatalf("SetSettings reported llmChanged %v, want %v", got, tt.want)
			}
			after, _ := f.Reviewer()
			if rebuilt := after != before; rebuilt != tt.want {
				t.Fatalf("reviewer rebuilt: %v, want %v", rebuilt, tt.want)
			}
			if got := svc.Settings(); !reflect.DeepEqual(got, next) {
				t.Fatalf("Settings() = %+v, want %+v", got, next)
			}
		})
	}
}

func TestGateway(t *testing.T) {
	model := contract.Defaults()
	model.LLM.BaseURL, model.LLM.Model = "http://127.0.0.1:1/v1", "model-a"
	tests := []struct {
		name     string
		settings contract.Settings
		offline  bool
		want     bool
	}{
		{"no model configured", contract.Defaults(), false, false},
		{"offline", model, true, false},
		{"model configured", model, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := workspace.Open(context.Background(), workspace.Config{Settings: tt.settings, Offline: tt.offline, NoStore: true})
			defer svc.Close()
			g, err := svc.Gateway()
			if err != nil || (g != nil) != tt.want || svc.ModelConfigured() != tt.want {
				t.Fatalf("Gateway() = %v, %v; ModelConfigured() = %v; want a gateway: %v", g, err, svc.ModelConfigured(), tt.want)
			}
			if !tt.want {
				return
			}
			if again, _ := svc.Gateway(); again != g {
				t.Fatal("the gateway was rebuilt with the same settings")
			}
			other := tt.settings
			other.LLM.Model = "model-b"
			svc.SetSettings(other)
			if again, err := svc.Gateway(); err != nil || again == nil || again == g {
				t.Fatalf("after a model change Gateway() = %p, %v; before %p", again, err, g)
			}
		})
	}
}

func TestDismissals(t *testing.T) {
	const root, file = "/w", "a.go"
	findings := []filereview.Finding{
		{Suggestion: review.Suggestion{ID: "f1", Label: "bug"}},
		{Suggestion: review.Suggestion{ID: "f2", Label: "style"}},
		{Suggestion: review.Suggestion{ID: "f3", Label: "bug"}},
		{Suggestion: review.Suggestion{ID: "f4", Label: "style"}},
	}
	keptIDs := func(fs []filereview.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	tests := []struct {
		name string
		// open opens the services; reopen, when set, is what a new process
		// on the same data directory opens.
		open   func() *workspace.Services
		reopen bool
	}{
		{"in memory without a store", func() *workspace.Services {
			return workspace.Open(context.Background(), workspace.Config{NoStore: true})
		}, false},
		{"in the store, across a restart", func() func() *workspace.Services {
			data := filepath.Join(t.TempDir(), "data")
			return func() *workspace.Services {
				return workspace.Open(context.Background(), workspace.Config{Getenv: env(map[string]string{"KODYLS_DATA_DIR": data})})
			}
		}(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			svc := tt.open()
			defer func() { svc.Close() }()
			if tt.reopen && svc.Store == nil {
				t.Fatalf("no store: %v", svc.StoreErr)
			}
			if got := keptIDs(svc.WithoutDismissed(ctx, root, file, findings)); len(got) != 4 {
				t.Fatalf("before any dismissal %q", got)
			}
			for _, d := range []index.Dismissal{
				{Workspace: root, File: file, Kind: index.DismissFinding, Key: "f1"},
				{Workspace: root, File: file, Kind: index.DismissLabel, Key: "style"},
			} {
				if err := svc.Dismiss(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			if tt.reopen {
				svc.Close()
				svc = tt.open()
			}
			if got := keptIDs(svc.WithoutDismissed(ctx, root, file, findings)); !slices.Equal(got, []string{"f3"}) {
				t.Fatalf("kept %q, want f3: f1 was dismissed, and every style finding", got)
			}
			// Dismissals belong to one file of one workspace.
			for _, where := range [][2]string{{root, "b.go"}, {"/other", file}} {
				if got := svc.WithoutDismissed(ctx, where[0], where[1], findings); len(got) != 4 {
					t.Errorf("in %s %s kept %q, want every finding", where[0], where[1], keptIDs(got))
				}
			}
		})
	}
}

func TestHistoryWithoutStore(t *testing.T) {
	ctx := context.Background()
	// No KODYLS_DATA_DIR and no HOME: there is no data directory.
	broken := workspace.Open(ctx, workspace.Config{Getenv: func(string) string { return "" }})
	defer broken.Close()
	if broken.Store != nil || broken.StoreErr == nil {
		t.Fatalf("store %v, error %v; want no store and the reason", broken.Store, broken.StoreErr)
	}
	for _, require := range []bool{true, false} {
		if h, err := broken.OpenHistory(ctx, require); h != nil || !errors.Is(err, broken.StoreErr) {
			t.Fatalf("OpenHistory(%v) = %v, %v; want the store error %v", require, h, err, broken.StoreErr)
		}
	}
	if h := broken.History(ctx); h != nil {
		t.Fatalf("History() = %v without a store", h)
	}

	none := workspace.Open(ctx, workspace.Config{NoStore: true})
	defer none.Close()
	if h, err := none.OpenHistory(ctx, true); h != nil || err == nil || none.StoreErr != nil {
		t.Fatalf("OpenHistory without a wanted store = %v, %v (store error %v)", h, err, none.StoreErr)
	}
}

func TestHistoryWithStore(t *testing.T) {
	ctx := context.Background()
	svc := workspace.Open(ctx, workspace.Config{Getenv: env(map[string]string{"KODYLS_DATA_DIR": t.TempDir()})})
	defer svc.Close()
	h := svc.History(ctx)
	if h == nil {
		t.Fatal("no history with a store")
	}
	indexed, err := svc.OpenHistory(ctx, true)
	if err != nil || indexed == nil {
		t.Fatalf("OpenHistory(true) = %v, %v", indexed, err)
	}
	if again := svc.History(ctx); again != indexed {
		t.Fatal("History() opened the history again after OpenHistory(true)")
	}
}
