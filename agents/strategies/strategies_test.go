package strategies_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/strategies"
	"github.com/kodustech/kodyls/prompts"
)

func TestNamesAndUnknown(t *testing.T) {
	if got := strings.Join(strategies.RCANames(), ","); got != "plan-execute,react,rewoo,routed" {
		t.Fatalf("names %s", got)
	}
	for _, n := range strategies.RCANames() {
		s, err := strategies.ForRCA(n)
		if err != nil || s.Name() != n {
			t.Fatalf("%s: %v %v", n, s, err)
		}
	}
	_, err := strategies.ForRCA("tree-of-thought")
	if err == nil || !strings.Contains(err.Error(), `"tree-of-thought"`) || !strings.Contains(err.Error(), "plan-execute, react, rewoo, routed") {
		t.Fatalf("err %v", err)
	}
}

// Each strategy explains a real error through the Explainer, and the
// measured wrapper records the run.
func TestEveryStrategyExplains(t *testing.T) {
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is declared and never used","fixGuidelines":["use it"],"confidence":0.8,"evidence":[]}`})
	for _, name := range strategies.RCANames() {
		t.Run(name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			fake.On(llmtest.SchemaName("plan_execute_plan"), llmtest.JSON(map[string]any{"steps": []any{}}))
			fake.On(llmtest.SchemaName("rewoo_plan"), llmtest.JSON(map[string]any{"steps": []any{}}))
			fake.On(llmtest.Any(), final)
			g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", Timeout: 5 * time.Second, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			s, _ := strategies.ForRCA(name)
			m := strategies.Measure(s)
			x := &rca.Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin(), Strategy: m}
			rep, err := x.Explain(context.Background(), "./main.go:4:2: declared and not used: unused\n", false, nil)
			if err != nil || rep.RCA.Source != rca.SourceModel || rep.RCA.RootCause != "unused is declared and never used" {
				t.Fatalf("report %+v err %v", rep.RCA, err)
			}
			if runs := m.Runs(); len(runs) != 1 || runs[0].Err != nil || runs[0].Iterations < 1 {
				t.Fatalf("runs %+v", runs)
			}
		})
	}
}

// The fix and review strategies are in the registry beside the RCA's, and
// an unknown name's error lists the known ones of its feature.
func TestFixAndReviewStrategies(t *testing.T) {
	if got := strings.Join(strategies.Names(strategies.KindFix), ","); got != "plan-mode,single-plan" {
		t.Fatalf("fix strategies %s", got)
	}
	if got := strings.Join(strategies.Names(strategies.KindReview), ","); got != "pipeline,rewoo" {
		t.Fatalf("review strategies %s", got)
	}
	pm, err := strategies.ForFix(strategies.PlanMode)
	one, err2 := strategies.ForFix(strategies.SinglePlan)
	if err != nil || err2 != nil || pm.Rounds <= 1 || one.Rounds != 1 {
		t.Fatalf("fix strategies %+v %v / %+v %v", pm, err, one, err2)
	}
	if r, err := strategies.ForReview(strategies.ReWooRules); err != nil || r.Scope != strategies.ScopePullRequest {
		t.Fatalf("rewoo review %+v %v", r, err)
	}
	_, err = strategies.ForReview("react")
	if err == nil || !strings.Contains(err.Error(), `"react"`) || !strings.Contains(err.Error(), "pipeline, rewoo") {
		t.Fatalf("unknown review strategy: %v", err)
	}
}

// The totals of a strategy: pass rate, mean steps, summed tokens and the
// median latency of the cases.
func TestSummarize(t *testing.T) {
	s := strategies.Summarize("x", "a step", []strategies.CaseRun{
		{Name: "a", Pass: true, Steps: 3, PromptTokens: 100, CompletionTokens: 10, Calls: 1, LatencyMs: 900},
		{Name: "b", Steps: 1, PromptTokens: 200, CompletionTokens: 20, Calls: 2, LatencyMs: 20},
		{Name: "c", Pass: true, Steps: 2, PromptTokens: 300, CompletionTokens: 30, Calls: 3, LatencyMs: 50},
	})
	if s.Passed != 2 || s.Total != 3 || s.MeanSteps != 2 || s.Tokens != 660 || s.Calls != 6 || s.P50LatencyMs != 50 {
		t.Fatalf("summary %+v", s)
	}
	if e := strategies.Summarize("none", "a step", nil); e.Total != 0 || e.Cases == nil || e.P50LatencyMs != 0 {
		t.Fatalf("empty summary %+v", e)
	}
}
