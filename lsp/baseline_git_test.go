package lsp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const badRule = "bad00000-0000-4000-8000-000000000000"

var badRuleFile = lsptest.RuleFile("No BAD", badRule, "high", "**", "BAD")

func numberedLines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// lines are the 0-based lines of diagnostics.
func lines(ds []protocol.Diagnostic) []uint32 {
	var out []uint32
	for _, d := range ds {
		out = append(out, d.Range.Start.Line)
	}
	return out
}

// TestRenamedFileIsComparedWithItsOrigin: a file renamed with git mv, or
// moved with a plain mv (as an editor's rename does) that git does not
// know of yet, has only its changed lines checked, as `kodyls review`
// checks it, not every line as a new file.
func TestRenamedFileIsComparedWithItsOrigin(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/bad.md": badRuleFile,
		"old.txt":            numberedLines("BAD old", 20),
		"plain.txt":          numberedLines("BAD plain", 20),
	})
	repo.Git("mv", "old.txt", "renamed.go")
	repo.Write(map[string]string{"renamed.go": numberedLines("BAD old", 20) + "BAD extra\n"})
	if err := os.Rename(filepath.Join(repo.Dir, "plain.txt"), filepath.Join(repo.Dir, "moved.txt")); err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{"moved.txt": numberedLines("BAD plain", 20) + "BAD more\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	for _, name := range []string{"renamed.go", "moved.txt"} {
		s.OpenFile(name)
		s.AwaitIdle(name)
		if ds := s.Diagnostics(name); len(ds) != 1 || ds[0].Range.Start.Line != 20 {
			t.Errorf("%s: diagnostics on lines %v, want the added line 20 only", name, lines(ds))
		}
	}
	s.Shutdown()
}

// TestGitIgnoredFileIsNotChecked: an untracked file git ignores is no part
// of the change set `kodyls review` reviews: the editor runs no detector
// on it and sends nothing to the model, on save or when asked.
func TestGitIgnoredFileIsNotChecked(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, ".gitignore": "*.log\n", "main.go": "package main\n"})
	repo.Write(map[string]string{"debug.log": "BAD 1\nBAD 2\n", "new.txt": "BAD new\n"})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	// An untracked file that is not ignored is checked.
	e.OpenFile("new.txt")
	e.AwaitDiagnostics("new.txt", lsptest.HasCodeOnLine(badRule, 0))

	e.OpenFile("debug.log")
	e.Save("debug.log")
	e.AwaitIdle("debug.log")
	if ds := e.Diagnostics("debug.log"); len(ds) != 0 {
		t.Errorf("diagnostics in a git-ignored file: %s", lsptest.Describe(ds))
	}
	var sum contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e.URI("debug.log")}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != "ignored by git" || sum.Hunks != 0 {
		t.Errorf("review of a git-ignored file: %+v, want it skipped as ignored by git", sum)
	}
	for _, q := range fake.ChatRequests() {
		if q.Chat.SchemaName() == review.SchemaAnalyze && strings.Contains(q.Chat.Text(), "BAD 1") {
			t.Errorf("the git-ignored file was sent to the model:\n%s", q.Chat.Text())
		}
	}
	e.Shutdown()
}

// TestSmudgeFilteredFileIsComparedAsCheckedOut: a file the repository
// stores through a clean filter (git-crypt, Git LFS) is compared with what
// checkout writes, so only the edited lines are checked.
func TestSmudgeFilteredFileIsComparedAsCheckedOut(t *testing.T) {
	repo := lsptest.NewRepo(t, nil)
	const rot13 = "tr A-Za-z N-ZA-Mn-za-m"
	repo.Git("config", "filter.rot13.clean", rot13)
	repo.Git("config", "filter.rot13.smudge", rot13)
	repo.Write(map[string]string{".kody/rules/bad.md": badRuleFile, ".gitattributes": "secret.txt filter=rot13\n", "secret.txt": "BAD kept\nplain\n"})
	repo.Commit("initial")
	repo.Write(map[string]string{"secret.txt": "BAD kept\nBAD new\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("secret.txt")
	s.AwaitIdle("secret.txt")
	if ds := s.Diagnostics("secret.txt"); len(ds) != 1 || ds[0].Range.Start.Line != 1 {
		t.Errorf("diagnostics on lines %v, want the edited line 1 only", lines(ds))
	}
	s.Shutdown()
}
