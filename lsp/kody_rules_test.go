package lsp_test

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestRulesNotCheckedOffline: without a model, the panel data lists the
// rules only a model can check, once each, and not as errors; with a model
// configured the list is empty.
func TestRulesNotCheckedOffline(t *testing.T) {
	modelRule := "---\ntitle: Handlers validate their input\nuuid: validate-input\nseverity: high\npath: \"**/*.go\"\n---\nEvery handler validates its input.\n"
	for _, tc := range []struct {
		name string
		init map[string]any
		want int
	}{
		{"offline", nil, 1},
		{"with a model", map[string]any{"llm": map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "model": "m"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := lsptest.NewRepo(t, map[string]string{
				".kody/rules/println.md":  lsptest.RuleFile("No fmt.Println", "println-rule", "high", "**/*.go", `fmt\.Println\(`),
				".kody/rules/validate.md": modelRule,
				"main.go":                 "package main\n",
			})
			s := start(t, repo.Dir, lsp.Options{})
			s.Initialize(lsptest.InitOptions{InitializationOptions: tc.init})
			s.AwaitIdle("")
			var v contract.RuleViolations
			if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
				t.Fatal(err)
			}
			if len(v.NotChecked) != tc.want || len(v.RuleErrors) != 0 {
				t.Fatalf("notChecked %+v ruleErrors %+v, want %d not checked and no errors", v.NotChecked, v.RuleErrors, tc.want)
			}
			if tc.want == 1 && v.NotChecked[0].UUID != "validate-input" {
				t.Fatalf("notChecked %+v", v.NotChecked)
			}
			s.Shutdown()
		})
	}
}

// TestShowRuleOpensItsLine: a rule imported from a list of rules opens on
// its own line of the file.
func TestShowRuleOpensItsLine(t *testing.T) {
	claude := "# Team rules\n\n## Wrap errors\nWrap every error with fmt.Errorf and %w.\n\n## Small functions\nKeep functions under 40 lines.\n"
	repo := lsptest.NewRepo(t, map[string]string{"CLAUDE.md": claude, "main.go": "package main\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	var loc protocol.Location
	var id string
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	for _, r := range v.NotChecked {
		if r.Title == "Small functions" {
			id = r.UUID
		}
	}
	if id == "" {
		t.Fatalf("no rule \"Small functions\" from CLAUDE.md among %+v", v.NotChecked)
	}
	if err := s.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: id}, &loc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(loc.URI), "/CLAUDE.md") || loc.Range.Start.Line != 5 {
		t.Fatalf("showRule %s at line %d, want CLAUDE.md line 5 (0-based)", loc.URI, loc.Range.Start.Line)
	}
	shown := s.Shown()
	if len(shown) != 1 || shown[0].Selection == nil || shown[0].Selection.Start.Line != 5 {
		t.Fatalf("showDocument %+v", shown)
	}
	s.Shutdown()
}

// TestDetectorFix: a detector with a replacement offers "Apply Kody fix" on
// its violation; applying it clears the diagnostic, and the panel marks the
// violation fixable. A violation of a detector without one has no fix.
func TestDetectorFix(t *testing.T) {
	fixRule := "---\ntitle: Log, don't print\nuuid: no-println\nseverity: high\npath: \"**/*.go\"\n" +
		"detector:\n  type: regex\n  pattern: 'fmt\\.Println\\(([^)]*)\\)'\n  replace: 'log.Print($1)'\n---\nUse the logger.\n"
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/println.md": fixRule,
		".kody/rules/todo.md":    lsptest.RuleFile("TODO needs an owner", "todo-owner", "low", "**/*.go", `TODO\b`),
		"main.go":                "package main\n\nfunc main() {\n}\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 3}, "\tfmt.Println(\"hi\", n) // TODO\n")
	diags := s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine("no-println", 3))

	var violation, todo protocol.Diagnostic
	for _, d := range diags {
		switch lsptest.Code(d) {
		case "no-println":
			violation = d
		case "todo-owner":
			todo = d
		}
	}
	for _, a := range s.CodeActions("main.go", todo.Range, []protocol.Diagnostic{todo}) {
		if strings.HasPrefix(a.Title, "Apply Kody fix") {
			t.Fatalf("a detector without replace offers a fix: %+v", a)
		}
	}
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	fixable := map[string]bool{}
	for _, g := range v.Groups {
		for _, vi := range g.Violations {
			fixable[g.Rule.UUID] = vi.Fixable
		}
	}
	if !fixable["no-println"] || fixable["todo-owner"] {
		t.Fatalf("panel fixable = %v, want no-println only", fixable)
	}

	var fix *protocol.CodeAction
	for _, a := range s.CodeActions("main.go", violation.Range, []protocol.Diagnostic{violation}) {
		if a.Title == "Apply Kody fix: Log, don't print" {
			fix = &a
		}
	}
	if fix == nil {
		t.Fatal("no \"Apply Kody fix\" action on the detector's violation")
	}
	s.ApplyEdit(fix.Edit)
	if got, want := s.Text("main.go"), "package main\n\nfunc main() {\n\tlog.Print(\"hi\", n) // TODO\n}\n"; got != want {
		t.Fatalf("after the fix:\n%s\nwant:\n%s", got, want)
	}
	s.AwaitIdle("main.go")
	for _, d := range s.Diagnostics("main.go") {
		if lsptest.Code(d) == "no-println" {
			t.Fatalf("the fixed violation is still shown: %+v", d)
		}
	}

	s.Shutdown()
}
