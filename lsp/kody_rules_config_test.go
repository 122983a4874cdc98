package lsp_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// hasRuleOnLine reports whether the diagnostics hold a violation of the
// rule with the given code on the 0-based line.
func hasRuleOnLine(code string, line uint32) func([]protocol.Diagnostic) bool {
	return func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == code && d.Range.Start.Line == line {
				return true
			}
		}
		return false
	}
}

// TestKodusConfigEditedOnDiskTurnsRulesOn: with reviewOptions.kody_rules
// off, a save checks no rule; once kodus-config.yml turns it on (edited on
// disk), the next save of the same, already reviewed change runs the rule
// check and shows the violation.
func TestKodusConfigEditedOnDiskTurnsRulesOn(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":              reviewGo,
		".kody/rules/loops.md": loopRule("Loops over slices use range"),
		"kodus-config.yml":     "reviewOptions:\n  kody_rules: false\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	analysis := reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil, reviewtest.RuleViolation{
		Rule: 1, Reason: "The loop indexes the slice.", ExistingCode: "for i := 0; i <= len(items); i++ {",
		ImprovedCode: "for _, it := range items {", OneSentenceSummary: "range over items", RelevantLinesStart: 7, RelevantLinesEnd: 7,
	})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.AwaitIdle("")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitIdle("")
	if analysis.Analyze.Times() != 1 || scripts.Check.Times() != 0 {
		t.Fatalf("kody_rules off: %d analyses, %d rule checks; want the review without the rule check", analysis.Analyze.Times(), scripts.Check.Times())
	}
	if hasRuleOnLine("loops-range", 6)(e.Diagnostics("main.go")) {
		t.Fatal("a rule violation is shown with kody_rules off")
	}

	if err := os.WriteFile(e.Path("kodus-config.yml"), []byte("reviewOptions:\n  kody_rules: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saveUntil(t, e, "turning kody_rules on runs the rule check", func() bool { return scripts.Check.Times() > 0 })
	e.AwaitDiagnostics("main.go", hasRuleOnLine("loops-range", 6))
	e.Shutdown()
}

// TestBrokenKodusConfigIsTold: a kodus-config.yml that does not parse is
// told to the user once, not only logged, and told again when it breaks
// again after a fix.
func TestBrokenKodusConfigIsTold(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":          reviewGo,
		"kodus-config.yml": "ignorePaths:\n  - \"secret/**\"\nreviewOptions:\n  bug: true\n   security: false\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.AwaitIdle("")
	told := func() int {
		n := 0
		for _, m := range e.Messages() {
			if strings.Contains(m, "kodus-config.yml") && strings.Contains(m, "review configuration") {
				n++
			}
		}
		return n
	}
	if n := told(); n != 1 {
		t.Fatalf("told %d times about the broken kodus-config.yml, want once: %q", n, e.Messages())
	}
	if m := e.Messages(); !strings.Contains(strings.Join(m, "\n"), "no file is sent to the model") {
		t.Errorf("the message does not say the model gets nothing meanwhile: %q", m)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(e.Path("kodus-config.yml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		e.Notify(protocol.MethodWorkspaceDidChangeWatchedFiles, &protocol.DidChangeWatchedFilesParams{
			Changes: []protocol.FileEvent{{URI: e.URI("kodus-config.yml"), Type: protocol.FileChangeTypeChanged}},
		})
		e.AwaitIdle("")
	}
	write("ignorePaths:\n  - \"secret/**\"\n")
	write("ignorePaths:\n  - \"secret/**\"\nreviewOptions:\n  bug: true\n   security: false\n")
	if n := told(); n != 2 {
		t.Fatalf("told %d times after the file broke again, want twice: %q", n, e.Messages())
	}
	e.Shutdown()
}

// TestRuleFilesIgnoredByIgnorePathsAreTold: ignorePaths written to keep
// docs out of reviews ("**/*.md") also leaves the Kody Rule files and an
// AGENTS.md in a subdirectory unread; the editor says so once, not only on
// the rule file, and a diagnostic on the nested AGENTS.md says why.
func TestRuleFilesIgnoredByIgnorePathsAreTold(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":              reviewGo,
		".kody/rules/loops.md": loopRule("Loops over slices use range"),
		"svc/a/AGENTS.md":      "- Handlers validate their input.\n- Every endpoint has a test.\n",
		"kodus-config.yml":     "ignorePaths: [\"**/*.md\"]\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.AwaitIdle("")
	told := 0
	for _, m := range e.Messages() {
		if strings.Contains(m, "Kody Rule file .kody/rules/loops.md: not read") && strings.Contains(m, "**/*.md") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("told %d times that the rule file is not read, want once: %q", told, e.Messages())
	}
	if !slices.ContainsFunc(e.Messages(), func(m string) bool {
		return strings.Contains(m, "Kody Rule file svc/a/AGENTS.md: not read: the file is ignored by kodus-config ignorePaths (**/*.md)")
	}) {
		t.Errorf("the nested AGENTS.md is not told as unread: %q", e.Messages())
	}
	e.OpenFile("svc/a/AGENTS.md")
	ds := e.AwaitDiagnostics("svc/a/AGENTS.md", lsptest.Count(1))
	if !strings.Contains(lsptest.Message(ds[0]), "not read: the file is ignored by kodus-config ignorePaths (**/*.md)") {
		t.Errorf("diagnostic on the nested AGENTS.md: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}
