package filereview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

func mustRule(t *testing.T, file, text string) *rules.Rule {
	t.Helper()
	r, err := rules.Parse(file, []byte(text))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r
}

// TestKodyRulesCheckedByTheModel: the model judges only the rules that
// apply to the file and have no detector, names them by position, and an
// index outside the list is dropped; the violation carries the rule's id
// and severity, and an unchanged hunk costs no second call.
func TestKodyRulesCheckedByTheModel(t *testing.T) {
	goRule := mustRule(t, ".kody/rules/repo.md", "---\ntitle: Use the repository for database access\nuuid: rule-repo\nseverity: critical\npath: \"**/*.go\"\n---\n## Instructions\nHandlers must not call sql.DB directly.\n")
	tsRule := mustRule(t, ".kody/rules/ts.md", "---\ntitle: No any in TypeScript\nuuid: rule-ts\nseverity: high\npath: \"**/*.ts\"\n---\nNever use the any type.\n")
	detRule := mustRule(t, ".kody/rules/println.md", "---\ntitle: No fmt.Println anywhere\nuuid: rule-det\nseverity: low\ndetector:\n  type: regex\n  pattern: 'fmt\\.Println'\n---\nUse the logger.\n")

	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil,
		reviewtest.RuleViolation{Rule: 1, Reason: "The handler queries the database directly.", ExistingCode: "rows, _ := db.Query(q)",
			ImprovedCode: "rows, _ := repo.Find(q)", OneSentenceSummary: "go through the repository", RelevantLinesStart: 5, RelevantLinesEnd: 5},
		reviewtest.RuleViolation{Rule: 7, Reason: "a rule that was never listed", ExistingCode: "return rows", RelevantLinesStart: 6, RelevantLinesEnd: 6},
	)
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, problems := ForWorkspace(Workspace{Root: t.TempDir(), Gateway: g, Cache: &memCache{m: map[string][]byte{}},
		Rules: []*rules.Rule{goRule, tsRule, detRule}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	ctx := context.Background()

	base := "package demo\n\nfunc handler(db *DB, q string) {\n\t_ = q\n}\n"
	current := "package demo\n\nfunc handler(db *DB, q string) {\n\t_ = q\n\trows, _ := db.Query(q)\n\treturn rows\n}\n"
	res, err := r.Review(ctx, Input{Path: "api/handler.go", Language: "go", Base: base, Current: current})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("findings %+v, degraded %v", res.Findings, res.Degraded)
	}
	f := res.Findings[0]
	if f.RuleID != "rule-repo" || f.Label != review.LabelKodyRules || f.Severity != "critical" || f.Span.StartLine != 4 ||
		!strings.HasPrefix(f.OneSentenceSummary, "Use the repository for database access") {
		t.Fatalf("finding %+v", f)
	}
	var prompt string
	for _, rec := range fake.Requests() {
		if strings.Contains(string(rec.Body), review.SchemaKodyRules) {
			prompt = string(rec.Body)
		}
	}
	if !strings.Contains(prompt, "Use the repository for database access") {
		t.Fatal("the Go rule did not reach the model")
	}
	for _, rec := range fake.Requests() {
		for _, never := range []string{"No any in TypeScript", "No fmt.Println anywhere", "rule-repo", "rule-ts"} {
			if strings.Contains(string(rec.Body), never) {
				t.Errorf("%q reached the model (a rule for another file, a detector rule, or a uuid)", never)
			}
		}
	}
	checks := scripts.Check.Times()
	if _, err := r.Review(ctx, Input{Path: "api/handler.go", Language: "go", Base: base, Current: current}); err != nil || scripts.Check.Times() != checks {
		t.Fatalf("unchanged hunk: %d → %d rule checks (%v)", checks, scripts.Check.Times(), err)
	}

	// A TypeScript file is checked against the TypeScript rule only.
	if _, err := r.Review(ctx, Input{Path: "web/app.ts", Language: "typescript", Base: "", Current: "let x: any = 1;\n"}); err != nil {
		t.Fatal(err)
	}
	last := string(fake.Requests()[len(fake.Requests())-1].Body)
	for _, rec := range fake.Requests() {
		if body := string(rec.Body); strings.Contains(body, review.SchemaKodyRules) && strings.Contains(body, "web/app.ts") {
			last = body
		}
	}
	if !strings.Contains(last, "No any in TypeScript") || strings.Contains(last, "Use the repository for database access") {
		t.Fatalf("the check of app.ts did not carry exactly the TypeScript rule:\n%s", last)
	}
}

// TestPullRequestRulesJudgeTheChangeSet: a pull-request rule is judged
// once over every changed file, its violation lands on the file the model
// names, and a file outside the set is dropped; file checks never see it.
func TestPullRequestRulesJudgeTheChangeSet(t *testing.T) {
	prRule := mustRule(t, ".kody/rules/tests.md", "---\ntitle: Handlers change with their tests\nuuid: rule-tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\nA change to a handler under api/ comes with a change to its test.\n")
	other := mustRule(t, ".kody/rules/docs.md", "---\ntitle: Docs change with the CLI\nuuid: rule-docs\nscope: pull_request\npath: \"cmd/**\"\n---\nA change under cmd/ updates the README.\n")
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	pr := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []map[string]any{
		{"rule": 1, "file": "api/handler.go", "reason": "The handler changed and its test did not.", "suggestionContent": "Add a case to api/handler_test.go.", "existingCode": "return 2",
			"improvedCode": "return 2", "oneSentenceSummary": "add a test", "relevantLinesStart": 4, "relevantLinesEnd": 4},
		{"rule": 1, "file": "elsewhere.go", "reason": "not in the change set", "suggestionContent": "x", "existingCode": "x", "improvedCode": "x",
			"oneSentenceSummary": "x", "relevantLinesStart": 1, "relevantLinesEnd": 1},
		{"rule": 2, "file": "api/handler.go", "reason": "no such rule", "suggestionContent": "x", "existingCode": "return 2", "improvedCode": "return 2",
			"oneSentenceSummary": "x", "relevantLinesStart": 4, "relevantLinesEnd": 4},
	}}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, _ := ForWorkspace(Workspace{Root: t.TempDir(), Gateway: g, Rules: []*rules.Rule{prRule, other}})
	ctx := context.Background()
	inputs := []Input{
		{Path: "api/handler.go", Language: "go", Base: "package api\n\nfunc h() int {\n\treturn 1\n}\n", Current: "package api\n\nfunc h() int {\n\treturn 2\n}\n"},
		{Path: "lib/util.go", Language: "go", Base: "package lib\n", Current: "package lib\n\nvar X = 1\n"},
	}
	for _, in := range inputs {
		if _, err := r.Review(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, rec := range fake.Requests() {
		if body := string(rec.Body); !strings.Contains(body, review.SchemaPullRequestRules) && strings.Contains(body, "Handlers change with their tests") {
			t.Fatal("a pull-request rule reached a file check")
		}
	}
	byFile, err := r.CheckPullRequest(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Times() != 1 || len(byFile) != 1 || len(byFile["api/handler.go"]) != 1 {
		t.Fatalf("%d calls, findings %+v", pr.Times(), byFile)
	}
	f := byFile["api/handler.go"][0]
	if f.RuleID != "rule-tests" || f.Span.StartLine != 3 || f.Severity != "high" {
		t.Fatalf("finding %+v", f)
	}
	var prompt string
	for _, rec := range fake.Requests() {
		if body := string(rec.Body); strings.Contains(body, review.SchemaPullRequestRules) {
			prompt = body
		}
	}
	if !strings.Contains(prompt, "api/handler.go") || !strings.Contains(prompt, "lib/util.go") || strings.Contains(prompt, "Docs change with the CLI") {
		t.Fatalf("the change-set prompt should list both files and only the rule whose paths match:\n%s", prompt)
	}
}

// TestRuleReferencesReachTheCheck: the lines a rule references with
// @file:path#Lx-Ly are shown with the rule in the check's prompt.
func TestRuleReferencesReachTheCheck(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		".kody/rules/errors.md": "---\ntitle: Errors follow the style guide\nuuid: rule-style\npath: \"**/*.go\"\n---\nWrap errors as the guide says: @file:docs/style.md#L2-L3\n",
		"docs/style.md":         "# Style\nWrap every error with fmt.Errorf and %w.\nSay what failed, in lower case.\nUnrelated line.\n",
	} {
		writeFile(t, root, name, text)
	}
	rs, errs := rules.DefaultRegistry().Load(context.Background(), root)
	if len(errs) > 0 || len(rs) != 1 {
		t.Fatalf("rules %v errors %v", rs, errs)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	check := reviewtest.Rules(fake, nil)
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, _ := ForWorkspace(Workspace{Root: root, Gateway: g, Rules: rs})
	if _, err := r.Review(context.Background(), Input{Path: "main.go", Language: "go", Current: "package main\n\nfunc f() error { return nil }\n"}); err != nil {
		t.Fatal(err)
	}
	if check.Check.Times() != 1 {
		t.Fatalf("%d rule checks, want 1", check.Check.Times())
	}
	for _, rec := range fake.Requests() {
		body := string(rec.Body)
		if !strings.Contains(body, review.SchemaKodyRules) {
			continue
		}
		if !strings.Contains(body, "Wrap every error with fmt.Errorf") || !strings.Contains(body, "Say what failed") || strings.Contains(body, "Unrelated line") {
			t.Fatalf("the referenced lines 2-3 are not (exactly) in the check:\n%s", body)
		}
	}
}

func writeFile(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKodusConfigChangeReviewsAgain: the cached review of a hunk is only
// reused under the configuration it was made with. Turning
// reviewOptions.kody_rules on runs the rule check on a hunk reviewed while
// it was off, and turning the severity filter on for Kody Rules hides the
// violation, with the findings cached in the real store.
func TestKodusConfigChangeReviewsAgain(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody/rules/repo.md", "---\ntitle: Use the repository for database access\nuuid: rule-repo\nseverity: medium\npath: \"**/*.go\"\n---\nHandlers must not call sql.DB directly.\n")
	rs, errs := rules.DefaultRegistry().Load(context.Background(), root)
	if len(errs) > 0 || len(rs) != 1 {
		t.Fatalf("rules %v errors %v", rs, errs)
	}
	st, err := index.OpenStore(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil, reviewtest.RuleViolation{Rule: 1, Reason: "The handler queries the database directly.",
		ExistingCode: "rows, _ := db.Query(q)", ImprovedCode: "rows, _ := repo.Find(q)", OneSentenceSummary: "go through the repository",
		RelevantLinesStart: 5, RelevantLinesEnd: 5})
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	in := Input{Path: "api/handler.go", Language: "go",
		Base:    "package demo\n\nfunc handler(db *DB, q string) {\n\t_ = q\n}\n",
		Current: "package demo\n\nfunc handler(db *DB, q string) {\n\t_ = q\n\trows, _ := db.Query(q)\n\t_ = rows\n}\n"}
	// review rebuilds the reviewer from the files on disk, as the server
	// and the CLI do after kodus-config.yml changes.
	reviewWith := func(config string) (ruleFindings int, res Result) {
		t.Helper()
		writeFile(t, root, "kodus-config.yml", config)
		r, problems := ForWorkspace(Workspace{Root: root, Gateway: g, Cache: st.KV(), Rules: rs})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		res, err := r.Review(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			if f.RuleID == "rule-repo" {
				ruleFindings++
			}
		}
		return ruleFindings, res
	}

	off := "reviewOptions:\n  kody_rules: false\n"
	if n, res := reviewWith(off); n != 0 || scripts.Check.Times() != 0 {
		t.Fatalf("kody_rules off: %d rule findings, %d checks (%+v)", n, scripts.Check.Times(), res.Findings)
	}
	if n, res := reviewWith(off); n != 0 || res.CachedHunks != 1 {
		t.Fatalf("kody_rules off, unchanged: %d rule findings, %d of %d hunks cached", n, res.CachedHunks, res.Hunks)
	}

	on := "reviewOptions:\n  kody_rules: true\n"
	n, res := reviewWith(on)
	if scripts.Check.Times() != 1 || n != 1 || res.CachedHunks != 0 {
		t.Fatalf("kody_rules turned on: %d checks, %d rule findings, %d hunks from the cache; want the check to run and find the violation",
			scripts.Check.Times(), n, res.CachedHunks)
	}
	if n, res := reviewWith(on); n != 1 || res.CachedHunks != 1 || scripts.Check.Times() != 1 {
		t.Fatalf("kody_rules on, unchanged: %d rule findings, %d hunks cached, %d checks", n, res.CachedHunks, scripts.Check.Times())
	}

	// The violation is medium: a high floor hides it once the filters
	// apply to Kody Rules, and only then.
	if n, _ := reviewWith(on + "suggestionControl:\n  severityLevelFilter: high\n"); n != 1 {
		t.Fatalf("severity filter without applyFiltersToKodyRules: %d rule findings, want the rule's violation kept", n)
	}
	filtered := on + "suggestionControl:\n  severityLevelFilter: high\n  applyFiltersToKodyRules: true\n"
	n, res = reviewWith(filtered)
	if n != 0 {
		t.Fatalf("applyFiltersToKodyRules with a high floor: %d rule findings, want the medium violation filtered", n)
	}
	discarded := false
	for _, d := range res.Discarded {
		discarded = discarded || (d.Suggestion.RuleID == "rule-repo" && d.Stage == review.StageThreshold)
	}
	if !discarded {
		t.Fatalf("the violation should be discarded by the threshold: %+v", res.Discarded)
	}
}

// TestConfigKey: the same kodus-config.yml read twice gives the same key
// (a restart keeps the cache), every setting that shapes a hunk's cached
// findings gives another, and suggestionControl, applied on reading them,
// none.
func TestConfigKey(t *testing.T) {
	key := func(config string) string {
		t.Helper()
		root := t.TempDir()
		if config != "" {
			writeFile(t, root, "kodus-config.yml", config)
		}
		set, _ := prompts.LoadWorkspace(root)
		return ConfigKey(kodusconfig.Load(root), set)
	}
	base := "reviewOptions:\n  bug: true\n  security: true\n  performance: false\n"
	if first, second := key(base), key(base); first != second {
		t.Fatal("the same configuration gave two keys")
	}
	if key("") != key("reviewOptions:\n  kody_rules: true\n") {
		t.Fatal("writing a default explicitly should not review again")
	}
	seen := map[string]string{key(base): "base"}
	for name, config := range map[string]string{
		"kody_rules off":       base + "  kody_rules: false\n",
		"a category on":        "reviewOptions:\n  bug: true\n  security: true\n  performance: true\n",
		"prompt override":      base + "v2PromptOverrides:\n  generation:\n    main: Prefer small functions.\n",
		"category description": base + "v2PromptOverrides:\n  categories:\n    descriptions:\n      bug: Only crashes.\n",
	} {
		k := key(config)
		if other, dup := seen[k]; dup {
			t.Errorf("%s gives the same key as %s", name, other)
		}
		seen[k] = name
	}
	// The severity filter and the cap apply to the cached findings at
	// every review: changing them reviews nothing again.
	for name, config := range map[string]string{
		"severity filter":       base + "suggestionControl:\n  severityLevelFilter: high\n",
		"filters on Kody Rules": base + "suggestionControl:\n  applyFiltersToKodyRules: true\n",
		"per-file cap":          base + "suggestionControl:\n  limitationType: file\n  maxSuggestions: 2\n",
	} {
		if key(config) != key(base) {
			t.Errorf("%s gives another key: the hunks would be reviewed again", name)
		}
	}
}

// TestIgnorePathsWithANegationStillIgnore: one "!" pattern in
// kodus-config.yml's ignorePaths, which kodyls does not support, is
// reported and left out; the other patterns keep their files out of the
// review, so nothing of them reaches the model.
func TestIgnorePathsWithANegationStillIgnore(t *testing.T) {
	const marker = "PRIVATE-CODE-61c2"
	for name, cfg := range map[string]string{
		"negation": "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n",
		"root":     "ignorePaths:\n  - /\n  - private/**\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "kodus-config.yml", cfg)
			fake := llmtest.NewServer()
			defer fake.Close()
			scripts := reviewtest.Script(fake, nil)
			g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			r, problems := ForWorkspace(Workspace{Root: root, Gateway: g})
			all := strings.Join(problems, "\n")
			if strings.Contains(all, "default ignore list") || !strings.Contains(all, "kodus-config.yml:") {
				t.Errorf("problems:\n%s", all)
			}
			res, err := r.Review(context.Background(), Input{Path: "private/export.go", Language: "go", Current: "package private\n\n// " + marker + "\nfunc F() {}\n"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Skipped != "ignored by kodus-config ignorePaths: private/**" {
				t.Errorf("skipped %q", res.Skipped)
			}
			for _, rec := range fake.Requests() {
				if strings.Contains(string(rec.Body), marker) {
					t.Fatalf("the ignored file reached the model:\n%s", rec.Body)
				}
			}
			if scripts.Calls() != 0 {
				t.Errorf("%d review calls for an ignored file", scripts.Calls())
			}
		})
	}
}

// TestIgnoredReferenceNeverReachesTheCheck: a rule referencing a file that
// kodus-config.yml ignorePaths ignores is checked without that file's text.
func TestIgnoredReferenceNeverReachesTheCheck(t *testing.T) {
	const marker = "PRIVATE-NOTE-0b7d"
	root := t.TempDir()
	for name, text := range map[string]string{
		"kodus-config.yml":      "ignorePaths:\n  - private/**\n",
		".kody/rules/errors.md": "---\ntitle: Errors follow the notes\nuuid: rule-notes\npath: \"**/*.go\"\n---\nWrap errors as the notes say: @file:private/notes.txt#L1-L1\n",
		"private/notes.txt":     marker + " wrap with %w\n",
	} {
		writeFile(t, root, name, text)
	}
	rs, errs := rules.DefaultRegistry().Load(context.Background(), root)
	if len(errs) > 0 || len(rs) != 1 {
		t.Fatalf("rules %v errors %v", rs, errs)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	check := reviewtest.Rules(fake, nil)
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, _ := ForWorkspace(Workspace{Root: root, Gateway: g, Rules: rs})
	if _, err := r.Review(context.Background(), Input{Path: "main.go", Language: "go", Current: "package main\n\nfunc f() error { return nil }\n"}); err != nil {
		t.Fatal(err)
	}
	if check.Check.Times() != 1 {
		t.Fatalf("%d rule checks, want 1", check.Check.Times())
	}
	for _, rec := range fake.Requests() {
		if strings.Contains(string(rec.Body), marker) {
			t.Fatalf("the ignored file reached the model:\n%s", rec.Body)
		}
	}
}
