package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
)

// TestReviewOffersNoFixWhereTheQuotedCodeIsNotFound: `kodyls review`
// reports a finding whose quoted code is not in the file on the line the
// model gave, without a fix in the text, JSON or SARIF report (it would
// replace that line's code); a finding about another file whose code is
// not in this one is not reported at all.
func TestReviewOffersNoFixWhereTheQuotedCodeIsNotFound(t *testing.T) {
	misquoted := offByOne
	misquoted.ExistingCode = "for i:=0; i<=len(items); i++ {"
	misquoted.RelevantLinesStart, misquoted.RelevantLinesEnd = 8, 8
	otherFile := reviewtest.Suggestion{
		RelevantFile: "util/strings.go", SuggestionContent: "helper trims twice.", ExistingCode: "func helper(s string) string {",
		ImprovedCode: "func helper(s string) string { return s }", OneSentenceSummary: "Trim once in helper",
		RelevantLinesStart: 5, RelevantLinesEnd: 5, Label: "performance", Severity: "low",
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{misquoted, otherFile})
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

	var review []report.Finding
	for _, f := range reviewReport(t, env, repo.Dir, "main.go").Findings {
		if f.Source == report.SourceReview {
			review = append(review, f)
		}
	}
	if len(review) != 1 || review[0].StartLine != 8 || review[0].Summary != misquoted.OneSentenceSummary {
		t.Fatalf("review findings %+v, want the loop finding alone on line 8", review)
	}
	if review[0].ImprovedCode != "" {
		t.Fatalf("the finding placed by its line carries the fix %q", review[0].ImprovedCode)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "review", "main.go")
	if code != 0 || !strings.Contains(out, "main.go:8:3: critical bug: "+misquoted.OneSentenceSummary) || strings.Contains(out, "suggested:") || strings.Contains(out, "helper") {
		t.Fatalf("text report: code %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runBin(t, env, repo.Dir, "review", "--format", "sarif", "main.go")
	if !json.Valid([]byte(out)) || strings.Contains(out, "improvedCode") || strings.Contains(out, "range items") {
		t.Fatalf("SARIF report carries a fix:\n%s", out)
	}
}
