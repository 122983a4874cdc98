package lsp_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestRuleFileWarningsShowInTheEditor: what `kodyls rules check` warns
// about in a rule file that still loads (an unknown key, a reference to a
// missing file) shows on the open file as warnings at their lines, the rule
// keeps working, and fixing the file clears them.
func TestRuleFileWarningsShowInTheEditor(t *testing.T) {
	const file = ".kody/rules/println.md"
	repo := newWorkspace(t)
	repo.Write(map[string]string{file: "---\ntitle: No Println in handlers\nowner: team-payments\nseverity: high\npath: \"**/*.go\"\n" +
		"detector:\n  type: regex\n  pattern: 'fmt\\.Println\\('\n---\nLog through the logger, as @file:docs/logging.md says.\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile(file)
	ds := s.AwaitDiagnostics(file, lsptest.Count(2))
	var unknown, missing bool
	for _, d := range ds {
		if d.Severity != protocol.DiagnosticSeverityWarning || lsptest.Code(d) != "rule-file" {
			t.Fatalf("want warnings coded rule-file: %s", lsptest.Describe(ds))
		}
		msg := lsptest.Message(d)
		unknown = unknown || (d.Range.Start.Line == 2 && strings.Contains(msg, `unknown key "owner"`))
		missing = missing || (d.Range.Start.Line == 9 && strings.Contains(msg, "docs/logging.md"))
	}
	if !unknown || !missing {
		t.Fatalf("want the unknown key on line 3 and the missing reference on line 10: %s", lsptest.Describe(ds))
	}

	// A warning does not stop the rule.
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 7, Character: 0}, "var _ = fmt.Println(1)\n")
	s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if d.Range.Start.Line == 7 && strings.Contains(lsptest.Message(d), "No Println in handlers") {
				return true
			}
		}
		return false
	})

	s.EditBuffer(file, lsptest.Edit{Range: s.RegexpRange(file, "owner: team-payments\n"), Text: ""})
	s.Save(file)
	ds = s.AwaitDiagnostics(file, lsptest.Count(1))
	if !strings.Contains(lsptest.Message(ds[0]), "docs/logging.md") {
		t.Fatalf("after removing the key: %s", lsptest.Describe(ds))
	}
	repo.Write(map[string]string{"docs/logging.md": "Use slog.\n"})
	s.EditBuffer(file, lsptest.Edit{Range: s.RegexpRange(file, "as @file"), Text: "as  @file"})
	s.Save(file)
	s.AwaitDiagnostics(file, lsptest.Empty)
	s.Shutdown()
}

// TestImportedFileWarningsShowInTheEditor: a file CLAUDE.md imports is no
// rule file of its own, but `kodyls rules check` reports the problems of
// its imports and references on it; opened, it shows them too, and they
// go when the file is fixed on disk.
func TestImportedFileWarningsShowInTheEditor(t *testing.T) {
	repo := newWorkspace(t)
	repo.Write(map[string]string{
		"CLAUDE.md":    "@docs/more.md\n",
		"docs/more.md": "- Follow the style guide — é: @file:docs/style.md\n- Errors are wrapped.\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	s.OpenFile("docs/more.md")
	ds := s.AwaitDiagnostics("docs/more.md", lsptest.Count(1))
	if d := ds[0]; d.Severity != protocol.DiagnosticSeverityWarning || lsptest.Code(d) != "rule-file" || d.Range.Start.Line != 0 ||
		d.Range.Start.Character != 30 || !strings.Contains(lsptest.Message(d), "docs/style.md") {
		// 30 UTF-16 units before the reference ("—" and "é" are one each).
		t.Fatalf("want the missing reference's warning at line 1, character 30: %s", lsptest.Describe(ds))
	}
	repo.Write(map[string]string{"docs/style.md": "Use gofmt.\n"})
	if err := s.ExecuteCommand(contract.CommandReloadRules, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.AwaitDiagnostics("docs/more.md", lsptest.Empty)
	s.Shutdown()
}
