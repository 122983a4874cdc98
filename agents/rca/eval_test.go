package rca

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
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
