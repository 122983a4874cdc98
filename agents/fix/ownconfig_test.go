package fix_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/fix"
)

// TestCheckRejectsEditsInsideGitDirectories: no edit reaches a file of a
// .git directory, at any depth, in any case, or through a link.
func TestCheckRejectsEditsInsideGitDirectories(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{".git/config", ".GIT/config", "sub/.git/config", "a/b/.Git/hooks/pre-commit", "main.go"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, f), []byte("[core]\n"), 0o644))
	}
	must(t, os.Symlink(".git", filepath.Join(root, "gl")))
	must(t, os.Symlink("sub/.git/config", filepath.Join(root, "cfg")))
	must(t, os.Symlink(filepath.Join(root, ".git"), filepath.Join(root, "abs")))
	for _, f := range []string{".git/config", "./.git/config", ".GIT/config", "sub/.git/config", "a/b/.Git/hooks/pre-commit", "gl/config", "cfg", "abs/config", "gl/new-file"} {
		_, err := fix.Check(root, nil, []fix.Edit{{File: f, OldText: "[core]\n", NewText: "[core]\n\tfsmonitor = x\n"}})
		if err == nil || !strings.Contains(err.Error(), "inside .git") {
			t.Errorf("%s: err %v, want inside .git", f, err)
		}
	}
	if _, err := fix.Check(root, nil, []fix.Edit{{File: "main.go", OldText: "[core]\n", NewText: "x"}}); err != nil {
		t.Errorf("main.go: %v", err)
	}
}

// TestApplyRefusesKodylsConfiguration: kodyls's own configuration and rule
// files are never written, named in any case or reached through a link;
// other files with similar names are.
func TestApplyRefusesKodylsConfiguration(t *testing.T) {
	root := t.TempDir()
	refused := []string{
		"kodus-config.yml", "svc/kodus-config.yaml", "Kodus-Config.yml", ".kody/rules/errors.md", ".KODY/rules/x.md",
		".kody/prompts/review.yml", ".kody-rules/review/r.yml", "CLAUDE.md", "svc/AGENTS.md", ".cursorrules",
		".cursor/rules/go.mdc", ".github/copilot-instructions.md", ".github/instructions/go.instructions.md", ".windsurfrules", "conf",
	}
	allowed := []string{"main.go", "docs/kodus-config.md", "kody/rules.md", "README.md", ".github/workflows/ci.yml"}
	for _, f := range append(append([]string{}, refused[:len(refused)-1]...), allowed...) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, f), []byte("old\n"), 0o644))
	}
	must(t, os.Symlink("kodus-config.yml", filepath.Join(root, "conf")))
	for _, f := range refused {
		_, err := fix.Apply(root, nil, []fix.Edit{{File: "main.go", OldText: "old", NewText: "new"}, {File: f, OldText: "old", NewText: "new"}})
		if !errors.Is(err, fix.ErrOwnConfiguration) || !strings.Contains(err.Error(), fix.OwnConfigurationReason) {
			t.Errorf("%s: err %v, want refused as kodyls's own configuration", f, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); string(data) != "old\n" {
		t.Errorf("main.go was written along with a refused edit: %q", data)
	}
	for _, f := range allowed {
		if _, err := fix.Apply(root, nil, []fix.Edit{{File: f, OldText: "old", NewText: "new"}}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
