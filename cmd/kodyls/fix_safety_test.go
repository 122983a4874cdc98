package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// editsPlan is a plan of one step per group of edits, each a
// propose_edits step, the first reading main.go.
func editsPlan(groups ...[]map[string]string) string {
	plan := `{"steps":[{"id":"read","description":"read greet","tool":"read_file","input":{"path":"main.go","line":6},"dependsOn":[]}`
	for i, g := range groups {
		edits, _ := json.Marshal(map[string]any{"edits": g})
		plan += `,{"id":"edit` + string(rune('1'+i)) + `","description":"edit","tool":"propose_edits","input":` + string(edits) + `,"dependsOn":["read"]}`
	}
	return plan + `]}`
}

// mainFix is the edit that fixes typeErrorGo.
var mainFix = map[string]string{"file": "main.go", "oldText": "\treturn 42\n", "newText": "\treturn \"42\"\n"}

// gitTrap is a repository holding typeErrorGo with two ways into a .git
// directory besides its own: a committed link gl → .git, and a nested
// repository sub. It returns the repository and the file the model's
// fsmonitor command would create.
func gitTrap(t *testing.T) (*lsptest.Repo, string) {
	repo := typeErrorRepo(t)
	if err := os.Symlink(".git", filepath.Join(repo.Dir, "gl")); err != nil {
		t.Fatal(err)
	}
	repo.Commit("a link to .git")
	sub := exec.Command("git", "init", "-q", "sub")
	sub.Dir = repo.Dir
	if out, err := sub.CombinedOutput(); err != nil {
		t.Fatalf("git init sub: %v\n%s", err, out)
	}
	return repo, filepath.Join(t.TempDir(), "PWNED")
}

// fsmonitorEdits are edits that make git run a command at the next git
// status: through the link and in the nested repository.
func fsmonitorEdits(marker string) []map[string]string {
	monitor := func(file string) map[string]string {
		return map[string]string{"file": file, "oldText": "[core]\n", "newText": "[core]\n\tfsmonitor = \"touch " + marker + "; false\"\n"}
	}
	return []map[string]string{monitor("gl/config"), monitor("sub/.git/config"), mainFix}
}

// checkNoGitCommand runs git status in the repository and the nested one
// and fails when the model's command ran or a git configuration changed.
func checkNoGitCommand(t *testing.T, repo *lsptest.Repo, marker string) {
	t.Helper()
	for _, dir := range []string{repo.Dir, filepath.Join(repo.Dir, "sub")} {
		data, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
		if strings.Contains(string(data), "fsmonitor") {
			t.Errorf("%s/.git/config was edited:\n%s", dir, data)
		}
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = dir
		_ = cmd.Run()
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("git status ran the model's command")
	}
}

// TestFixNeverEditsAGitDirectory: with no build command configured (so a
// valid fix is applied unverified), a plan that writes core.fsmonitor
// into a .git directory — through a committed link to .git, in a nested
// repository — is rejected whole: nothing
// is written, and git status afterwards runs nothing the model chose.
func TestFixNeverEditsAGitDirectory(t *testing.T) {
	repo, marker := gitTrap(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editsPlan(fsmonitorEdits(marker))))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--json")
	if code != 3 {
		t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
	}
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var why string
	for _, s := range res.Plans[0].Steps {
		if s.ID == "edit1" {
			why = s.Result
		}
	}
	for _, want := range []string{"edit 1: gl/config is inside .git", "edit 2: sub/.git/config is inside .git"} {
		if !strings.Contains(why, want) {
			t.Errorf("the rejection lacks %q:\n%s", want, why)
		}
	}
	if len(res.Applied) != 0 || len(res.Edits) != 0 {
		t.Errorf("applied %v, edits %+v", res.Applied, res.Edits)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
		t.Errorf("main.go changed:\n%s", data)
	}
	checkNoGitCommand(t, repo, marker)
}

// TestFixThisErrorNeverEditsAGitDirectory: the editor's "Fix this error"
// validates edits as kodyls fix does: a plan that edits .git through a
// link or a nested repository sends no workspace edit.
func TestFixThisErrorNeverEditsAGitDirectory(t *testing.T) {
	repo, marker := gitTrap(t)
	s := fixCommandSession(t, repo, editsPlan(fsmonitorEdits(marker)))
	res := runFixCommand(t, s)
	if res.Applied || len(res.Edits) != 0 || len(res.Files) != 0 || !strings.Contains(res.Note, "is inside .git") {
		t.Errorf("result %+v", res)
	}
	if edits := s.AppliedEdits(); len(edits) != 0 {
		t.Errorf("applyEdit sent: %s", edits[0].Raw)
	}
	s.Shutdown()
	checkNoGitCommand(t, repo, marker)
}

// kodylsConfigRepo holds typeErrorGo and kodyls's own configuration: a
// kodus-config.yml whose ignorePaths protects secrets/, a Kody Rule and a
// CLAUDE.md, and a link to kodus-config.yml.
func kodylsConfigRepo(t *testing.T) *lsptest.Repo {
	repo := lsptest.NewRepo(t, map[string]string{
		"go.mod":             "module example.com/greet\n\ngo 1.22\n",
		"main.go":            typeErrorGo,
		"kodus-config.yml":   "ignorePaths:\n  - secrets/**\n",
		".kody/rules/err.md": "# Wrap errors\n\nWrap every returned error.\n",
		"CLAUDE.md":          "- Keep functions short.\n",
	})
	if err := os.Symlink("kodus-config.yml", filepath.Join(repo.Dir, "settings.yml")); err != nil {
		t.Fatal(err)
	}
	repo.Commit("a link to the configuration")
	return repo
}

// configEdits edit kodyls's configuration, each in a step of its own
// after the fix of main.go.
func configEdits() [][]map[string]string {
	return [][]map[string]string{
		{mainFix},
		{{"file": "kodus-config.yml", "oldText": "  - secrets/**\n", "newText": ""}},
		{{"file": ".kody/rules/err.md", "oldText": "Wrap every returned error.", "newText": "Errors need no wrapping."}},
		{{"file": "CLAUDE.md", "oldText": "short", "newText": "long"}},
		{{"file": "settings.yml", "oldText": "  - secrets/**\n", "newText": "  - none\n"}},
	}
}

// checkConfigUnchanged fails when a configuration file changed.
func checkConfigUnchanged(t *testing.T, repo *lsptest.Repo) {
	t.Helper()
	if st := repo.Git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("the repository changed:\n%s", st)
	}
}

// TestFixRefusesEditsToKodylsConfiguration: a fix may not change
// kodyls's own configuration (kodus-config.yml, whose ignorePaths decides
// what prompts may read, directly or through a link; the Kody Rules; the
// assistants' rule files), even with no build command: the edits are
// refused with the reason, shown for the user to make, and nothing is
// written.
func TestFixRefusesEditsToKodylsConfiguration(t *testing.T) {
	repo := kodylsConfigRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editsPlan(configEdits()...)))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`))
	env := fakeEnv(t, fake)
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "fix", "--apply")
	if code != 3 {
		t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"Refused, because they change kodyls's own configuration (never applied, never built):",
		"  kodus-config.yml: kodyls never applies a change to its own configuration: it is the configuration of the review and of the files prompts may read",
		"  .kody/rules/err.md: kodyls never applies a change to its own configuration: it is a rule file (kody-md)",
		"  CLAUDE.md: kodyls never applies a change to its own configuration: it is a rule file kodyls imports (claude)",
		"  settings.yml: kodyls never applies a change to its own configuration: it leads to kodus-config.yml, the configuration",
		"-  - secrets/**",
		"Note: the fix needs a change to kodus-config.yml: kodyls never applies a change to its own configuration",
		"Nothing was written.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if reflect.Times() == 0 {
		t.Error("the refusal was not shown to the reflection")
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), "edits to kodyls's own configuration are refused") {
			t.Error("the reflection was not told why the configuration edits failed")
		}
	}
	checkConfigUnchanged(t, repo)
}

// TestFixThisErrorRefusesEditsToKodylsConfiguration: the editor shows
// the configuration edits as not applied, with the reason, and sends no
// workspace edit.
func TestFixThisErrorRefusesEditsToKodylsConfiguration(t *testing.T) {
	repo := kodylsConfigRepo(t)
	s := fixCommandSession(t, repo, editsPlan(configEdits()...))
	res := runFixCommand(t, s)
	if res.Applied || len(res.Edits) != 0 {
		t.Errorf("result %+v", res)
	}
	for _, want := range []string{"**Not applied** (kodyls never applies a change to its own configuration; make them yourself", "-  - secrets/**", "the fix needs a change to kodus-config.yml"} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("markdown lacks %q:\n%s", want, res.Markdown)
		}
	}
	if edits := s.AppliedEdits(); len(edits) != 0 {
		t.Errorf("applyEdit sent: %s", edits[0].Raw)
	}
	s.Shutdown()
	checkConfigUnchanged(t, repo)
}

// fixCommandSession starts the binary on repo with the fake model
// scripted with plan (and a reflection that gives up), no build command
// configured, and main.go open.
func fixCommandSession(t *testing.T, repo *lsptest.Repo, plan string) *lsptest.Session {
	t.Helper()
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`))
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, fakeEnv(t, fake))
	s.Initialize(lsptest.InitOptions{ChangeAnnotations: true, InitializationOptions: map[string]any{"review": map[string]any{"trigger": "manual"}}})
	s.OpenFile("main.go")
	return s
}

// runFixCommand runs kodyls.fixError on the type error of main.go, as
// the editor does for a diagnostic.
func runFixCommand(t *testing.T, s *lsptest.Session) contract.FixResult {
	t.Helper()
	r := protocol.Range{Start: protocol.Position{Line: 5, Character: 8}, End: protocol.Position{Line: 5, Character: 10}}
	arg, _ := json.Marshal(contract.FixArgs{URI: s.URI("main.go"), Range: &r, Message: "cannot use 42 (untyped int constant) as string value in return statement", Source: "build"})
	var res contract.FixResult
	if err := s.ExecuteCommand(contract.CommandFixError, json.RawMessage(arg), &res); err != nil {
		t.Fatalf("kodyls.fixError: %v", err)
	}
	return res
}
