package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// These tests move the baseline with git while a buffer is open and
// expect the changed lines, so the findings, to follow without reopening
// the file: wherever git keeps the repository's HEAD, index and refs.

// gitIn runs git in dir with a test identity.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{
		"-c", "user.name=kodyls test", "-c", "user.email=test@kodyls.invalid",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
	}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// todoFiles are a workspace's TODO rule and its main.go, under prefix.
func todoFiles(prefix string) map[string]string {
	return map[string]string{
		prefix + ".kody/rules/todo.md": lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `TODO[^(]`),
		prefix + "main.go":             mainGo,
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// typeTODO opens main.go in a session on root, types a TODO line, saves
// it and waits for the detector's finding on it.
func typeTODO(t *testing.T, root string) *lsptest.Session {
	t.Helper()
	s := start(t, root, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.AwaitIdle("main.go")
	s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, "\t// TODO tidy up\n")
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(todoRule, 5))
	return s
}

// commitClears commits everything in dir and expects the TODO finding,
// now on a committed line, to leave.
func commitClears(t *testing.T, s *lsptest.Session, dir string) {
	t.Helper()
	gitIn(t, dir, "commit", "-q", "-a", "-m", "tidy")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
}

func TestCommitInSubfolderWorkspaceMovesBaseline(t *testing.T) {
	repo := lsptest.NewRepo(t, todoFiles("svc/"))
	s := typeTODO(t, filepath.Join(repo.Dir, "svc"))
	commitClears(t, s, repo.Dir)
	s.Shutdown()
}

func TestCommitInLinkedWorktreeMovesBaseline(t *testing.T) {
	repo := lsptest.NewRepo(t, todoFiles(""))
	wt := filepath.Join(realTempDir(t), "wt")
	repo.Git("worktree", "add", "-q", "-b", "topic", wt)
	s := typeTODO(t, wt)
	commitClears(t, s, wt)
	s.Shutdown()
}

func TestCommitInSubmoduleMovesBaseline(t *testing.T) {
	lib := lsptest.NewRepo(t, todoFiles(""))
	super := lsptest.NewRepo(t, map[string]string{"README.md": "super\n"})
	super.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.Dir, "lib")
	super.Commit("add lib")
	root := filepath.Join(super.Dir, "lib")
	if st, err := os.Stat(filepath.Join(root, ".git")); err != nil || st.IsDir() {
		t.Fatalf("lib/.git should be a file pointing into the superproject: %v", err)
	}
	s := typeTODO(t, root)
	commitClears(t, s, root)
	s.Shutdown()
}

func TestWorkspaceThatBecomesARepository(t *testing.T) {
	root := realTempDir(t)
	writeFiles(t, root, todoFiles(""))
	s := typeTODO(t, root)
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "add", "-A")
	commitClears(t, s, root)
	s.Shutdown()
}

// TestRepositoryCreatedAroundWorkspaceIsReadOnSave: a repository created
// above the workspace after start is seen nowhere the server watches; the
// next save reads the baseline again, and from then on the repository is
// watched.
func TestRepositoryCreatedAroundWorkspaceIsReadOnSave(t *testing.T) {
	parent := realTempDir(t)
	writeFiles(t, parent, todoFiles("svc/"))
	s := typeTODO(t, filepath.Join(parent, "svc"))
	gitIn(t, parent, "init", "-q")
	gitIn(t, parent, "add", "-A")
	gitIn(t, parent, "commit", "-q", "-m", "initial")
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", lsptest.Empty)

	s.Insert("main.go", protocol.Position{Line: 2, Character: 0}, "// TODO again\n")
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(todoRule, 2))
	commitClears(t, s, parent)
	s.Shutdown()
}

// TestSoftResetMovesBaseline: git reset --soft rewrites only the branch's
// ref (HEAD still names the branch, the index is kept), and the line the
// undone commit added is a change again.
func TestSoftResetMovesBaseline(t *testing.T) {
	repo := lsptest.NewRepo(t, todoFiles(""))
	repo.Write(map[string]string{"main.go": "package main\n\n// TODO tidy up\n" + mainGo[len("package main\n\n"):]})
	repo.Commit("todo")
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.AwaitIdle("main.go")
	if ds := s.Diagnostics("main.go"); len(ds) != 0 {
		t.Fatalf("a committed TODO is reported: %s", lsptest.Describe(ds))
	}
	repo.Git("reset", "-q", "--soft", "HEAD~1")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(todoRule, 2))
	s.Shutdown()
}

// twoTODOs is a repository whose last commit adds "// TODO new" (line 3)
// below the "// TODO old" (line 2) of the commit before, returned.
func twoTODOs(t *testing.T) (repo *lsptest.Repo, old string) {
	rest := mainGo[len("package main\n\n"):]
	repo = lsptest.NewRepo(t, todoFiles(""))
	repo.Write(map[string]string{"main.go": "package main\n\n// TODO old\n" + rest})
	repo.Commit("old todo")
	old = strings.TrimSpace(repo.Git("rev-parse", "HEAD"))
	repo.Write(map[string]string{"main.go": "package main\n\n// TODO old\n// TODO new\n" + rest})
	repo.Commit("new todo")
	return repo, old
}

// onlyNewTODO: the finding of line 3 and no other.
func onlyNewTODO(ds []protocol.Diagnostic) bool {
	return len(ds) == 1 && lsptest.HasCodeOnLine(todoRule, 3)(ds)
}

// TestBaseRefBranchMovedElsewhere: the baseRef branch is moved by a
// command that touches neither HEAD nor the index.
func TestBaseRefBranchMovedElsewhere(t *testing.T) {
	repo, old := twoTODOs(t)
	repo.Git("branch", "topic/base", old)
	s := start(t, repo.Dir, lsp.Options{})
	s.Settings = map[string]any{"baseRef": "topic/base"}
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.AwaitDiagnostics("main.go", onlyNewTODO)
	repo.Git("branch", "-f", "topic/base", "main")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.Shutdown()
}

// TestBranchInNewRefsDirectoryMoves: a branch whose directory of
// refs/heads was created after start (feature/x) is watched too.
func TestBranchInNewRefsDirectoryMoves(t *testing.T) {
	repo, old := twoTODOs(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.AwaitIdle("main.go")
	if ds := s.Diagnostics("main.go"); len(ds) != 0 {
		t.Fatalf("committed TODOs are reported: %s", lsptest.Describe(ds))
	}
	// The buffer keeps the text of main; the checkout makes the old commit
	// the baseline.
	repo.Git("checkout", "-q", "-b", "feature/x", old)
	s.AwaitDiagnostics("main.go", onlyNewTODO)
	// Only refs/heads/feature/x changes.
	repo.Git("reset", "-q", "--soft", "main")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.Shutdown()
}
