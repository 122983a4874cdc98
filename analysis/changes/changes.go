// Package changes tells which lines of a buffer changed against the last
// commit, so that Kody Rules run only over what the developer touched.
//
// Load reads a file's baseline, its content at a git revision, by running
// the git command; Changed diffs a baseline against the buffer's current
// text. Load costs a few git processes and belongs on open, save and
// repository changes; Changed is cheap enough for every keystroke.
package changes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind says where a file stands with respect to git.
type Kind int

const (
	// Tracked: the file exists at the revision; Baseline.Text is its
	// content there.
	Tracked Kind = iota
	// Untracked: the file is in a repository but not at the revision
	// (new, only staged, deleted from it, or the repository has no commit
	// yet). Every line counts as changed.
	Untracked
	// OutsideRepo: no git repository contains the file.
	OutsideRepo
	// Ignored: the file is untracked and git ignores it (.gitignore,
	// .git/info/exclude, core.excludesFile). It is no part of the change
	// set `kodyls review` lists, so it is neither checked nor reviewed.
	// Every line would count as changed, as for Untracked.
	Ignored
)

func (k Kind) String() string {
	switch k {
	case Tracked:
		return "tracked"
	case Untracked:
		return "untracked"
	case OutsideRepo:
		return "outside repository"
	case Ignored:
		return "ignored by git"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Baseline is the content a file is compared against.
type Baseline struct {
	Kind Kind
	// RepoRoot is the real (symlink-free) path of the repository's work
	// tree; "" outside a repository.
	RepoRoot string
	// RelPath is the file's slash-separated path relative to RepoRoot.
	RelPath string
	// Text is the file's content at Rev, as a checkout would write it (the
	// repository's smudge filters applied); "" unless Kind is Tracked.
	Text string
	// From is the slash path relative to RepoRoot that the file had at Rev
	// when it was renamed or moved since (Text is that file's content
	// there); "" when the file has its own path at Rev.
	From string
	// Rev is the full hash of the commit the ref resolved to; "" when the
	// repository has no commit or there is no repository.
	Rev string
}

// ChangedLines returns the lines of current to check: the changed ones for
// a tracked file, and all of them otherwise. Callers that treat files
// outside a repository differently check Kind first.
func (b Baseline) ChangedLines(current string) LineSet {
	if b.Kind != Tracked {
		return AllLines()
	}
	return Changed(b.Text, current)
}

// ErrGitNotFound is returned (wrapped) by Load when no git executable is on
// the PATH.
var ErrGitNotFound = errors.New("git executable not found in PATH; install git to compare against commits")

// ErrUnknownRevision is returned (wrapped) by Load when the ref names no
// commit of a repository that has commits: a typo, or a branch not fetched.
var ErrUnknownRevision = errors.New("unknown revision")

// waitDelay bounds how long Load waits for git's output pipes after the
// context kills it, in case a child process of git keeps them open.
const waitDelay = 2 * time.Second

// Load finds the git repository containing absPath and reads the file's
// content at ref ("" means HEAD). The file itself need not exist: a buffer
// whose file was deleted on disk still has a baseline.
//
// It reports Untracked when the repository does not have the file at ref or
// has no commit yet, and OutsideRepo with an empty Text when no repository
// contains the file; what to compare against then is the caller's choice.
// Paths are compared after resolving symbolic links, so a repository under
// a linked directory (macOS's /var -> /private/var) is handled.
//
// Load honours ctx: git is killed when ctx is done and the error wraps
// ctx.Err(). Without git on the PATH the error wraps ErrGitNotFound.
//
// A file that is not at ref under its own path may have been renamed or
// moved since: when git's rename detection (git diff -M, the index's and
// the working tree's renames alike) pairs it with a file of ref, or, for a
// file git does not track yet (a plain mv), when its content is mostly that
// of a file deleted since, that file is its baseline and From names it. An
// untracked file git ignores is Ignored.
func Load(ctx context.Context, absPath, ref string) (Baseline, error) {
	return loadBaseline(ctx, absPath, ref, loadOpts{search: true})
}

// LoadRenamed is Load for a file whose origin at ref the caller knows from
// the change set that listed it (see ListChanges): from, when not "", is
// the absolute path the file had at ref before it was renamed or moved.
// No rename is looked for and no ignore rule checked: a file that is not
// at ref under its own path or from is Untracked.
func LoadRenamed(ctx context.Context, absPath, ref, from string) (Baseline, error) {
	return loadBaseline(ctx, absPath, ref, loadOpts{from: from})
}

type loadOpts struct {
	search bool   // look for the file's origin at ref, and ignore rules
	from   string // the known origin, absolute
}

func loadBaseline(ctx context.Context, absPath, ref string, opts loadOpts) (Baseline, error) {
	if ref == "" {
		ref = "HEAD"
	}
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		// A ref starting with "-" would be read by git as an option.
		return Baseline{}, fmt.Errorf("load baseline: invalid ref %q", ref)
	}
	if !filepath.IsAbs(absPath) {
		return Baseline{}, fmt.Errorf("load baseline: path %q is not absolute", absPath)
	}
	resolved, dir, err := realPath(filepath.Clean(absPath))
	if err != nil {
		return Baseline{}, fmt.Errorf("load baseline: %w", err)
	}

	top, ok, err := toplevel(ctx, dir)
	if err != nil {
		return Baseline{}, fmt.Errorf("load baseline: find repository: %w", err)
	}
	if !ok {
		return Baseline{Kind: OutsideRepo}, nil
	}
	rel, err := filepath.Rel(top, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return Baseline{}, fmt.Errorf("load baseline: %s is not inside its repository %s", resolved, top)
	}
	b := Baseline{Kind: Untracked, RepoRoot: top, RelPath: filepath.ToSlash(rel)}

	rev, ok, err := resolveRev(ctx, top, ref)
	if err != nil {
		return Baseline{}, fmt.Errorf("load baseline: %w", err)
	}
	if !ok {
		// ref does not resolve. That is expected in a repository with no
		// commit yet, where HEAD points at an unborn branch; any other
		// unknown ref is the caller's mistake and worth reporting.
		if _, hasHead, err := resolveRev(ctx, top, "HEAD"); err != nil {
			return Baseline{}, fmt.Errorf("load baseline: %w", err)
		} else if hasHead {
			return Baseline{}, fmt.Errorf("load baseline: %w %q in %s", ErrUnknownRevision, ref, top)
		}
		if opts.search {
			ignored, err := isIgnored(ctx, top, b.RelPath)
			if err != nil {
				return Baseline{}, fmt.Errorf("load baseline of %s: %w", b.RelPath, err)
			}
			if ignored {
				b.Kind = Ignored
			}
		}
		return b, nil
	}
	b.Rev = rev

	text, ok, err := readBlob(ctx, top, rev, b.RelPath, false)
	if err != nil {
		return Baseline{}, fmt.Errorf("load baseline of %s: %w", b.RelPath, err)
	}
	if ok {
		b.Kind, b.Text = Tracked, text
		return b, nil
	}
	from := ""
	switch {
	case opts.from != "":
		if r, _, err := realPath(filepath.Clean(opts.from)); err == nil {
			if rel, err := filepath.Rel(top, r); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				from = filepath.ToSlash(rel)
			}
		}
	case opts.search:
		origin, err := findOrigin(ctx, top, rev, b.RelPath, resolved)
		if err != nil {
			return Baseline{}, fmt.Errorf("load baseline of %s: %w", b.RelPath, err)
		}
		if origin.ignored {
			b.Kind = Ignored
			return b, nil
		}
		from = origin.from
	}
	if from != "" && from != b.RelPath {
		text, ok, err := readBlob(ctx, top, rev, from, false)
		if err != nil {
			return Baseline{}, fmt.Errorf("load baseline of %s: %w", b.RelPath, err)
		}
		if ok {
			b.Kind, b.Text, b.From = Tracked, text, from
		}
	}
	return b, nil
}

// realPath resolves symbolic links in p. When p does not exist (a buffer
// whose file was deleted), its nearest existing ancestor is resolved and the
// rest appended. It also returns the existing directory to run git in.
func realPath(p string) (resolved, dir string, err error) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		st, err := os.Stat(r)
		if err != nil {
			return "", "", fmt.Errorf("stat %s: %w", p, err)
		}
		if st.IsDir() {
			return "", "", fmt.Errorf("%s is a directory, not a file", p)
		}
		return r, filepath.Dir(r), nil
	}
	rest := filepath.Base(p)
	for parent := filepath.Dir(p); ; parent = filepath.Dir(parent) {
		r, err := filepath.EvalSymlinks(parent)
		if err == nil {
			st, err := os.Stat(r)
			if err != nil {
				return "", "", fmt.Errorf("stat %s: %w", parent, err)
			}
			if !st.IsDir() {
				return "", "", fmt.Errorf("%s is not a directory", parent)
			}
			return filepath.Join(r, rest), r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("resolve %s: %w", parent, err)
		}
		if filepath.Dir(parent) == parent {
			return "", "", fmt.Errorf("resolve %s: no part of the path exists", p)
		}
		rest = filepath.Join(filepath.Base(parent), rest)
	}
}

// RepoRoot returns the real path of the work tree containing dir, and false
// when dir is in no repository. A repository git refuses to use (owned by
// another user: "detected dubious ownership") is an error that carries
// git's reason and its safe.directory hint, not "no repository".
func RepoRoot(ctx context.Context, dir string) (string, bool, error) {
	return toplevel(ctx, dir)
}

// toplevel returns the real path of the work tree containing dir, and false
// when dir is in no repository.
func toplevel(ctx context.Context, dir string) (string, bool, error) {
	out, stderr, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && (strings.Contains(stderr, "not a git repository") ||
			strings.Contains(stderr, "must be run in a work tree")) {
			// Inside .git or a bare repository there is no work tree
			// either, so there is nothing to compare with.
			return "", false, nil
		}
		return "", false, gitError("", err, stderr)
	}
	top := strings.TrimRight(out, "\r\n")
	if top == "" {
		return "", false, nil
	}
	resolved, err := filepath.EvalSymlinks(filepath.FromSlash(top))
	if err != nil {
		return "", false, fmt.Errorf("resolve repository root: %w", err)
	}
	return resolved, true, nil
}

// resolveRev returns the full commit hash ref names in the repository at
// top, and false when it names none.
func resolveRev(ctx context.Context, top, ref string) (string, bool, error) {
	out, stderr, err := git(ctx, top, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return "", false, nil
		}
		return "", false, gitError("resolve "+ref, err, stderr)
	}
	return strings.TrimSpace(out), true, nil
}

// readBlob returns the content of the file path (slash, relative to the
// top level) at rev, a commit hash, or in the index when rev is "", as a
// checkout writes it: through the repository's smudge filters and
// end-of-line conversion for that path (git-crypt, Git LFS, any
// `filter=`), so that a file stored in another form than it is worked on
// is compared with what the developer sees. It returns false when there is
// no such file (or a directory or submodule is there). inherit passes the
// process' environment to git unchanged (a hook's GIT_INDEX_FILE names the
// index being committed).
//
// It uses cat-file's batch mode, which says "missing" on standard output
// instead of failing with a message that would need parsing, and takes the
// name on standard input, where non-ASCII characters need no quoting. A
// filter that fails (a filter program that is not installed) gives the
// stored content, as before filters were applied.
func readBlob(ctx context.Context, top, rev, path string, inherit bool) (string, bool, error) {
	if strings.ContainsAny(path, "\n\r") {
		// Batch mode reads one name per line; such a path cannot be asked
		// for, and no sane repository tracks one.
		return "", false, nil
	}
	name := rev + ":" + path
	if rev == "" {
		name = ":0:" + path // stage 0: a path like "0:x" is not a stage
	}
	obj := name
	if strings.ContainsAny(name, " \t") {
		// With --filters batch mode reads "<object> <path>", the object
		// ending at the first blank: a name with a blank is asked for by
		// its hash. A path that starts with a blank cannot be given at all.
		if strings.TrimLeft(path, " \t") != path {
			return catFile(ctx, top, name+"\n", inherit, "--batch")
		}
		out, stderr, err := runGit(ctx, top, inherit, []byte(name+"\n"), "cat-file", "--batch-check")
		if err != nil {
			return "", false, gitError("read file", err, stderr)
		}
		header := strings.TrimRight(out, "\n")
		fields := strings.Fields(header)
		if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") || len(fields) != 3 || fields[1] != "blob" {
			return "", false, nil // missing, or not a file
		}
		obj = fields[0]
	}
	// The path's attributes choose the filters.
	text, ok, err := catFile(ctx, top, obj+" "+path+"\n", inherit, "--batch", "--filters")
	if err == nil || ctx.Err() != nil {
		return text, ok, err
	}
	// A filter failed (its program is not installed, say): the content as
	// stored, as before filters were applied.
	return catFile(ctx, top, name+"\n", inherit, "--batch")
}

// catFile runs git cat-file in batch mode for one object and returns its
// content, and false when it is missing or not a blob.
func catFile(ctx context.Context, top, input string, inherit bool, args ...string) (string, bool, error) {
	out, stderr, err := runGit(ctx, top, inherit, []byte(input), append([]string{"cat-file"}, args...)...)
	if err != nil {
		return "", false, gitError("read file", err, stderr)
	}
	header, body, found := strings.Cut(out, "\n")
	if !found {
		return "", false, fmt.Errorf("read file: unexpected git cat-file output %q", out)
	}
	// The header is "<hash> <type> <size>", or "<name> missing" when there
	// is no such object; the name may contain spaces, so look at the end.
	if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
		return "", false, nil
	}
	fields := strings.Fields(header)
	if len(fields) != 3 {
		return "", false, fmt.Errorf("read file: unexpected git cat-file header %q", header)
	}
	if fields[1] != "blob" {
		// A directory (tree) or submodule (commit) at that path: not the
		// same file, so the buffer counts as new.
		return "", false, nil
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil || size < 0 {
		return "", false, fmt.Errorf("read file: git cat-file header %q does not match its output", header)
	}
	// The header's size is the stored blob's; a filter may change it. One
	// object was asked for, so its content is the rest of the output but
	// the newline batch mode ends each object with.
	content, ok := strings.CutSuffix(body, "\n")
	if !ok || (slices.Contains(args, "--batch") && !slices.Contains(args, "--filters") && len(content) != size) {
		return "", false, fmt.Errorf("read file: git cat-file header %q does not match its output", header)
	}
	return content, true, nil
}

// IndexText returns the staged content of path (slash, relative to the
// repository's top level top), as a checkout would write it (smudge
// filters applied), and false when the index has no such file. The
// environment is passed to git unchanged, so that inside a git hook the
// hook's index is read.
func IndexText(ctx context.Context, top, path string) (string, bool, error) {
	return readBlob(ctx, top, "", path, true)
}

// git runs a git command in dir and returns its standard output and error.
// Variables that point git at a particular repository are dropped, so that
// Load finds the repository from the path even when the server itself runs
// inside a git hook. Optional locks are disabled so that reading never
// competes with the developer's own git commands.
func git(ctx context.Context, dir string, stdin []byte, args ...string) (stdout, stderr string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	return gitWith(ctx, dir, gitEnv(), stdin, args...)
}

// runGit is git, with the process' environment passed on unchanged when
// inherit is set (see gitInherit).
func runGit(ctx context.Context, dir string, inherit bool, stdin []byte, args ...string) (stdout, stderr string, err error) {
	if inherit {
		return gitWith(ctx, dir, inheritEnv(), stdin, args...)
	}
	return git(ctx, dir, stdin, args...)
}

// gitWith is git with the environment env.
func gitWith(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (stdout, stderr string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	exe, err := exec.LookPath("git")
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrGitNotFound, err)
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	cmd.WaitDelay = waitDelay
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if err != nil && ctx.Err() != nil {
		// The kill's "signal: killed" says less than the context's error.
		return "", errb.String(), ctx.Err()
	}
	return out.String(), errb.String(), err
}

func gitEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE":
			continue
		}
		out = append(out, kv)
	}
	// A fixed locale keeps the messages toplevel looks for in English; the
	// later value wins over any inherited one.
	return append(out, "LC_ALL=C", "LANGUAGE=", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
}

// gitError wraps a failed git command with its first line of stderr, which
// is where git says what went wrong, and the command git suggests to run
// when it suggests one (the safe.directory of a repository owned by
// another user). what, when not "", says what was being done.
func gitError(what string, err error, stderr string) error {
	if what != "" {
		return fmt.Errorf("%s: %w", what, gitError("", err, stderr))
	}
	if errors.Is(err, ErrGitNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := strings.TrimSpace(stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		first, rest := msg[:i], msg[i+1:]
		msg = first
		for line := range strings.Lines(rest) {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "git config ") {
				msg += " (to trust it: " + line + ")"
				break
			}
		}
	}
	if msg == "" {
		return fmt.Errorf("git: %w", err)
	}
	// What git said is the reason; its exit status adds nothing to it.
	return &gitFailure{msg: "git: " + msg, err: err}
}

// gitFailure is a git command that failed saying why.
type gitFailure struct {
	msg string
	err error
}

func (e *gitFailure) Error() string { return e.msg }
func (e *gitFailure) Unwrap() error { return e.err }
