package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestRulesCheckFileText: `kodyls rules check` reads a rule file saved
// as UTF-16 (as Windows tools write it) as the rule it holds, refuses a
// binary one instead of loading it as a rule of garbage, prints columns
// in bytes, and warns of what it leaves out: a link to a directory, a
// reference cut short.
func TestRulesCheckFileText(t *testing.T) {
	win := "---\r\ntitle: Windows rule\r\nseverity: high\r\n---\r\nNo console.log in production code.\r\n"
	units := utf16.Encode([]rune("\ufeff" + win))
	utf16LE := make([]byte, 2*len(units))
	for i, u := range units {
		utf16LE[2*i], utf16LE[2*i+1] = byte(u), byte(u>>8)
	}
	random := make([]byte, 3<<10)
	rand.New(rand.NewSource(7)).Read(random)
	var lines strings.Builder
	for i := 1; i <= 400; i++ {
		lines.WriteString("line\n")
	}
	repo := rulesRepo(t, map[string]string{
		".kody/rules/win.md":    string(utf16LE),
		".kody/rules/random.md": string(random),
		".kody/rules/glob.md":   "---\ntitle: Glob\n" + `path: ["**/ü😀.go", "[bad"]` + "\n---\nBody.\n",
		".kody/rules/ref.md":    "---\ntitle: Ref\n---\nAs @file:docs/lines.txt#L10-L350 says.\n",
		"docs/lines.txt":        lines.String(),
		"shared/rules/team.md":  "---\ntitle: Team\n---\nBody.\n",
	})
	if runtime.GOOS != "windows" {
		if err := os.Symlink("../../shared/rules", filepath.Join(repo.Dir, ".kody", "rules", "team")); err != nil {
			t.Fatal(err)
		}
	}
	env := testEnv(t)

	out, errOut, code := runBin(t, env, repo.Dir, "rules", "check")
	if code != 1 {
		t.Fatalf("code %d, want 1 for the binary file\nstdout %q\nstderr %q", code, out, errOut)
	}
	want := []string{
		`.kody/rules/glob.md:3:24: invalid path glob "[bad"`,
		".kody/rules/random.md: rule file is not UTF-8 text: ",
		".kody/rules/ref.md:4:4: warning: reference @file:docs/lines.txt#L10-L350: only lines 10-209 are attached",
	}
	if runtime.GOOS != "windows" {
		want = append(want, ".kody/rules/team: warning: not read: it is a symbolic link to the directory shared/rules, and symbolic links to directories are not followed")
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	if len(got) != len(want) {
		t.Fatalf("rules check printed:\n%s\nwant %d lines starting:\n%s", out, len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d = %q\nwant %q", i+1, got[i], want[i])
		}
	}
	// The three rules of rulesRepo, win.md and ref.md.
	if !strings.Contains(errOut, "5 rule(s) loaded, 2 error(s), ") {
		t.Errorf("summary: %q", errOut)
	}

	out, _, _ = runBin(t, env, repo.Dir, "rules", "list", "--json")
	var list rulesListJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("rules list --json: %v\n%s", err, out)
	}
	found := false
	for _, r := range list.Rules {
		if r.File == ".kody/rules/win.md" {
			found = r.Title == "Windows rule" && r.Severity == "high"
		}
		if r.File == ".kody/rules/random.md" {
			t.Errorf("the binary file is listed as a rule: %+v", r)
		}
	}
	if !found {
		t.Errorf("win.md is not the rule it holds: %s", out)
	}
}
