package changes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotACommit is returned (wrapped) by ChangedFiles when base names no
// commit of the repository.
var ErrNotACommit = errors.New("not a commit")

// ChangedFiles lists the files under root, a directory of a git
// repository (its top level or a folder below it), that differ from base: added, copied, modified, renamed or retyped in the
// working tree, or in the index when staged, plus the untracked files that
// are not ignored for a working-tree change set. Nested repositories
// (submodules, an untracked repository inside) are not files and are left
// out. Paths are slash-separated
// and relative to root; pathspec limits the list. It is the change set that
// `kodyls review` reviews and the pull-request rules judge, in the CLI and
// the editor alike.
//
// In a repository with no commit yet, base "HEAD" compares with the empty
// tree, so every file is new. The environment is passed to git unchanged:
// inside a git hook, the hook's GIT_INDEX_FILE names the index being
// committed.
func ChangedFiles(ctx context.Context, root, base string, staged bool, pathspec []string) ([]string, error) {
	if strings.HasPrefix(base, "-") {
		return nil, fmt.Errorf("%q: %w", base, ErrNotACommit)
	}
	if _, err := gitInherit(ctx, root, "rev-parse", "--verify", "--quiet", base+"^{commit}"); err != nil {
		if _, serr := gitInherit(ctx, root, "symbolic-ref", "--quiet", "HEAD"); base != "HEAD" || serr != nil {
			return nil, fmt.Errorf("%q in %s: %w", base, root, ErrNotACommit)
		}
		// No commit yet (HEAD names an unborn branch): every file is new,
		// as the editor sees it. Compare with the empty tree.
		empty, err := gitInherit(ctx, root, "hash-object", "-t", "tree", "--stdin")
		if err != nil {
			return nil, err
		}
		base = strings.TrimSpace(empty)
	}
	// --relative: a root below the repository's top level (a folder of a
	// monorepo) lists its own files, relative to itself, as ls-files does.
	// --ignore-submodules: a submodule's new commit is a change of a
	// repository of its own, not of a file to review.
	args := []string{"diff", "--name-only", "--relative", "--diff-filter=ACMRT", "--ignore-submodules=all", "-z"}
	if staged {
		args = append(args, "--cached")
	}
	args = append(append(args, base, "--"), pathspec...)
	out, err := gitInherit(ctx, root, args...)
	if err != nil {
		return nil, err
	}
	files := splitNUL(out)
	if !staged {
		untracked, err := gitInherit(ctx, root, append([]string{"ls-files", "--others", "--exclude-standard", "-z", "--"}, pathspec...)...)
		if err != nil {
			return nil, err
		}
		for _, f := range splitNUL(untracked) {
			// git lists an untracked nested repository as its directory,
			// "sub/": a repository of its own, not a file to review.
			if !strings.HasSuffix(f, "/") {
				files = append(files, f)
			}
		}
	}
	return files, nil
}

func splitNUL(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// gitInherit runs git in dir with the process' environment and returns its
// standard output; a failure carries git's message.
func gitInherit(ctx context.Context, dir string, args ...string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	cmd.WaitDelay = waitDelay
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
