package fix_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/rca"
)

func TestCheckRejectsHostileEdits(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() { x := 1 }\n// x := 1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, ".env"), []byte("TOKEN=secret\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(outside, "victim.go"), []byte("package victim\n"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "victim.go"), filepath.Join(root, "link.go")))
	cases := []struct {
		edit fix.Edit
		why  string
	}{
		{fix.Edit{File: "../outside.go", OldText: "a", NewText: "b"}, "leaves the workspace"},
		{fix.Edit{File: "/etc/passwd", OldText: "root", NewText: "toor"}, "outside the workspace"},
		{fix.Edit{File: ".env", OldText: "TOKEN=secret", NewText: "TOKEN=x"}, "privacy ignore list"},
		{fix.Edit{File: "main.go", OldText: "y := 2", NewText: "z"}, "oldText is not in the file"},
		{fix.Edit{File: "main.go", OldText: "x := 1", NewText: "_ = 1"}, "occurs 2 times"},
		{fix.Edit{File: "link.go", OldText: "package victim", NewText: "package owned"}, "outside the workspace through a symlink"},
		{fix.Edit{File: ".git/config", OldText: "a", NewText: "b"}, "inside .git"},
	}
	for _, c := range cases {
		_, err := fix.Apply(root, rca.IgnoreList(), []fix.Edit{{File: "main.go", OldText: "package main", NewText: "package main // ok"}, c.edit})
		if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "edit 2") {
			t.Errorf("%+v: err %v, want %q", c.edit, err, c.why)
		}
	}
	// Nothing was written, not even the valid first edit.
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); !strings.HasPrefix(string(data), "package main\n") {
		t.Errorf("main.go changed: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "victim.go")); string(data) != "package victim\n" {
		t.Errorf("the file outside changed: %q", data)
	}
	// A valid set applies in order, the second edit on top of the first.
	written, err := fix.Apply(root, rca.IgnoreList(), []fix.Edit{
		{File: "./main.go", OldText: "func main() { x := 1 }", NewText: "func main() { y := 1 }"},
		{File: filepath.Join(root, "main.go"), OldText: "y := 1", NewText: "_ = 1"},
	})
	if err != nil || len(written) != 1 || written[0] != "main.go" {
		t.Fatalf("apply: %v %v", written, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); !strings.Contains(string(data), "func main() { _ = 1 }") {
		t.Errorf("main.go: %q", data)
	}
}

func TestDiff(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	d, err := fix.Diff(root, nil, []fix.Edit{{File: "a.txt", OldText: "two", NewText: "2"}})
	if err != nil || !strings.Contains(d, "--- a/a.txt") || !strings.Contains(d, "-two\n+2\n") {
		t.Fatalf("diff %q err %v", d, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Apply replaces a file whole (a temporary file renamed over it, so a
// crash never leaves it truncated), keeps its mode and leaves no temporary
// file; a symlink inside the workspace stays a link to the edited file.
func TestApplyReplacesWholeKeepsModeAndLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("echo old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real.go"), []byte("package a // old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	written, err := fix.Apply(dir, nil, []fix.Edit{
		{File: "run.sh", OldText: "old", NewText: "new"},
		{File: "link.go", OldText: "// old", NewText: "// new"},
	})
	if err != nil || len(written) != 2 {
		t.Fatalf("written %v, err %v", written, err)
	}
	st, err := os.Stat(filepath.Join(dir, "run.sh"))
	if data, _ := os.ReadFile(filepath.Join(dir, "run.sh")); err != nil || string(data) != "echo new\n" || st.Mode().Perm() != 0o755 {
		t.Fatalf("run.sh %q mode %v (%v)", data, st.Mode(), err)
	}
	if lst, err := os.Lstat(filepath.Join(dir, "link.go")); err != nil || lst.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.go is no longer a symlink: %v %v", lst.Mode(), err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "real.go")); string(data) != "package a // new\n" {
		t.Fatalf("real.go %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("files left: %v", entries)
	}
}
