package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const (
	printfRule  = "22222222-3333-4444-8555-666666666666"
	errorsIsID  = "33333333-4444-4555-8666-777777777777"
	disabledID  = "44444444-5555-4666-8777-888888888888"
	modelRuleMD = "---\ntitle: Prefer errors.Is\nuuid: " + errorsIsID + "\nseverity: medium\npath: [\"**/*.go\"]\n---\n" +
		"## Instructions\n\nCompare errors with errors.Is, never with ==, so that wrapped errors match.\n\n" +
		"## Examples\n### Bad example\n```go\nif err == io.EOF {}\n```\n### Good example\n```go\nif errors.Is(err, io.EOF) {}\n```\n"
	disabledRuleMD = "---\ntitle: Explain exported names\nuuid: " + disabledID + "\nseverity: low\nenabled: false\n---\n" +
		"## Instructions\n\nEvery exported name has a doc comment that says why it exists.\n"
	// badRegexMD's pattern uses a lookahead, which RE2 rejects.
	badRegexMD = "---\ntitle: Bad regex\nseverity: high\ndetector:\n  type: regex\n  pattern: 'a(?=b)'\n---\nbody\n"
	badYAMLMD  = "---\ntitle: [unclosed\n---\nbody\n"
)

// rulesRepo has a detector rule, an enabled and a disabled model rule, and
// the given extra files.
func rulesRepo(t *testing.T, extra map[string]string) *lsptest.Repo {
	files := map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		".kody/rules/errors-is.md":  modelRuleMD,
		".kody/rules/docs.md":       disabledRuleMD,
		"main.go":                   mainGo,
	}
	for k, v := range extra {
		files[k] = v
	}
	return lsptest.NewRepo(t, files)
}

type rulesListJSON struct {
	Rules []struct {
		UUID     string   `json:"uuid"`
		Title    string   `json:"title"`
		Source   string   `json:"source"`
		File     string   `json:"file"`
		Line     int      `json:"line"`
		Scope    string   `json:"scope"`
		Paths    []string `json:"paths"`
		Severity string   `json:"severity"`
		Enabled  bool     `json:"enabled"`
		Check    string   `json:"check"`
		Tokens   int      `json:"tokens"`
	} `json:"rules"`
	TotalTokens int `json:"totalTokens"`
	Broken      []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Message string `json:"message"`
	} `json:"broken"`
}

func TestRulesList(t *testing.T) {
	repo := rulesRepo(t, map[string]string{".kody/rules/bad.md": badRegexMD})
	env := testEnv(t)

	out, errOut, code := runBin(t, env, repo.Dir, "rules", "list")
	if code != 0 {
		t.Fatalf("list with a broken rule file must not fail: code %d\n%s%s", code, out, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(printlnRule + `\s+No fmt\.Println\s+kody-md\s+\.kody/rules/no-println\.md:1\s+file\s+\*\*/\*\.go\s+high\s+yes\s+detector\s+\d+`),
		regexp.MustCompile(errorsIsID + `\s+Prefer errors\.Is\s+kody-md\s+\.kody/rules/errors-is\.md:1\s+file\s+\*\*/\*\.go\s+medium\s+yes\s+model\s+[1-9]\d*`),
		regexp.MustCompile(disabledID + `\s+Explain exported names\s+kody-md\s+\.kody/rules/docs\.md:1\s+file\s+\(all files\)\s+low\s+no\s+model\s+[1-9]\d*`),
		regexp.MustCompile(`active rule set .* is [1-9]\d* tokens for gpt-4o`),
	} {
		if !want.MatchString(out) {
			t.Errorf("list output does not match %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, ".kody/rules/bad.md:6:3: invalid detector pattern") || strings.Contains(out, "bad.md") {
		t.Errorf("the broken rule file must be reported on stderr only:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}

	out, errOut, code = runBin(t, env, repo.Dir, "rules", "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: code %d\n%s%s", code, out, errOut)
	}
	var got rulesListJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(got.Rules) != 3 {
		t.Fatalf("list --json: %d rules, want 3\n%s", len(got.Rules), out)
	}
	sum := 0
	checks := map[string]string{}
	for _, r := range got.Rules {
		checks[r.UUID] = r.Check
		if r.Source != "kody-md" || r.Line != 1 || r.Scope != "file" || r.Paths == nil || r.Tokens <= 0 {
			t.Errorf("rule %s: %+v", r.UUID, r)
		}
		if r.Enabled && r.Check == "model" {
			sum += r.Tokens
		}
	}
	want := map[string]string{printlnRule: "detector", errorsIsID: "model", disabledID: "model"}
	for id, c := range want {
		if checks[id] != c {
			t.Errorf("rule %s: check %q, want %q", id, checks[id], c)
		}
	}
	if got.TotalTokens != sum || sum == 0 {
		t.Errorf("totalTokens %d, want the enabled model rules' %d", got.TotalTokens, sum)
	}
	if len(got.Broken) != 1 || got.Broken[0].File != ".kody/rules/bad.md" || got.Broken[0].Line != 6 || got.Broken[0].Column != 3 ||
		!strings.Contains(got.Broken[0].Message, "lookahead") {
		t.Errorf("broken: %+v", got.Broken)
	}
}

func TestRulesListEmptyWorkspace(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runBin(t, testEnv(t), t.TempDir(), "rules", "list", "--workspace", dir)
	if code != 0 || !strings.Contains(out, "No Kody Rules") || !strings.Contains(out, ".kody/rules") {
		t.Errorf("code %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runBin(t, testEnv(t), dir, "rules", "list", "--workspace", dir+"/missing"); code != 2 || !strings.Contains(errOut, "not a directory") {
		t.Errorf("missing workspace: code %d %q", code, errOut)
	}
}

func TestRulesCheck(t *testing.T) {
	repo := rulesRepo(t, nil)
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "check")
	if code != 0 || out != "" || !strings.Contains(errOut, "3 rule(s) loaded, 0 error(s), 0 warning(s)") {
		t.Fatalf("clean rule set: code %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	// A warning is printed but the rule still loads: the check passes.
	repo.Write(map[string]string{".kody/rules/warn.md": "---\ntitle: Unknown key\ncolour: blue\nseverity: low\n---\nBody.\n"})
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "check")
	if code != 0 || !strings.HasPrefix(out, ".kody/rules/warn.md:3:1: warning: ") || !strings.Contains(out, "colour") {
		t.Fatalf("warning only: code %d, want 0\nstdout %q\nstderr %q", code, out, errOut)
	}
	if err := os.Remove(filepath.Join(repo.Dir, ".kody/rules/warn.md")); err != nil {
		t.Fatal(err)
	}

	repo.Write(map[string]string{".kody/rules/bad.md": badRegexMD, ".kody/rules/yaml.md": badYAMLMD})
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "check")
	if code != 1 {
		t.Fatalf("broken rule set: code %d, want 1\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], ".kody/rules/bad.md:6:3: invalid detector pattern") ||
		!strings.HasPrefix(lines[1], ".kody/rules/yaml.md:") || !strings.Contains(lines[1], "YAML") {
		t.Errorf("want file:line:col: message per problem, got:\n%s", out)
	}
	for _, l := range lines {
		if !regexp.MustCompile(`^\.kody/rules/\w+\.md:\d+:\d+: \S`).MatchString(l) {
			t.Errorf("not file:line:col: message: %q", l)
		}
	}

	out, _, code = runBin(t, env, repo.Dir, "rules", "check", "--json")
	var got struct {
		Rules    int `json:"rules"`
		Problems []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Column  int    `json:"column"`
			Message string `json:"message"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 || got.Rules != 3 || len(got.Problems) != 2 || got.Problems[0].Line != 6 {
		t.Errorf("check --json: code %d err %v\n%s", code, err, out)
	}

	// Every problem of a file is printed, not only the first.
	if err := os.Remove(filepath.Join(repo.Dir, ".kody/rules/yaml.md")); err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{".kody/rules/bad.md": "---\ntitle: Three problems\nseverity: urgent\nscope: repo\ndetector:\n  type: glob\n  pattern: x\n---\nBody.\n"})
	out, _, code = runBin(t, env, repo.Dir, "rules", "check")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[0], ".kody/rules/bad.md:3:") || !strings.Contains(lines[0], "urgent") ||
		!strings.HasPrefix(lines[1], ".kody/rules/bad.md:4:") || !strings.Contains(lines[1], "repo") ||
		!strings.HasPrefix(lines[2], ".kody/rules/bad.md:6:") {
		t.Errorf("a file with three problems: code %d, want 1 and the three, in order:\n%s", code, out)
	}
}

func TestRulesTest(t *testing.T) {
	// The emoji is two UTF-16 code units and four bytes: the column after
	// it tells UTF-16 columns from byte or rune ones.
	const bad = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\t_ = \"😀\"; fmt.Println(\"x\")\n\tfmt.Println(\"y\")\n}\n"
	repo := rulesRepo(t, map[string]string{
		".kody/rules/no-printf.md": lsptest.RuleFile("No fmt.Printf", printfRule, "low", "**/*.go", `fmt\.Printf\(`),
		"bad.go":                   bad,
		"clean.go":                 mainGo,
		"notes.txt":                "fmt.Println(\"not go\")\n",
	})
	env := testEnv(t)

	out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "Println", "bad.go", "clean.go")
	if code != 1 {
		t.Fatalf("violations found: code %d, want 1\n%s%s", code, out, errOut)
	}
	want := "bad.go:6:12: No fmt.Println: fmt.Println(\nbad.go:7:2: No fmt.Println: fmt.Println(\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}

	// A uuid prefix names the rule as well; flags may follow the arguments.
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "test", printlnRule[:8], "bad.go", "--json")
	var got struct {
		Rule struct {
			UUID string `json:"uuid"`
		} `json:"rule"`
		Check      string `json:"check"`
		Violations []struct {
			File      string `json:"file"`
			Line      int    `json:"line"`
			Column    int    `json:"column"`
			EndColumn int    `json:"endColumn"`
			Match     string `json:"match"`
		} `json:"violations"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("--json: code %d err %v\n%s%s", code, err, out, errOut)
	}
	if got.Rule.UUID != printlnRule || got.Check != "detector" || len(got.Violations) != 2 ||
		got.Violations[0].Line != 6 || got.Violations[0].Column != 12 || got.Violations[0].EndColumn != 24 {
		t.Errorf("--json: %+v", got)
	}

	if out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", printlnRule, "clean.go"); code != 0 || out != "" || !strings.Contains(errOut, "0 violation(s)") {
		t.Errorf("no violations: code %d\n%s%s", code, out, errOut)
	}
	// The rule's globs still choose the files, and the user is told.
	if _, errOut, code := runBin(t, env, repo.Dir, "rules", "test", printlnRule, "notes.txt"); code != 0 || !strings.Contains(errOut, "notes.txt: not checked: outside the rule's paths **/*.go") {
		t.Errorf("file outside the globs: code %d %q", code, errOut)
	}

	// Without FILEs, the files changed in the working tree are tested.
	repo.Write(map[string]string{"clean.go": strings.Replace(mainGo, "fmt.Print(", "fmt.Println(", 1), "new.go": "package main\n"})
	out, errOut, code = runBin(t, env, repo.Dir, "rules", "test", "No fmt.Println")
	if code != 1 || out != "clean.go:6:2: No fmt.Println: fmt.Println(\n" {
		t.Errorf("changed files: code %d\n%s%s", code, out, errOut)
	}

	_, errOut, code = runBin(t, env, repo.Dir, "rules", "test", "no fmt", "bad.go")
	if code != 2 || !strings.Contains(errOut, printlnRule) || !strings.Contains(errOut, printfRule) {
		t.Errorf("ambiguous RULE: code %d, want 2 listing both rules\n%s", code, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "nothing like it"); code != 2 || !strings.Contains(errOut, "no rule matches") {
		t.Errorf("unknown RULE: code %d %q", code, errOut)
	}
	if _, _, code := runBin(t, env, repo.Dir, "rules", "test"); code != 2 {
		t.Errorf("missing RULE: code %d, want 2", code)
	}

	out, _, code = runBin(t, env, repo.Dir, "rules", "test", "errors.Is", "bad.go")
	if code != 0 || !strings.Contains(out, "only the model checks it") || !strings.Contains(out, "KODYLS_LLM_BASE_URL") {
		t.Errorf("model rule offline: code %d\n%s", code, out)
	}

	// With a model, the rule alone is judged on the whole file and what the
	// model reports is anchored on its line.
	fake := llmtest.NewServer()
	defer fake.Close()
	check := reviewtest.Rules(fake, nil, reviewtest.RuleViolation{
		Rule: 1, Reason: "Printing is not error handling.", SuggestionContent: "Return the error.",
		ExistingCode: "fmt.Println(\"y\")", ImprovedCode: "return err", OneSentenceSummary: "handle the error", RelevantLinesStart: 7, RelevantLinesEnd: 7,
	})
	withModel := append(slices.Clone(env), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code = runBin(t, withModel, repo.Dir, "rules", "test", "errors.Is", "bad.go")
	if code != 1 || out != "bad.go:7:2: Prefer errors.Is: fmt.Println(\"y\")\n    Printing is not error handling.\n\n    Return the error.\n" || check.Check.Times() != 1 {
		t.Errorf("model rule: code %d, %d checks\n%s%s", code, check.Check.Times(), out, errOut)
	}
	for _, rec := range fake.Requests() {
		if body := string(rec.Body); strings.Contains(body, review.SchemaKodyRules) && strings.Contains(body, "No fmt.Printf") {
			t.Error("another rule reached the model while one rule was tested")
		}
	}
}

func TestRulesUsage(t *testing.T) {
	env := testEnv(t)
	if _, errOut, code := runBin(t, env, t.TempDir(), "rules"); code != 2 || !strings.Contains(errOut, "kodyls rules list") {
		t.Errorf("no subcommand: code %d %q", code, errOut)
	}
	if _, errOut, code := runBin(t, env, t.TempDir(), "rules", "lst"); code != 2 || !strings.Contains(errOut, `unknown subcommand "lst"`) {
		t.Errorf("unknown subcommand: code %d %q", code, errOut)
	}
	if out, _, code := runBin(t, env, t.TempDir(), "help"); code != 0 || !strings.Contains(out, "rules     list, check or test") {
		t.Errorf("usage lacks the rules command:\n%s", out)
	}
}

// TestRulesTestPullRequestRule: a pull-request rule is tested the way
// reviews judge it, once over the files together with the pull-request
// check, not file by file with the file check; the changed files are the
// default. A violation found exits 1, as for any rule.
func TestRulesTestPullRequestRule(t *testing.T) {
	repo := rulesRepo(t, map[string]string{
		".kody/rules/handler-tests.md": "---\ntitle: Handlers change with their tests\nuuid: handler-tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\n## Instructions\nA change to a handler comes with a change to its test.\n",
		"api/orders.go":                "package api\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n",
	})
	repo.Write(map[string]string{"api/orders.go": "package api\n\nfunc Orders() string {\n\treturn \"all orders\"\n}\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("No plan: the diff is enough."))
	judged := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []map[string]any{{
		"rule": 1, "file": "api/orders.go", "reason": "Orders changed and its test did not.", "suggestionContent": "Test it.",
		"existingCode": "return \"all orders\"", "improvedCode": "return \"all orders\"", "oneSentenceSummary": "untested change", "relevantLinesStart": 4, "relevantLinesEnd": 4,
	}}}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	for _, args := range [][]string{{"rules", "test", "handler-tests", "api/orders.go"}, {"rules", "test", "handler-tests"}} {
		out, errOut, code := runBin(t, env, repo.Dir, args...)
		if code != 1 || !strings.Contains(out, "api/orders.go:4:2: Handlers change with their tests: return \"all orders\"") || strings.Contains(errOut, "note:") {
			t.Errorf("%v: code %d\n%s%s", args, code, out, errOut)
		}
	}
	if judged.Times() != 2 {
		t.Errorf("the pull-request check ran %d times, want once per run", judged.Times())
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == review.SchemaKodyRules {
			t.Error("the rule was judged with the file check")
		}
	}
}
