package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// privateMarker is the text of the files a workspace keeps private: no
// request to the model may carry it.
const privateMarker = "CUSTOMER-LIST-4d2a"

// neverSent fails when a request the fake endpoint received carries the
// private marker.
func neverSent(t *testing.T, fake *llmtest.Server) {
	t.Helper()
	for _, rec := range fake.Requests() {
		if strings.Contains(string(rec.Body), privateMarker) {
			t.Fatalf("a private file reached the model:\n%s", rec.Body)
		}
	}
}

// TestIgnorePathsKeepRuleSourcesFromTheModel: with kodus-config.yml
// ignoring private/** and AGENTS.md, a Kody Rule's @file: and [[file:]]
// references to a private file, directly or through a symbolic link, the
// "@path" imports of CLAUDE.md, and the ignored AGENTS.md itself never
// reach the model in a review (rule check, guardian, analysis) nor in the
// split of the assistants' files; `rules check` and `rules list` say why.
func TestIgnorePathsKeepRuleSourcesFromTheModel(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"kodus-config.yml":  "ignorePaths:\n  - private/**\n  - AGENTS.md\n",
		"private/notes.txt": "Wrap errors. " + privateMarker + "\n",
		".kody/rules/notes.md": "---\ntitle: Errors follow the notes\nuuid: rule-notes\npath: \"**/*.go\"\n---\n" +
			"Wrap errors as @file:private/notes.txt#L1-L1 says, and see [[file:linkpriv.txt]].\n",
		"CLAUDE.md": "- Keep handlers small.\n- Read @private/notes.txt and @linkpriv.txt first.\n",
		"AGENTS.md": "- Call " + privateMarker + " support.\n- Run the tests.\n",
		"main.go":   reviewGo,
	})
	if err := os.Symlink("private/notes.txt", filepath.Join(repo.Dir, "linkpriv.txt")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	repo.Write(map[string]string{"main.go": strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1)})
	env := testEnv(t)

	out, errOut, code := runBin(t, env, repo.Dir, "rules", "check")
	if code != 0 {
		t.Fatalf("rules check: code %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		".kody/rules/notes.md:6:16: warning: reference @file:private/notes.txt#L1-L1: the file is ignored by kodus-config ignorePaths (private/**), so it is never read into a rule",
		"warning: reference [[file:linkpriv.txt]]: the file leads to private/notes.txt, which is ignored by kodus-config ignorePaths (private/**), so it is never read into a rule",
		"CLAUDE.md:2:8: warning: import @private/notes.txt: the file is ignored by kodus-config ignorePaths (private/**), so it is never imported",
		"warning: import @linkpriv.txt: the file leads to private/notes.txt, which is ignored by kodus-config ignorePaths (private/**), so it is never imported",
		"AGENTS.md: warning: not read: the file is ignored by kodus-config ignorePaths (AGENTS.md)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rules check does not say %q:\n%s", want, out)
		}
	}
	if _, errOut, _ := runBin(t, env, repo.Dir, "rules", "list"); !strings.Contains(errOut, "skipped rule file: AGENTS.md: not read: the file is ignored by kodus-config ignorePaths (AGENTS.md)") {
		t.Errorf("rules list does not say AGENTS.md is skipped:\n%s", errOut)
	}

	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	check := reviewtest.Rules(fake, nil)
	split := fake.On(llmtest.SchemaName(workspace.SchemaRuleSplit), llmtest.JSON(map[string]any{"rules": []any{}}))
	withModel := append(slices.Clone(env), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code = runBin(t, withModel, repo.Dir, "review", "main.go")
	if code != 0 {
		t.Fatalf("review: code %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "note: Kody Rule file AGENTS.md: not read: the file is ignored by kodus-config ignorePaths (AGENTS.md)") {
		t.Errorf("review does not say AGENTS.md is not read:\n%s", out)
	}
	if check.Check.Times() == 0 || check.Guardian.Times() == 0 || split.Times() == 0 {
		t.Fatalf("the test did not exercise the rule check (%d), the guardian (%d) and the split (%d)\n%s%s",
			check.Check.Times(), check.Guardian.Times(), split.Times(), out, errOut)
	}
	neverSent(t, fake)
}

// TestNestedInstructionFilesIgnoredAreTold: with ignorePaths "**/*.md"
// (docs kept out of reviews), an AGENTS.md in a subdirectory is not read,
// and `rules check` and `rules list` name it as they name a Kody Rule
// file that pattern ignores.
func TestNestedInstructionFilesIgnoredAreTold(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"kodus-config.yml": "ignorePaths: [\"**/*.md\"]\n",
		"svc/a/AGENTS.md":  "- Call " + privateMarker + " support.\n- Run the tests.\n",
		".kody/rules/x.md": "---\ntitle: Errors are wrapped\n---\nWrap errors.\n",
		"main.go":          reviewGo,
	})
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "check")
	if code != 0 {
		t.Fatalf("rules check: code %d\n%s%s", code, out, errOut)
	}
	for _, file := range []string{"svc/a/AGENTS.md", ".kody/rules/x.md"} {
		if want := file + ": warning: not read: the file is ignored by kodus-config ignorePaths (**/*.md)"; !strings.Contains(out, want) {
			t.Errorf("rules check does not say %q:\n%s", want, out)
		}
	}
	out, errOut, _ = runBin(t, env, repo.Dir, "rules", "list")
	for _, file := range []string{"svc/a/AGENTS.md", ".kody/rules/x.md"} {
		if want := "skipped rule file: " + file + ": not read: the file is ignored by kodus-config ignorePaths (**/*.md)"; !strings.Contains(errOut, want) {
			t.Errorf("rules list does not say %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out+errOut, privateMarker) {
		t.Errorf("rules list shows the ignored file's text:\n%s%s", out, errOut)
	}
}

// TestRulesTestRefusesPrivateFiles: `kodyls rules test RULE FILE...` does
// not send a FILE that may hold secrets or that kodus-config.yml
// ignorePaths ignores, and says so; the other FILEs are checked.
func TestRulesTestRefusesPrivateFiles(t *testing.T) {
	repo := rulesRepo(t, map[string]string{
		"kodus-config.yml":     "ignorePaths:\n  - private/**\n",
		".kody/rules/leaks.md": "---\ntitle: No customer data in code\nuuid: rule-leaks\nseverity: high\n---\nCode never holds customer data.\n",
		"private/export.go":    "package private\n\n// " + privateMarker + "\n",
		".env":                 "TOKEN=" + privateMarker + "\n",
		".kody/rules/pr.md":    "---\ntitle: Exports change with their docs\nuuid: rule-pr\nseverity: high\nscope: pull_request\n---\nA change to an export comes with its docs.\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	check := reviewtest.Rules(fake, nil)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "test", "No customer data", "private/export.go", ".env", "main.go")
	if code != 0 {
		t.Fatalf("code %d, want 0 (no violation)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"private/export.go: not checked: ignored by kodus-config ignorePaths: private/**",
		".env: not checked: may contain secrets",
		"0 violation(s) of \"No customer data in code\" in 1 file(s) checked",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if check.Check.Times() != 1 {
		t.Errorf("%d rule checks, want 1 (main.go)", check.Check.Times())
	}
	// A pull-request rule is judged over the FILEs together: the private
	// ones are left out of it, and the user is told.
	_, errOut, code = runBin(t, env, repo.Dir, "rules", "test", "rule-pr", "private/export.go", ".env")
	if code != 0 || !strings.Contains(errOut, "private/export.go: not checked: ignored by kodus-config ignorePaths") ||
		!strings.Contains(errOut, ".env: not checked: may contain secrets") || !strings.Contains(errOut, "in 0 file(s) checked") {
		t.Errorf("pull-request rule: code %d\n%s", code, errOut)
	}
	neverSent(t, fake)
}

// TestReviewKeepsIgnorePathsWithANegation: a "!" pattern in ignorePaths,
// which kodyls does not support, is reported and left out; the patterns
// beside it still keep their files out of `kodyls review`.
func TestReviewKeepsIgnorePathsWithANegation(t *testing.T) {
	for name, cfg := range map[string]string{
		"negation": "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n",
		// "/" would ignore every file: left out, it leaves the list short
		// of what was meant, so nothing goes to the model.
		"root": "ignorePaths:\n  - /\n  - private/**\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := lsptest.NewRepo(t, map[string]string{
				"kodus-config.yml":  cfg,
				"private/export.go": "package private\n",
				"main.go":           reviewGo,
			})
			repo.Write(map[string]string{
				"private/export.go": "package private\n\n// " + privateMarker + "\nfunc Export() {}\n",
				"main.go":           strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1),
			})
			rep, fake, scripts := reviewWithModel(t, repo.Dir)
			skipped := map[string]string{}
			for _, f := range rep.Files {
				skipped[f.Path] = f.Skipped
			}
			mainSkip := ""
			if name == "root" {
				mainSkip = skipped["main.go"]
				if !strings.Contains(mainSkip, "until kodus-config.yml is fixed") {
					t.Errorf("main.go: %q, want it held back", mainSkip)
				}
			}
			if skipped["private/export.go"] != "ignored by kodus-config ignorePaths: private/**" || skipped["main.go"] != mainSkip {
				t.Errorf("files %+v", rep.Files)
			}
			notes := strings.Join(rep.Notes, "\n")
			if !strings.Contains(notes, "kodus-config.yml:") || strings.Contains(notes, "default ignore list") {
				t.Errorf("notes:\n%s", notes)
			}
			if reviewed := scripts.Calls() > 0; reviewed != (name != "root") {
				t.Fatalf("main.go reviewed: %v", reviewed)
			}
			neverSent(t, fake)
		})
	}
}

// TestReviewWithUnreadableIgnorePathsSendsNothing: a kodus-config.yml
// that does not parse may hide the ignorePaths the team set, so no file
// goes to the model until it is fixed; the report says why, and the local
// Kody Rules still run.
func TestReviewWithUnreadableIgnorePathsSendsNothing(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"kodus-config.yml":    "ignorePaths:\n  - \"secret/**\"\nreviewOptions:\n  bug: true\n   security: false\n",
		"secret/keys.go":      "package secret\n",
		"main.go":             reviewGo,
		".kody/rules/todo.md": lsptest.RuleFile("No TODO left in code", "no-todo", "high", "**/*.go", "TODO"),
	})
	repo.Write(map[string]string{
		"secret/keys.go": "package secret\n\n// TODO rotate\nconst Key = \"" + privateMarker + "\"\n",
		"main.go":        strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1),
	})
	rep, fake, scripts := reviewWithModel(t, repo.Dir)
	for _, f := range rep.Files {
		if !strings.Contains(f.Skipped, "until kodus-config.yml is fixed") {
			t.Errorf("file %+v sent to the model", f)
		}
	}
	if n := scripts.Calls(); n != 0 {
		t.Errorf("%d model calls with an unreadable ignore list", n)
	}
	todo := false
	for _, f := range rep.Findings {
		todo = todo || f.RuleID == "no-todo"
	}
	if !todo {
		t.Errorf("the local rule did not run: %+v", rep.Findings)
	}
	neverSent(t, fake)
}

// reviewWithModel runs `kodyls review --format json` in dir against a
// fake model that suggests offByOne, and returns the report, the model
// (its requests) and its scripts (its calls); the review must exit 0.
func reviewWithModel(t *testing.T, dir string) (report.Report, *llmtest.Server, reviewtest.Scripts) {
	t.Helper()
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, dir, "review", "--format", "json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	return rep, fake, scripts
}
