package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReviewFromTheCacheShowsTheSameFindings: a second `kodyls review` of
// the same change, answered from the cache with no model call, reports
// exactly the findings of the first, also one on the first line of a new
// file that the model placed by its line alone; --fail-on fails both times.
func TestReviewFromTheCacheShowsTheSameFindings(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/pkg.md": "---\ntitle: Package naming\nuuid: rule-pkg\nseverity: high\npath: \"**/*.go\"\n---\nPackages are named after what they provide.\n",
	})
	repo.Write(map[string]string{"new.go": "package foo\n\nfunc F() {}\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil,
		reviewtest.RuleViolation{Rule: 1, Reason: "foo says nothing", OneSentenceSummary: "LINE1", RelevantLinesStart: 1, RelevantLinesEnd: 1},
		reviewtest.RuleViolation{Rule: 1, Reason: "F says nothing", OneSentenceSummary: "LINE3", RelevantLinesStart: 3, RelevantLinesEnd: 3},
	)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	review := func() []report.Finding {
		t.Helper()
		out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json")
		if code != 0 {
			t.Fatalf("code %d\n%s%s", code, out, errOut)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		return rep.Findings
	}
	lines := func(fs []report.Finding) []int {
		var out []int
		for _, f := range fs {
			if f.File == "new.go" && f.RuleID == "rule-pkg" {
				out = append(out, f.StartLine)
			}
		}
		return out
	}

	fresh := review()
	if got := lines(fresh); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("fresh review: violations on lines %v, want [1 3]\n%+v", got, fresh)
	}
	calls := fake.CountChat()
	cached := review()
	if n := fake.CountChat() - calls; n != 0 {
		t.Fatalf("the second review made %d model calls, want 0", n)
	}
	if !reflect.DeepEqual(cached, fresh) {
		t.Fatalf("the review from the cache differs from the fresh one:\nfresh  %+v\ncached %+v", fresh, cached)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--fail-on", "high")
	if code != 1 || !strings.Contains(out, "new.go:1:1:") || !strings.Contains(out, "new.go:3:1:") || !strings.Contains(out, "2 findings") {
		t.Fatalf("text review from the cache: code %d\n%s%s", code, out, errOut)
	}
	if n := fake.CountChat() - calls; n != 0 {
		t.Fatalf("the third review made %d model calls, want 0", n)
	}
}
