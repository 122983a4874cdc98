package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kodustech/kodyls/analysis/workspace"
)

// TestCommandDir: the directory a build command's leading "cd DIR &&"
// enters is where its tools' relative paths start; a DIR the shell would
// expand is not followed.
func TestCommandDir(t *testing.T) {
	root := filepath.FromSlash("/r/mono")
	for _, c := range []struct{ command, want string }{
		{"go build ./...", "/r/mono"},
		{"cd svc && go build ./...", "/r/mono/svc"},
		{"  cd  svc/api&&go vet ./...", "/r/mono/svc/api"},
		{"cd 'my svc' && make", "/r/mono/my svc"},
		{`cd "rs" && cargo build`, "/r/mono/rs"},
		{"cd svc && cd api && go build", "/r/mono/svc/api"},
		{"cd /elsewhere && make", "/elsewhere"},
		{"cd .. && make", "/r"},
		{"cd $HOME && make", "/r/mono"},
		{"cd ~/src && make", "/r/mono"},
		{"cd svc; go build", "/r/mono"},
		{"cd svc || exit 1", "/r/mono"},
		{"make -C svc", "/r/mono"},
	} {
		if got := workspace.CommandDir(root, c.command); got != filepath.FromSlash(c.want) {
			t.Errorf("CommandDir(%q) = %q, want %q", c.command, got, c.want)
		}
	}
}

// TestBuildTimeout: a build stopped at its time limit says so, unlike one
// a newer build cancelled, and its output is not parsed.
func TestBuildTimeout(t *testing.T) {
	svc := offlineServices(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := svc.Folder(dir)
	start := time.Now()
	errs, err := f.StartBuild(context.Background(), "echo 'main.c:1:5: error: boom' >&2; sleep 30", 300*time.Millisecond).Wait()
	var to *workspace.BuildTimeout
	if !errors.Is(err, workspace.ErrBuildTimeout) || errors.Is(err, workspace.ErrBuildCancelled) || !errors.As(err, &to) || to.Timeout != 300*time.Millisecond || len(errs) != 0 {
		t.Fatalf("build past its time limit: %+v, %v", errs, err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the build ran %s after its time limit", time.Since(start))
	}
}

// TestBuildErrorsOutOfPlace: errors naming a file that does not exist or a
// line past the end of their file are dropped; a file outside the
// workspace that exists keeps its errors.
func TestBuildErrorsOutOfPlace(t *testing.T) {
	svc := offlineServices(t)
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "lib.go")
	for p, text := range map[string]string{filepath.Join(dir, "main.go"): "package main\r\n\r\nfunc main() {}", other: "package lib\n"} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := svc.Folder(dir)
	out := "./main.go:3:1: on the last line\n./main.go:4:1: past the end\n./gone.go:1:1: no such file\n" + other + ":1:5: elsewhere\n"
	errs, err := f.StartBuild(context.Background(), "cat >&2 <<'EOF'\n"+out+"EOF\nexit 1", time.Minute).Wait()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Message)
	}
	if len(got) != 2 || got[0] != "on the last line" || got[1] != "elsewhere" {
		t.Fatalf("errors kept: %q, want the one on the last line of main.c and the one in %s", got, other)
	}
}
