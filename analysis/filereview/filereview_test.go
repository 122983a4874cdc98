package filereview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/prompts"
)

type memCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *memCache) Get(_ context.Context, k string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok, nil
}

func (c *memCache) Put(_ context.Context, k string, v []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
	return nil
}

// fileText builds a Go file of n filler functions with body lines.
func fileText(n int) string {
	var b strings.Builder
	b.WriteString("package demo\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "func f%d() int {\n\treturn %d\n}\n\n", i, i)
	}
	return b.String()
}

func newReviewer(t *testing.T, fake *llmtest.Server) *Reviewer {
	t.Helper()
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	gt, _ := gate.New(gate.Options{})
	return &Reviewer{
		Pipeline:   review.New(g, review.Options{Prompts: prompts.Builtin(), Config: kodusconfig.Default()}),
		Gate:       gt,
		Cache:      &memCache{m: map[string][]byte{}},
		Model:      "fake-model",
		PromptsKey: PromptsKey(prompts.Builtin()),
	}
}

var nilDeref = reviewtest.Suggestion{
	SuggestionContent:  "x may be nil here; check it before use.",
	ExistingCode:       "return x.Value",
	ImprovedCode:       "if x == nil {\n\t\treturn 0\n\t}\n\treturn x.Value",
	OneSentenceSummary: "Guard against a nil x",
	RelevantLinesStart: 43, RelevantLinesEnd: 43,
	Label: "bug", Severity: "high",
}

func TestReviewAnchorsAndCachesPerHunk(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{nilDeref})
	r := newReviewer(t, fake)
	ctx := context.Background()

	base := fileText(20)
	current := strings.Replace(base, "func f10() int {\n\treturn 10\n}", "func f10(x *T) int {\n\treturn x.Value\n}", 1)
	res, err := r.Review(ctx, Input{Path: "demo.go", Language: "go", Base: base, Current: current})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("findings %+v degraded %v", res.Findings, res.Degraded)
	}
	f := res.Findings[0]
	wantLine := strings.Count(current[:strings.Index(current, "return x.Value")], "\n")
	if f.Span.StartLine != wantLine || current[f.Span.Start:f.Span.End] != "return x.Value" {
		t.Fatalf("anchored at line %d %q, want line %d", f.Span.StartLine, current[f.Span.Start:f.Span.End], wantLine)
	}
	calls := scripts.Calls()

	// The same text again: zero LLM calls.
	res2, err := r.Review(ctx, Input{Path: "demo.go", Language: "go", Base: base, Current: current})
	if err != nil || scripts.Calls() != calls || res2.CachedHunks != 1 || len(res2.Findings) != 1 {
		t.Fatalf("second review: calls %d→%d cached %d findings %d err %v", calls, scripts.Calls(), res2.CachedHunks, len(res2.Findings), err)
	}

	// Lines typed far above move the hunk; it is still cached and the
	// finding follows it.
	moved := strings.Replace(current, "package demo\n", "package demo\n\n// a\n// b\n// c\n", 1)
	base2 := strings.Replace(base, "package demo\n", "package demo\n\n// a\n// b\n// c\n", 1)
	res3, err := r.Review(ctx, Input{Path: "demo.go", Language: "go", Base: base2, Current: moved})
	if err != nil || scripts.Calls() != calls {
		t.Fatalf("moved hunk cost calls: %d→%d (%v)", calls, scripts.Calls(), err)
	}
	if res3.Findings[0].Span.StartLine != wantLine+4 {
		t.Fatalf("moved finding on line %d, want %d", res3.Findings[0].Span.StartLine, wantLine+4)
	}
}

func TestOnlyChangedHunksAreReviewedAgain(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, nil)
	r := newReviewer(t, fake)
	ctx := context.Background()
	base := fileText(30)
	cur := strings.Replace(base, "return 3\n", "return 33\n", 1)
	cur = strings.Replace(cur, "return 25\n", "return 2525\n", 1)
	if res, err := r.Review(ctx, Input{Path: "demo.go", Base: base, Current: cur}); err != nil || res.Hunks != 2 {
		t.Fatalf("hunks %d err %v", res.Hunks, err)
	}
	before := scripts.Analyze.Times()
	cur2 := strings.Replace(cur, "return 2525\n", "return 252525\n", 1)
	res, err := r.Review(ctx, Input{Path: "demo.go", Base: base, Current: cur2})
	if err != nil || res.CachedHunks != 1 {
		t.Fatalf("cached hunks %d err %v", res.CachedHunks, err)
	}
	if scripts.Analyze.Times() != before+1 {
		t.Fatalf("analyze calls %d→%d, want one more", before, scripts.Analyze.Times())
	}
	reqs := fake.ChatRequests()
	last := ""
	for _, rq := range reqs {
		if rq.Chat.SchemaName() == review.SchemaAnalyze {
			last = rq.Chat.Text()
		}
	}
	if !strings.Contains(last, "252525") || strings.Contains(last, "return 33") {
		t.Fatalf("the second analysis should carry only the edited hunk:\n%s", last)
	}
}

func TestDegradedReviewIsNotCached(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, nil, llmtest.ServerError())
	r := newReviewer(t, fake)
	base := fileText(3)
	cur := strings.Replace(base, "return 1\n", "return 11\n", 1)
	res, err := r.Review(context.Background(), Input{Path: "demo.go", Base: base, Current: cur})
	if err != nil || len(res.Degraded) == 0 {
		t.Fatalf("degraded %v err %v", res.Degraded, err)
	}
	n := scripts.Analyze.Times()
	r.Review(context.Background(), Input{Path: "demo.go", Base: base, Current: cur})
	if scripts.Analyze.Times() == n {
		t.Fatal("a failed analysis was cached")
	}
}

func TestGateAndOffline(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	r := newReviewer(t, fake)
	res, err := r.Review(context.Background(), Input{Path: "go.sum", Base: "", Current: "x v1 h1:abc\n"})
	if err != nil || res.Skipped != "lock file" {
		t.Fatalf("go.sum: skipped %q err %v", res.Skipped, err)
	}
	r.Pipeline = nil
	res, err = r.Review(context.Background(), Input{Path: "new.go", Base: "", Current: "package x\n"})
	if !errors.Is(err, ErrOffline) || len(res.Findings) != 0 || fake.CountChat() != 0 {
		t.Fatalf("offline: %v findings %d calls %d", err, len(res.Findings), fake.CountChat())
	}
}

func TestUnanchorableFindingIsDropped(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	ghost := nilDeref
	ghost.ExistingCode = "this code is nowhere"
	ghost.RelevantLinesStart, ghost.RelevantLinesEnd = 9000, 9001
	reviewtest.Script(fake, []reviewtest.Suggestion{ghost})
	r := newReviewer(t, fake)
	base := fileText(3)
	cur := strings.Replace(base, "return 1\n", "return 11\n", 1)
	res, err := r.Review(context.Background(), Input{Path: "demo.go", Base: base, Current: cur})
	if err != nil || len(res.Findings) != 0 || res.Unanchored+len(res.Discarded) == 0 {
		t.Fatalf("a finding with neither code nor valid lines must not be shown: %+v unanchored %d discarded %+v", res.Findings, res.Unanchored, res.Discarded)
	}
}

// TestBrokenKodusConfigReportedOnce: kodus-config.yml is read for the review
// options and for the prompt overrides; a YAML error in it is one problem.
func TestBrokenKodusConfigReportedOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "kodus-config.yml"), []byte("reviewOptions:\n  kody_rules: [oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems := ForWorkspace(Workspace{Root: root})
	if len(problems) != 1 || !strings.Contains(problems[0], "kodus-config.yml:2: invalid YAML") {
		t.Fatalf("problems: %q", problems)
	}
}

// TestPlacesKeepTheirIDsAcrossCachedHunks: the same suggestion at two
// places of a file is two findings with ids of their own, and each place
// keeps its id when only the other's hunk is reviewed again (its own comes
// from the cache); the model naming one place twice, a line off, is still
// one finding.
func TestPlacesKeepTheirIDsAcrossCachedHunks(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	at := func(line int) reviewtest.Suggestion {
		s := nilDeref
		s.RelevantLinesStart, s.RelevantLinesEnd = line, line
		return s
	}
	// f3's body is line 16 and f25's line 104; the model is shown the
	// hunks that changed and names the places in them.
	fake.On(llmtest.All(llmtest.SchemaName(review.SchemaAnalyze), llmtest.PromptContains("f3(x *T)"), llmtest.PromptContains("f25(x *T)")),
		llmtest.JSON(map[string]any{"codeSuggestions": []reviewtest.Suggestion{at(16), at(104), at(17)}}))
	fake.On(llmtest.All(llmtest.SchemaName(review.SchemaAnalyze), llmtest.PromptContains("f25(x *T)")),
		llmtest.JSON(map[string]any{"codeSuggestions": []reviewtest.Suggestion{at(104)}}))
	reviewtest.Script(fake, nil)
	r := newReviewer(t, fake)
	ctx := context.Background()
	base := fileText(30)
	cur := strings.Replace(base, "func f3() int {\n\treturn 3\n", "func f3(x *T) int {\n\treturn x.Value\n", 1)
	cur = strings.Replace(cur, "func f25() int {\n\treturn 25\n", "func f25(x *T) int {\n\treturn x.Value\n", 1)
	ids := func(text string) map[int]string {
		t.Helper()
		res, err := r.Review(ctx, Input{Path: "demo.go", Language: "go", Base: base, Current: text})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int]string{}
		for _, f := range res.Findings {
			if _, dup := out[f.Span.StartLine+1]; dup {
				t.Fatalf("two findings on line %d: %+v", f.Span.StartLine+1, res.Findings)
			}
			out[f.Span.StartLine+1] = f.ID
		}
		return out
	}
	first := ids(cur)
	if len(first) != 2 || first[16] == "" || first[104] == "" || first[16] == first[104] {
		t.Fatalf("first review: %v, want lines 16 and 104 with ids of their own", first)
	}
	// Only f25's hunk changes; f3's comes from the cache.
	second := ids(strings.Replace(cur, "func f25(x *T) int {", "func f25(x *T) int { // checked", 1))
	if second[16] != first[16] || second[104] != first[104] || len(second) != 2 {
		t.Fatalf("after editing f25's hunk: %v, want the ids of the first review %v", second, first)
	}
}

// TestCachedReviewKeepsFindingsAtAndAboveTheHunkStart: a review answered
// from the cache shows the findings the fresh review showed, also those on
// the hunk's first line and above it, placed by the lines the model gave.
func TestCachedReviewKeepsFindingsAtAndAboveTheHunkStart(t *testing.T) {
	t.Run("rule violations in a new file", func(t *testing.T) {
		rule := mustRule(t, ".kody/rules/pkg.md", "---\ntitle: Package naming\nuuid: rule-pkg\npath: \"**/*.go\"\n---\nName packages well.\n")
		fake := llmtest.NewServer()
		defer fake.Close()
		scripts := reviewtest.Script(fake, nil)
		rs := reviewtest.Rules(fake, nil,
			reviewtest.RuleViolation{Rule: 1, Reason: "first line", OneSentenceSummary: "LINE1", RelevantLinesStart: 1, RelevantLinesEnd: 1},
			reviewtest.RuleViolation{Rule: 1, Reason: "third line", OneSentenceSummary: "LINE3", RelevantLinesStart: 3, RelevantLinesEnd: 3},
		)
		g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		r, problems := ForWorkspace(Workspace{Root: t.TempDir(), Gateway: g, Cache: &memCache{m: map[string][]byte{}}, Rules: []*rules.Rule{rule}})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		in := Input{Path: "new.go", Language: "go", Current: "package foo\n\nfunc F() {}\n"}
		first := reviewTwice(t, r, in, func() int { return scripts.Calls() + rs.Check.Times() + rs.Guardian.Times() })
		if lines := findingLines(first); lines != "1 3" {
			t.Fatalf("fresh review on lines %q, want \"1 3\": %+v", lines, first)
		}
	})

	t.Run("suggestions on the hunk's first line and above it", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		base := fileText(20)
		// f10's body is line 44; its hunk starts three lines above, on f9's
		// closing brace, which is one of twenty.
		current := strings.Replace(base, "\treturn 10\n", "\treturn 1010\n", 1)
		brace := nilDeref
		brace.ExistingCode, brace.OneSentenceSummary = "}", "brace"
		brace.RelevantLinesStart, brace.RelevantLinesEnd = 41, 41
		above := nilDeref
		above.ExistingCode, above.OneSentenceSummary = "package demo", "package"
		above.RelevantLinesStart, above.RelevantLinesEnd = 1, 1
		// Placed by its line alone, far from the hunk: dropped, fresh and
		// cached alike.
		byLine := nilDeref
		byLine.ExistingCode, byLine.OneSentenceSummary = "", "by line"
		byLine.RelevantLinesStart, byLine.RelevantLinesEnd = 1, 1
		scripts := reviewtest.Script(fake, []reviewtest.Suggestion{brace, above, byLine})
		r := newReviewer(t, fake)
		in := Input{Path: "demo.go", Language: "go", Base: base, Current: current}
		first := reviewTwice(t, r, in, scripts.Calls)
		if lines := findingLines(first); lines != "1 41" || slices.ContainsFunc(first, func(f Finding) bool { return f.OneSentenceSummary == "by line" }) {
			t.Fatalf("fresh review on lines %q, want \"1 41\" without the finding placed by its line outside the hunk: %+v", lines, first)
		}
		// Lines typed above move the hunk: the brace finding follows it.
		moved := func(text string) string {
			return strings.Replace(text, "package demo\n", "package demo\n\n// a\n// b\n// c\n", 1)
		}
		n := scripts.Calls()
		res, err := r.Review(context.Background(), Input{Path: "demo.go", Language: "go", Base: moved(base), Current: moved(current)})
		if err != nil || scripts.Calls() != n || !slices.ContainsFunc(res.Findings, func(f Finding) bool {
			return f.OneSentenceSummary == "brace" && f.Span.StartLine+1 == 45
		}) {
			t.Fatalf("moved hunk: calls %d→%d, findings on lines %q, want the brace on 45 (%v)", n, scripts.Calls(), findingLines(res.Findings), err)
		}
	})
}

// reviewTwice reviews in twice and fails unless the second review, which
// costs no model call, shows exactly the first one's findings.
func reviewTwice(t *testing.T, r *Reviewer, in Input, calls func() int) []Finding {
	t.Helper()
	ctx := context.Background()
	first, err := r.Review(ctx, in)
	if err != nil || len(first.Degraded) > 0 {
		t.Fatalf("fresh review: %v degraded %v", err, first.Degraded)
	}
	n := calls()
	second, err := r.Review(ctx, in)
	if err != nil || calls() != n || second.CachedHunks != second.Hunks {
		t.Fatalf("second review: calls %d→%d, cached hunks %d of %d, err %v", n, calls(), second.CachedHunks, second.Hunks, err)
	}
	if !reflect.DeepEqual(first.Findings, second.Findings) || second.Unanchored != first.Unanchored {
		t.Fatalf("the cached review differs from the fresh one:\nfresh  %s\ncached %s", findingLines(first.Findings), findingLines(second.Findings))
	}
	return first.Findings
}

// findingLines lists the 1-based lines findings start on.
func findingLines(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprint(f.Span.StartLine+1))
	}
	return strings.Join(out, " ")
}
