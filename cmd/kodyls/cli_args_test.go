package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/report"
)

// TestReviewFlagsAfterPaths: flags count wherever they are, before or
// after the PATHs, as the README's examples write them; a PATH that is
// neither on disk nor known to git is an error, not "0 findings".
func TestReviewFlagsAfterPaths(t *testing.T) {
	repo := changedRepo(t)
	env := testEnv(t)
	if out, errOut, code := runBin(t, env, repo.Dir, "review", ".", "--offline", "--fail-on", "high"); code != 1 {
		t.Errorf("review . --offline --fail-on high with a high finding: exit %d, want 1\n%s%s", code, out, errOut)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "review", "main.go", "--format", "json", "--offline")
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Files) != 1 || len(rep.Findings) != 1 {
		t.Errorf("review main.go --format json: code %d, %v\n%s%s", code, err, out, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "review", "main.go", "--format", "xml"); code != 2 || !strings.Contains(errOut, "use text, json or sarif") {
		t.Errorf("a bad flag after the path: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "review", "main.go", "--no-such-flag"); code != 2 || !strings.Contains(errOut, "no-such-flag") || !strings.Contains(errOut, "Usage: kodyls review") {
		t.Errorf("an unknown flag after the path: exit %d, %q", code, errOut)
	}

	out, errOut, code = runBin(t, env, repo.Dir, "review", "--offline", "nosuchfile.go")
	if code != 2 || !strings.Contains(errOut, "nosuchfile.go: no such file or directory") || out != "" {
		t.Errorf("review of a path that does not exist: exit %d, want 2 and the path named\n%s%s", code, out, errOut)
	}
	// A tracked file deleted in the working tree is known: nothing to
	// review in it, and no error.
	repo.Write(map[string]string{"gone.go": "package main\n"})
	repo.Git("add", "gone.go")
	repo.Commit("gone")
	if err := os.Remove(filepath.Join(repo.Dir, "gone.go")); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runBin(t, env, repo.Dir, "review", "--offline", "gone.go"); code != 0 || !strings.Contains(out, "0 findings in 0 changed files") {
		t.Errorf("review of a deleted tracked file: exit %d\n%s%s", code, out, errOut)
	}
}

// TestExplainAndFixFlagsAfterTheFile: `explain FILE --json` and `fix FILE
// --apply` take their flags after the FILE.
func TestExplainAndFixFlagsAfterTheFile(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	build := filepath.Join(t.TempDir(), "build.txt")
	if err := os.WriteFile(build, []byte(buildOutput(t, repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "explain", build, "--json", "--offline")
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Errors) == 0 || !strings.Contains(rep.Errors[0].Message, "declared and not used") {
		t.Errorf("explain FILE --json --offline: code %d, %v\n%s%s", code, err, out, errOut)
	}
	out, errOut, code = runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "-", "--json", "--offline")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Errorf("explain - --json --offline: code %d, %v\n%s%s", code, err, out, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "explain", build, "other.txt"); code != 2 || !strings.Contains(errOut, "at most one FILE") {
		t.Errorf("explain with two files: exit %d, %q", code, errOut)
	}
	// The flags after the FILE are read: --rounds 0 is refused, and with
	// them accepted the fix stops at the missing model.
	if _, errOut, code := runBin(t, env, repo.Dir, "fix", build, "--rounds", "0"); code != 2 || !strings.Contains(errOut, "--rounds 0") {
		t.Errorf("fix FILE --rounds 0: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runBin(t, env, repo.Dir, "fix", build, "--apply"); code != 2 || !strings.Contains(errOut, "needs a model") {
		t.Errorf("fix FILE --apply without a model: exit %d, %q", code, errOut)
	}
}
