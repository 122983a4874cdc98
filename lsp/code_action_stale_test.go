package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReviewFixRightAfterTyping: "Apply Kody fix" on a review finding,
// asked for at once after a keystroke elsewhere (before the keystroke's
// check moved the finding), carries the edit of the finding's code where
// it is now; for a client that resolves code actions, the action chosen
// right after a keystroke resolves to it.
func TestReviewFixRightAfterTyping(t *testing.T) {
	for _, resolve := range []bool{false, true} {
		name := "edit in the action"
		if resolve {
			name = "edit resolved"
		}
		t.Run(name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
			e := startReviewingIn(t, reviewRepo(t), fake, t.TempDir(), "save", nil, func(o *lsptest.InitOptions) { o.ResolveEdit = resolve })
			e.OpenFile("main.go")
			typeBug(e)
			e.Save("main.go")
			d, _ := ruleDiagnostic(e.AwaitDiagnostics("main.go", hasReviewOnLine(6)), "bug")

			var last *protocol.WorkspaceEdit
			for i := range 40 {
				if !resolve {
					e.Insert("main.go", protocol.Position{Line: 1}, "/")
				}
				var fix *protocol.CodeAction
				for _, a := range e.CodeActions("main.go", d.Range, []protocol.Diagnostic{d}) {
					if strings.HasPrefix(a.Title, "Apply Kody fix: ") {
						fix = &a
					}
				}
				if fix == nil {
					t.Fatalf("keystroke %d: no \"Apply Kody fix\" on a finding whose code was not edited", i+1)
				}
				if resolve {
					if fix.Edit == nil && len(fix.Data) == 0 {
						t.Fatalf("keystroke %d: the fix has neither an edit nor data to resolve: %+v", i+1, fix)
					}
					// The user typed, then chose the action.
					e.Insert("main.go", protocol.Position{Line: 1}, "/")
					var resolved protocol.CodeAction
					if err := e.Call(protocol.MethodCodeActionResolve, fix, &resolved); err != nil {
						t.Fatalf("keystroke %d: codeAction/resolve: %v", i+1, err)
					}
					fix = &resolved
				}
				if fix.Edit == nil {
					t.Fatalf("keystroke %d: \"Apply Kody fix\" has no edit: choosing it does nothing", i+1)
				}
				edits := fix.Edit.Changes[e.URI("main.go")]
				want := e.RegexpRange("main.go", `for i := 0; i <= len\(items\); i\+\+ \{`)
				if len(edits) != 1 || edits[0].Range != want {
					t.Fatalf("keystroke %d: fix edits %+v, want the loop header at %+v", i+1, edits, want)
				}
				last = fix.Edit
			}
			e.ApplyEdit(last)
			if lines := strings.Split(e.Text("main.go"), "\n"); lines[1] != strings.Repeat("/", 40) || lines[6] != "\tfor _, it := range items {" {
				t.Fatalf("after the fix:\n%s", e.Text("main.go"))
			}
			e.Shutdown()
		})
	}
}

// TestStaleDetectorDiagnosticFixesItsOwnViolation: a detector's id names a
// place, so once a line is added above two violations, the lower one's old
// id belongs to the upper one. The quick fix asked for with the editor's
// diagnostic of before the edit fixes the violation that diagnostic
// showed, where it moved, never the one that took its id; a diagnostic
// without a version whose range no longer shows its violation has no fix.
func TestStaleDetectorDiagnosticFixesItsOwnViolation(t *testing.T) {
	s := fixRuleSession(t)
	// a.go is not tracked: every line is checked.
	s.OpenText("a.go", "package main\n\nfunc main() {\n\tfmt.Println(\"first\")\n\tfmt.Println(\"second\")\n}\n")
	ds := s.AwaitDiagnostics("a.go", lsptest.Count(2))
	var second protocol.Diagnostic
	for _, d := range ds {
		if d.Range.Start.Line == 4 {
			second = d
		}
	}
	var data contract.DiagnosticData
	if err := json.Unmarshal(second.Data, &data); err != nil || !strings.HasSuffix(data.ID, ":a.go:5:1") {
		t.Fatalf("the diagnostic of \"second\": %s (%v)", lsptest.Describe(ds), err)
	}

	s.Insert("a.go", protocol.Position{Line: 3}, "\t// added\n")
	s.AwaitIdle("a.go")

	// The editor has not shown the new diagnostics yet, or its panel
	// holds the old ones: the request carries the diagnostic of before.
	fixes := func(d protocol.Diagnostic) []protocol.CodeAction {
		var out []protocol.CodeAction
		for _, a := range s.CodeActions("a.go", d.Range, []protocol.Diagnostic{d}) {
			if strings.HasPrefix(a.Title, "Apply Kody fix") {
				out = append(out, a)
			}
		}
		return out
	}
	// Without its version, the old diagnostic's range shows another text.
	versionless := second
	versionless.Data, _ = json.Marshal(contract.DiagnosticData{ID: data.ID, Rule: data.Rule})
	if got := fixes(versionless); len(got) != 0 {
		t.Errorf("a diagnostic without a version, its range over another violation, offers %+v", got[0].Edit)
	}

	got := fixes(second)
	if len(got) != 1 || got[0].Edit == nil {
		t.Fatalf("fixes of the old diagnostic of \"second\": %+v", got)
	}
	s.ApplyEdit(got[0].Edit)
	want := "package main\n\nfunc main() {\n\t// added\n\tfmt.Println(\"first\")\n\tlog.Info(\"second\")\n}\n"
	if text := s.Text("a.go"); text != want {
		t.Fatalf("the fix of \"second\" changed the buffer to:\n%s\nwant:\n%s", text, want)
	}
	s.Shutdown()
}

// TestPanelFixAfterManyEditsElsewhere: the panel holds a violation of the
// version it was listed at, and is not refreshed while the user types
// elsewhere (the violations did not change). Its "Apply fix" still finds
// the violation after many more checks than the server keeps layouts of.
func TestPanelFixAfterManyEditsElsewhere(t *testing.T) {
	s := fixRuleSession(t)
	s.OpenText("a.go", "package main\n\nfunc main() {\n\tfmt.Println(\"first\")\n}\n\n")
	s.AwaitDiagnostics("a.go", lsptest.Count(1))
	var listed contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &listed); err != nil {
		t.Fatal(err)
	}
	var v *contract.ViolationInfo
	var rule string
	for _, g := range listed.Groups {
		for i := range g.Violations {
			v, rule = &g.Violations[i], g.Rule.UUID
		}
	}
	if v == nil {
		t.Fatalf("the panel lists no violation: %+v", listed)
	}
	for i := range 40 {
		s.Insert("a.go", protocol.Position{Line: 5, Character: uint32(i)}, "x")
		s.AwaitIdle("a.go")
	}
	// As the panel's Apply Fix sends it when the editor's diagnostics are
	// of another version.
	d := protocol.Diagnostic{Range: v.Range, Source: protocol.NewOptional("kody"), Code: protocol.String(rule)}
	d.Data, _ = json.Marshal(contract.DiagnosticData{ID: v.ID, Rule: rule, Version: v.Version})
	var fix *protocol.CodeAction
	for _, a := range s.CodeActions("a.go", d.Range, []protocol.Diagnostic{d}) {
		if strings.HasPrefix(a.Title, "Apply Kody fix") {
			fix = &a
		}
	}
	if fix == nil || fix.Edit == nil {
		t.Fatalf("the panel's violation of version %d has no fix after 40 edits below it", v.Version)
	}
	s.ApplyEdit(fix.Edit)
	if text := s.Text("a.go"); !strings.Contains(text, "\tlog.Info(\"first\")\n") {
		t.Fatalf("the fix changed the buffer to:\n%s", text)
	}
	s.Shutdown()
}

// fixRuleSession starts a server on a repository whose one rule has a
// detector with a replacement (fmt.Println → log.Info), initialized and
// idle.
func fixRuleSession(t *testing.T) *lsptest.Session {
	t.Helper()
	fixRule := "---\ntitle: Log, don't print\nuuid: no-println\nseverity: high\npath: \"**/*.go\"\n" +
		"detector:\n  type: regex\n  pattern: 'fmt\\.Println\\(([^)]*)\\)'\n  replace: 'log.Info($1)'\n---\nUse the logger.\n"
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/println.md": fixRule, "main.go": "package main\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	return s
}
