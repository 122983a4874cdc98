package changes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFindGitDirs(t *testing.T) {
	r := newRepo(t)
	r.write("svc/main.go", "package main\n")
	r.commit("initial")
	gitDir := filepath.Join(r.dir, ".git")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "topic", wt)
	wt, _ = filepath.EvalSymlinks(wt)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	for _, c := range []struct {
		name, dir string
		want      GitDirs
		ok        bool
	}{
		{"root", r.dir, GitDirs{Git: gitDir, Common: gitDir}, true},
		{"subfolder", filepath.Join(r.dir, "svc"), GitDirs{Git: gitDir, Common: gitDir}, true},
		{"linked worktree", wt, GitDirs{Git: filepath.Join(gitDir, "worktrees", "wt"), Common: gitDir}, true},
		{"outside", outside, GitDirs{}, false},
	} {
		got, ok, err := FindGitDirs(context.Background(), c.dir)
		if err != nil || ok != c.ok || got != c.want {
			t.Errorf("%s: FindGitDirs = %+v, %v, %v; want %+v, %v", c.name, got, ok, err, c.want, c.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(gitDir, "worktrees", "wt", "HEAD")); err != nil {
		t.Fatalf("the worktree's HEAD is not where git keeps it: %v", err)
	}
}
