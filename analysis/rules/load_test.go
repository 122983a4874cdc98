package rules

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestLoadDirFixture(t *testing.T) {
	rules, errs := DefaultRegistry().Load(context.Background(), filepath.Join("testdata", "workspace"))
	if len(rules) != 2 {
		t.Fatalf("got %d rules, want 2: %+v", len(rules), rules)
	}
	if rules[0].File != ".kody/rules/go/no-panic.md" || rules[1].File != ".kody/rules/no-todo.md" {
		t.Errorf("rules not sorted by File: %q, %q", rules[0].File, rules[1].File)
	}
	if rules[0].UUID != "path:.kody/rules/go/no-panic.md" || rules[1].UUID != "11111111-2222-3333-4444-555555555555" {
		t.Errorf("UUIDs = %q, %q", rules[0].UUID, rules[1].UUID)
	}
	if rules[0].Severity != SeverityCritical || !rules[0].AppliesTo("internal/handlers/user/get.go") || rules[0].AppliesTo("cmd/main.go") {
		t.Errorf("no-panic rule loaded wrong: %+v", rules[0])
	}
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	e := errs[0]
	if e.File != ".kody/rules/broken.md" || e.Line != 6 || e.Column != 3 || !strings.Contains(e.Msg, "lookbehind") {
		t.Errorf("error = %v", e)
	}
}

// writeFile creates a file and its directories under dir.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const okRule = "---\ntitle: OK\n---\nBody.\n"

func TestLoadDirMissing(t *testing.T) {
	dir := t.TempDir()
	rules, errs := DefaultRegistry().Load(context.Background(), dir)
	if rules != nil || errs != nil {
		t.Errorf("Load without .kody/rules = %v, %v; want nothing", rules, errs)
	}

	// A missing workspace root, by contrast, is a problem worth saying.
	_, errs = DefaultRegistry().Load(context.Background(), filepath.Join(dir, "nope"))
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "cannot open workspace root") {
		t.Errorf("Load of a missing root: %v", errs)
	}

	// .kody/rules as a file is reported.
	writeFile(t, dir, ".kody/rules", "oops")
	_, errs = DefaultRegistry().Load(context.Background(), dir)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "is not a directory") {
		t.Errorf("Load with a file for .kody/rules: %v", errs)
	}
}

func TestLoadDirSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := writeFile(t, base, "secret.md", "---\ntitle: Outside\n---\n")
	writeFile(t, root, ".kody/rules/real.md", okRule)
	writeFile(t, root, "shared/linked.md", "---\ntitle: Linked\n---\n")
	rulesDir := filepath.Join(root, ".kody", "rules")
	links := map[string]string{
		"escape.md":   "../../../secret.md",     // relative, leaves the root
		"absolute.md": outside,                  // absolute, never allowed by os.Root
		"inside.md":   "../../shared/linked.md", // relative, stays inside
		"dirlink":     "../../shared",           // a directory: not followed
		"dangling.md": "nowhere.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(rulesDir, name)); err != nil {
			t.Fatal(err)
		}
	}

	rules, errs := DefaultRegistry().Load(context.Background(), root)
	var titles []string
	for _, r := range rules {
		titles = append(titles, r.Title)
	}
	if strings.Join(titles, ",") != "Linked,OK" {
		t.Errorf("loaded %q, want the inside link and the real file", titles)
	}
	got := map[string]string{}
	for _, e := range errs {
		got[e.File] = e.Msg
	}
	for _, f := range []string{"escape.md", "absolute.md", "dangling.md"} {
		msg, ok := got[".kody/rules/"+f]
		if !ok || !strings.Contains(msg, "cannot follow symbolic link") {
			t.Errorf("%s: error %q, want a symbolic link error", f, msg)
		}
	}
	if len(errs) != 3 {
		t.Errorf("errors = %v, want 3", errs)
	}
	for _, r := range rules {
		if r.Title == "Outside" {
			t.Error("a rule outside the workspace was read")
		}
	}
}

func TestLoadDirSkipsAndLimits(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody/rules/a.md", okRule)
	writeFile(t, root, ".kody/rules/b.MD", "---\ntitle: Upper-case extension\n---\n")
	writeFile(t, root, ".kody/rules/.hidden.md", "not a rule")
	writeFile(t, root, ".kody/rules/.git/x.md", "not a rule")
	writeFile(t, root, ".kody/rules/notes.txt", "not a rule")
	big := "---\ntitle: Big\n---\n" + strings.Repeat("x", MaxFileSize)
	writeFile(t, root, ".kody/rules/big.md", big)
	writeFile(t, root, ".kody/rules/deep/er/c.md", okRule)

	rules, errs := DefaultRegistry().Load(context.Background(), root)
	var files []string
	for _, r := range rules {
		files = append(files, r.File)
	}
	if strings.Join(files, " ") != ".kody/rules/a.md .kody/rules/b.MD .kody/rules/deep/er/c.md" {
		t.Errorf("loaded %q", files)
	}
	if len(errs) != 1 || errs[0].File != ".kody/rules/big.md" || !strings.Contains(errs[0].Msg, "too large") || errs[0].Line != 0 {
		t.Errorf("errors = %v, want one size error for big.md", errs)
	}
}

func TestLoadDirDuplicateUUID(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody/rules/a.md", "---\ntitle: A\nuuid: same\n---\n")
	writeFile(t, root, ".kody/rules/b.md", "---\ntitle: B\nseverity: low\nuuid: same\n---\n")
	rules, errs := DefaultRegistry().Load(context.Background(), root)
	if len(rules) != 1 || rules[0].Title != "A" {
		t.Errorf("rules = %+v, want only A", rules)
	}
	if len(errs) != 1 || errs[0].Error() != `.kody/rules/b.md:4:1: duplicate uuid "same": .kody/rules/a.md already uses it; give each rule its own uuid` {
		t.Errorf("errors = %v", errs)
	}
}

func TestLoadDirCancelled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody/rules/a.md", okRule)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rules, errs := DefaultRegistry().Load(ctx, root)
	if len(rules) != 0 || len(errs) != 0 {
		t.Errorf("Load with a cancelled context = %v, %v", rules, errs)
	}
}
