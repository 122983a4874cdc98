package lsp_test

import (
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestNoFixWhereTheQuotedCodeIsNotFound: the model quotes the loop header
// spaced its own way and gives the line below it. The finding is shown on
// the line it gives, but "Apply Kody fix" is not offered: it would
// replace the loop body with the new header. A finding about another file
// whose code is not in this one is not shown at all.
func TestNoFixWhereTheQuotedCodeIsNotFound(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	misquoted := rangeLoop
	misquoted.ExistingCode = "for i:=0; i<=len(items); i++ {"
	misquoted.RelevantLinesStart, misquoted.RelevantLinesEnd = 8, 8
	otherFile := reviewtest.Suggestion{
		RelevantFile: "util/strings.go", SuggestionContent: "helper trims twice.", ExistingCode: "func helper(s string) string {",
		ImprovedCode: "func helper(s string) string { return s }", OneSentenceSummary: "Trim once in helper",
		RelevantLinesStart: 5, RelevantLinesEnd: 5, Label: "performance", Severity: "low",
	}
	reviewtest.Script(fake, []reviewtest.Suggestion{misquoted, otherFile})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitIdle("main.go")

	ds := e.Diagnostics("main.go")
	if len(ds) != 1 || ds[0].Range.Start.Line != 7 || !strings.Contains(lsptest.Message(ds[0]), "Use range instead") {
		t.Fatalf("want the loop finding alone, on the line the model gave (8); got %s", lsptest.Describe(ds))
	}
	for _, a := range e.CodeActions("main.go", ds[0].Range, ds) {
		if strings.HasPrefix(a.Title, "Apply Kody fix") {
			e.ApplyEdit(a.Edit)
			t.Fatalf("%q offered; applied, main.go reads:\n%s", a.Title, e.Text("main.go"))
		}
	}
	if !strings.Contains(e.Text("main.go"), "\t\tsum += items[i]\n") {
		t.Fatalf("main.go changed:\n%s", e.Text("main.go"))
	}
	e.Shutdown()
}
