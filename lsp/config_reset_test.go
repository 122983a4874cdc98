package lsp_test

import (
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestResetSettingTakesEffect: an editor that sends the user's settings
// both as initializationOptions and in answers to workspace/configuration
// (the VS Code extension does, with only the settings set) resets a
// setting by leaving it out of its next answer: the default applies at
// once, not the value the editor started with.
func TestResetSettingTakesEffect(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "critical", "**/*.go", `fmt\.Println\(`),
		"old.go":                    "package main\n\nvar _ = fmt.Println(0)\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	set := map[string]any{
		"rules": map[string]any{"scope": "file"},
		"llm":   map[string]any{"baseUrl": "http://127.0.0.1:9/v1", "model": "m"},
	}
	s.Settings = set
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"kodyls": set}})
	s.OpenFile("old.go")
	// The whole file: the committed line is reported.
	s.AwaitDiagnostics("old.go", lsptest.HasCodeOnLine(printlnRule, 2))
	s.AwaitIdle("")
	if st := s.Statuses(); len(st) == 0 || st[len(st)-1].State == contract.StateOffline {
		t.Fatalf("with llm.baseUrl and llm.model set, status %+v, want a model in use", st)
	}

	// Every setting reset: the editor answers {}.
	s.Settings = map[string]any{}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	// rules.scope is back to its default, changed lines only.
	s.AwaitDiagnostics("old.go", lsptest.Empty)
	s.AwaitIdle("")
	if st := s.Statuses(); st[len(st)-1].State != contract.StateOffline {
		t.Fatalf("llm.baseUrl reset: status %+v, want %s", st[len(st)-1], contract.StateOffline)
	}
	s.Shutdown()
}

// TestNullConfigurationKeepsInitializationOptions: an editor that has no
// "kodyls" section to answer with (Helix answers null) keeps the settings
// it gave in initializationOptions.
func TestNullConfigurationKeepsInitializationOptions(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "critical", "**/*.go", `fmt\.Println\(`),
		"old.go":                    "package main\n\nvar _ = fmt.Println(0)\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"rules": map[string]any{"scope": "file"}}})
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.OpenFile("old.go")
	s.AwaitDiagnostics("old.go", lsptest.HasCodeOnLine(printlnRule, 2))
	s.Shutdown()
}
