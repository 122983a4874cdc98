package fix

import (
	"context"
	"strings"
	"testing"
)

// TestBuildInASubdirectory: a build run in a directory of the workspace
// reads its definitions there, judges its relative paths from there, and
// runs there in the scratch copy; a directory outside the workspace is
// refused.
func TestBuildInASubdirectory(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"svc/Makefile":  "all:\n\tsh tools/gen\n",
		"svc/tools/gen": "echo gen\n",
		"svc/build.sh":  "go build ./...\n",
		"svc/main.go":   "package main\n",
	})
	g := newBuildGuard(root, "svc", "sh build.sh && make")
	for _, rel := range []string{"svc/build.sh", "svc/tools/gen"} {
		if g.reason(rel, "x", "y") == "" {
			t.Errorf("%s defines the build run in svc, yet may be edited", rel)
		}
	}
	if why := g.reason("svc/main.go", "x", "y"); why != "" {
		t.Errorf("svc/main.go refused: %s", why)
	}

	out := "../lib/x.go:1:1: inside the workspace\n../../x.go:1:1: " + secretMarker + "\n"
	got, n := withholdOutside(out, root, "", "svc")
	if n != 1 || strings.Contains(got, secretMarker) || !strings.Contains(got, "inside the workspace") {
		t.Errorf("withheld %d:\n%s", n, got)
	}

	f := &Fixer{Workspace: root}
	run, err := f.verify(context.Background(), "pwd; ls", "svc", 0, []Edit{{File: "svc/main.go", OldText: "package main", NewText: "package main // edited"}})
	if err != nil || !run.passed || !strings.Contains(run.output, root+"/svc\n") || !strings.Contains(run.output, "main.go") {
		t.Errorf("the build did not run in svc: %+v, %v", run, err)
	}

	for _, dir := range []string{"../x", "/abs", "svc/../.."} {
		if _, err := buildDir(dir); err == nil {
			t.Errorf("build directory %q accepted", dir)
		}
	}
	if d, err := buildDir("./svc/"); err != nil || d != "svc" {
		t.Errorf("buildDir(./svc/) = %q, %v", d, err)
	}
}
