package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// nameIn is the editor's name of a file of another folder than its root.
func nameIn(t *testing.T, e *lsptest.Session, dir, rel string) string {
	t.Helper()
	r, err := filepath.Rel(e.Root, filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

func violations(t *testing.T, s *lsptest.Session) contract.RuleViolations {
	t.Helper()
	var got contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// styleRule is a rule without a uuid: its id is its path, the same in
// every folder that has it.
func styleRule(title, pattern string) string {
	return "---\ntitle: " + title + "\nseverity: high\npath: [\"**/*.go\"]\nscope: file\n" +
		"detector:\n  type: regex\n  pattern: '" + pattern + "'\n---\n## Instructions\n\n" + title + ".\n"
}

// TestSameRuleIDInTwoFolders: two workspace folders with a rule of the
// same id (here the path-derived one) keep their own rule: the code
// action of B's violation names and opens B's rule, the panel lists each
// folder's rule apart with its own violation, and the rule files of the
// panel (broken, not checked offline) carry the URI of the right folder.
func TestSameRuleIDInTwoFolders(t *testing.T) {
	const id = "path:.kody/rules/style.md"
	a := lsptest.NewRepo(t, map[string]string{
		".kody/rules/style.md": styleRule("A style", `AAA`),
		"main.go":              mainGo,
	})
	b := lsptest.NewRepo(t, map[string]string{
		".kody/rules/style.md":  styleRule("B style", `BBB`),
		".kody/rules/model.md":  "---\ntitle: B judged by the model\nseverity: low\n---\nOnly a model can tell.\n",
		".kody/rules/broken.md": "---\ntitle: [unclosed\n---\nbody\n",
		"main.go":               mainGo,
	})
	s := start(t, a.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{Folders: []string{b.Dir}})
	bMain := nameIn(t, s, b.Dir, "main.go")
	s.OpenFile("main.go")
	s.OpenFile(bMain)
	s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, "\t// AAA\n")
	s.Insert(bMain, protocol.Position{Line: 5, Character: 0}, "\t// BBB\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(id, 5))
	ds := s.AwaitDiagnostics(bMain, lsptest.HasCodeOnLine(id, 5))
	s.AwaitIdle("")

	d, _ := ruleDiagnostic(ds, id)
	actions := s.CodeActions(bMain, d.Range, []protocol.Diagnostic{d})
	var show *protocol.CodeAction
	for i, ac := range actions {
		if strings.HasPrefix(ac.Title, "Show Kody Rule: ") {
			show = &actions[i]
		}
	}
	if show == nil || show.Title != "Show Kody Rule: B style" {
		t.Fatalf("code actions of B's violation: %+v, want \"Show Kody Rule: B style\"", actions)
	}
	var loc protocol.Location
	if err := s.ExecuteCommand(show.Command.Command, show.Command.Arguments[0], &loc); err != nil {
		t.Fatal(err)
	}
	if want := uri.File(filepath.Join(b.Dir, ".kody", "rules", "style.md")); loc.URI != want {
		t.Fatalf("Show Kody Rule of B's violation opened %s, want %s", loc.URI, want)
	}
	// Without a uri, the first folder's.
	if err := s.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: id}, &loc); err != nil {
		t.Fatal(err)
	}
	if want := uri.File(filepath.Join(a.Dir, ".kody", "rules", "style.md")); loc.URI != want {
		t.Fatalf("kodyls.showRule without uri opened %s, want the first folder's %s", loc.URI, want)
	}

	got := violations(t, s)
	byTitle := map[string]contract.ViolationGroup{}
	for _, g := range got.Groups {
		byTitle[g.Rule.Title] = g
	}
	for title, dir := range map[string]string{"A style": a.Dir, "B style": b.Dir} {
		g, ok := byTitle[title]
		if !ok || len(g.Violations) != 1 || g.Violations[0].URI != uri.File(filepath.Join(dir, "main.go")) ||
			g.Rule.URI != uri.File(filepath.Join(dir, ".kody", "rules", "style.md")) {
			t.Errorf("the panel's group of %q is %+v, want its folder's rule file and violation only (groups: %+v)", title, g, got.Groups)
		}
	}
	if len(got.Groups) != 2 {
		t.Errorf("the panel has %d groups, want one per folder's rule: %+v", len(got.Groups), got.Groups)
	}
	if len(got.RuleErrors) != 1 || got.RuleErrors[0].File != ".kody/rules/broken.md" ||
		got.RuleErrors[0].URI != uri.File(filepath.Join(b.Dir, ".kody", "rules", "broken.md")) {
		t.Errorf("ruleErrors = %+v, want B's broken rule file with its URI", got.RuleErrors)
	}
	if len(got.NotChecked) != 1 || got.NotChecked[0].URI != uri.File(filepath.Join(b.Dir, ".kody", "rules", "model.md")) {
		t.Errorf("notChecked = %+v, want B's model rule with its URI", got.NotChecked)
	}
	s.Shutdown()
}
