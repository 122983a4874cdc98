package fix_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/fix"
)

// twoFiles is a workspace with a.go and sub/b.go, and edits of both.
func twoFiles(t *testing.T) (string, []fix.Edit) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "b.go"), []byte("package sub // old\n"), 0o644))
	return dir, []fix.Edit{
		{File: "a.go", OldText: "// old", NewText: "// new"},
		{File: "sub/b.go", OldText: "// old", NewText: "// new"},
	}
}

func content(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestApplyWritesNothingWhenAFileCannotBeWritten: a file that cannot be
// written (here its temporary file's name is taken by a directory, which
// stops root as well as a read-only directory stops a user) leaves the
// files before it in order unwritten too, and no temporary file behind.
func TestApplyWritesNothingWhenAFileCannotBeWritten(t *testing.T) {
	dir, edits := twoFiles(t)
	blocker := filepath.Join(dir, "sub", "b.go.kodyls-fix.tmp")
	must(t, os.Mkdir(blocker, 0o755))
	written, err := fix.Apply(dir, nil, edits)
	if err == nil || len(written) != 0 || !strings.Contains(err.Error(), "sub/b.go") {
		t.Fatalf("written %v, err %v; want nothing written and the error of sub/b.go", written, err)
	}
	if got := content(t, filepath.Join(dir, "a.go")); got != "package a // old\n" {
		t.Errorf("a.go was written: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.go.kodyls-fix.tmp")); !os.IsNotExist(err) {
		t.Errorf("a.go's temporary file was left: %v", err)
	}
	if st, err := os.Stat(blocker); err != nil || !st.IsDir() {
		t.Errorf("the directory in the way was removed: %v", err)
	}
}

// TestApplyReportsWhatARenameFailureLeftWritten: when a file cannot be
// replaced after others were, Apply returns those written, and the
// error names the file that was not; no temporary file stays.
func TestApplyReportsWhatARenameFailureLeftWritten(t *testing.T) {
	dir, edits := twoFiles(t)
	b := filepath.Join(dir, "sub", "b.go")
	defer fix.SetBeforeCommit(func() {
		// sub/b.go becomes a directory that holds a file: nothing can be
		// renamed over it.
		must(t, os.Remove(b))
		must(t, os.MkdirAll(filepath.Join(b, "x"), 0o755))
	})()
	written, err := fix.Apply(dir, nil, edits)
	if err == nil || !slices.Equal(written, []string{"a.go"}) || !strings.Contains(err.Error(), "sub/b.go") {
		t.Fatalf("written %v, err %v; want a.go written and the error of sub/b.go", written, err)
	}
	if got := content(t, filepath.Join(dir, "a.go")); got != "package a // new\n" {
		t.Errorf("a.go: %q", got)
	}
	if _, err := os.Stat(b + ".kodyls-fix.tmp"); !os.IsNotExist(err) {
		t.Errorf("sub/b.go's temporary file was left: %v", err)
	}
}

// TestApplyWritesNothingWhenALinkTargetCannotBeWritten: a symlink is
// written through, and a target that cannot be opened for writing stops
// the fix before any file is replaced.
func TestApplyWritesNothingWhenALinkTargetCannotBeWritten(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a read-only file")
	}
	dir, edits := twoFiles(t)
	b := filepath.Join(dir, "sub", "b.go")
	must(t, os.Rename(b, filepath.Join(dir, "sub", "real.go")))
	must(t, os.Symlink("real.go", b))
	must(t, os.Chmod(filepath.Join(dir, "sub", "real.go"), 0o444))
	written, err := fix.Apply(dir, nil, edits)
	if err == nil || len(written) != 0 {
		t.Fatalf("written %v, err %v; want nothing written", written, err)
	}
	if got := content(t, filepath.Join(dir, "a.go")); got != "package a // old\n" {
		t.Errorf("a.go was written: %q", got)
	}
}

// TestApplyRefusesOneFileUnderTwoNames: edits of a file and of a symbolic
// link to it would write it twice, the second write losing the first's
// edit while both are reported written; the plan is refused and nothing
// is written.
func TestApplyRefusesOneFileUnderTwoNames(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a_target.go"), []byte("package a\n\nvar A = 1\nvar B = 2\n"), 0o644))
	must(t, os.Symlink("a_target.go", filepath.Join(dir, "z_link.go")))
	written, err := fix.Apply(dir, nil, []fix.Edit{
		{File: "a_target.go", OldText: "var A = 1", NewText: "var A = 10"},
		{File: "z_link.go", OldText: "var B = 2", NewText: "var B = 20"},
	})
	if err == nil || len(written) != 0 || !strings.Contains(err.Error(), "same file") {
		t.Fatalf("written %v, err %v; want the plan refused", written, err)
	}
	if got := content(t, filepath.Join(dir, "a_target.go")); got != "package a\n\nvar A = 1\nvar B = 2\n" {
		t.Errorf("the file was written: %q", got)
	}
}
