package tools_test

import (
	"strings"
	"testing"
)

// TestOverlayIsReadInsteadOfTheDisk: a file open in the editor with
// unsaved changes is read, searched and put into prompts as the editor
// has it; the privacy list still refuses it by its path.
func TestOverlayIsReadInsteadOfTheDisk(t *testing.T) {
	w, _ := workspace(t, map[string]string{"src/a.go": "package a\n\nvar onDisk = 1\n", ".env": "TOKEN=disk\n"})
	w.Overlay = map[string]string{
		"src/a.go": "package a\n\n// unsaved\nvar inBuffer = 1\n",
		".env":     "TOKEN=buffer-secret\n",
	}
	w.Ignore = func(rel string) bool { return rel == ".env" }

	out, err := call(t, w.ReadFile(), map[string]any{"path": "src/a.go", "line": 4, "radius": 0})
	if err != nil || !strings.Contains(out, "4\tvar inBuffer = 1") {
		t.Fatalf("read_file around a line: %q, %v", out, err)
	}
	out, err = call(t, w.ReadFile(), map[string]any{"path": "./src/a.go"})
	if err != nil || !strings.Contains(out, "// unsaved") || strings.Contains(out, "onDisk") {
		t.Fatalf("read_file of the whole file: %q, %v", out, err)
	}
	data, err := w.Contents("src/a.go")
	if err != nil || !strings.Contains(string(data), "inBuffer") {
		t.Fatalf("Contents: %q, %v", data, err)
	}
	out, err = call(t, w.SearchWorkspace(), map[string]any{"query": "inBuffer"})
	if err != nil || !strings.Contains(out, "src/a.go:4:") {
		t.Fatalf("search_workspace: %q, %v", out, err)
	}
	for _, read := range []func() (string, error){
		func() (string, error) { return call(t, w.ReadFile(), map[string]any{"path": ".env"}) },
		func() (string, error) { d, err := w.Contents(".env"); return string(d), err },
		func() (string, error) { return call(t, w.SearchWorkspace(), map[string]any{"query": "TOKEN"}) },
	} {
		if out, err := read(); strings.Contains(out, "TOKEN") || strings.Contains(out, "secret") {
			t.Fatalf("a buffer on the privacy list was read: %q, %v", out, err)
		}
	}
}
