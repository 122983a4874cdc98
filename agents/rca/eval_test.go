package rca

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

// TestEvalHarness runs the canonical cases against the fake endpoint, which
// answers every case with the same Go-specific explanation: the harness must
// pass the Go case it fits and fail the others with a reason.
func TestEvalHarness(t *testing.T) {
	cases, err := EvalCases()
	if err != nil || len(cases) < 8 {
		t.Fatalf("cases: %d %v", len(cases), err)
	}
	for _, c := range cases {
		if strings.TrimSpace(c.Output) == "" {
			t.Errorf("case %s has no output", c.Name)
		}
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"the variable unused is declared and not used","fixGuidelines":["remove the variable or use it"],"confidence":0.8}`}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := &Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin()}
	rep := Eval(context.Background(), x, cases)
	if rep.Total != len(cases) || rep.ByLanguage["go"][0] != 1 || rep.Passed != 1 {
		t.Fatalf("report %+v", rep)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "pass rate: 1/8") || !strings.Contains(b.String(), "FAIL rustc-moved") {
		t.Fatalf("text:\n%s", b.String())
	}
}

// TestSimilarErrorsTool: the agent can consult the history of the
// workspace; an explanation given before reaches the model as an
// observation.
func TestSimilarErrorsTool(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	e := errparse.Error{Tool: "go", Language: "go", File: "a.go", Line: 3, Message: "declared and not used: x"}
	e.Fingerprint = errparse.Fingerprint(e)
	hist := explainedBefore(t, ws, e, index.Explanation{RootCause: "x was left over from a refactor", Steps: []string{"delete x"}, Confidence: 0.8, Source: "model"})
	x := &Explainer{Workspace: ws, History: hist}
	out, err := x.similarErrorsTool(e).Run(ctx, []byte(`{}`))
	if err != nil || !strings.Contains(out, "left over from a refactor") {
		t.Fatalf("similar_errors: %q %v", out, err)
	}
	out, err = x.similarErrorsTool(e).Run(ctx, []byte(`{"query":"refactor"}`))
	if err != nil || !strings.Contains(out, "declared and not used") {
		t.Fatalf("similar_errors with a query: %q %v", out, err)
	}
	// Another project's errors stay out of this one's prompts, even
	// when a query matches them: its endpoint may be another provider.
	if _, err := hist.Record(ctx, index.ErrorRecord{Workspace: t.TempDir(), Fingerprint: "other", Tool: "go", Language: "go",
		Message: "refactor of acme_billing failed: billing-db.acme-internal refused", File: "b.go"}); err != nil {
		t.Fatal(err)
	}
	out, err = x.similarErrorsTool(e).Run(ctx, []byte(`{"query":"refactor acme_billing"}`))
	if err != nil || strings.Contains(out, "acme") || !strings.Contains(out, "declared and not used") {
		t.Errorf("similar_errors with a query that matches another workspace's error: %q %v", out, err)
	}
}

// TestSeenBeforeCarriesTheConfidenceGivenThen: the past explanations
// shown to the model say how sure the model was then, not 0.
func TestSeenBeforeCarriesTheConfidenceGivenThen(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	past := errparse.Error{Tool: "go", Language: "go", File: "main.go", Line: 4, Message: "declared and not used: x"}
	past.Fingerprint = errparse.Fingerprint(past)
	hist := explainedBefore(t, ws, past, index.Explanation{RootCause: "x was left over", Steps: []string{"delete x"}, Confidence: 0.9, Source: "model", ContentHash: "then"})
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"x is unused","fixGuidelines":["use x"],"confidence":70}`}))
	x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), History: hist}
	if _, err := x.Explain(ctx, goOutput, false, nil); err != nil {
		t.Fatal(err)
	}
	reqs := fake.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	if text := reqs[0].Chat.Text(); !strings.Contains(text, "x was left over") || !strings.Contains(text, "Confidence then: 0.90") {
		t.Errorf("the past explanation in the prompt:\n%s", text)
	}
}

// explainedBefore opens a history in a temporary store holding error e of
// workspace ws, explained as ex.
func explainedBefore(t *testing.T, ws string, e errparse.Error, ex index.Explanation) *index.LocalHistory {
	t.Helper()
	ctx := context.Background()
	hist := openHistory(t)
	id, err := hist.Record(ctx, index.ErrorRecord{Workspace: ws, Fingerprint: e.Fingerprint, Tool: e.Tool, Language: e.Language, Message: e.Message, Template: errparse.Template(e), File: e.File})
	if err != nil {
		t.Fatal(err)
	}
	if err := hist.Explain(ctx, id, ex); err != nil {
		t.Fatal(err)
	}
	return hist
}
