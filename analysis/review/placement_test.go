package review

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
)

// TestAnalyzeDropsFindingsAboutAnotherFile: a finding the model says is
// about another file is dropped when the code it quotes is not in the
// reviewed one, rather than shown there on its line numbers; the reviewed
// file named another way, or code found in it, keeps the finding.
func TestAnalyzeDropsFindingsAboutAnotherFile(t *testing.T) {
	s := newServer(t)
	elsewhere := sugSQL
	elsewhere.RelevantFile, elsewhere.ExistingCode = "util/strings.go", "func helper(s string) string {"
	dotted := sugRows
	dotted.RelevantFile, dotted.ExistingCode = "./internal/billing/charge.go", "code copied wrongly"
	base := sugScan
	base.RelevantFile = "charge.go"
	foundHere := sugPrint
	foundHere.RelevantFile = "cmd/other.go"
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze:     {llmtest.JSON(suggestions(elsewhere, dotted, base, foundHere))},
		SchemaSafeguard:   {llmtest.JSON(verdicts(3, nil))},
		SchemaImplemented: {llmtest.JSON(statuses(3))},
	})
	in := fixture(t)
	res := review(t, New(newGateway(t, s.URL), Options{}), in)
	want := []string{
		suggestionID(in.Path, dotted.ExistingCode, dotted.OneSentenceSummary),
		suggestionID(in.Path, base.ExistingCode, base.OneSentenceSummary),
		suggestionID(in.Path, foundHere.ExistingCode, foundHere.OneSentenceSummary),
	}
	if got := ids(res.Suggestions); !slices.Equal(got, want) {
		t.Fatalf("suggestions %v, want %v (all but the one about util/strings.go)", got, want)
	}
	for _, sg := range res.Suggestions {
		if sg.RelevantFile != in.Path {
			t.Errorf("%q is in %q, want the reviewed file", sg.OneSentenceSummary, sg.RelevantFile)
		}
	}
	dropped := discardsByStage(res.Discarded)[StageAnalyze]
	if !reflect.DeepEqual(dropped, []string{suggestionID(in.Path, elsewhere.ExistingCode, elsewhere.OneSentenceSummary)}) {
		t.Fatalf("analysis discards %v, want the one about util/strings.go", dropped)
	}
}

// TestSameFile: the ways a model names the reviewed file.
func TestSameFile(t *testing.T) {
	for _, c := range []struct {
		named, path string
		same        bool
	}{
		{"", "main.go", true},
		{"main.go", "main.go", true},
		{"./main.go", "main.go", true},
		{" cmd\\tool\\main.go ", "cmd/tool/main.go", true},
		{"main.go", "cmd/tool/main.go", true},
		{"/home/me/repo/cmd/tool/main.go", "cmd/tool/main.go", true},
		{"cmd/tool/../tool/main.go", "cmd/tool/main.go", true},
		{"util/strings.go", "main.go", false},
		{"util/main.go", "main.go", false},
		{"other/tool/main.go", "cmd/tool/main.go", false},
		{"xmain.go", "main.go", false},
	} {
		if got := sameFile(c.named, c.path); got != c.same {
			t.Errorf("sameFile(%q, %q) = %v, want %v", c.named, c.path, got, c.same)
		}
	}
}

// TestReversedRangeIsSwapped: lines given backwards (12..10) name lines
// 10 to 12, not line 12 alone.
func TestReversedRangeIsSwapped(t *testing.T) {
	s := newServer(t)
	reversed := sugScan
	reversed.ExistingCode = "nowhere in the file"
	reversed.RelevantLinesStart, reversed.RelevantLinesEnd = 50, 48
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze:     {llmtest.JSON(suggestions(reversed))},
		SchemaSafeguard:   {llmtest.JSON(verdicts(1, nil))},
		SchemaImplemented: {llmtest.JSON(statuses(1))},
	})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if len(res.Suggestions) != 1 {
		t.Fatalf("suggestions %+v", res.Suggestions)
	}
	if got := res.Suggestions[0]; got.RelevantLinesStart != 48 || got.RelevantLinesEnd != 50 {
		t.Fatalf("lines %d-%d, want 48-50", got.RelevantLinesStart, got.RelevantLinesEnd)
	}
}

// TestErrorHandlingTurnedOff: reviewOptions.error_handling: false drops
// the findings the model labels error_handling, though they are shown as
// bugs, and keeps the other bugs.
func TestErrorHandlingTurnedOff(t *testing.T) {
	s := newServer(t)
	handling := sugScan
	handling.Label = "error_handling"
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze:     {llmtest.JSON(suggestions(handling, sugPrint))},
		SchemaSafeguard:   {llmtest.JSON(verdicts(1, nil))},
		SchemaImplemented: {llmtest.JSON(statuses(1))},
	})
	p := New(newGateway(t, s.URL), Options{Config: config(func(c *kodusconfig.Config) { c.ReviewOptions["error_handling"] = false })})
	res := review(t, p, fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugPrint)}; !slices.Equal(got, want) {
		t.Fatalf("suggestions %v, want %v", got, want)
	}
	if got := discardsByStage(res.Discarded); !reflect.DeepEqual(got, map[string][]string{StageOptions: {idOf(handling)}}) {
		t.Fatalf("discarded %v", got)
	}
}

// TestClusterPrimaryIsTheMostSevere: a cluster's primary is its most
// severe member whatever its position, so that a critical finding is not
// the repeat of a low one; equally severe members keep the first.
func TestClusterPrimaryIsTheMostSevere(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.SchemaName(SchemaCluster), llmtest.JSON(map[string]any{"clusters": []map[string]any{
		{"primary": 1, "duplicates": []int{2, 3}},
		{"primary": 4, "duplicates": []int{5}},
	}}))
	p := New(newGateway(t, s.URL), Options{})
	low := Suggestion{ID: "low", RelevantFile: "a.go", OneSentenceSummary: "unchecked error", RelevantLinesStart: 3, RelevantLinesEnd: 3, Label: "bug", Severity: "low"}
	medium := Suggestion{ID: "medium", RelevantFile: "a.go", OneSentenceSummary: "unchecked error", RelevantLinesStart: 9, RelevantLinesEnd: 9, Label: "bug", Severity: "medium"}
	critical := Suggestion{ID: "critical", RelevantFile: "b.go", OneSentenceSummary: "unchecked error", RelevantLinesStart: 7, RelevantLinesEnd: 7, Label: "bug", Severity: "critical"}
	tie1 := Suggestion{ID: "tie1", RelevantFile: "b.go", OneSentenceSummary: "print", RelevantLinesStart: 12, RelevantLinesEnd: 12, Label: "bug", Severity: "high"}
	tie2 := Suggestion{ID: "tie2", RelevantFile: "c.go", OneSentenceSummary: "print", RelevantLinesStart: 2, RelevantLinesEnd: 2, Label: "bug", Severity: "high"}
	out := p.Cluster(context.Background(), []FileResult{
		{Path: "a.go", Suggestions: []Suggestion{low, medium}},
		{Path: "b.go", Suggestions: []Suggestion{critical, tie1}},
		{Path: "c.go", Suggestions: []Suggestion{tie2}},
	})
	dupOf := map[string]string{}
	primaries := map[string][]string{}
	for _, r := range out {
		for _, sg := range r.Suggestions {
			dupOf[sg.ID] = sg.DuplicateOf
			for _, d := range sg.Duplicates {
				primaries[sg.ID] = append(primaries[sg.ID], d.ID)
			}
		}
	}
	want := map[string]string{"low": "critical", "medium": "critical", "critical": "", "tie1": "", "tie2": "tie1"}
	if !reflect.DeepEqual(dupOf, want) {
		t.Fatalf("DuplicateOf %v, want %v", dupOf, want)
	}
	if !reflect.DeepEqual(primaries, map[string][]string{"critical": {"low", "medium"}, "tie1": {"tie2"}}) {
		t.Fatalf("primaries %v", primaries)
	}
}
