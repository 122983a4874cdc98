package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const (
	pyPRRuleMD  = "---\ntitle: Python PR rule\nuuid: py-pr\nseverity: high\nscope: pull_request\nlanguages: [python]\n---\n## Instructions\n\nA change to a Python module updates its docstring.\n"
	apiPRRuleMD = "---\ntitle: API PR rule\nuuid: api-pr\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\n## Instructions\n\nA change to an API handler comes with its test.\n"
)

// prViolation is a violation the pull-request check reports: rule is its
// 1-based position in the prompt.
func prViolation(rule int, file, code string, line int) map[string]any {
	return map[string]any{
		"rule": rule, "file": file, "reason": "The rule is broken in " + file + ".", "suggestionContent": "Fix it.",
		"existingCode": code, "improvedCode": code, "oneSentenceSummary": "broken", "relevantLinesStart": line, "relevantLinesEnd": line,
	}
}

// prReview runs `kodyls review --format json` in dir against fake, which
// must already answer the pull-request check.
func prReview(t *testing.T, fake *llmtest.Server, dir string) report.Report {
	t.Helper()
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, dir, "review", "--format", "json")
	if code != 0 {
		t.Fatalf("review: code %d\n%s%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	return rep
}

func prFake(t *testing.T, violations ...map[string]any) (*llmtest.Server, *llmtest.Script) {
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("No plan: the diff is enough."))
	if violations == nil {
		violations = []map[string]any{}
	}
	judged := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": violations}))
	return fake, judged
}

// TestReviewPullRequestRuleOnlyForItsLanguages: a pull-request rule for
// Python is not judged over a change to Go files alone, and the Go files
// get none of its violations.
func TestReviewPullRequestRuleOnlyForItsLanguages(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/pypr.md": pyPRRuleMD, "main.go": reviewGo})
	repo.Write(map[string]string{"main.go": strings.Replace(reviewGo, "sum := 0", "sum := 1", 1)})
	fake, judged := prFake(t, prViolation(1, "main.go", "sum := 1", 6))
	rep := prReview(t, fake, repo.Dir)
	if judged.Times() != 0 {
		t.Errorf("the Python rule was judged %d times over a change to Go files", judged.Times())
	}
	for _, f := range rep.Findings {
		if f.RuleID == "py-pr" {
			t.Errorf("the Python rule's violation is reported on %s", f.File)
		}
	}
}

// TestReviewPullRequestRuleViolationsOnlyWhereItReaches: the model sees
// the whole change set, but a violation it reports on a file outside the
// rule's languages or paths is dropped; those on the files the rule is
// about are reported.
func TestReviewPullRequestRuleViolationsOnlyWhereItReaches(t *testing.T) {
	const handler = "package api\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n"
	const tool = "def gen():\n    return 1\n"
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/a-pypr.md": pyPRRuleMD, ".kody/rules/b-api.md": apiPRRuleMD,
		"api/orders.go": handler, "tools/gen.py": tool, "main.go": reviewGo,
	})
	repo.Write(map[string]string{
		"api/orders.go": strings.Replace(handler, "\"orders\"", "\"all orders\"", 1),
		"tools/gen.py":  strings.Replace(tool, "return 1", "return 2", 1),
		"main.go":       strings.Replace(reviewGo, "sum := 0", "sum := 1", 1),
	})
	fake, judged := prFake(t,
		prViolation(1, "api/orders.go", "return \"all orders\"", 4), // Python rule on Go: dropped
		prViolation(1, "tools/gen.py", "return 2", 2),               // kept
		prViolation(2, "main.go", "sum := 1", 6),                    // API rule outside api/: dropped
		prViolation(2, "api/orders.go", "return \"all orders\"", 4), // kept
	)
	rep := prReview(t, fake, repo.Dir)
	if judged.Times() != 1 {
		t.Fatalf("the pull-request check ran %d times, want once", judged.Times())
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() != review.SchemaPullRequestRules {
			continue
		}
		body := string(r.Body)
		if py, api := strings.Index(body, "Python PR rule"), strings.Index(body, "API PR rule"); py < 0 || api < 0 || py > api {
			t.Fatalf("the scripted violations assume the Python rule first, then the API rule:\n%s", body)
		}
	}
	var got []string
	for _, f := range rep.Findings {
		if f.RuleID != "" {
			got = append(got, f.RuleID+" "+f.File)
		}
	}
	if want := []string{"api-pr api/orders.go", "py-pr tools/gen.py"}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("rule findings %q, want %q", got, want)
	}
}

// TestRulesTestKeepsToTheRuleLanguages: `rules test` checks a rule only on
// the files of its languages, as `kodyls review` does, and says so of a
// file named explicitly.
func TestRulesTestKeepsToTheRuleLanguages(t *testing.T) {
	rule := strings.Replace(lsptest.RuleFile("PyOnly", "py-only", "high", "**", `TODO1`), "scope: file\n", "scope: file\nlanguages: [python]\n", 1)
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/py-only.md": rule,
		"src/a.go":               "package src\n",
		"src/a_test.go":          "package src\n",
		"src/c.ts":               "export {};\n",
		"sub/b.py":               "x = 1\n",
	})
	repo.Write(map[string]string{
		"src/a.go":      "package src\n\n// TODO1\n",
		"src/a_test.go": "package src\n\n// TODO1\n",
		"src/c.ts":      "export {};\n// TODO1\n",
		"sub/b.py":      "x = 1\n# TODO1\n",
	})
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "PyOnly")
	if code != 1 || out != "sub/b.py:2:3: PyOnly: TODO1\n" {
		t.Errorf("changed files: code %d, want 1 and the Python file alone\n%s%s", code, out, errOut)
	}
	review, _, _ := runBin(t, env, repo.Dir, "review", "--offline")
	if !strings.Contains(review, "sub/b.py:2:3") || strings.Contains(review, "src/") {
		t.Errorf("review disagrees with rules test:\n%s", review)
	}
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "test", "PyOnly", "src/a.go", "sub/b.py")
	if code != 1 || out != "sub/b.py:2:3: PyOnly: TODO1\n" || !strings.Contains(errOut, "src/a.go: not checked: outside the rule's languages python") {
		t.Errorf("named files: code %d\n%s%s", code, out, errOut)
	}
}

// TestRulesTestShowsTheModelExplanation: for a rule the model checks, the
// text output gives the model's explanation under the violation, as
// `kodyls review` does.
func TestRulesTestShowsTheModelExplanation(t *testing.T) {
	const naming = "---\ntitle: Package naming\nuuid: pkg-naming\nseverity: low\n---\n## Instructions\n\nPackage names are short, lower case, one word.\n"
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/naming.md": naming, "new.go": "package old\n"})
	repo.Write(map[string]string{"new.go": "package my_Package\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Rules(fake, nil, reviewtest.RuleViolation{
		Rule: 1, Reason: "my_Package mixes case and an underscore.", SuggestionContent: "Call it mypackage.",
		ExistingCode: "package my_Package", ImprovedCode: "package mypackage", OneSentenceSummary: "rename the package", RelevantLinesStart: 1, RelevantLinesEnd: 1,
	})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "Package naming", "new.go")
	want := "new.go:1:1: Package naming: package my_Package\n    my_Package mixes case and an underscore.\n\n    Call it mypackage.\n"
	if code != 1 || out != want {
		t.Errorf("code %d\ngot\n%s\nwant\n%s%s", code, out, want, errOut)
	}
}

// TestRulesTestPullRequestRuleKeepsToItsReach: `rules test` of a
// pull-request rule judges the files its languages and paths reach, as a
// review does: a named file outside them is said to be not checked, and
// the model is not asked about a change the rule does not reach.
func TestRulesTestPullRequestRuleKeepsToItsReach(t *testing.T) {
	const tool = "def gen():\n    return 1\n"
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/pypr.md": pyPRRuleMD, "main.go": reviewGo, "tools/gen.py": tool})
	repo.Write(map[string]string{
		"main.go":      strings.Replace(reviewGo, "sum := 0", "sum := 1", 1),
		"tools/gen.py": strings.Replace(tool, "return 1", "return 2", 1),
	})
	fake, judged := prFake(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	files := func(out string) []string {
		t.Helper()
		var got struct {
			Files []string `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		return got.Files
	}

	out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "--json", "py-pr", "main.go")
	if code != 0 || len(files(out)) != 0 || !strings.Contains(errOut, "main.go: not checked: outside the rule's languages python") {
		t.Errorf("a Go file named: code %d, files %v\n%s", code, files(out), errOut)
	}
	if judged.Times() != 0 {
		t.Errorf("the model judged the Python rule over a Go change %d times", judged.Times())
	}
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "test", "--json", "py-pr")
	if got := files(out); code != 0 || len(got) != 1 || got[0] != "tools/gen.py" {
		t.Errorf("the changed files: code %d, judged %v, want the Python file alone\n%s", code, got, errOut)
	}
}
