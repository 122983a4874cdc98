package rulecheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kodustech/kodyls/analysis/rules"
)

func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("config", "user.name", "t")
	run("config", "user.email", "t@kodyls.invalid")
	for name, content := range files {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	return dir
}

const rule = "---\ntitle: No TODO\nuuid: r1\nseverity: low\ndetector:\n  type: regex\n  pattern: 'TODO'\n---\n"

func TestCheckOnlyChangedLines(t *testing.T) {
	dir := gitRepo(t, map[string]string{".kody/rules/todo.md": rule, "a.txt": "one TODO\ntwo\n"})
	e := New(dir)
	rs, errs := e.Reload(context.Background())
	if len(rs) != 1 || len(errs) != 0 {
		t.Fatalf("rules %d errs %v", len(rs), errs)
	}
	path := filepath.Join(dir, "a.txt")
	current := "one TODO\ntwo TODO\nthree\n"
	// Before the baseline is known every line counts.
	if got := e.Check(path, current, true); len(got) != 2 {
		t.Fatalf("without a baseline: %d violations, want 2", len(got))
	}
	if _, err := e.RefreshBaseline(context.Background(), path, "HEAD"); err != nil {
		t.Fatal(err)
	}
	got := e.Check(path, current, true)
	if len(got) != 1 || got[0].Line != 1 {
		t.Fatalf("changed lines only: %+v, want the TODO on line 1", got)
	}
	if got := e.Check(path, current, false); len(got) != 2 {
		t.Fatalf("whole file: %d, want 2", len(got))
	}
	e.ForgetBaseline(path)
	if _, ok := e.Baseline(path); ok {
		t.Fatal("baseline kept after ForgetBaseline")
	}
}

func TestPathsOutsideTheWorkspace(t *testing.T) {
	dir := gitRepo(t, map[string]string{".kody/rules/todo.md": rule})
	e := New(dir)
	e.Reload(context.Background())
	if got := e.Check(filepath.Join(filepath.Dir(dir), "elsewhere.txt"), "TODO\n", false); got != nil {
		t.Fatalf("a file outside the workspace was checked: %+v", got)
	}
	if _, ok := e.Rel(dir + "-sibling/x.go"); ok {
		t.Fatal("a sibling directory with the same prefix counts as inside")
	}
	if !e.IsRuleFile(filepath.Join(dir, ".kody/rules/sub/x.md")) || e.IsRuleFile(filepath.Join(dir, "docs/x.md")) {
		t.Fatal("IsRuleFile")
	}
}

func TestOutsideRepoUsesDiskContent(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	_ = os.MkdirAll(filepath.Join(dir, ".kody/rules"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".kody/rules/todo.md"), []byte(rule), 0o644)
	path := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(path, []byte("old TODO\n"), 0o644)
	e := New(dir)
	e.Reload(context.Background())
	if _, err := e.RefreshBaseline(context.Background(), path, "HEAD"); err != nil {
		t.Fatal(err)
	}
	got := e.Check(path, "old TODO\nnew TODO\n", true)
	if len(got) != 1 || got[0].Line != 1 {
		t.Fatalf("outside a repository the content on disk is the baseline: %+v", got)
	}
}

func TestRegistryDecidesRuleFiles(t *testing.T) {
	dir := gitRepo(t, map[string]string{".kody/rules/todo.md": rule})
	e := NewWithRegistry(dir, rules.NewRegistry())
	if rs, errs := e.Reload(context.Background()); len(rs) != 0 || len(errs) != 0 {
		t.Fatalf("a registry with no sources loaded %d rules, %v", len(rs), errs)
	}
	if e.IsRuleFile(filepath.Join(dir, ".kody/rules/todo.md")) {
		t.Fatal("a file no source owns counts as a rule file")
	}
	if d := New(dir); d.Registry() == nil || !d.IsRuleFile(filepath.Join(dir, ".kody/rules/todo.md")) {
		t.Fatal("New does not use the default registry")
	}
}
