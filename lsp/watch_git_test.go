package lsp

import (
	"path/filepath"
	"testing"

	"github.com/kodustech/kodyls/analysis/changes"
)

// TestGitWatchClassify: in a linked worktree HEAD and the index are the
// worktree's, the refs the repository's; lock files, objects and logs
// move no baseline.
func TestGitWatchClassify(t *testing.T) {
	common := filepath.FromSlash("/r/.git")
	wt := filepath.Join(common, "worktrees", "wt")
	g := &gitWatch{dirs: []changes.GitDirs{{Git: wt, Common: common}}}
	for _, c := range []struct {
		path string
		want fileChange
	}{
		{filepath.Join(wt, "HEAD"), changeBaseline},
		{filepath.Join(wt, "index"), changeBaseline},
		{filepath.Join(wt, "index.lock"), changeNone},
		{filepath.Join(wt, "ORIG_HEAD"), changeNone},
		{filepath.Join(common, "packed-refs"), changeBaseline},
		{filepath.Join(common, "refs", "heads", "feature", "x"), changeBaseline},
		{filepath.Join(common, "refs", "heads", "main.lock"), changeNone},
		{filepath.Join(common, "reftable", "tables.list"), changeBaseline},
		{filepath.Join(common, "HEAD"), changeNone}, // the main work tree's
		{filepath.Join(common, "index"), changeNone},
		{filepath.Join(common, "logs", "HEAD"), changeNone},
		{filepath.Join(common, "objects", "ab", "cdef"), changeNone},
		{filepath.FromSlash("/r/refs/heads/main"), changeNone},
	} {
		if got := g.classify(c.path); got != c.want {
			t.Errorf("classify(%s) = %d, want %d", c.path, got, c.want)
		}
	}
}
