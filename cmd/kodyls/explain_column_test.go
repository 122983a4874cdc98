package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestExplainPythonSyntaxErrorColumn: a SyntaxError's caret gives its
// column in `kodyls explain --json`, on an indented line too (Python
// prints the line without its indentation; kodyls reads the file).
func TestExplainPythonSyntaxErrorColumn(t *testing.T) {
	if err := exec.Command("python3", "--version").Run(); err != nil {
		t.Skip("python3 is not installed")
	}
	repo := lsptest.NewRepo(t, map[string]string{"app/a.py": "x = 1\ndef f(:\n    pass\n", "app/b.py": "def g():\n    y = (1 +* 2)\n"})
	dir := filepath.Join(repo.Dir, "app")
	for _, c := range []struct {
		file         string
		line, column int
	}{{"a.py", 2, 7}, {"b.py", 2, 13}} {
		cmd := exec.Command("python3", "-m", "py_compile", c.file)
		cmd.Dir = dir
		output, _ := cmd.CombinedOutput()
		out, errOut, code := runBinStdin(t, testEnv(t), dir, string(output), "explain", "--json", "--offline")
		if code != 0 {
			t.Fatalf("code %d\n%s%s", code, out, errOut)
		}
		rep, file := explainPrimary(t, out)
		e := rep.Errors[rep.Primary]
		if file != "app/"+c.file || e.Line != c.line || e.Column != c.column {
			t.Errorf("%s: located at %s:%d:%d, want app/%s:%d:%d\n%s", c.file, file, e.Line, e.Column, c.file, c.line, c.column, output)
		}
	}
}
