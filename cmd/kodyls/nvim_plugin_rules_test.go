package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const loopBoundRule = "0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f"

// TestNeovimPluginRuleBesideFinding: :KodyRule on a line that also has a
// finding of the AI review opens the rule's file, instead of asking the
// server for a rule named after the finding's label.
func TestNeovimPluginRuleBesideFinding(t *testing.T) {
	eachNeovim(t, func(t *testing.T, nv neovim) {
		fake := llmtest.NewServer()
		defer fake.Close()
		reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
		repo := lsptest.NewRepo(t, map[string]string{
			".kody/rules/loop-bound.md": lsptest.RuleFile("Loop bounds use <", loopBoundRule, "high", "**/*.go", `<= len\(`),
			"main.go":                   reviewGo,
		})
		runPluginScript(t, nv, "rule_and_finding.lua", repo,
			"KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model", "KODYLS_RULE_UUID="+loopBoundRule)
	})
}

// TestNeovimPluginViolationsNotChecked: without a model, :KodyViolations
// lists a rule that has no detector as not checked, on its file, and does
// not echo that there are no violations.
func TestNeovimPluginViolationsNotChecked(t *testing.T) {
	eachNeovim(t, func(t *testing.T, nv neovim) {
		repo := lsptest.NewRepo(t, map[string]string{
			".kody/rules/errors-wrapped.md": "---\ntitle: Errors are wrapped with context\nseverity: medium\npath: [\"**/*.go\"]\n---\nWrap every returned error with fmt.Errorf and %w.\n",
			"main.go":                       reviewGo,
		})
		res := runPluginScript(t, nv, "not_checked.lua", repo)
		if len(res.Quickfix) != 1 {
			t.Fatalf("quickfix: %+v, want the rule not checked", res.Quickfix)
		}
		it := res.Quickfix[0]
		if it.File != filepath.Join(repo.Dir, ".kody", "rules", "errors-wrapped.md") || it.Lnum != 1 || it.Type != "I" ||
			!strings.Contains(it.Text, "not checked offline (no detector, no model): Errors are wrapped with context") {
			t.Errorf("quickfix entry %+v", it)
		}
	})
}
