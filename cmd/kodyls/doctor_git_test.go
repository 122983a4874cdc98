package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDoctorChecksBaseRefAndBuild: a baseRef that names no commit and a
// build.onSave whose program does not exist are problems that name the
// setting (exit 1), not "no problems found"; good values show as rows.
func TestDoctorChecksBaseRefAndBuild(t *testing.T) {
	repo := fixtureRepo(t)
	env := append(testEnv(t), `KODYLS_SETTINGS={"baseRef":"origin/mian","build":{"onSave":"gobuild ./..."}}`)
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 {
		t.Fatalf("doctor with a bad baseRef and build command: code %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		`baseRef "origin/mian" (from env KODYLS_SETTINGS) names no commit in ` + repo.Dir,
		`build.onSave "gobuild ./..." (from env KODYLS_SETTINGS): gobuild is not on PATH`,
		"2 problem(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	env = append(testEnv(t), `KODYLS_SETTINGS={"baseRef":"main","build":{"onSave":"CGO_ENABLED=0 git status"}}`)
	out, errOut, code = runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor with a good baseRef and build command: code %d\n%s%s", code, out, errOut)
	}
	if line := lineWith(out, "baseRef "); !strings.Contains(line, "main (commit ") {
		t.Errorf("baseRef row: %q", line)
	}
	if line := lineWith(out, "build.onSave "); !strings.Contains(line, "CGO_ENABLED=0 git status") || !strings.Contains(line, "git is /") {
		t.Errorf("build.onSave row: %q", line)
	}
}

// TestGitRefusesTheRepository: in a repository git refuses to use (owned
// by another user, as a container's mounted checkout often is), review and
// doctor pass on git's reason and its safe.directory hint instead of
// saying there is no repository.
func TestGitRefusesTheRepository(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the repository to another user")
	}
	repo := fixtureRepo(t)
	if out, err := exec.Command("chown", "-R", "65534:65534", repo.Dir).CombinedOutput(); err != nil {
		t.Skipf("chown: %v %s", err, out)
	}
	env := testEnv(t) // a HOME of its own: no safe.directory
	hint := "git config --global --add safe.directory " + repo.Dir

	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 2 || !strings.Contains(errOut, "dubious ownership") || !strings.Contains(errOut, hint) || strings.Contains(errOut, "not inside a git repository") {
		t.Errorf("review: code %d, want 2 with git's reason and hint\n%s%s", code, out, errOut)
	}
	out, errOut, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(lineWith(out, "repository "), "dubious ownership") || !strings.Contains(out, hint) {
		t.Errorf("doctor: code %d, want 1 with git's reason and hint\n%s%s", code, out, errOut)
	}
}
