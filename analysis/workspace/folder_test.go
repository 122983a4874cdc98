package workspace_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const todoRule = "todo-owner"

// mainGo is committed; mainGoEdited adds a TODO on a new line (line 5) and
// keeps the committed one (line 3).
const (
	mainGo       = "package main\n\n// TODO old\nfunc main() {}\n"
	mainGoEdited = "package main\n\n// TODO old\nfunc main() {\n\tx := 1 // TODO new\n\t_ = x\n}\n"
)

// rulesRepo is a repository with a TODO rule for every file, a Kodus
// configuration that ignores generated/, and a committed main.go.
func rulesRepo(t *testing.T) *lsptest.Repo {
	t.Helper()
	return lsptest.NewRepo(t, map[string]string{
		".kody/rules/todo.md": lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `TODO`),
		"kodus-config.yml":    "ignorePaths:\n  - \"generated/**\"\n",
		"main.go":             mainGo,
	})
}

func ids(fs []workspace.RuleFinding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// fileSnapshot is the snapshot `kodyls review` checks for rel, with the
// rules' scope set to the changed lines or the whole file.
func fileSnapshot(f *workspace.Folder, rel, text string, base changes.Baseline, onlyChanged bool) *workspace.Snapshot {
	var settings contract.Settings
	settings.Rules.Scope = contract.ScopeFile
	if onlyChanged {
		settings.Rules.Scope = contract.ScopeChanged
	}
	return f.FileSnapshot(rel, text, base, settings)
}

func TestCheckRules(t *testing.T) {
	repo := rulesRepo(t)
	// Written after the commit: untracked.
	repo.Write(map[string]string{
		"new.go":         "// TODO a\npackage main // TODO b\n",
		"yarn.lock":      "# TODO lock\n",
		"generated/x.go": "// TODO generated\n",
	})
	f := loadFolder(t, offlineServices(t), repo)

	tests := []struct {
		name        string
		rel, text   string
		onlyChanged bool
		want        []string
		// gated: the gate, not the detectors, is why nothing is found.
		gated bool
	}{
		{name: "tracked file, changed lines only", rel: "main.go", text: mainGoEdited, onlyChanged: true,
			want: []string{todoRule + ":main.go:5:11"}},
		{name: "tracked file, every line", rel: "main.go", text: mainGoEdited,
			want: []string{todoRule + ":main.go:3:3", todoRule + ":main.go:5:11"}},
		{name: "tracked file, unchanged", rel: "main.go", text: mainGo, onlyChanged: true},
		{name: "untracked file, every line even with onlyChanged", rel: "new.go", text: "// TODO a\npackage main // TODO b\n", onlyChanged: true,
			want: []string{todoRule + ":new.go:1:3", todoRule + ":new.go:2:16"}},
		{name: "lock file", rel: "yarn.lock", text: "# TODO lock\n", gated: true},
		{name: "ignorePaths of kodus-config.yml", rel: "generated/x.go", text: "// TODO generated\n", gated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := baseline(t, f, tt.rel)
			snap := fileSnapshot(f, tt.rel, tt.text, base, tt.onlyChanged)
			got := snap.CheckRules()
			if !slices.Equal(ids(got), tt.want) {
				t.Fatalf("ids %q, want %q", ids(got), tt.want)
			}
			for _, v := range got {
				if v.ID != workspace.RuleFindingID(v.Rule.UUID, tt.rel, v.Line, v.Start) || v.Match != "TODO" {
					t.Errorf("finding %+v: id or match disagrees with RuleFindingID", v)
				}
			}
			if tt.gated {
				if !snap.Skip.Skip() {
					t.Errorf("the gate lets %s through", tt.rel)
				}
				snap.Skip = ""
				if len(snap.CheckRules()) == 0 {
					t.Errorf("the detectors find nothing in %s either: the case does not test the gate", tt.rel)
				}
			}
		})
	}
}

func TestRuleFindingID(t *testing.T) {
	if got, want := workspace.RuleFindingID("u-1", "dir/a.go", 0, 7), "u-1:dir/a.go:1:7"; got != want {
		t.Fatalf("RuleFindingID = %q, want %q", got, want)
	}
}

func TestBrokenRuleFileDoesNotStopTheOthers(t *testing.T) {
	repo := rulesRepo(t)
	repo.Write(map[string]string{".kody/rules/broken.md": lsptest.RuleFile("Broken", "broken", "high", "**/*", `(unclosed`)})
	f := offlineServices(t).Folder(repo.Dir)
	rs, errs := f.Reload(context.Background())
	if len(rs) != 1 || rs[0].UUID != todoRule {
		t.Fatalf("rules %v, want only %s", rs, todoRule)
	}
	if len(errs) != 1 || errs[0].File != ".kody/rules/broken.md" || errs[0].Line != 9 ||
		!strings.Contains(errs[0].Msg, "invalid detector pattern") {
		t.Fatalf("load errors %v, want the pattern of broken.md on line 9", errs)
	}
	got := fileSnapshot(f, "main.go", mainGoEdited, baseline(t, f, "main.go"), true).CheckRules()
	if !slices.Equal(ids(got), []string{todoRule + ":main.go:5:11"}) {
		t.Fatalf("with a broken rule file the others check %q", ids(got))
	}
}
