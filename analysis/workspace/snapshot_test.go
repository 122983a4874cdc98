package workspace_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

func TestSnapshotChecked(t *testing.T) {
	repo := rulesRepo(t)
	f := loadFolder(t, offlineServices(t), repo)
	base := baseline(t, f, "main.go")
	settings := contract.Defaults()
	settings.Rules.Scope = contract.ScopeFile

	tests := []struct {
		name string
		snap *workspace.Snapshot
		want bool
	}{
		{"outside every folder", &workspace.Snapshot{Rel: "main.go", Text: mainGoEdited, Baseline: base, BaselineReady: true, Settings: settings}, false},
		{"a rule file", &workspace.Snapshot{Folder: f, Rel: ".kody/rules/todo.md", RuleFile: true, Text: "TODO\n", BaselineReady: true, Settings: settings}, false},
		{"baseline not read yet", &workspace.Snapshot{Folder: f, Rel: "main.go", Text: mainGoEdited, Settings: settings}, false},
		{"checked", &workspace.Snapshot{Folder: f, Rel: "main.go", Text: mainGoEdited, Baseline: base, BaselineReady: true, Settings: settings}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.snap.Checked(); got != tt.want {
				t.Fatalf("Checked() = %v, want %v", got, tt.want)
			}
			// A document that is not checked has no rule findings, though
			// every one of them has a TODO.
			if got := tt.snap.CheckRules(); (len(got) > 0) != tt.want {
				t.Fatalf("CheckRules() = %q", ids(got))
			}
		})
	}
}

func TestSnapshotRules(t *testing.T) {
	disabled := strings.Replace(lsptest.RuleFile("Off", "off", "low", "**/*", `x`), "scope: file\n", "scope: file\nenabled: false\n", 1)
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/todo.md": lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `TODO`),
		".kody/rules/go.md":   lsptest.RuleFile("No panic", "no-panic", "high", "**/*.go", `panic\(`),
		".kody/rules/off.md":  disabled,
		".kody/rules/py.md":   strings.Replace(lsptest.RuleFile("No print", "no-print", "low", "**/*", `print\(`), "scope: file\n", "scope: file\nlanguages: [python]\n", 1),
		"main.go":             mainGo,
	})
	f := loadFolder(t, offlineServices(t), repo)
	if len(f.Rules()) != 4 {
		t.Fatalf("%d rules loaded, want 4", len(f.Rules()))
	}
	tests := []struct {
		rel, language string
		want          []string
	}{
		{"main.go", "go", []string{"no-panic", todoRule}},
		{"cmd/tool/main.go", "go", []string{"no-panic", todoRule}},
		{"README.md", "", []string{todoRule}},
		{"tool.py", "python", []string{"no-print", todoRule}},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			snap := &workspace.Snapshot{Folder: f, Rel: tt.rel, Language: tt.language}
			var got []string
			for _, r := range snap.Rules() {
				got = append(got, r.UUID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Rules() = %q, want %q", got, tt.want)
			}
		})
	}
	if rs := (&workspace.Snapshot{Rel: "main.go"}).Rules(); rs != nil {
		t.Fatalf("outside every folder Rules() = %v", rs)
	}
}

func TestSnapshotCheckRulesFollowsSettings(t *testing.T) {
	repo := rulesRepo(t)
	repo.Write(map[string]string{"new.go": "// TODO a\n"})
	f := loadFolder(t, offlineServices(t), repo)
	tests := []struct {
		name, rel, text string
		scope           string
		skip            gate.Reason
		want            []string
	}{
		{"changed scope", "main.go", mainGoEdited, contract.ScopeChanged, "", []string{todoRule + ":main.go:5:11"}},
		{"file scope", "main.go", mainGoEdited, contract.ScopeFile, "", []string{todoRule + ":main.go:3:3", todoRule + ":main.go:5:11"}},
		{"changed scope, untracked file", "new.go", "// TODO a\n", contract.ScopeChanged, "", []string{todoRule + ":new.go:1:3"}},
		{"skipped by the gate", "main.go", mainGoEdited, contract.ScopeFile, "generated file", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := contract.Defaults()
			settings.Rules.Scope = tt.scope
			snap := &workspace.Snapshot{
				URI: "file://" + filepath.ToSlash(filepath.Join(f.Root, tt.rel)), Path: filepath.Join(f.Root, tt.rel), Rel: tt.rel,
				Folder: f, Version: 1, Text: tt.text, Baseline: baseline(t, f, tt.rel), BaselineReady: true,
				Settings: settings, Skip: tt.skip,
			}
			if got := ids(snap.CheckRules()); !slices.Equal(got, tt.want) {
				t.Fatalf("CheckRules() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSnapshotChangedLines(t *testing.T) {
	repo := rulesRepo(t)
	repo.Write(map[string]string{"new.go": "a\nb\n"})
	f := loadFolder(t, offlineServices(t), repo)
	tests := []struct {
		name  string
		snap  *workspace.Snapshot
		all   bool
		lines []int
	}{
		{"tracked file", &workspace.Snapshot{Folder: f, Rel: "main.go", Text: mainGoEdited, Baseline: baseline(t, f, "main.go"), BaselineReady: true}, false, []int{3, 4, 5, 6}},
		{"untracked file", &workspace.Snapshot{Folder: f, Rel: "new.go", Text: "a\nb\n", Baseline: baseline(t, f, "new.go"), BaselineReady: true}, true, nil},
		{"baseline not read yet", &workspace.Snapshot{Folder: f, Rel: "main.go", Text: mainGo}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := tt.snap.ChangedLines()
			if set.All() != tt.all || (!tt.all && !slices.Equal(set.Lines(), tt.lines)) {
				t.Fatalf("ChangedLines() all=%v lines=%v, want all=%v lines=%v", set.All(), set.Lines(), tt.all, tt.lines)
			}
		})
	}
}

// The snapshot's model rules are its rules without a detector: a rule the
// detectors check on every keystroke never reaches the model.
func TestSnapshotModelRules(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/todo.md":  lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `TODO`),
		".kody/rules/model.md": "---\ntitle: Handlers validate their input\nuuid: validate\npath: \"**/*.go\"\n---\nEvery handler validates its input.\n",
		"main.go":              mainGo,
	})
	f := loadFolder(t, offlineServices(t), repo)
	ids := func(rs []*rules.Rule) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.UUID)
		}
		slices.Sort(out)
		return out
	}
	snap := &workspace.Snapshot{Folder: f, Rel: "main.go", Language: "go"}
	if got, want := ids(snap.Rules()), []string{todoRule, "validate"}; !slices.Equal(got, want) {
		t.Fatalf("Rules() = %q, want %q", got, want)
	}
	if got := ids(snap.ModelRules()); !slices.Equal(got, []string{"validate"}) {
		t.Fatalf("ModelRules() = %q, want only the rule without a detector", got)
	}
	if got := ids((&workspace.Snapshot{Folder: f, Rel: "README.md"}).ModelRules()); len(got) != 0 {
		t.Fatalf("ModelRules() of README.md = %q, want none: the rule is for Go files", got)
	}
}
