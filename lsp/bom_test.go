package lsp_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const bom = "\ufeff"

// TestByteOrderMarkIsNoChange: VS Code, Neovim and Helix strip a file's
// UTF-8 byte order mark from the buffer, other editors keep it. Either
// way the committed first line is unchanged, and a rule's detector does
// not flag it; only the line the user typed is.
func TestByteOrderMarkIsNoChange(t *testing.T) {
	repo := newWorkspace(t)
	const body = "fmt.Println(1)\nfmt.Println(2)\n"
	repo.Write(map[string]string{
		"bom.go":   bom + body, // committed with a BOM
		"plain.go": body,       // committed without
	})
	repo.Commit("files with and without a byte order mark")
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("bom.go", body)       // the editor stripped the BOM
	s.OpenText("plain.go", bom+body) // the editor shows one the commit lacks
	for _, name := range []string{"bom.go", "plain.go"} {
		s.Insert(name, protocol.Position{Line: 2, Character: 0}, "fmt.Println(3)\n")
		s.AwaitDiagnostics(name, lsptest.HasCodeOnLine(printlnRule, 2))
		s.AwaitIdle(name)
		ds := s.Diagnostics(name)
		if len(ds) != 1 {
			t.Errorf("%s: only the typed line 2 changed, got\n%s", name, lsptest.Describe(ds))
		}
	}
	s.Shutdown()
}

// TestUnchangedFileWithByteOrderMarkCostsNoReview: opening and saving a
// committed file whose BOM the editor strips is no change to review: no
// model call, as `kodyls review` makes none for it. (The fake editor saves
// the buffer as it is, without the BOM, as a user who removed it would.)
func TestUnchangedFileWithByteOrderMarkCostsNoReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	const body = "package m\n\nfunc f() int {\n\treturn 1\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{"m.go": bom + body})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.OpenText("m.go", body)
	e.Save("m.go")
	e.AwaitIdle("m.go")
	var sum contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e.URI("m.go")}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Hunks != 0 || sum.Findings != 0 {
		t.Errorf("review of an unchanged file: %+v", sum)
	}
	if n := fake.CountChat(); n != 0 {
		var prompts []string
		for _, r := range fake.ChatRequests() {
			for _, m := range r.Chat.Messages {
				if strings.Contains(m.Content, "package m") {
					prompts = append(prompts, m.Content)
				}
			}
		}
		t.Errorf("%d model calls for an unchanged file; prompts:\n%s", n, strings.Join(prompts, "\n---\n"))
	}
	e.Shutdown()
}
