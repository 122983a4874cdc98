package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const reviewGo = "package main\n\nimport \"fmt\"\n\nfunc total(items []int) int {\n\tsum := 0\n\tfor i := 0; i < len(items); i++ {\n\t\tsum += items[i]\n\t}\n\treturn sum\n}\n\nfunc main() {\n\tfmt.Print(total(nil))\n}\n"

var offByOne = reviewtest.Suggestion{
	SuggestionContent:  "Ranging over the slice avoids the index error.",
	ExistingCode:       "for i := 0; i <= len(items); i++ {",
	ImprovedCode:       "for _, it := range items {",
	OneSentenceSummary: "Use range instead of an off-by-one index loop",
	RelevantLinesStart: 7, RelevantLinesEnd: 7, Label: "bug", Severity: "critical",
}

// changedRepo is a repository with a committed file, then a working-tree
// change that both breaks a rule and contains a bug.
func changedRepo(t *testing.T) *lsptest.Repo {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"main.go":                   reviewGo,
	})
	changed := strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1)
	changed = strings.Replace(changed, "fmt.Print(total(nil))", "fmt.Println(total(nil))", 1)
	repo.Write(map[string]string{"main.go": changed, "notes/new.txt": "untracked but reviewed\n", "go.sum": "x v1 h1:abc=\n"})
	return repo
}

// TestReviewRuleForALanguageTheEditorNames: a rule meant for a language
// the error parsers do not know (languages: [ruby]) is checked by
// `kodyls review` as in an editor that opens the file as ruby.
func TestReviewRuleForALanguageTheEditorNames(t *testing.T) {
	rule := strings.Replace(lsptest.RuleFile("No puts", "no-puts", "high", "**/*.rb", `^\s*puts `), "scope: file\n", "scope: file\nlanguages: [ruby]\n", 1)
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/no-puts.md": rule, "app.rb": "def greet\n  1\nend\n"})
	repo.Write(map[string]string{"app.rb": "def greet\n  puts 1\nend\n"})
	out, errOut, code := runBin(t, testEnv(t), repo.Dir, "review", "--offline")
	if code != 0 || !strings.Contains(out, "app.rb:2:1: high kody_rules: No puts") {
		t.Fatalf("code %d, want the ruby rule's violation on app.rb:2\n%s%s", code, out, errOut)
	}
}

func TestReviewOffline(t *testing.T) {
	repo := changedRepo(t)
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--offline")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"main.go:14:2: high kody_rules: No fmt.Println", "go.sum: not reviewed: lock file", "offline: local Kody Rules only"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not checked offline") {
		t.Errorf("a detector rule reported as not checked:\n%s", out)
	}
	// A rule without a detector cannot be checked offline: the review says
	// so once instead of reporting silence as a pass.
	repo.Write(map[string]string{"AGENTS.md": "# Rules\n\n- Every exported function must have a doc comment.\n- Never ignore an error.\n"})
	out, _, _ = runBin(t, env, repo.Dir, "review", "--offline")
	if n := strings.Count(out, "2 Kody Rule(s) without a detector not checked offline"); n != 1 {
		t.Errorf("note on the rules not checked shown %d times:\n%s", n, out)
	}
	if err := os.Remove(filepath.Join(repo.Dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runBin(t, env, repo.Dir, "review", "--offline", "--fail-on", "high"); code != 1 {
		t.Errorf("--fail-on high with a high finding: exit %d, want 1", code)
	}
	if _, _, code := runBin(t, env, repo.Dir, "review", "--offline", "--fail-on", "critical"); code != 0 {
		t.Errorf("--fail-on critical without critical findings: exit %d, want 0", code)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "xml"); code != 2 || !strings.Contains(errOut, "use text, json or sarif") {
		t.Errorf("bad format: %d %q", code, errOut)
	}
	// --staged sees nothing until the change is staged.
	out, _, _ = runBin(t, env, repo.Dir, "review", "--offline", "--staged")
	if !strings.Contains(out, "0 findings in 0 changed files") {
		t.Errorf("--staged before git add:\n%s", out)
	}
	repo.Git("add", "main.go")
	out, _, _ = runBin(t, env, repo.Dir, "review", "--offline", "--staged", "--format", "json")
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Files) != 1 || len(rep.Findings) != 1 {
		t.Errorf("--staged after git add: %v\n%s", err, out)
	}
}

// TestReviewBeforeTheFirstCommit: in a repository with no commit yet every
// file is new, as in the editor; a --base that names nothing is still an
// error.
func TestReviewBeforeTheFirstCommit(t *testing.T) {
	repo := lsptest.NewRepo(t, nil)
	repo.Write(map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"main.go":                   strings.Replace(reviewGo, "fmt.Print(total(nil))", "fmt.Println(total(nil))", 1),
	})
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--offline")
	if code != 0 || !strings.Contains(out, "main.go:14:2: high kody_rules: No fmt.Println") {
		t.Errorf("working tree before the first commit: code %d\n%s%s", code, out, errOut)
	}
	repo.Git("add", "main.go")
	out, errOut, code = runBin(t, env, repo.Dir, "review", "--offline", "--staged")
	if code != 0 || !strings.Contains(out, "main.go:14:2: high kody_rules: No fmt.Println") || !strings.Contains(out, "1 finding in 1 changed file (") {
		t.Errorf("staged before the first commit: code %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "review", "--base", "main~1"); code != 2 || !strings.Contains(errOut, "is not a commit") {
		t.Errorf("--base main~1 with no commit: code %d, %q", code, errOut)
	}
}

func TestReviewWithModelJSONAndCacheAcrossRuns(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json", "main.go")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var bug *report.Finding
	for i, f := range rep.Findings {
		if f.Source == report.SourceReview {
			bug = &rep.Findings[i]
		}
	}
	if bug == nil || bug.File != "main.go" || bug.StartLine != 7 || bug.StartColumn != 2 || bug.ImprovedCode == "" || bug.Severity != "critical" {
		t.Fatalf("review finding %+v\n%s", bug, out)
	}
	calls := scripts.Calls()
	// A second process reviewing the same change makes no LLM call.
	if _, _, code := runBin(t, env, repo.Dir, "review", "--fail-on", "critical", "main.go"); code != 1 {
		t.Errorf("--fail-on critical with a critical finding: exit %d", code)
	}
	if scripts.Calls() != calls {
		t.Fatalf("the second run made %d LLM calls, want 0", scripts.Calls()-calls)
	}
}

func TestReviewSARIFValidates(t *testing.T) {
	schemaPath := os.Getenv("KODYLS_SARIF_SCHEMA")
	if schemaPath == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("KODYLS_SARIF_SCHEMA is not set; .ci/run fetches the SARIF 2.1.0 schema")
		}
		t.Skip("set KODYLS_SARIF_SCHEMA to the SARIF 2.1.0 JSON schema (see .ci/run)")
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := changedRepo(t)
	// File names that are no URI as they are: each is percent-encoded.
	odd := map[string]string{"#hash.go": "%23hash.go", "pct%20.go": "pct%2520.go", "sp ace.go": "sp%20ace.go", "c:x.go": "c%3Ax.go"}
	for name := range odd {
		repo.Write(map[string]string{name: "package main\n\nfunc init() { fmt.Println(1) }\n"})
	}
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "sarif")
	if code != 0 {
		t.Fatalf("code %d\n%s", code, errOut)
	}
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // artifactLocation.uri is a "uri-reference"
	url := "file://" + filepath.ToSlash(schemaPath)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("sarif is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF does not validate against the 2.1.0 schema: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"ruleId": "kody/bug"`) || !strings.Contains(out, `"ruleId": "`+printlnRule+`"`) {
		t.Fatalf("results missing:\n%s", out)
	}
	for name, uri := range odd {
		if !strings.Contains(out, `"uri": "`+uri+`"`) {
			t.Errorf("no result at %s as the URI %s:\n%s", name, uri, out)
		}
	}
}

// An endpoint that accepts connections and never answers costs one
// timeout per process: the breaker opens on it, every later model stage
// of every file is skipped at once, the user reads one line saying so
// and, past a second, where the review is (while the first stage is
// still waiting on the endpoint, too); the detectors' findings are still
// reported.
func TestReviewDeadEndpointCostsOneTimeout(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	repo := changedRepo(t)
	repo.Write(map[string]string{"second.go": "package main\n\nfunc second() { fmt.Println(\"2\") }\n"})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model",
		`KODYLS_SETTINGS={"llm":{"timeoutMs":3000}}`)
	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if n := fake.CountChat(); n != 1 {
		t.Errorf("the endpoint received %d requests, want 1: a timeout opens the breaker", n)
	}
	oneEndpointLine(t, out, errOut, 3)
	// The first stage waits 3 s: a second into it the user reads which
	// file and stage the review is waiting on.
	if !regexp.MustCompile(`(?m)^kodyls review: file 1 of 4: \S+ \(\w+\)$`).MatchString(errOut) {
		t.Errorf("no progress line naming the file and stage that waits on the endpoint:\n%s", errOut)
	}
	if !strings.Contains(errOut, "kodyls review: file 4 of 4: second.go") {
		t.Errorf("no progress line for the files after the first second:\n%s", errOut)
	}
	for _, want := range []string{"main.go:14:2: high kody_rules: No fmt.Println", "second.go:3:17: high kody_rules: No fmt.Println"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A repository with an AGENTS.md has it split into rules by the model
// before any file is reviewed. Against an endpoint that never answers,
// that split is the one call that waits: a second into it the user reads
// what the review waits on, then the one line about the endpoint, and no
// file's model stages call it again.
func TestReviewDeadEndpointWhileSplittingRules(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"AGENTS.md":                 "# Conventions\n\n- Every exported function has a doc comment.\n- Errors are wrapped with the operation that failed.\n",
		"main.go":                   reviewGo,
	})
	repo.Write(map[string]string{"main.go": strings.Replace(reviewGo, "fmt.Print(total(nil))", "fmt.Println(total(nil))", 1)})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model",
		`KODYLS_SETTINGS={"llm":{"timeoutMs":3000}}`)
	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := fake.ChatRequests()
	if len(reqs) != 1 || reqs[0].Chat.SchemaName() != "kodyrules_split" {
		var names []string
		for _, r := range reqs {
			names = append(names, r.Chat.SchemaName())
		}
		t.Errorf("the endpoint received %v, want the split's request alone", names)
	}
	split := regexp.MustCompile(`(?m)^kodyls review: splitting AGENTS\.md \(kodyrules_split\)$`).FindStringIndex(errOut)
	down := strings.Index(errOut, "is not answering (no answer within 3s)")
	switch {
	case split == nil:
		t.Errorf("no progress line while the model splits AGENTS.md:\n%s", errOut)
	case down < 0:
		t.Errorf("no line saying the endpoint is not answering:\n%s", errOut)
	case split[0] > down:
		t.Errorf("the split's progress line comes after the endpoint line, not while the split waits:\n%s", errOut)
	}
	if !strings.Contains(out, "main.go:14:2: high kody_rules: No fmt.Println") {
		t.Errorf("report lacks the detector's finding:\n%s", out)
	}
	oneEndpointLine(t, out, errOut, 1)

	// --verbose gives the log's warnings back.
	fake.Reset()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	_, errOut, _ = runBin(t, env, repo.Dir, "review", "--verbose")
	if !strings.Contains(errOut, `level=WARN msg="llm endpoint marked down"`) {
		t.Errorf("review --verbose does not show the log's warnings:\n%s", errOut)
	}
}

// progressLine is a line of `kodyls review` saying where the review is.
var progressLine = regexp.MustCompile(`^kodyls review: (file \d+ of \d+: \S+|splitting \S+|pull-request Kody Rules)( \(\w+\))?$`)

// oneEndpointLine checks that a review against an endpoint that never
// answered (timeout 3 s) told the user once: stderr holds progress lines
// and exactly one line about the endpoint, no log record, and nothing
// promises a retry of a command that has exited; the report has no line
// per file for it, only the note counting the files whose model stages
// were skipped.
func oneEndpointLine(t *testing.T, out, errOut string, skippedFiles int) {
	t.Helper()
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !progressLine.MatchString(line) {
			problems = append(problems, line)
		}
	}
	want := regexp.MustCompile(`^kodyls review: LLM endpoint http://127\.0\.0\.1:\d+/v1 is not answering \(no answer within 3s\); the model stages of the remaining files are skipped \(Kody Rules detectors still run\)$`)
	if len(problems) != 1 || !want.MatchString(problems[0]) {
		t.Errorf("stderr besides progress = %q, want the one endpoint line:\n%s", problems, errOut)
	}
	if strings.Contains(errOut, "level=WARN") {
		t.Errorf("stderr has log warnings:\n%s", errOut)
	}
	if strings.Contains(out+errOut, "retries") {
		t.Errorf("a command that exits promises a retry:\n%s\n%s", out, errOut)
	}
	if strings.Contains(out, "review degraded") {
		t.Errorf("the report repeats the endpoint's failure for a file:\n%s", out)
	}
	note := regexp.MustCompile(`(?m)^note: the model stages of (\d+) file\(s\) were skipped: LLM endpoint \S+ is not answering \(no answer within 3s\)$`).FindStringSubmatch(out)
	if note == nil || note[1] != strconv.Itoa(skippedFiles) {
		t.Errorf("report note = %q, want the model stages of %d file(s) skipped:\n%s", note, skippedFiles, out)
	}
}
