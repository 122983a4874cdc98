package lsp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestCheckoutCreatingManyDirectories: a checkout that creates thousands
// of directories moves the baseline as any other, and the instruction
// files it brings, or that are written later in any of its directories,
// are read. The watcher watches the new directories once the burst is
// over, in one pass, instead of walking the whole workspace once per
// directory (minutes of CPU, and the kernel's queue overflowing).
func TestCheckoutCreatingManyDirectories(t *testing.T) {
	repo := newWorkspace(t)
	repo.Git("checkout", "-q", "-b", "other")
	files := map[string]string{
		"main.go":               strings.Replace(mainGo, `fmt.Print("hi")`, `fmt.Println("hi")`, 1),
		"new07/sub03/AGENTS.md": "Handlers validate their input.\n",
	}
	const dirs = 2000
	for i := range dirs {
		files[fmt.Sprintf("new%02d/sub%02d/d%d/file.go", i%100, i/100, i)] = "package d\n"
	}
	repo.Write(files)
	repo.Commit("many directories")
	repo.Git("checkout", "-q", "main")

	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.AwaitIdle("main.go")
	// Unsaved: the line the other branch commits.
	s.EditBuffer("main.go", lsptest.Edit{Range: s.RegexpRange("main.go", `fmt\.Print\(`), Text: "fmt.Println("})
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 5))
	walks := s.Server.WorkspaceWatches()

	repo.Git("checkout", "-q", "other")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	validate := "agents:new07/sub03/AGENTS.md#handlers-validate-their-input"
	awaitNotChecked(t, s, "after the checkout", []string{validate})
	// At most one walk, should the kernel have dropped events all the same.
	if n := s.Server.WorkspaceWatches() - walks; n > 1 {
		t.Errorf("the checkout made the watcher walk the whole workspace %d times", n)
	}

	// Deep in a directory the checkout created.
	writeFile(t, repo.Dir, "new42/sub19/d1942/AGENTS.md", "Fixtures stay small.\n")
	awaitNotChecked(t, s, "after writing in a new directory", []string{
		validate, "agents:new42/sub19/d1942/AGENTS.md#fixtures-stay-small",
	})
	s.Shutdown()
}

// TestLostWatcherEventsRefreshBaselines: when the kernel drops file
// events (its queue overflowed during a large checkout), a baseline move
// among them is not lost: the baselines are read again and the git
// directories watched again.
func TestLostWatcherEventsRefreshBaselines(t *testing.T) {
	repo := lsptest.NewRepo(t, todoFiles(""))
	s := typeTODO(t, repo.Dir)
	s.AwaitIdle("") // the save's own re-read of the baseline is over
	s.Server.UnwatchGit()
	gitIn(t, repo.Dir, "commit", "-q", "-a", "-m", "tidy")
	s.AwaitIdle("")
	if ds := s.Diagnostics("main.go"); !lsptest.HasCodeOnLine(todoRule, 5)(ds) {
		t.Fatalf("the commit was seen without its events: %s", lsptest.Describe(ds))
	}

	s.Server.WatcherOverflows()
	s.AwaitDiagnostics("main.go", lsptest.Empty)

	// Watched again: the next move is seen.
	gitIn(t, repo.Dir, "reset", "-q", "--soft", "HEAD~1")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(todoRule, 5))
	s.Shutdown()
}
