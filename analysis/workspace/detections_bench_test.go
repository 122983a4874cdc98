package workspace_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// detectorPatterns are the shapes of the benchmark's rules, %d replaced by
// the rule's number: common patterns with no literal prefix for the regexp
// package to search for.
var detectorPatterns = []string{
	`\bbadIdent%d\(`,
	`(log|fmt)\.Printf?\("debug%d`,
	`(?i)todo-%d\b`,
	`TODO%d|FIXME%d`,
}

// detectorFolder is a loaded folder with n detector rules for Go files.
func detectorFolder(tb testing.TB, n int) *workspace.Folder {
	tb.Helper()
	files := map[string]string{}
	for i := range n {
		pat := strings.ReplaceAll(detectorPatterns[i%len(detectorPatterns)], "%d", strconv.Itoa(i))
		files[fmt.Sprintf(".kody/rules/r%03d.md", i)] = lsptest.RuleFile(fmt.Sprintf("Rule %d", i), fmt.Sprintf("rule-%d", i), "low", "**/*.go", pat)
	}
	repo := lsptest.NewRepo(tb, files)
	svc := workspace.Open(context.Background(), workspace.Config{Settings: contract.Defaults(), NoStore: true})
	tb.Cleanup(svc.Close)
	f := svc.Folder(repo.Dir)
	if rs, errs := f.Reload(context.Background()); len(errs) != 0 || len(rs) != n {
		tb.Fatalf("loaded %d rules, errors %v", len(rs), errs)
	}
	return f
}

// untrackedSnapshot is the editor's snapshot of an untracked file: every
// line is checked.
func untrackedSnapshot(f *workspace.Folder, rel, text string, version int32) *workspace.Snapshot {
	return &workspace.Snapshot{
		URI: "file://" + filepath.ToSlash(filepath.Join(f.Root, rel)), Path: filepath.Join(f.Root, rel), Rel: rel,
		Language: "go", Folder: f, Version: version, Text: text,
		Baseline: changes.Baseline{Kind: changes.Untracked}, BaselineReady: true, Settings: contract.Defaults(),
	}
}

// bigGo is a 5,000-line Go file and the same with one character typed on
// line 2500.
func bigGo() (string, string) {
	var sb strings.Builder
	sb.WriteString("package main\n\n")
	for i := range 4998 {
		fmt.Fprintf(&sb, "var v%d = fmt.Sprint(%d) // ordinary line\n", i, i)
	}
	text := sb.String()
	typed := strings.Replace(text, "var v2498 = ", "var v2498x = ", 1)
	return text, typed
}

// BenchmarkCheckRulesKeystroke5000Lines is the detectors' share of a
// keystroke in an untracked 5,000-line file: one character typed on line
// 2500, then removed, and so on. from-scratch checks every line of every
// version, as `kodyls review` checks a file once (and as the editor did
// before it kept Detections); incremental is the editor's check with them.
func BenchmarkCheckRulesKeystroke5000Lines(b *testing.B) {
	text, typed := bigGo()
	for _, n := range []int{30, 300} {
		f := detectorFolder(b, n)
		b.Run(fmt.Sprintf("untracked-%d-rules/from-scratch", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				t := text
				if i%2 == 1 {
					t = typed
				}
				untrackedSnapshot(f, "big.go", t, int32(i)).CheckRules()
				i++
			}
		})
		b.Run(fmt.Sprintf("untracked-%d-rules/incremental", n), func(b *testing.B) {
			var det workspace.Detections
			snap := untrackedSnapshot(f, "big.go", text, 0)
			snap.Detections = &det
			snap.CheckRules() // the check when the file was opened
			i := 1
			for b.Loop() {
				t := text
				if i%2 == 1 {
					t = typed
				}
				snap := untrackedSnapshot(f, "big.go", t, int32(i))
				snap.Detections = &det
				snap.CheckRules()
				i++
			}
		})
	}
}
