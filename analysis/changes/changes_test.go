package changes

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// repo is a real git repository in a temporary directory.
type repo struct {
	t   *testing.T
	dir string
}

// newRepo runs git init in a fresh directory. The test repository gets its
// own identity and ignores the machine's git configuration, so that a
// developer's global settings (autocrlf, signing, hooks) cannot change the
// outcome.
func newRepo(t *testing.T) *repo {
	t.Helper()
	requireGit(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, dir: dir}
	r.git("init", "-q")
	r.git("config", "user.name", "Kody Test")
	r.git("config", "user.email", "kody@example.com")
	r.git("config", "commit.gpgsign", "false")
	r.git("config", "core.autocrlf", "false")
	return r
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(rel, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func load(t *testing.T, path, ref string) Baseline {
	t.Helper()
	b, err := Load(context.Background(), path, ref)
	if err != nil {
		t.Fatalf("Load(%s, %q): %v", path, ref, err)
	}
	return b
}

func TestLoadTrackedModified(t *testing.T) {
	r := newRepo(t)
	// Spaces and non-ASCII characters in the path must survive the trip
	// through git.
	rel := "dir with space/ünïcødé file.go"
	p := r.write(rel, "package a\n\nfunc A() {}\n\nfunc B() {}\n")
	rev := r.commit("first")
	current := "package a\n\nfunc A() { x() }\n\nfunc B() {}\nfunc C() {}\n"
	r.write(rel, current)

	b := load(t, p, "")
	want := Baseline{Kind: Tracked, RepoRoot: r.dir, RelPath: rel, Text: "package a\n\nfunc A() {}\n\nfunc B() {}\n", Rev: rev}
	if b != want {
		t.Fatalf("Load =\n%+v\nwant\n%+v", b, want)
	}
	if got := b.ChangedLines(current).Lines(); !reflect.DeepEqual(got, []int{2, 5}) {
		t.Errorf("changed lines = %v, want [2 5]", got)
	}
	// Lines inserted at the top shift the rest down without marking them.
	inserted := "// Copyright\n// Kody\n" + b.Text
	if got := b.ChangedLines(inserted).Lines(); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("inserted above: changed lines = %v, want [0 1]", got)
	}
	if !b.ChangedLines(b.Text).Empty() {
		t.Error("the committed text itself has changed lines")
	}
}

func TestLoadRefs(t *testing.T) {
	r := newRepo(t)
	p := r.write("a.txt", "v1\n")
	first := r.commit("one")
	r.write("a.txt", "v2\n")
	second := r.commit("two")
	r.git("branch", "old", first)

	tests := []struct {
		ref, text, rev string
	}{
		{"", "v2\n", second},
		{"HEAD", "v2\n", second},
		{"HEAD~1", "v1\n", first},
		{"old", "v1\n", first},
		{first[:10], "v1\n", first},
	}
	for _, tt := range tests {
		b := load(t, p, tt.ref)
		if b.Kind != Tracked || b.Text != tt.text || b.Rev != tt.rev {
			t.Errorf("ref %q: %+v, want text %q at %s", tt.ref, b, tt.text, tt.rev)
		}
	}

	for _, ref := range []string{"no-such-branch", "--output=/tmp/x", "HEAD\n"} {
		if _, err := Load(context.Background(), p, ref); err == nil {
			t.Errorf("ref %q: no error", ref)
		}
	}
	_, err := Load(context.Background(), p, "no-such-branch")
	if err == nil || !strings.Contains(err.Error(), `unknown revision "no-such-branch"`) {
		t.Errorf("unknown ref error = %v", err)
	}
}

func TestLoadUntracked(t *testing.T) {
	r := newRepo(t)
	r.write("kept.txt", "x\n")
	rev := r.commit("first")
	p := r.write("new/file.txt", "a\nb\n")

	b := load(t, p, "")
	want := Baseline{Kind: Untracked, RepoRoot: r.dir, RelPath: "new/file.txt", Rev: rev}
	if b != want {
		t.Fatalf("Load = %+v, want %+v", b, want)
	}
	if !b.ChangedLines("a\nb\n").All() {
		t.Error("an untracked file does not count every line as changed")
	}

	// Staged but not committed is still not in HEAD.
	r.git("add", "new/file.txt")
	if b := load(t, p, ""); b.Kind != Untracked {
		t.Errorf("staged file: Kind = %v, want untracked", b.Kind)
	}
}

func TestLoadNoCommits(t *testing.T) {
	r := newRepo(t)
	p := r.write("a.go", "package a\n")
	b := load(t, p, "")
	want := Baseline{Kind: Untracked, RepoRoot: r.dir, RelPath: "a.go"}
	if b != want {
		t.Errorf("Load = %+v, want %+v", b, want)
	}
}

func TestLoadDeletedFromHEAD(t *testing.T) {
	r := newRepo(t)
	p := r.write("gone.txt", "old\n")
	r.write("other.txt", "x\n")
	first := r.commit("add")
	r.git("rm", "-q", "gone.txt")
	second := r.commit("remove")

	// The file was deleted in HEAD and created again on disk: it is new.
	r.write("gone.txt", "old\nnew\n")
	if b := load(t, p, ""); b.Kind != Untracked || b.Rev != second || b.Text != "" {
		t.Errorf("recreated file: %+v, want untracked at %s", b, second)
	}
	// The earlier commit still has it.
	if b := load(t, p, first); b.Kind != Tracked || b.Text != "old\n" {
		t.Errorf("at the earlier commit: %+v", b)
	}
}

func TestLoadDeletedOnDisk(t *testing.T) {
	r := newRepo(t)
	p := r.write("sub/dir/f.txt", "a\n")
	r.commit("add")
	// An editor may still hold a buffer whose file (and directories) were
	// deleted; its baseline is still the committed content.
	if err := os.RemoveAll(filepath.Join(r.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	b := load(t, p, "")
	if b.Kind != Tracked || b.Text != "a\n" || b.RelPath != "sub/dir/f.txt" {
		t.Errorf("Load = %+v", b)
	}
}

func TestLoadOutsideRepo(t *testing.T) {
	requireGit(t)
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").CombinedOutput(); err == nil {
		t.Skipf("the temporary directory is inside a git repository (%s)", strings.TrimSpace(string(out)))
	}
	p := filepath.Join(dir, "loose.txt")
	if err := os.WriteFile(p, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := load(t, p, "")
	if b != (Baseline{Kind: OutsideRepo}) {
		t.Errorf("Load = %+v, want OutsideRepo and nothing else", b)
	}
}

func TestLoadInsideGitDir(t *testing.T) {
	r := newRepo(t)
	b := load(t, filepath.Join(r.dir, ".git", "config"), "")
	if b.Kind != OutsideRepo {
		t.Errorf("Kind = %v, want outside repository: .git has no work tree", b.Kind)
	}
}

func TestLoadSymlinkedPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	r := newRepo(t)
	r.write("pkg/a.go", "package pkg\n")
	r.commit("add")
	// Reach the repository through a link, as macOS's /var leads to
	// /private/var: the link's path and git's real path must still meet.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.dir, link); err != nil {
		t.Fatal(err)
	}
	b := load(t, filepath.Join(link, "pkg", "a.go"), "")
	if b.Kind != Tracked || b.RepoRoot != r.dir || b.RelPath != "pkg/a.go" || b.Text != "package pkg\n" {
		t.Errorf("Load through a link = %+v", b)
	}
	// A linked file is resolved to its target inside the repository.
	if err := os.Symlink(filepath.Join(r.dir, "pkg", "a.go"), filepath.Join(r.dir, "alias.go")); err != nil {
		t.Fatal(err)
	}
	if b := load(t, filepath.Join(r.dir, "alias.go"), ""); b.RelPath != "pkg/a.go" || b.Kind != Tracked {
		t.Errorf("Load of a linked file = %+v", b)
	}
}

func TestLoadCRLF(t *testing.T) {
	r := newRepo(t)
	// Stored with CRLF in the repository, edited with CRLF.
	p := r.write("win.txt", "one\r\ntwo\r\nthree\r\n")
	r.commit("crlf")
	b := load(t, p, "")
	if b.Text != "one\r\ntwo\r\nthree\r\n" {
		t.Fatalf("Text = %q, want the blob as stored", b.Text)
	}
	if got := b.ChangedLines("one\r\nTWO\r\nthree\r\n").Lines(); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("CRLF edit: changed lines = %v, want [1]", got)
	}
	// Stored with LF, checked out with CRLF by an editor or autocrlf: only
	// the edit counts, not the converted line endings.
	p = r.write("unix.txt", "one\ntwo\nthree\n")
	r.commit("lf")
	b = load(t, p, "")
	if got := b.ChangedLines("one\r\ntwo\r\n3\r\n").Lines(); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("LF to CRLF: changed lines = %v, want [2]", got)
	}
}

func TestLoadSubdirectoryRepoRoot(t *testing.T) {
	r := newRepo(t)
	p := r.write("a/b/c.txt", "x\n")
	r.commit("add")
	b := load(t, p, "")
	if b.RepoRoot != r.dir || b.RelPath != "a/b/c.txt" {
		t.Errorf("Load = %+v", b)
	}
}

func TestLoadBadInput(t *testing.T) {
	r := newRepo(t)
	r.write("f.txt", "x\n")
	r.commit("add")
	tests := []struct {
		name, path, msg string
	}{
		{"relative path", "f.txt", "is not absolute"},
		{"directory", r.dir, "is a directory"},
		{"parent is a file", filepath.Join(r.dir, "f.txt", "child"), "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), tt.path, "")
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Load(%q) error = %v, want %q", tt.path, err, tt.msg)
			}
		})
	}
}

func TestLoadContextCancelled(t *testing.T) {
	r := newRepo(t)
	p := r.write("f.txt", "x\n")
	r.commit("add")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, p, "")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestLoadWithoutGit cannot run in parallel: it empties PATH for the whole
// process.
func TestLoadWithoutGit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(dir, "empty"))
	_, err := Load(context.Background(), p, "")
	if !errors.Is(err, ErrGitNotFound) {
		t.Fatalf("Load without git: %v, want ErrGitNotFound", err)
	}
	if !strings.Contains(err.Error(), "install git") {
		t.Errorf("error %q does not say what to do", err)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Tracked: "tracked", Untracked: "untracked", OutsideRepo: "outside repository", Kind(9): "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}
