package workspace_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The editor's checks, which carry their results from one version to the
// next, find what `kodyls review` finds in each version, while the text,
// the rules' scope and the rule files change.
func TestCheckRulesWithDetectionsEqualsFromScratch(t *testing.T) {
	repo := rulesRepo(t)
	f := loadFolder(t, offlineServices(t), repo)
	base := baseline(t, f, "main.go")
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"// TODO x", "fmt.Println(1)", "\tdebug(1)", "}", "", "func main() {", "TODO"}
	lines := strings.Split(mainGoEdited, "\n")
	var det workspace.Detections
	found := map[string]bool{}
	for version := int32(1); version <= 200; version++ {
		i := r.IntN(len(lines))
		switch r.IntN(3) {
		case 0:
			lines[i] = pieces[r.IntN(len(pieces))]
		case 1:
			lines = append(lines[:i], append([]string{pieces[r.IntN(len(pieces))]}, lines[i:]...)...)
		default:
			if len(lines) > 1 {
				lines = append(lines[:i], lines[i+1:]...)
			}
		}
		text := strings.Join(lines, "\n")
		settings := contract.Defaults()
		if r.IntN(4) == 0 {
			settings.Rules.Scope = contract.ScopeFile
		}
		switch version {
		case 60: // a new rule file
			repo.Write(map[string]string{".kody/rules/print.md": lsptest.RuleFile("No printing", "no-print", "high", "**/*.go", `fmt\.Println\(`)})
			reload(t, f)
		case 120: // a rule's pattern changed
			repo.Write(map[string]string{".kody/rules/print.md": lsptest.RuleFile("No debugging", "no-print", "high", "**/*.go", `\bdebug\(`)})
			reload(t, f)
		}
		editor := &workspace.Snapshot{
			URI: "file://" + f.Root + "/main.go", Path: f.Root + "/main.go", Rel: "main.go", Language: "go",
			Folder: f, Version: version, Text: text, Baseline: base, BaselineReady: true, Settings: settings,
			Detections: &det,
		}
		got := editor.CheckRules()
		want := f.FileSnapshot("main.go", text, base, settings).CheckRules()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("version %d, text %q:\neditor %q\nreview %q", version, text, ids(got), ids(want))
		}
		for _, v := range got {
			if v.Rule.UUID == "no-print" {
				found[v.Match] = true
			}
		}
	}
	if !found["fmt.Println("] || !found["debug("] {
		t.Fatalf("the new rule found %v: the test does not follow the rule changes", found)
	}
}

func reload(t *testing.T, f *workspace.Folder) {
	t.Helper()
	if _, errs := f.Reload(context.Background()); len(errs) != 0 {
		t.Fatalf("rule files do not load: %v", errs)
	}
}
