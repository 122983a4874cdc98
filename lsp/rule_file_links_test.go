package lsp_test

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestRuleFileErrorColumnWithNonASCII: a broken glob after non-ASCII text
// on its line is shown at the glob, in the position encoding the editor
// chose, not some characters before it.
func TestRuleFileErrorColumnWithNonASCII(t *testing.T) {
	const file = ".kody/rules/r.md"
	const line = `path: ["**/ü😀.go", "[bad"]`
	at := strings.Index(line, `"[bad"`)
	for _, tt := range []struct {
		encoding string
		want     uint32
	}{
		{"utf-16", uint32(at) - 1 - 2}, // ü one unit, 😀 two, for 2 and 4 bytes
		{"utf-8", uint32(at)},
	} {
		t.Run(tt.encoding, func(t *testing.T) {
			repo := newWorkspace(t)
			repo.Write(map[string]string{file: "---\ntitle: T\n" + line + "\n---\nBody.\n"})
			s := start(t, repo.Dir, lsp.Options{})
			s.Initialize(lsptest.InitOptions{PositionEncodings: []string{tt.encoding}})
			s.OpenFile(file)
			ds := s.AwaitDiagnostics(file, lsptest.Count(1))
			d := ds[0]
			if d.Severity != protocol.DiagnosticSeverityError || !strings.Contains(lsptest.Message(d), `invalid path glob "[bad"`) {
				t.Fatalf("want the broken glob's error: %s", lsptest.Describe(ds))
			}
			if got := d.Range.Start; got.Line != 2 || got.Character != tt.want {
				t.Errorf("error at %d:%d, want 2:%d, at \"[bad\"", got.Line, got.Character, tt.want)
			}
			s.Shutdown()
		})
	}
}

// TestLinkedRuleFileEditedOnDiskReloads: .kody/rules/alpha.md is a link to
// shared/alpha.md; editing shared/alpha.md on disk reloads the rule, as
// editing a rule file does, even after an edit that broke it.
func TestLinkedRuleFileEditedOnDiskReloads(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	repo := newWorkspace(t)
	repo.Write(map[string]string{"shared/alpha.md": lsptest.RuleFile("Alpha", "alpha", "high", "**/*.go", `oldWord`)})
	if err := os.Symlink("../../shared/alpha.md", repo.Dir+"/.kody/rules/alpha.md"); err != nil {
		t.Fatal(err)
	}
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	s.OpenFile("main.go")
	const added = "var _ = \"oldWord newWord\"\n"
	s.Insert("main.go", protocol.Position{Line: 7, Character: 0}, added)
	alphaAt := func(col int) func([]protocol.Diagnostic) bool {
		return func(ds []protocol.Diagnostic) bool {
			for _, d := range ds {
				if lsptest.Code(d) == "alpha" {
					return d.Range.Start.Line == 7 && d.Range.Start.Character == uint32(col)
				}
			}
			return false
		}
	}
	s.AwaitDiagnostics("main.go", alphaAt(strings.Index(added, "oldWord")))

	if err := os.WriteFile(s.Path("shared/alpha.md"), []byte(lsptest.RuleFile("Alpha", "alpha", "high", "**/*.go", `newWord`)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.AwaitDiagnostics("main.go", alphaAt(strings.Index(added, "newWord")))

	// Broken, then fixed, where the link leads: the fix is seen too.
	if err := os.WriteFile(s.Path("shared/alpha.md"), []byte("---\ntitle: [unclosed\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == "alpha" {
				return false
			}
		}
		return true
	})
	if err := os.WriteFile(s.Path("shared/alpha.md"), []byte(lsptest.RuleFile("Alpha", "alpha", "high", "**/*.go", `oldWord`)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.AwaitDiagnostics("main.go", alphaAt(strings.Index(added, "oldWord")))
	s.Shutdown()
}
