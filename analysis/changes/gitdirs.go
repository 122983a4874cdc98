package changes

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// GitDirs are the directories where git keeps a work tree's metadata.
// They are what to watch to learn that a baseline moved.
type GitDirs struct {
	// Git holds the work tree's HEAD and index: <repo>/.git, or
	// <common>/worktrees/<name> for a linked worktree, or
	// <super>/.git/modules/<name> for a submodule.
	Git string
	// Common holds what the work trees of a repository share: refs/ and
	// packed-refs. It is Git for a repository with one work tree.
	Common string
}

// FindGitDirs returns the git directories of the repository containing
// dir, and false when dir is in no repository. Both are absolute and
// symlink-free.
func FindGitDirs(ctx context.Context, dir string) (GitDirs, bool, error) {
	out, stderr, err := git(ctx, dir, nil, "rev-parse", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && strings.Contains(stderr, "not a git repository") {
			return GitDirs{}, false, nil
		}
		return GitDirs{}, false, gitError("find git directory", err, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	if len(lines) != 2 {
		return GitDirs{}, false, fmt.Errorf("find git directory: unexpected git rev-parse output %q", out)
	}
	var d GitDirs
	for i, p := range lines {
		p = filepath.FromSlash(strings.TrimRight(p, "\r"))
		if !filepath.IsAbs(p) {
			// --git-common-dir is relative to the directory git ran in
			// when it is not the work tree's own .git.
			p = filepath.Join(dir, p)
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if i == 0 {
			d.Git = filepath.Clean(p)
		} else {
			d.Common = filepath.Clean(p)
		}
	}
	return d, true, nil
}
