package rca

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/prompts"
)

// A confidence given as a percentage is read as one; nonsense counts as
// unknown, never as certain.
func TestConfidenceAsPercentage(t *testing.T) {
	for in, want := range map[float64]float64{
		0: 0, 0.3: 0.3, 1: 1, 7: 0.07, 30: 0.3, 85: 0.85, 100: 1,
		101: 0, 1e6: 0, -3: 0, math.NaN(): 0, math.Inf(1): 0,
	} {
		a := ModelAnswer{RootCause: "n is unused", Confidence: in}
		if err := a.Check(); err != nil || math.Abs(a.Confidence-want) > 1e-9 {
			t.Errorf("confidence %v read as %v (%v), want %v", in, a.Confidence, err, want)
		}
	}
}

// Through the default strategy and the fake endpoint: a model that says
// it is 30% sure is shown as 30% sure and escalated as unsure, whichever
// strategy reads its answer.
func TestPercentConfidenceEscalates(t *testing.T) {
	unsure := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"maybe n is unused, not sure","fixGuidelines":["check"],"confidence":30}`})
	fake := llmtest.NewServer()
	defer fake.Close()
	plan := fake.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{}}))
	// The planner's answer turn offers final_answer alone.
	planned := fake.On(llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("read_file"))),
		llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"n is declared and never read","fixGuidelines":["use n"],"confidence":70}`}))
	fake.On(nil, unsure)
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := &Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin(), Strategy: RoutedStrategy(planexec.Strategy[ModelAnswer]{})}
	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.RCA
	if a.Path != "react → plan-execute (low confidence 0.30)" || plan.Times() != 1 || planned.Times() != 1 {
		t.Fatalf("path %q after %d plans and %d planned answers: a 30%% sure answer must escalate", a.Path, plan.Times(), planned.Times())
	}
	if a.Confidence != 0.7 || a.RootCause != "n is declared and never read" {
		t.Errorf("answer %+v: the planner's 70 is 70%%", a)
	}
	if md := rep.Markdown(); !strings.Contains(md, "Confidence 70%") || !strings.Contains(md, "path: "+a.Path) {
		t.Errorf("markdown:\n%s", md)
	}
	for _, r := range fake.ChatRequests() {
		if strings.Contains(r.Chat.Text(), "handed this task over") && !strings.Contains(r.Chat.Text(), fmt.Sprintf("(confidence %.2f)", 0.3)) {
			t.Errorf("the planner was not told the fast path's confidence as 0.30:\n%s", r.Chat.Text())
		}
	}
}

// ReWoo's solver reads the confidence the same way.
func TestReWooReadsPercentConfidence(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{}}))
	fake.On(nil, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"n is never read","fixGuidelines":["use n"],"confidence":45,"evidence":[]}`}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := &Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin(), Strategy: rewoo.Strategy[ModelAnswer]{}}
	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RCA.Confidence != 0.45 || rep.RCA.Path != "rewoo" {
		t.Errorf("answer %+v, want confidence 0.45 by rewoo", rep.RCA)
	}
}
