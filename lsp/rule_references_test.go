package lsp_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReferencedFileEditedOnDiskTakesEffect: a rule that points at a file
// (@file:docs/loops.md) is checked with that file's text; when the file is
// edited on disk, the rules reload and the next save's check carries the
// new text, never the old.
func TestReferencedFileEditedOnDiskTakesEffect(t *testing.T) {
	const oldGuide, newGuide = "Walk slices with for-range.", "Walk slices with for-range, and name the element after the slice."
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go": reviewGo,
		".kody/rules/loops.md": "---\ntitle: Loops follow the guide\nuuid: loops-guide\nseverity: high\npath: \"**/*.go\"\n---\n" +
			"## Instructions\nLoops are written as @file:docs/loops.md says.\n",
		"docs/loops.md": "# Loops\n" + oldGuide + "\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	scripts := reviewtest.Rules(fake, nil)
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.AwaitIdle("")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitIdle("")
	if p := lastRuleCheck(fake); scripts.Check.Times() != 1 || !strings.Contains(p, oldGuide) {
		t.Fatalf("%d rule checks; the check should carry the referenced file's text:\n%s", scripts.Check.Times(), p)
	}

	if err := os.WriteFile(e.Path("docs/loops.md"), []byte("# Loops\n"+newGuide+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saveUntil(t, e, "editing the referenced file reloads the rule", func() bool { return scripts.Check.Times() > 1 })
	if p := lastRuleCheck(fake); scripts.Check.Times() != 2 || !strings.Contains(p, newGuide) || strings.Contains(p, oldGuide) {
		t.Fatalf("%d rule checks; the check after the edit should carry the new text of docs/loops.md only:\n%s", scripts.Check.Times(), p)
	}
	e.Save("main.go")
	e.AwaitIdle("")
	if n := scripts.Check.Times(); n != 2 {
		t.Fatalf("saving an unchanged buffer made %d more rule checks", n-2)
	}
	e.Shutdown()
}

// saveUntil saves main.go until done holds, within a bound. Only the file
// watcher sees an edit on disk, and its event may reach the server after an
// idle answer; a save before the reload is answered by the cache.
func saveUntil(t *testing.T, e *reviewEnv, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(lsptest.DefaultTimeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, lsptest.DefaultTimeout)
		}
		time.Sleep(20 * time.Millisecond)
		e.AwaitIdle("")
		e.Save("main.go")
		e.AwaitIdle("")
	}
}
