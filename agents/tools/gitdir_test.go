package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListFilesSkipsWhatTheSearchSkips: list_files refuses a directory
// inside .git — the workspace's, a nested repository's, one a link leads
// to — and one .gitignore ignores, as the search skips them, rather than
// listing git's own files or the ignored ones; a link to a file inside
// .git is left out of listings and searches.
func TestListFilesSkipsWhatTheSearchSkips(t *testing.T) {
	w, _ := workspace(t, map[string]string{
		".gitignore":         "/build/\n*.tmp\n",
		".git/config":        "[core]\n\tneedle = 1\n",
		".git/hooks/x":       "needle\n",
		"sub/.git/config":    "[core]\n\tneedle = 1\n",
		"sub/main.go":        "needle\n",
		"build/out/gen.go":   "needle\n",
		"src/cache.tmp/a.go": "needle\n",
		"src/app.go":         "needle\n",
	})
	for _, l := range [][2]string{{".git", "gl"}, {".git/config", "cfg"}} {
		if err := os.Symlink(l[0], filepath.Join(w.Root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for dir, why := range map[string]string{
		".git": "inside .git", ".git/hooks": "inside .git", "./.git/": "inside .git", "sub/.git": "inside .git", "gl": "inside .git",
		"build": "ignored by .gitignore", "build/out": "ignored by .gitignore", "src/cache.tmp": "ignored by .gitignore",
	} {
		out, err := call(t, w.ListFiles(), map[string]any{"dir": dir})
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("list_files %s = %q, %v; want refused: %s", dir, out, err, why)
		}
	}
	out, err := call(t, w.ListFiles(), map[string]any{})
	if err != nil || out != ".gitignore\nsrc/app.go\nsub/main.go\n" {
		t.Errorf("list_files = %q, %v", out, err)
	}
	if out, err := call(t, w.ListFiles(), map[string]any{"dir": "sub"}); err != nil || out != "sub/main.go\n" {
		t.Errorf("list_files sub = %q, %v", out, err)
	}
	if out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "needle"}); err != nil || out != "src/app.go:1: needle\nsub/main.go:1: needle\n" {
		t.Errorf("search = %q, %v", out, err)
	}
}
