package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReviewLeavesNestedRepositoriesOut: a repository inside the one
// reviewed — untracked (git lists it as "sub/") or a submodule whose
// commit moved — is a repository of its own, not a file: the review
// does not review it, nor report it as a file it could not read, and says
// once where to review it.
func TestReviewLeavesNestedRepositoriesOut(t *testing.T) {
	repo := changedRepo(t)
	inner := lsptest.NewRepo(t, map[string]string{"lib.go": "package lib\n"})
	for _, args := range [][]string{{"init", "-q", "sub"}, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.Dir, "mod"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo.Git("commit", "-q", "-m", "a submodule")
	inner.Write(map[string]string{"lib.go": "package lib\n\nfunc Lib() {}\n"})
	inner.Commit("lib")
	pull := exec.Command("git", "pull", "-q")
	pull.Dir = repo.Dir + "/mod"
	if out, err := pull.CombinedOutput(); err != nil {
		t.Fatalf("git pull: %v\n%s", err, out)
	}
	if st := repo.Git("status", "--porcelain"); !strings.Contains(st, " M mod") || !strings.Contains(st, "?? sub/") {
		t.Fatalf("the fixture needs a moved submodule and an untracked repository:\n%s", st)
	}
	out, errOut, code := runBin(t, testEnv(t), repo.Dir, "review", "--offline")
	if code != 0 || !strings.Contains(out, "main.go:14:2: high kody_rules: No fmt.Println") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	for _, bad := range []string{"is a directory", "cannot read", "\nsub/", "\nmod:"} {
		if strings.Contains("\n"+out, bad) {
			t.Errorf("output mentions %q:\n%s", bad, out)
		}
	}
	for _, note := range []string{"note: submodule mod: not reviewed here", "note: nested repository sub/: not reviewed here"} {
		if !strings.Contains(out, note) {
			t.Errorf("output lacks %q:\n%s", note, out)
		}
	}
}
