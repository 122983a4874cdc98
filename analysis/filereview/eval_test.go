package filereview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
)

// The review eval passes a case only when a finding sits on the defect's
// lines and names it: the same scripted finding passes the case it fits,
// and fails the others for the reason a user would want to read.
func TestEvalJudgesLinesAndWords(t *testing.T) {
	cases, err := EvalCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 6 {
		t.Fatalf("%d cases", len(cases))
	}
	var offByOne EvalCase
	for _, c := range cases {
		if c.Before == "" || c.After == "" || c.Before == c.After || c.Lines[0] < 1 || c.Lines[1] < c.Lines[0] || len(c.Keywords) == 0 {
			t.Errorf("case %s is incomplete: %+v", c.Name, c)
		}
		if c.Name == "go-offbyone" {
			offByOne = c
		}
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{{
		SuggestionContent: "The loop runs while i <= len(items), so the last iteration indexes past the end and panics.",
		ExistingCode:      "for i := 0; i <= len(items); i++ {", ImprovedCode: "for i := 0; i < len(items); i++ {",
		OneSentenceSummary: "Off-by-one: index out of range on the last iteration",
		RelevantLinesStart: 6, RelevantLinesEnd: 6, Label: "bug", Severity: "high",
	}})
	r := newReviewer(t, fake)
	wrongLines := offByOne
	wrongLines.Name, wrongLines.Lines = "same change, defect expected elsewhere", [2]int{9, 9}
	wrongWords := offByOne
	wrongWords.Name, wrongWords.Keywords = "same change, other words", []string{"sql injection"}
	rep := Eval(context.Background(), r.Review, []EvalCase{offByOne, wrongLines, wrongWords})
	if rep.Total != 3 || rep.Passed != 1 || !rep.Results[0].Pass {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(rep.Results[1].Reason, "none on lines 9-9") || !strings.Contains(rep.Results[2].Reason, "mentions none of") {
		t.Fatalf("reasons %q / %q", rep.Results[1].Reason, rep.Results[2].Reason)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	if !strings.Contains(out.String(), "pass rate: 1/3 (33%)") {
		t.Fatalf("text report:\n%s", out.String())
	}
}
