package filereview

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
)

// twoHunks is fileText(20) changed in two places far apart, f3's and f15's
// bodies, each change marked so that a scripted analysis can tell which
// hunks it was shown.
func twoHunks(a, b bool) (base, current string) {
	base = fileText(20)
	current = base
	if a {
		current = strings.Replace(current, "\treturn 3\n", "\treturn 333 // MARK_A\n", 1)
	}
	if b {
		current = strings.Replace(current, "\treturn 15\n", "\treturn 1515 // MARK_B\n", 1)
	}
	return base, current
}

var (
	lowA = reviewtest.Suggestion{SuggestionContent: "333 is odd.", ExistingCode: "return 333 // MARK_A", ImprovedCode: "return 3",
		OneSentenceSummary: "finding A", RelevantLinesStart: 16, RelevantLinesEnd: 16, Label: "bug", Severity: "low"}
	highB = reviewtest.Suggestion{SuggestionContent: "1515 overflows.", ExistingCode: "return 1515 // MARK_B", ImprovedCode: "return 15",
		OneSentenceSummary: "finding B", RelevantLinesStart: 64, RelevantLinesEnd: 64, Label: "bug", Severity: "high"}
)

// scriptTwoHunks makes the analysis find lowA in hunk A and highB in hunk
// B, whichever of them it is shown.
func scriptTwoHunks(fake *llmtest.Server) {
	reviewtest.ScriptAnswers(fake,
		reviewtest.Answer{When: llmtest.All(llmtest.PromptContains("MARK_A"), llmtest.PromptContains("MARK_B")), Suggestions: []reviewtest.Suggestion{lowA, highB}},
		reviewtest.Answer{When: llmtest.PromptContains("MARK_A"), Suggestions: []reviewtest.Suggestion{lowA}},
		reviewtest.Answer{When: llmtest.PromptContains("MARK_B"), Suggestions: []reviewtest.Suggestion{highB}},
	)
}

// cappedReviewer is a workspace's reviewer whose kodus-config.yml is
// config, with a cache of its own.
func cappedReviewer(t *testing.T, fake *llmtest.Server, config string) *Reviewer {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, "kodus-config.yml", config)
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	r, problems := ForWorkspace(Workspace{Root: root, Gateway: g, Cache: &memCache{m: map[string][]byte{}}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return r
}

func summaries(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.OneSentenceSummary)
	}
	return strings.Join(out, ", ")
}

// TestPerFileCapCountsCachedHunks: with maxSuggestions 1 per file, a
// review whose hunks come partly from the cache shows what a review of the
// same text without the cache shows, the most severe finding; and a
// finding the cap hid comes back once the finding that outranked it is
// fixed, from the cache.
func TestPerFileCapCountsCachedHunks(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scriptTwoHunks(fake)
	const config = "suggestionControl:\n  limitationType: file\n  maxSuggestions: 1\n"
	ctx := context.Background()
	review := func(r *Reviewer, a, b bool) Result {
		t.Helper()
		base, current := twoHunks(a, b)
		res, err := r.Review(ctx, Input{Path: "demo.go", Language: "go", Base: base, Current: current})
		if err != nil || len(res.Degraded) > 0 {
			t.Fatalf("review: %v degraded %v", err, res.Degraded)
		}
		return res
	}

	coldReviewer := cappedReviewer(t, fake, config)
	cold := review(coldReviewer, true, true)
	if got := summaries(cold.Findings); got != "finding B" {
		t.Fatalf("cold review of both hunks shows %q, want the high finding B alone", got)
	}

	// Hunk A first, then B as well: A comes from the cache.
	r := cappedReviewer(t, fake, config)
	if got := summaries(review(r, true, false).Findings); got != "finding A" {
		t.Fatalf("review of hunk A shows %q", got)
	}
	warm := review(r, true, true)
	if warm.CachedHunks != 1 || summaries(warm.Findings) != summaries(cold.Findings) {
		t.Fatalf("with hunk A from the cache (%d cached) the review shows %q, without the cache %q", warm.CachedHunks, summaries(warm.Findings), summaries(cold.Findings))
	}

	// B fixed (its line back as it was) after the review of both: A,
	// which the cap hid then, is shown, from the cache, with no call for
	// it.
	calls := fake.CountChat()
	res := review(coldReviewer, true, false)
	if got := summaries(res.Findings); got != "finding A" || res.CachedHunks != 1 || fake.CountChat() != calls {
		t.Fatalf("after fixing B the review shows %q (%d hunks cached, %d calls), want finding A from the cache", got, res.CachedHunks, fake.CountChat()-calls)
	}
}

// TestThresholdAppliesToCachedFindings: the severity filter hides a
// cached finding below it, and shows it again when lowered, without a
// model call.
func TestThresholdAppliesToCachedFindings(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scriptTwoHunks(fake)
	r := cappedReviewer(t, fake, "suggestionControl:\n  severityLevelFilter: high\n")
	base, current := twoHunks(true, true)
	in := Input{Path: "demo.go", Language: "go", Base: base, Current: current}
	ctx := context.Background()
	for range 2 {
		res, err := r.Review(ctx, in)
		if err != nil || summaries(res.Findings) != "finding B" {
			t.Fatalf("review: %q %v", summaries(res.Findings), err)
		}
	}
	calls := fake.CountChat()
	r.Control.SeverityLevelFilter = "low"
	res, err := r.Review(ctx, in)
	if err != nil || summaries(res.Findings) != "finding A, finding B" || fake.CountChat() != calls {
		t.Fatalf("filter lowered: %q, %d calls, %v", summaries(res.Findings), fake.CountChat()-calls, err)
	}
}

// TestCapChange: limitationType pr caps the findings of every file of a
// change together, the most severe first, ties in path and place order,
// and spares Kody Rules' findings unless the filters apply to them.
func TestCapChange(t *testing.T) {
	f := func(id, sev string, start int, rule string) Finding {
		return Finding{Suggestion: review.Suggestion{ID: id, Severity: sev, RuleID: rule}, Span: anchor.Span{Start: start}}
	}
	results := func() []Result {
		return []Result{
			{Path: "b.go", Findings: []Finding{f("b-low", "low", 1, ""), f("b-critical", "critical", 5, "")}},
			{Path: "a.go", Findings: []Finding{f("a-medium2", "medium", 9, ""), f("a-medium1", "medium", 2, ""), f("a-rule", "low", 3, "rule-1")}},
		}
	}
	ids := func(rs []Result) string {
		var out []string
		for _, r := range rs {
			for _, f := range r.Findings {
				out = append(out, f.ID)
			}
		}
		return strings.Join(out, " ")
	}
	r := &Reviewer{}
	r.Control.MaxSuggestions = 2
	r.Control.LimitationType = "pr"
	got := r.CapChange(results())
	if ids(got) != "b-critical a-medium1 a-rule" {
		t.Fatalf("capped to 2: %s", ids(got))
	}
	if len(got[0].Discarded) != 1 || got[0].Discarded[0].Stage != review.StageCap || len(got[1].Discarded) != 1 {
		t.Fatalf("discarded %+v %+v", got[0].Discarded, got[1].Discarded)
	}
	r.Control.ApplyFiltersToKodyRules = true
	if got := ids(r.CapChange(results())); got != "b-critical a-medium1" {
		t.Fatalf("capped to 2, rules counted: %s", got)
	}
	r.Control.LimitationType = "file"
	if got := ids(r.CapChange(results())); got != ids(results()) {
		t.Fatalf("limitationType file: %s", got)
	}
}

// TestLineFallbackKeepsNoFix: a finding whose existing code is not in the
// text is placed by its lines only inside the reviewed hunks, and then
// without its improved code, which would replace whatever those lines
// hold; one quoting no code keeps it.
func TestLineFallbackKeepsNoFix(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	offByOne := reviewtest.Suggestion{SuggestionContent: "s", ExistingCode: "return  333 //  MARK-A", ImprovedCode: "return 3",
		OneSentenceSummary: "wrong copy", RelevantLinesStart: 17, RelevantLinesEnd: 17, Label: "bug", Severity: "high"}
	noCode := offByOne
	noCode.ExistingCode, noCode.OneSentenceSummary = "", "no copy"
	outside := offByOne
	outside.OneSentenceSummary, outside.RelevantLinesStart, outside.RelevantLinesEnd = "outside", 40, 40
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne, noCode, outside})
	r := newReviewer(t, fake)
	base, current := twoHunks(true, false)
	res, err := r.Review(context.Background(), Input{Path: "demo.go", Language: "go", Base: base, Current: current})
	if err != nil {
		t.Fatal(err)
	}
	if got := summaries(res.Findings); got != "wrong copy, no copy" || res.Unanchored != 1 {
		t.Fatalf("findings %q, %d unanchored; want the two inside the hunk, the one on line 40 dropped", got, res.Unanchored)
	}
	for _, f := range res.Findings {
		if f.Method != anchor.MethodLines || f.Span.StartLine != 16 {
			t.Fatalf("%s placed %s on line %d", f.OneSentenceSummary, f.Method, f.Span.StartLine+1)
		}
		if want := f.OneSentenceSummary == "no copy"; (f.ImprovedCode != "") != want {
			t.Fatalf("%s: improved code %q", f.OneSentenceSummary, f.ImprovedCode)
		}
	}
}

// TestEditedPromptOverrideReviewsAgain: editing a workspace's prompt
// override (.kody/prompts) without a new header version reviews the hunks
// again with it, instead of showing what the old text found.
func TestEditedPromptOverrideReviewsAgain(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{nilDeref})
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	root := t.TempDir()
	cache := &memCache{m: map[string][]byte{}}
	base := fileText(20)
	in := Input{Path: "demo.go", Language: "go", Base: base, Current: strings.Replace(base, "func f10() int {\n\treturn 10\n}", "func f10(x *T) int {\n\treturn x.Value\n}", 1)}
	reviewWith := func(override string) Result {
		t.Helper()
		writeFile(t, root, ".kody/prompts/review_analyze_user.tmpl", override)
		r, problems := ForWorkspace(Workspace{Root: root, Gateway: g, Cache: cache})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		res, err := r.Review(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	const v2 = "{{/* version: 2 */}}\nReview the change to {{.FileName}}.\n{{fence \"\" .Patch}}\n"
	reviewWith(v2)
	if res := reviewWith(v2); res.CachedHunks != 1 {
		t.Fatalf("the same override: %d of %d hunks cached", res.CachedHunks, res.Hunks)
	}
	analyses := scripts.Analyze.Times()
	res := reviewWith(strings.Replace(v2, "Review the change", "Look for nil dereferences in the change", 1))
	if res.CachedHunks != 0 || scripts.Analyze.Times() != analyses+1 {
		t.Fatalf("override edited, same version: %d hunks cached, %d new analyses; want the hunk reviewed again", res.CachedHunks, scripts.Analyze.Times()-analyses)
	}
}
