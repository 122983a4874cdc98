package rca

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/tools"
	"github.com/kodustech/kodyls/analysis/errparse"
)

// TestCodeContextOfABuffer: the code around an error comes from the
// editor's buffer when one is given, and an error on a line past the end
// of the text has no code around it (rather than a failed explanation).
func TestCodeContextOfABuffer(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := errparse.Error{File: "main.go", Line: 40, Language: "go"}
	ws := tools.Workspace{Root: root}
	if cc := CodeContext(ws, e); cc.Text != "" {
		t.Fatalf("line 40 of a 4-line file: %+v", cc)
	}
	ws.Overlay = map[string]string{"main.go": "package main\n\n" + strings.Repeat("// new\n", 37) + "func main() { broken() }\n"}
	if cc := CodeContext(ws, e); cc.StartLine != 25 || !strings.Contains(cc.Text, "broken()") {
		t.Fatalf("the buffer's code: %+v", cc)
	}
	x := &Explainer{Workspace: root}
	disk, _ := x.contentHash(e)
	x.Overlay = ws.Overlay
	if buf, known := x.contentHash(e); !known || buf == disk {
		t.Fatalf("the code's hash is the disk's (%s) with the buffer changed", buf)
	}
}
