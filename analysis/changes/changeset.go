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

// ChangedFile is one file of a change set (see ListChanges).
type ChangedFile struct {
	// Path is slash-separated and relative to the root the change set was
	// listed for. A repository of its own inside it, which git does not
	// track (no submodule), is listed as its directory, ending in "/".
	Path string
	// From is the path, relative to the root likewise, that the file had
	// at the base before it was renamed or moved; "" when it was not.
	From string
	// Mode is git's mode of the file in the change: "100644", "100755",
	// "120000" for a symbolic link, "160000" for a submodule; "" for an
	// untracked file.
	Mode string
}

// Submodule reports whether the entry is a submodule (a gitlink).
func (c ChangedFile) Submodule() bool { return c.Mode == "160000" }

// NestedRepo reports whether the entry is a repository of its own that
// git does not track, inside the work tree.
func (c ChangedFile) NestedRepo() bool { return strings.HasSuffix(c.Path, "/") }

// ChangedFiles lists the paths of the files of ListChanges, without the
// submodules and nested repositories, which have no content to read.
func ChangedFiles(ctx context.Context, root, base string, staged bool, paths []string) ([]string, error) {
	list, err := ListChanges(ctx, root, base, staged, paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list {
		if !c.Submodule() && !c.NestedRepo() {
			out = append(out, c.Path)
		}
	}
	return out, nil
}

// ListChanges lists the files under root, a directory of a git
// repository (its top level or a folder below it), that differ from base:
// added, copied, modified, renamed or retyped in the working tree, or in
// the index when staged, plus the untracked files that are not ignored for
// a working-tree change set. Paths are slash-separated and relative to
// root; paths, when given, limit the list to those files and directories
// (relative to root, taken literally: no glob, no pathspec magic). It is
// the change set that `kodyls review` reviews and the pull-request rules
// judge, in the CLI and the editor alike.
//
// A renamed or moved file has From set: git's rename detection (-M) over
// the whole change, so that a file named in paths finds its origin outside
// them; and for a working-tree change set, an untracked file whose content
// is mostly that of a file deleted since (a plain mv, not yet staged) is
// taken for a move of it.
//
// In a repository with no commit yet, base "HEAD" compares with the empty
// tree, so every file is new. The environment is passed to git unchanged:
// inside a git hook, the hook's GIT_INDEX_FILE names the index being
// committed.
func ListChanges(ctx context.Context, root, base string, staged bool, paths []string) ([]ChangedFile, error) {
	if strings.HasPrefix(base, "-") {
		return nil, fmt.Errorf("%q: %w", base, ErrNotACommit)
	}
	unborn := false
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
		base, unborn = strings.TrimSpace(empty), true
	}
	specs := LiteralPathspecs(paths)
	diff := func(specs []string) ([]rawEntry, error) {
		// --relative: a root below the repository's top level (a folder of
		// a monorepo) lists its own files, relative to itself, as
		// ls-files does.
		args := []string{"diff", "--raw", "-z", "-M", "--relative"}
		if staged {
			args = append(args, "--cached")
		}
		out, err := gitInherit(ctx, root, append(append(args, base, "--"), specs...)...)
		if err != nil {
			return nil, err
		}
		return parseRaw(out)
	}
	entries, err := diff(specs)
	if err != nil {
		return nil, err
	}
	var files []ChangedFile
	var deleted []string
	added := map[string]int{} // the added files, by path: their index in files
	for _, e := range entries {
		switch e.status {
		case 'A', 'C', 'M', 'R', 'T':
			f := ChangedFile{Path: e.path, Mode: e.dstMode}
			if e.status == 'R' {
				f.From = e.from
			}
			if e.status == 'A' {
				added[f.Path] = len(files)
			}
			files = append(files, f)
		case 'D':
			deleted = append(deleted, e.path)
		}
	}
	var untracked []int
	if !staged {
		out, err := gitInherit(ctx, root, append([]string{"ls-files", "--others", "--exclude-standard", "-z", "--"}, specs...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range splitNUL(out) {
			if !strings.HasSuffix(p, "/") {
				untracked = append(untracked, len(files))
			}
			files = append(files, ChangedFile{Path: p})
		}
	}
	if unborn || (len(added) == 0 && len(untracked) == 0) {
		return files, nil
	}
	if len(specs) > 0 {
		// The origin of a file named may lie outside the paths named.
		all, err := diff(nil)
		if err != nil {
			return nil, err
		}
		deleted = deleted[:0]
		for _, e := range all {
			switch {
			case e.status == 'R':
				if i, ok := added[e.path]; ok {
					files[i].From = e.from
				}
			case e.status == 'D':
				deleted = append(deleted, e.path)
			}
		}
	}
	if len(untracked) > 0 && len(deleted) > 0 {
		news := make([]*ChangedFile, len(untracked))
		for i, k := range untracked {
			news[i] = &files[k]
		}
		guessMoves(ctx, root, base, news, deleted)
	}
	return files, nil
}

// LiteralPathspecs turns paths (files or directories, relative to the
// directory git runs in) into pathspecs that git takes literally: a
// "[slug]" or "*" in a name is that name, and a leading ":" is no magic.
func LiteralPathspecs(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" {
			p = "."
		}
		out = append(out, ":(literal)"+p)
	}
	return out
}

// rawEntry is one entry of git diff --raw -z.
type rawEntry struct {
	status  byte
	dstMode string
	path    string
	from    string // the source of a rename or copy
}

// parseRaw parses the output of git diff --raw -z: for each file
// ":<mode> <mode> <hash> <hash> <status>" NUL <path> NUL, with the source
// path NUL before the path for a rename or copy.
func parseRaw(out string) ([]rawEntry, error) {
	fields := strings.Split(out, "\x00")
	var entries []rawEntry
	for i := 0; i < len(fields); {
		h := fields[i]
		if h == "" {
			i++
			continue
		}
		parts := strings.Fields(strings.TrimPrefix(h, ":"))
		if !strings.HasPrefix(h, ":") || len(parts) != 5 || parts[4] == "" {
			return nil, fmt.Errorf("git diff: unexpected output %q", h)
		}
		e := rawEntry{status: parts[4][0], dstMode: parts[1]}
		n := 1
		if e.status == 'R' || e.status == 'C' {
			n = 2
		}
		if i+n >= len(fields) {
			return nil, fmt.Errorf("git diff: output ends inside an entry %q", h)
		}
		if n == 2 {
			e.from = fields[i+1]
		}
		e.path = fields[i+n]
		entries = append(entries, e)
		i += n + 1
	}
	return entries, nil
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
	cmd.Env = inheritEnv()
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

// inheritEnv is the process' environment for git, with optional locks and
// prompts off.
func inheritEnv() []string {
	return append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
}
