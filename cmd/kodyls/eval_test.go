package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
)

// kodyls eval review judges the real review pipeline on the canonical
// changes: a model that finds only the off-by-one passes that case and
// fails the others, and the report says what the run cost.
func TestEvalReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{{
		SuggestionContent:  "i <= len(items) reads one element past the end and panics: index out of range.",
		ExistingCode:       "for i := 0; i <= len(items); i++ {",
		ImprovedCode:       "for i := 0; i < len(items); i++ {",
		OneSentenceSummary: "Off-by-one loop bound",
		RelevantLinesStart: 6, RelevantLinesEnd: 6, Label: "bug", Severity: "high",
	}})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, t.TempDir(), "eval", "review", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Passed, Total, Tokens, ModelCalls int
		Report                            struct {
			Results []struct {
				Name   string
				Pass   bool
				Reason string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.Total != 6 || rep.Passed != 1 || rep.Tokens <= 0 || rep.ModelCalls <= 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Report.Results {
		if (r.Name == "go-offbyone") != r.Pass {
			t.Errorf("%s: pass=%v (%s)", r.Name, r.Pass, r.Reason)
		}
	}
	text, _, _ := runBin(t, env, t.TempDir(), "eval", "review")
	if !strings.Contains(text, "pass rate: 1/6") || !strings.Contains(text, "model calls") {
		t.Errorf("text report:\n%s", text)
	}
}

// kodyls eval fix compiles each canonical program with the real Go
// toolchain, fixes it with plan mode and counts a case only when the fix
// makes the build pass.
func TestEvalFix(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn id\n", "\treturn fmt.Sprint(id)\n")))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`))
	out, errOut, code := runBin(t, fakeEnv(t, fake), t.TempDir(), "eval", "fix", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Passed, Total int
		Report        struct {
			Results []struct {
				Name   string
				Pass   bool
				Reason string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.Total != 3 || rep.Passed != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Report.Results {
		if (r.Name == "go-return-type") != r.Pass {
			t.Errorf("%s: pass=%v (%s)", r.Name, r.Pass, r.Reason)
		}
	}
}
