package lsp_test

import (
	"path/filepath"
	"slices"
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

func changeFolders(s *lsptest.Session, added, removed []string) {
	var ev protocol.WorkspaceFoldersChangeEvent
	for _, d := range added {
		ev.Added = append(ev.Added, protocol.WorkspaceFolder{URI: uri.File(d), Name: filepath.Base(d)})
	}
	for _, d := range removed {
		ev.Removed = append(ev.Removed, protocol.WorkspaceFolder{URI: uri.File(d), Name: filepath.Base(d)})
	}
	s.Notify(protocol.MethodWorkspaceDidChangeWorkspaceFolders, &protocol.DidChangeWorkspaceFoldersParams{Event: ev})
}

func violations(t *testing.T, s *lsptest.Session) contract.RuleViolations {
	t.Helper()
	var got contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWorkspaceFoldersAddedAndRemoved: the server says it follows the
// workspace folders, and when the editor adds folder B and removes A
// during the session, B's files get B's Kody Rules (reloaded when a rule
// file of B changes on disk), its broken rule file is listed under its own
// URI, A's open file loses the findings of A's rules, and the panel lists
// only B's.
func TestWorkspaceFoldersAddedAndRemoved(t *testing.T) {
	a := newWorkspace(t)
	b := lsptest.NewRepo(t, map[string]string{
		".kody/rules/println.md": lsptest.RuleFile("B no fmt.Println", "b-println", "high", "**/*.go", `fmt\.Println\(`),
		".kody/rules/broken.md":  "---\ntitle: [unclosed\n---\nbody\n",
		"main.go":                mainGo,
	})
	s := start(t, a.Dir, lsp.Options{})
	res := s.Initialize(lsptest.InitOptions{})
	if w := res.Capabilities.Workspace; w == nil || w.WorkspaceFolders == nil || w.WorkspaceFolders.Supported == nil || !*w.WorkspaceFolders.Supported ||
		w.WorkspaceFolders.ChangeNotifications != protocol.Boolean(true) {
		t.Fatalf("capabilities.workspace = %+v, want workspaceFolders {supported: true, changeNotifications: true}", w)
	}
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, "\tfmt.Println(\"a\")\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 5))

	changeFolders(s, []string{b.Dir}, []string{a.Dir})
	bMain := nameIn(t, s, b.Dir, "main.go")
	s.OpenFile(bMain)
	s.Insert(bMain, protocol.Position{Line: 5, Character: 0}, "\tfmt.Println(\"b\")\n")
	s.AwaitDiagnostics(bMain, lsptest.HasCodeOnLine("b-println", 5))
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.AwaitIdle("")

	got := violations(t, s)
	if len(got.Groups) != 1 || got.Groups[0].Rule.UUID != "b-println" || len(got.Groups[0].Violations) != 1 ||
		got.Groups[0].Violations[0].URI != s.URI(bMain) {
		t.Fatalf("the panel lists %+v, want B's rule with B's violation only", got.Groups)
	}
	if len(got.RuleErrors) != 1 || got.RuleErrors[0].URI != uri.File(filepath.Join(b.Dir, ".kody", "rules", "broken.md")) {
		t.Fatalf("ruleErrors = %+v, want B's broken rule file, named by its URI", got.RuleErrors)
	}
	if !slices.ContainsFunc(s.ViolationsChanged(), func(p contract.RuleViolationsChangedParams) bool {
		return slices.Contains(p.URIs, uri.File(b.Dir))
	}) {
		t.Errorf("no kodyls/ruleViolationsChanged for the added folder: %+v", s.ViolationsChanged())
	}

	// The added folder's rule files are watched.
	b.Write(map[string]string{".kody/rules/println.md": lsptest.RuleFile("B no fmt.Println", "b-println-2", "high", "**/*.go", `fmt\.Println\(`)})
	s.AwaitDiagnostics(bMain, lsptest.HasCodeOnLine("b-println-2", 5))

	// A back: its file is checked with its rules again.
	changeFolders(s, []string{a.Dir}, nil)
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 5))
	s.Shutdown()
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

// TestNestedWorkspaceFolderAddedAndRemoved: a folder added inside
// another takes over the open buffers it holds, which are checked with its
// rules instead of the outer folder's; removed, it gives them back.
func TestNestedWorkspaceFolderAddedAndRemoved(t *testing.T) {
	repo := newWorkspace(t)
	repo.Write(map[string]string{
		"sub/.kody/rules/shout.md": lsptest.RuleFile("No shouting", "sub-shout", "low", "**/*", `SHOUT`),
		"sub/main.go":              mainGo,
	})
	repo.Commit("sub")
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("sub/main.go")
	s.Insert("sub/main.go", protocol.Position{Line: 5, Character: 0}, "\t// TODO SHOUT\n")
	outer := func(ds []protocol.Diagnostic) bool {
		_, todo := ruleDiagnostic(ds, todoRule)
		_, shout := ruleDiagnostic(ds, "sub-shout")
		return todo && !shout
	}
	s.AwaitDiagnostics("sub/main.go", outer)

	sub := filepath.Join(repo.Dir, "sub")
	changeFolders(s, []string{sub}, nil)
	s.AwaitDiagnostics("sub/main.go", func(ds []protocol.Diagnostic) bool {
		_, todo := ruleDiagnostic(ds, todoRule)
		_, shout := ruleDiagnostic(ds, "sub-shout")
		return !todo && shout
	})
	changeFolders(s, nil, []string{sub})
	s.AwaitDiagnostics("sub/main.go", outer)
	s.Shutdown()
}

// TestRemovedFolderTakesItsBuildAlong: the build diagnostics of a folder
// removed from the workspace go with it.
func TestRemovedFolderTakesItsBuildAlong(t *testing.T) {
	a := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	b := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	s := start(t, a.Dir, lsp.Options{})
	s.Settings = map[string]any{"build": map[string]any{"onSave": "echo 'main.c:1:5: error: boom'; exit 1"}}
	s.Initialize(lsptest.InitOptions{Folders: []string{b.Dir}})
	s.AwaitIdle("")
	bMain := nameIn(t, s, b.Dir, "main.c")
	for _, name := range []string{"main.c", bMain} {
		s.OpenFile(name)
		s.Save(name)
		s.AwaitDiagnostics(name, hasBuildDiagnostic)
	}
	changeFolders(s, nil, []string{a.Dir})
	s.AwaitDiagnostics("main.c", func(ds []protocol.Diagnostic) bool { return !hasBuildDiagnostic(ds) })
	s.AwaitIdle("")
	if !hasBuildDiagnostic(s.Diagnostics(bMain)) {
		t.Fatalf("removing folder A cleared the build diagnostics of folder B: %s", lsptest.Describe(s.Diagnostics(bMain)))
	}
	s.Shutdown()
}
