package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// committedViolation is a workspace whose committed file already breaks
// the rule: a check of every line reports it, a check of the changed
// lines does not.
func committedViolation(t *testing.T) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"old.go":                    "package main\n\nimport \"fmt\"\n\nfunc old() {\n\tfmt.Println(\"committed\")\n}\n",
		"other.go":                  "package main\n\nfunc other() {\n\tfmt.Println(\"committed too\")\n}\n",
	})
}

// messagesWith returns the window/showMessage texts containing every part.
func messagesWith(s *lsptest.Session, parts ...string) []string {
	var out []string
next:
	for _, m := range s.Messages() {
		for _, p := range parts {
			if !strings.Contains(m, p) {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// addViolation types a new violation at the end of old.go and waits for
// it: the buffer is compared with some baseline, not checked whole.
func addViolation(t *testing.T, s *lsptest.Session, name string) {
	t.Helper()
	text := s.Text(name)
	lines := strings.Count(text, "\n")
	s.Insert(name, protocol.Position{Line: uint32(lines), Character: 0}, "var _ = fmt.Println(\"new\")\n")
	ds := s.AwaitDiagnostics(name, lsptest.HasCodeOnLine(printlnRule, uint32(lines)))
	if len(ds) != 1 {
		t.Fatalf("%s: after typing a violation: %s, want it alone", name, lsptest.Describe(ds))
	}
}

// TestUnknownBaseRefComparesWithHEAD: a baseRef that names no commit (a
// typo) does not turn the editor into a check of every line: the buffers
// are compared with HEAD, and the user is told once, with the setting,
// its value and the reason. Set again at run time, a bad value is told
// again, not kept silently with the old baseline.
func TestUnknownBaseRefComparesWithHEAD(t *testing.T) {
	repo := committedViolation(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"baseRef": "origin/mian"}})
	s.OpenFile("old.go")
	s.OpenFile("other.go")
	s.AwaitIdle("")
	for _, name := range []string{"old.go", "other.go"} {
		if ds := s.Diagnostics(name); len(ds) != 0 {
			t.Fatalf("%s: a committed, unchanged line is reported under a baseRef that names no commit: %s", name, lsptest.Describe(ds))
		}
	}
	told := messagesWith(s, `baseRef "origin/mian"`, "initializationOptions", `unknown revision "origin/mian"`, "comparing with HEAD")
	if len(told) != 1 {
		t.Fatalf("told %d times about the unknown baseRef, want once for both files: %q", len(told), s.Messages())
	}
	t.Log(told[0])
	addViolation(t, s, "old.go")

	// At run time: another bad value is told, and HEAD still applies.
	s.Settings = map[string]any{"baseRef": "origin/typo"}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	if got := messagesWith(s, `baseRef "origin/typo"`, "workspace/configuration", "comparing with HEAD"); len(got) != 1 {
		t.Fatalf("a bad baseRef set at run time: told %d times: %q", len(got), s.Messages())
	}
	if ds := s.Diagnostics("other.go"); len(ds) != 0 {
		t.Fatalf("other.go under a bad baseRef set at run time: %s", lsptest.Describe(ds))
	}
	// Fixed, then broken the same way again: told again.
	s.Settings = map[string]any{"baseRef": "HEAD"}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	s.Settings = map[string]any{"baseRef": "origin/typo"}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	if got := messagesWith(s, `baseRef "origin/typo"`); len(got) != 2 {
		t.Fatalf("a bad baseRef set again after a good one: told %d times, want twice: %q", len(got), s.Messages())
	}
	s.Shutdown()
}

// TestRepositoryGitRefusesComparesWithOpenedContent: a repository git
// refuses to read (owned by another user, as a container's mounted
// checkout often is) does not turn the editor into a check of every line:
// the file is compared with its content when opened, and the user is told
// once, with git's reason and the safe.directory to add.
func TestRepositoryGitRefusesComparesWithOpenedContent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the repository to another user")
	}
	repo := committedViolation(t)
	// Only the repository's configuration: no safe.directory from the
	// machine's.
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "gitconfig"))
	if out, err := exec.Command("chown", "-R", "65534:65534", repo.Dir).CombinedOutput(); err != nil {
		t.Skipf("chown: %v %s", err, out)
	}
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("old.go")
	s.OpenFile("other.go")
	s.AwaitIdle("")
	for _, name := range []string{"old.go", "other.go"} {
		if ds := s.Diagnostics(name); len(ds) != 0 {
			t.Fatalf("%s: a committed, unchanged line is reported in a repository git refuses: %s", name, lsptest.Describe(ds))
		}
	}
	told := messagesWith(s, `baseRef "HEAD"`, "dubious ownership", "safe.directory "+repo.Dir, "content when opened")
	if len(told) != 1 {
		t.Fatalf("told %d times about the repository git refuses, want once with its reason: %q", len(told), s.Messages())
	}
	t.Log(told[0])
	addViolation(t, s, "old.go")
	s.Shutdown()
}

// TestWorkspaceReviewUnderUnknownBaseRef: the change set of a workspace
// review with no file open is taken against HEAD too, and the user told.
func TestWorkspaceReviewUnderUnknownBaseRef(t *testing.T) {
	repo := committedViolation(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"baseRef": "origin/mian"}})
	s.AwaitIdle("")
	var res []contract.ReviewSummary
	if err := s.ExecuteCommand(contract.CommandReviewWorkspace, nil, &res); err != nil {
		t.Fatal(err)
	}
	s.AwaitIdle("")
	if got := messagesWith(s, `baseRef "origin/mian"`, "comparing with HEAD"); len(got) != 1 {
		t.Fatalf("a workspace review under a baseRef that names no commit: told %d times: %q", len(got), s.Messages())
	}
	s.Shutdown()
}
