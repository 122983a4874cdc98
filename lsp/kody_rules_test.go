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
