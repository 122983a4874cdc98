package lsptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Repo is a real git repository in a temporary directory.
type Repo struct {
	t   testing.TB
	Dir string
}

// NewRepo creates a repository, writes files and commits them (no commit
// when files is empty). The directory is symlink-free.
func NewRepo(t testing.TB, files map[string]string) *Repo {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &Repo{t: t, Dir: dir}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "user.name", "kodyls test")
	r.Git("config", "user.email", "test@kodyls.invalid")
	r.Git("config", "commit.gpgsign", "false")
	if len(files) > 0 {
		r.Write(files)
		r.Commit("initial")
	}
	return r
}

// Write writes files relative to the repository.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit stages everything and commits.
func (r *Repo) Commit(msg string) {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "-m", msg)
}

// Git runs a git command in the repository.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// RuleFile renders a Kody Rule file with a regex detector.
func RuleFile(title, uuid, severity, pathGlob, pattern string) string {
	return "---\n" +
		"title: " + title + "\n" +
		"uuid: " + uuid + "\n" +
		"severity: " + severity + "\n" +
		"path: [\"" + pathGlob + "\"]\n" +
		"scope: file\n" +
		"detector:\n  type: regex\n  pattern: '" + pattern + "'\n" +
		"---\n## Instructions\n\n" + title + ".\n"
}
