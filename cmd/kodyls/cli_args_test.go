package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
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

// TestReviewWrongModelIsOneSetupError: an endpoint that answers every
// call with 404 "model not found" is a set-up error: told once, in one
// line, and the review exits 2 instead of passing with every model stage
// failed.
func TestReviewWrongModelIsOneSetupError(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	const msg = "The model `gpt-9` does not exist or you do not have access to it."
	fake.On(llmtest.Any(), llmtest.Reply{Status: 404, ErrorMessage: msg, ErrorCode: "model_not_found"})
	repo := changedRepo(t)
	repo.Write(map[string]string{"util.go": "package main\n\nfunc add(a, b int) int { return a - b }\n"})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=gpt-9")
	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 2 {
		t.Errorf("every model call refused with 404: exit %d, want 2\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out+errOut, msg); n != 1 {
		t.Errorf("the endpoint's message is told %d times, want once\n%s%s", n, out, errOut)
	}
	if line := lineWith(errOut, msg); !strings.Contains(line, "KODYLS_LLM_MODEL") {
		t.Errorf("the set-up line does not say what to fix: %q", line)
	}
	if strings.Contains(out, "degraded") || !strings.Contains(out, "main.go:14:2: high kody_rules: No fmt.Println") {
		t.Errorf("the report: per-file failures, or the detectors' finding lost:\n%s", out)
	}
	// The same review with a model the endpoint serves is no set-up error.
	fake.Reset()
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{"suggestions": []any{}}))
	if out, errOut, code := runBin(t, env, repo.Dir, "review"); code == 2 || strings.Contains(out+errOut, msg) {
		t.Errorf("a working endpoint after the wrong model: exit %d\n%s%s", code, out, errOut)
	}
}

// TestServeWithStdioFlagFirst: generic LSP clients start the server as
// `kodyls --stdio`; it serves as `kodyls serve --stdio` does.
func TestServeWithStdioFlagFirst(t *testing.T) {
	repo := fixtureRepo(t)
	cmd, raw, stderr := startRaw(t, repo.Dir, "--stdio")
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	if m := raw.Response("1"); m.Error != nil {
		t.Fatalf("initialize: %+v\n%s", m.Error, stderr.String())
	}
	raw.Notify("initialized", map[string]any{})
	raw.Request(2, "shutdown", nil)
	raw.Response("2")
	raw.Notify("exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
}

// TestHelp: `kodyls help CMD` prints the command's usage, as `kodyls CMD
// -h` does, on stdout; an unknown command is an error on stderr.
func TestHelp(t *testing.T) {
	env, dir := testEnv(t), t.TempDir()
	for cmd, want := range map[string]string{
		"review": "Usage: kodyls review", "explain": "Usage: kodyls explain", "fix": "Usage: kodyls fix",
		"rules": "kodyls rules list", "history": "kodyls history search", "eval": "Usage: kodyls eval",
		"doctor": "Usage: kodyls doctor", "serve": "Usage: kodyls [serve]", "version": "Usage: kodyls version",
	} {
		help, errOut, code := runBin(t, env, dir, "help", cmd)
		if code != 0 || !strings.Contains(help, want) || errOut != "" {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", cmd, code, help, errOut)
			continue
		}
		if out, errOut, code := runBin(t, env, dir, cmd, "-h"); code != 0 || out != help || errOut != "" {
			t.Errorf("%s -h: exit %d, stdout %q (want what help %s prints), stderr %q", cmd, code, out, cmd, errOut)
		}
	}
	general, _, code := runBin(t, env, dir, "help")
	if code != 0 || !strings.Contains(general, "KODYLS_SETTINGS") || !strings.Contains(general, "kodyls help COMMAND") {
		t.Errorf("help: exit %d\n%s", code, general)
	}
	if out, errOut, code := runBin(t, env, dir, "--help"); code != 0 || out != general || errOut != "" {
		t.Errorf("--help: exit %d, stdout %q, stderr %q; want help's text on stdout", code, out, errOut)
	}
	if out, errOut, code := runBin(t, env, dir, "help", "bogus"); code != 2 || out != "" || !strings.Contains(errOut, `unknown command "bogus"`) {
		t.Errorf("help bogus: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A subcommand's -h too, and a bad flag there exits 2 with the usage
	// on stderr.
	for _, sub := range [][]string{{"history", "search"}, {"history", "stats"}, {"rules", "list"}, {"rules", "check"}, {"rules", "test"}} {
		if out, errOut, code := runBin(t, env, dir, append(sub, "-h")...); code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
			t.Errorf("%v -h: exit %d, stdout %q, stderr %q; want the usage on stdout", sub, code, out, errOut)
		}
		if out, errOut, code := runBin(t, env, dir, append(sub, "--no-such-flag")...); code != 2 || out != "" || !strings.Contains(errOut, "Usage:") {
			t.Errorf("%v --no-such-flag: exit %d, stdout %q, stderr %q", sub, code, out, errOut)
		}
	}
	// Usage after a mistake stays on stderr.
	if out, errOut, code := runBin(t, env, dir, "--no-such-flag"); code != 2 || out != "" || !strings.Contains(errOut, "Usage:") {
		t.Errorf("a bad global flag: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
