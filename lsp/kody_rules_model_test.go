package lsp_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// loopRule is a Kody Rule without a detector, so only the model checks it.
func loopRule(title string) string {
	return "---\ntitle: " + title + "\nuuid: loops-range\nseverity: high\npath: \"**/*.go\"\n---\n## Instructions\nIndex loops invite off-by-one errors; walk a slice with for-range.\n"
}

// lastRuleCheck is the body of the last Kody Rules check the fake received.
func lastRuleCheck(fake *llmtest.Server) string {
	var last string
	for _, rec := range fake.Requests() {
		if body := string(rec.Body); strings.Contains(body, review.SchemaKodyRules) {
			last = body
		}
	}
	return last
}

// ruleTitle is the title the violations panel shows for the rule with
// uuid: the title of the rule the server has loaded now.
func ruleTitle(t *testing.T, e *reviewEnv, uuid string) string {
	t.Helper()
	var v contract.RuleViolations
	if err := e.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	for _, g := range v.Groups {
		if g.Rule.UUID == uuid {
			return g.Rule.Title
		}
	}
	return ""
}

// savedLoopViolation starts a reviewing session on a repository with the
// loop rule titled title, has the fake model report a violation of it, and
// saves main.go with the off-by-one loop typed in.
func savedLoopViolation(t *testing.T, title string) (*reviewEnv, *llmtest.Server, reviewtest.RuleScripts) {
	t.Helper()
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo, ".kody/rules/loops.md": loopRule(title)})
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil, reviewtest.RuleViolation{
		Rule: 1, Reason: "The loop indexes the slice.", ExistingCode: "for i := 0; i <= len(items); i++ {",
		ImprovedCode: "for _, it := range items {", OneSentenceSummary: "range over items", RelevantLinesStart: 7, RelevantLinesEnd: 7,
	})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	// The rules load in the background after initialize; a save before
	// they are in would be reviewed without them.
	e.AwaitIdle("")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	return e, fake, scripts
}

// TestRuleFileEditedOnDiskTakesEffect: a rule file rewritten on disk, not
// through the editor, is reloaded by the file watcher, and the next save
// checks the change against the new text of the rule, never the old; a
// save with nothing new costs no rule check.
func TestRuleFileEditedOnDiskTakesEffect(t *testing.T) {
	const oldTitle, newTitle = "Loops over slices use range", "Iterate with for-range, never an index"
	// The model reports a violation of the rule, so the violations panel
	// names it with the title of the rule currently loaded.
	e, fake, scripts := savedLoopViolation(t, oldTitle)
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 1 {
		t.Fatalf("%d rule checks after the first save, want 1", n)
	}
	if p := lastRuleCheck(fake); !strings.Contains(p, oldTitle) {
		t.Fatalf("the rule check does not carry the rule's title:\n%s", p)
	}
	if got := ruleTitle(t, e, "loops-range"); got != oldTitle {
		t.Fatalf("violations panel names the rule %q, want %q", got, oldTitle)
	}
	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 1 {
		t.Fatalf("saving an unchanged buffer made %d more rule checks", n-1)
	}

	// Rewritten on disk: only the file watcher can notice. AwaitIdle
	// waits for a change the watcher has seen, debounce and reload
	// included, but the kernel's event may still be on its way to the
	// watcher when AwaitIdle arrives: the server's state is asked again
	// after each idle answer, within a bound.
	if err := os.WriteFile(e.Path(".kody/rules/loops.md"), []byte(loopRule(newTitle)), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(lsptest.DefaultTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		e.AwaitIdle("")
		if ruleTitle(t, e, "loops-range") == newTitle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not reload the rule file within %s", lsptest.DefaultTimeout)
		}
		<-tick.C
	}
	// The reload alone reviews nothing: the trigger is the save.
	if n := scripts.Check.Times(); n != 1 {
		t.Fatalf("the reload made %d rule checks", n-1)
	}

	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 2 {
		t.Fatalf("%d rule checks after saving with the new rule, want 2", n)
	}
	p := lastRuleCheck(fake)
	if !strings.Contains(p, newTitle) || strings.Contains(p, oldTitle) {
		t.Fatalf("the check after the edit should carry the new title and not the old one:\n%s", p)
	}
	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 2 {
		t.Fatalf("saving an unchanged buffer made %d more rule checks", n-2)
	}
	e.Shutdown()
}

// TestSaveBeforeRulesLoadIsReviewedWithThem: a save that arrives while the
// server is still loading the rules at start-up (here, while the editor is
// slow to answer workspace/configuration) is reviewed with the team's
// rules, not without them.
func TestSaveBeforeRulesLoadIsReviewedWithThem(t *testing.T) {
	const title = "Loops over slices use range"
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo, ".kody/rules/loops.md": loopRule(title)})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil)
	var release func()
	e := startReviewingWith(t, repo, fake, t.TempDir(), "save", func(s *lsptest.Session) { release = s.HoldConfiguration() })
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	// Nothing may reach the model while the rules are not loaded: a review
	// that started now would run without them. (A bounded wait for a
	// request that must not come; it cannot be told from the server.)
	if fake.WaitRequests(1, 300*time.Millisecond) {
		t.Fatal("the save was reviewed before the rules were loaded")
	}
	release()
	e.AwaitIdle("")
	if scripts.Check.Times() != 1 || !strings.Contains(lastRuleCheck(fake), title) {
		t.Fatalf("%d rule checks after a save during start-up; the review ran without the rules", scripts.Check.Times())
	}
	e.Shutdown()
}

// TestDeletedRuleTakesItsFindingsAlong: when a rule is gone after a reload
// (its file deleted), the model's findings of that rule leave the editor at
// once, without waiting for the next save, and no model call is made.
func TestDeletedRuleTakesItsFindingsAlong(t *testing.T) {
	e, _, scripts := savedLoopViolation(t, "Loops over slices use range")
	e.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine("loops-range", 6))

	reloadLoopRule(t, e, "")
	e.AwaitIdle("")
	assertNoLoopFinding(t, e, "the finding of the deleted rule is still shown")
	if n := scripts.Check.Times(); n != 1 {
		t.Fatalf("%d rule checks, want 1: dropping a finding needs no model", n)
	}
	e.Shutdown()
}

// TestNarrowedRuleTakesItsFindingsAlong: a rule whose globs no longer reach
// the file takes its finding along at the reload, and the next save sends
// the file to no rule check; a rule whose examples change is checked again
// on the next save, not answered from the cache of the old rule.
func TestNarrowedRuleTakesItsFindingsAlong(t *testing.T) {
	const title = "Loops over slices use range"
	e, fake, scripts := savedLoopViolation(t, title)
	e.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine("loops-range", 6))

	// The same rule with an example: a rule the model must see again.
	withExample := loopRule(title) + "\n## Examples\n\n### Bad example\n```go\nfor i := 0; i < len(xs); i++ {}\n```\n"
	reloadLoopRule(t, e, withExample)
	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 2 {
		t.Fatalf("%d rule checks after the rule's examples changed, want 2", n)
	}
	if p := lastRuleCheck(fake); !strings.Contains(p, "len(xs)") {
		t.Fatalf("the check after the edit does not carry the new example:\n%s", p)
	}
	e.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine("loops-range", 6))

	narrowed := strings.Replace(loopRule(title), `path: "**/*.go"`, `path: "other/**/*.go"`, 1)
	reloadLoopRule(t, e, narrowed)
	e.AwaitIdle("")
	assertNoLoopFinding(t, e, "the finding of a rule that no longer covers main.go is still shown")
	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 2 {
		t.Fatalf("%d rule checks, want 2: no rule covers main.go any more", n)
	}
	assertNoLoopFinding(t, e, "the save brought back the finding of the narrowed rule")
	e.Shutdown()
}

// TestWatchedFileChangeIsAwaited: a rule file change the editor reports
// (workspace/didChangeWatchedFiles) is work the server counts from the
// notification on: the next kodyls/awaitIdle answers after the reload, so
// the panel already names the rule by its new title.
func TestWatchedFileChangeIsAwaited(t *testing.T) {
	const oldTitle, newTitle = "Loops over slices use range", "Iterate with for-range, never an index"
	e, _, _ := savedLoopViolation(t, oldTitle)
	e.AwaitIdle("")
	if got := ruleTitle(t, e, "loops-range"); got != oldTitle {
		t.Fatalf("violations panel names the rule %q, want %q", got, oldTitle)
	}
	if err := os.WriteFile(e.Path(".kody/rules/loops.md"), []byte(loopRule(newTitle)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Notify(protocol.MethodWorkspaceDidChangeWatchedFiles, &protocol.DidChangeWatchedFilesParams{
		Changes: []protocol.FileEvent{{URI: e.URI(".kody/rules/loops.md"), Type: protocol.FileChangeTypeChanged}},
	})
	e.AwaitIdle("")
	if got := ruleTitle(t, e, "loops-range"); got != newTitle {
		t.Fatalf("after the editor reported the change and the server was idle, the panel names the rule %q, want %q", got, newTitle)
	}
	e.Shutdown()
}

// reloadLoopRule rewrites the loop rule's file (removes it when text is
// empty) and has the server reload the rules.
func reloadLoopRule(t *testing.T, e *reviewEnv, text string) {
	t.Helper()
	var err error
	if text == "" {
		err = os.Remove(e.Path(".kody/rules/loops.md"))
	} else {
		err = os.WriteFile(e.Path(".kody/rules/loops.md"), []byte(text), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExecuteCommand(contract.CommandReloadRules, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// assertNoLoopFinding fails when main.go shows a finding of the loop rule.
func assertNoLoopFinding(t *testing.T, e *reviewEnv, why string) {
	t.Helper()
	for _, d := range e.Diagnostics("main.go") {
		if lsptest.Code(d) == "loops-range" {
			t.Fatalf("%s: %+v", why, d)
		}
	}
}

// TestPanelToldWhenModelViolationsMoveOrLeave: the violations panel
// refreshes on ruleViolationsChanged alone, so the server tells it when a
// violation the model found moves with lines typed above it, leaves with
// an edit of its own line, and leaves with its closed buffer.
func TestPanelToldWhenModelViolationsMoveOrLeave(t *testing.T) {
	e, _, _ := savedLoopViolation(t, "Use range loops")
	e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == "loops-range" {
				return true
			}
		}
		return false
	})
	e.AwaitIdle("")
	panel := func() []int {
		var v contract.RuleViolations
		if err := e.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
			t.Fatal(err)
		}
		var lines []int
		for _, g := range v.Groups {
			for _, x := range g.Violations {
				lines = append(lines, int(x.Range.Start.Line))
			}
		}
		return lines
	}
	told := func(what string, step func()) {
		t.Helper()
		before := len(e.ViolationsChanged())
		step()
		e.AwaitIdle("")
		if len(e.ViolationsChanged()) == before {
			t.Errorf("%s: the panel was not told (it lists %v)", what, panel())
		}
	}
	if got := panel(); len(got) != 1 || got[0] != 6 {
		t.Fatalf("panel %v, want the violation on line 6", got)
	}
	told("two lines typed above", func() {
		e.Insert("main.go", protocol.Position{Line: 3}, "// a\n// b\n")
	})
	if got := panel(); len(got) != 1 || got[0] != 8 {
		t.Fatalf("panel %v, want the violation moved to line 8", got)
	}
	told("its line edited", func() {
		e.EditBuffer("main.go", lsptest.Edit{Range: e.RegexpRange("main.go", `i <= len`), Text: "i < len"})
	})
	if got := panel(); len(got) != 0 {
		t.Fatalf("panel %v after the violation's line was edited, want none", got)
	}
	e.Save("main.go")
	e.AwaitIdle("")
	if got := panel(); len(got) != 1 {
		t.Fatalf("panel %v after the next review, want the violation back", got)
	}
	told("its buffer closed", func() { e.Close("main.go") })
	e.Shutdown()
}
