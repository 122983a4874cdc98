package errparse

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goTestOutput runs the real go test in dir and returns what it printed
// (it fails: the tests here are written to).
func goTestOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"test"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go test %v passed:\n%s", args, out)
	}
	return string(out)
}

func failingTest(pkg, name, msg string) string {
	return fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc %s(t *testing.T) {\n\tt.Log(\"checking\")\n\tt.Error(%q)\n}\n", pkg, name, msg)
}

// TestGoTestFilesArePlacedInTheirPackage: go test names a failing test's
// file by its base name; the error points at the file in the package's
// directory, whichever way the tests were run.
func TestGoTestFilesArePlacedInTheirPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"go.mod":               "module example.com/shop\n\ngo 1.21\n",
		"cart/cart_test.go":    failingTest("cart", "TestTotal", "total is 3, want 4"),
		"cart/tax/tax_test.go": failingTest("tax", "TestRate", "rate is 0.2, want 0.25"),
		// A file of the same name at the root: the error must not land on it.
		"tax_test.go": "package shop\n",
	})
	want := map[string]string{
		"total is 3, want 4":     "cart/cart_test.go",
		"rate is 0.2, want 0.25": "cart/tax/tax_test.go",
	}
	check := func(name, out string, o Options) {
		t.Helper()
		errs := Parse(out, o)
		got := map[string]string{}
		for _, e := range errs {
			if e.Line != 7 && want[e.Message] != "" {
				t.Errorf("%s: %q at line %d, want 7", name, e.Message, e.Line)
			}
			got[e.Message] = e.File
		}
		for msg, file := range want {
			if got[msg] != file {
				t.Errorf("%s: %q located in %q, want %q\noutput:\n%s", name, msg, got[msg], file, out)
			}
		}
	}
	check("go test ./...", goTestOutput(t, ws, "./..."), Options{Workspace: ws})
	check("go test -v ./...", goTestOutput(t, ws, "-v", "./..."), Options{Workspace: ws})
	check("go test -json ./...", goTestOutput(t, ws, "-json", "./..."), Options{Workspace: ws})
	sub := filepath.Join(ws, "cart")
	check("go test ./... in a package", goTestOutput(t, sub, "./..."), Options{Workspace: ws, Dir: sub})

	// Tests of a file with no module around it keep the name as printed.
	if errs := Parse("--- FAIL: TestA (0.00s)\n    a_test.go:3: boom\nFAIL\texample.com/gone\t0.01s\n", Options{Workspace: t.TempDir()}); len(errs) != 1 || errs[0].File != "a_test.go" {
		t.Errorf("no module: %+v", errs)
	}
}

// TestGoTestFilesInAGoWorkspace: in a go.work of several modules, the
// package's module decides the directory.
func TestGoTestFilesInAGoWorkspace(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"go.work":                      "go 1.21\n\nuse (\n\t./api\n\t./worker\n)\n",
		"api/go.mod":                   "module example.com/api\n\ngo 1.21\n",
		"api/handler/handler_test.go":  failingTest("handler", "TestServe", "status 500, want 200"),
		"worker/go.mod":                "module example.com/worker\n\ngo 1.21\n",
		"worker/queue/queue_test.go":   failingTest("queue", "TestPop", "popped nothing"),
		"worker/queue/handler_test.go": "package queue\n",
	})
	cmd := exec.Command("go", "test", "example.com/api/...", "example.com/worker/...")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "popped nothing") {
		t.Fatalf("go test in the workspace printed:\n%s", out)
	}
	got := map[string]string{}
	for _, e := range Parse(string(out), Options{Workspace: ws}) {
		got[e.Message] = e.File
	}
	if got["status 500, want 200"] != "api/handler/handler_test.go" || got["popped nothing"] != "worker/queue/queue_test.go" {
		t.Errorf("files %v\noutput:\n%s", got, out)
	}
}
