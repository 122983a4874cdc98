package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/rules"
)

// TestDoctorReportsTheErrorIndex: doctor shows the search index of the
// error history as every lookup sees it, a deleted one rebuilt from the
// history.
func TestDoctorReportsTheErrorIndex(t *testing.T) {
	repo := brokenGoRepo(t)
	data := filepath.Join(t.TempDir(), "data")
	env := append(testEnv(t), "KODYLS_DATA_DIR="+data)
	indexRow := func(step string) string {
		t.Helper()
		out, errOut, code := runBin(t, env, repo.Dir, "doctor")
		if code != 0 {
			t.Fatalf("%s: doctor code %d\n%s%s", step, code, out, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "error index ") {
				return line
			}
		}
		t.Fatalf("%s: doctor shows no error index:\n%s", step, out)
		return ""
	}
	path := filepath.Join(data, "errors.bleve")

	if row := indexRow("a new data directory"); !strings.HasSuffix(row, path+" (0 documents, 0 queued)") {
		t.Fatalf("a new data directory: %q, want an empty index at %s", row, path)
	}
	if out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline"); code != 0 {
		t.Fatalf("explain: code %d\n%s%s", code, out, errOut)
	}
	if row := indexRow("after an explanation"); !strings.HasSuffix(row, path+" (1 documents, 0 queued)") {
		t.Fatalf("after an explanation: %q, want the remembered error indexed", row)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if row := indexRow("after deleting the index"); !strings.HasSuffix(row, path+" (1 documents, 0 queued)") {
		t.Fatalf("after deleting the index: %q, want it rebuilt from the history", row)
	}
}

// TestDoctorReportsKodusConfig: the problems `kodyls review` notes in
// kodus-config.yml are doctor's problems too; and the rules line names the
// sources the rules came from, then the ones searched.
func TestDoctorReportsKodusConfig(t *testing.T) {
	repo := fixtureRepo(t)
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor without kodus-config.yml: code %d\n%s%s", code, out, errOut)
	}
	if line := lineWith(out, "kody rules"); !strings.Contains(line, "1 loaded from kody-md (.kody/rules), 0 broken") {
		t.Errorf("the rules line names other sources than the one the rule came from: %q", line)
	}
	if line := lineWith(out, "searched "); !strings.Contains(line, "kody-md (.kody/rules)") || !strings.Contains(line, "AGENTS.md") {
		t.Errorf("the sources searched are not listed: %q\n%s", line, out)
	}

	repo.Write(map[string]string{"kodus-config.yml": "reviewOptions:\n  security: maybe\nsuggestionControl:\n  maxSuggestions: -3\n"})
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 {
		t.Errorf("doctor with bad values in kodus-config.yml: code %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"kodus-config.yml:2: reviewOptions.security", "kodus-config.yml:4: suggestionControl.maxSuggestions", "2 problem(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	// Review notes the same problems.
	review, _, _ := runBin(t, env, repo.Dir, "review", "--offline")
	if !strings.Contains(review, "kodus-config.yml:2: reviewOptions.security") {
		t.Errorf("review does not note the problem doctor reports:\n%s", review)
	}

	repo.Write(map[string]string{"kodus-config.yml": "reviewOptions:\n  security: [\n"})
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "kodus-config.yml:3: invalid YAML") {
		t.Errorf("doctor with malformed kodus-config.yml: code %d, want 1 and the line\n%s", code, out)
	}
}

// TestDoctorStoreErrorIsTheRealOne: a data directory that cannot be
// created on a file system that reports no free space (/proc) is reported
// as it is, not as a full disk.
func TestDoctorStoreErrorIsTheRealOne(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	repo := fixtureRepo(t)
	env := append(testEnv(t), "KODYLS_DATA_DIR=/proc/kodyls")
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "mkdir /proc/kodyls") || strings.Contains(out, "is full") || strings.Contains(out, "free some space") {
		t.Errorf("doctor with KODYLS_DATA_DIR=/proc/kodyls: code %d, want 1 and the mkdir error, no full disk\n%s", code, out)
	}
}

// TestDoctorUsageLatencyInMs: the usage rows give the mean latency in
// milliseconds; a fast local endpoint's is no "0s".
func TestDoctorUsageLatencyInMs(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, errOut, code := runBin(t, env, repo.Dir, "review", "main.go"); code != 0 {
		t.Fatalf("review: code %d\n%s%s", code, out, errOut)
	}
	out, _, _ := runBin(t, env, repo.Dir, "doctor")
	line := lineWith(out, "llm usage")
	if !regexp.MustCompile(`calls \(\+\d+ from cache, \d+ failed\), \d+ prompt \+ \d+ completion tokens, avg \d+ ms$`).MatchString(line) {
		t.Errorf("usage row %q: want the mean latency in ms\n%s", line, out)
	}
}

// TestDoctorFromASubdirectoryChecksTheRepository: run from a
// subdirectory, doctor checks the workspace every other command uses (the
// git root), not the subdirectory: its rules and kodus-config.yml.
func TestDoctorFromASubdirectoryChecksTheRepository(t *testing.T) {
	repo := fixtureRepo(t)
	repo.Write(map[string]string{"kodus-config.yml": "ignorePaths: [\"[bad\"]\n", "sub/notes.txt": "x\n"})
	out, _, code := runBin(t, testEnv(t), filepath.Join(repo.Dir, "sub"), "doctor")
	if code != 1 || !strings.Contains(out, "[bad") {
		t.Fatalf("doctor in a subdirectory: code %d, want 1 and the root's kodus-config.yml problem:\n%s", code, out)
	}
}

// TestDoctorNamesBrokenRuleFilesAsRulesCheckDoes: a rule file broken as a
// whole (too large to read) has no line, and doctor's problem names it as
// `kodyls rules check` does, with no line 0; one broken at a place keeps
// its line and column.
func TestDoctorNamesBrokenRuleFilesAsRulesCheckDoes(t *testing.T) {
	repo := fixtureRepo(t)
	repo.Write(map[string]string{
		".kody/rules/huge.md":      "---\ntitle: Huge\n---\n" + strings.Repeat("x", rules.MaxFileSize),
		".kody/rules/bad-regex.md": badRegexMD,
	})
	env := testEnv(t)
	check, _, code := runBin(t, env, repo.Dir, "rules", "check")
	if code != 1 || !strings.Contains(check, ".kody/rules/huge.md: ") || !strings.Contains(check, ".kody/rules/bad-regex.md:") {
		t.Fatalf("rules check: code %d, want both files broken\n%s", code, check)
	}
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || strings.Contains(out, ":0:") {
		t.Errorf("doctor: code %d, want 1 and no line 0\n%s", code, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(check), "\n") {
		if !strings.Contains(out, "rule file "+line) {
			t.Errorf("doctor's problems lack %q\n%s", "rule file "+line, out)
		}
	}
}

// TestDoctorShowsEverySettingThatIsSet: a setting given in the environment
// that no other row shows (the README's own KODYLS_SETTINGS example) is
// listed with its value and where it came from; defaults are not.
func TestDoctorShowsEverySettingThatIsSet(t *testing.T) {
	repo := fixtureRepo(t)
	env := append(testEnv(t), `KODYLS_SETTINGS={"llm":{"timeoutMs":20000,"maxConcurrent":2}}`)
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	line := lineWith(out, "also set:")
	for _, want := range []string{"llm.timeoutMs=20000 (env KODYLS_SETTINGS)", "llm.maxConcurrent=2 (env KODYLS_SETTINGS)"} {
		if !strings.Contains(line, want) {
			t.Errorf("doctor does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(line, "review.idleDelayMs") || strings.Contains(line, "build.timeoutMs") {
		t.Errorf("defaults listed as set: %q", line)
	}
}
