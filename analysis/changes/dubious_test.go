package changes

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An unknown revision is told apart from other failures, so that a caller
// can compare with HEAD instead.
func TestLoadUnknownRevisionIsTyped(t *testing.T) {
	r := newRepo(t)
	p := r.write("a.txt", "v1\n")
	r.commit("one")
	if _, err := Load(context.Background(), p, "origin/mian"); !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("unknown revision: %v, want ErrUnknownRevision", err)
	}
}

// A repository git refuses to use (owned by another user) is an error
// with git's reason and the safe.directory to add, not "no repository".
func TestRepositoryOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the repository to another user")
	}
	r := newRepo(t)
	p := r.write("a.txt", "v1\n")
	r.commit("one")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "gitconfig"))
	if out, err := exec.Command("chown", "-R", "65534:65534", r.dir).CombinedOutput(); err != nil {
		t.Skipf("chown: %v %s", err, out)
	}
	_, ok, err := RepoRoot(context.Background(), r.dir)
	if ok || err == nil || !strings.Contains(err.Error(), "dubious ownership") || !strings.Contains(err.Error(), "git config --global --add safe.directory "+r.dir) {
		t.Fatalf("RepoRoot: ok %v, err %v; want git's reason and its hint", ok, err)
	}
	if _, err := Load(context.Background(), p, "HEAD"); err == nil || !strings.Contains(err.Error(), "safe.directory") {
		t.Fatalf("Load: %v, want git's reason and its hint", err)
	}
}
