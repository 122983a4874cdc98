package index

import (
	"context"
	"testing"
	"time"
)

func TestLLMCacheSurvivesReopenAndExpires(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CachePut(ctx, "k1", []byte(`{"a":1}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.CachePut(ctx, "short", []byte(`x`), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st, err = OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, ok, err := st.CacheGet(ctx, "k1")
	if err != nil || !ok || string(v) != `{"a":1}` {
		t.Fatalf("after reopen: %q %v %v", v, ok, err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, ok, _ := st.CacheGet(ctx, "short"); ok {
		t.Fatal("an expired entry was returned")
	}
	if _, ok, _ := st.CacheGet(ctx, "missing"); ok {
		t.Fatal("a missing key was found")
	}
}

func TestUsageTotals(t *testing.T) {
	ctx := context.Background()
	st, err := OpenStore(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs := []UsageRecord{
		{Feature: "review", Model: "m", PromptTokens: 100, CompletionTokens: 20, Latency: 200 * time.Millisecond, Attempts: 1},
		{Feature: "review", Model: "m", PromptTokens: 50, CompletionTokens: 10, Latency: 400 * time.Millisecond, Attempts: 2},
		{Feature: "review", Model: "m", Cached: true},
		{Feature: "rca", Model: "m", PromptTokens: 10, Attempts: 4, Err: "429"},
	}
	for _, r := range recs {
		if err := st.RecordUsage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	tot, err := st.UsageTotals(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tot) != 2 || tot[0].Feature != "review" {
		t.Fatalf("totals %+v", tot)
	}
	r := tot[0]
	if r.Calls != 2 || r.CachedCalls != 1 || r.PromptTokens != 150 || r.CompletionTokens != 30 || r.AvgLatency != 300*time.Millisecond {
		t.Fatalf("review totals %+v", r)
	}
	if tot[1].Failures != 1 {
		t.Fatalf("rca failures %+v", tot[1])
	}
}

func TestDismissalsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []Dismissal{
		{Workspace: "/w", File: "a.go", Kind: DismissFinding, Key: "kody-1"},
		{Workspace: "/w", File: "a.go", Kind: DismissFinding, Key: "kody-1"}, // twice is fine
		{Workspace: "/w", File: "a.go", Kind: DismissLabel, Key: "performance"},
		{Workspace: "/w", File: "b.go", Kind: DismissFinding, Key: "kody-2"},
	} {
		if err := st.Dismiss(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Dismiss(ctx, Dismissal{Workspace: "/w", File: "a.go", Kind: "all", Key: "x"}); err == nil {
		t.Fatal("an unknown kind was accepted")
	}
	st.Close()
	st, _ = OpenStore(ctx, dir)
	defer st.Close()
	ids, labels, err := st.Dismissed(ctx, "/w", "a.go")
	if err != nil || len(ids) != 1 || !ids["kody-1"] || !labels["performance"] {
		t.Fatalf("dismissed in a.go: %v %v %v", ids, labels, err)
	}
}
