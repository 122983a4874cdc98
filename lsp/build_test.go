package lsp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestBuildOnSave runs a real compiler (gcc, which needs no shared build
// cache that parallel tests could hold) on save: its error becomes a "build"
// diagnostic that offers "Explain this error", and fixing the code clears it.
// GCC counts a tab as 8 columns by default; byte columns match the editor's.
func TestBuildOnSave(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	repo := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) {\n\treturn 0;\n}\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{"onSave": "gcc -fsyntax-only -fdiagnostics-column-unit=byte main.c"}}})
	s.OpenFile("main.c")
	s.Insert("main.c", protocol.Position{Line: 1, Character: 0}, "\tint x = y;\n")
	s.Save("main.c")
	ds := s.AwaitDiagnostics("main.c", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, _ := d.Source.Get(); src == "build" && d.Range.Start.Line == 1 && d.Range.Start.Character == 9 {
				return true
			}
		}
		return false
	})
	actions := s.CodeActions("main.c", ds[0].Range, ds)
	if len(actions) == 0 || actions[0].Title != "Explain this error" {
		t.Fatalf("a build error must offer Explain this error: %+v", actions)
	}
	s.EditBuffer("main.c", lsptest.Edit{Range: s.RegexpRange("main.c", "\tint x = y;\n"), Text: ""})
	s.Save("main.c")
	s.AwaitDiagnostics("main.c", lsptest.Empty)
	s.Shutdown()
}

// TestNewSaveKillsTheRunningBuild: a save while a build runs cancels it
// and kills its process group, so its late effects never happen. The
// server's idle signal says when both builds have ended; the child's pid
// then shows it died with its group rather than by its own timer.
func TestNewSaveKillsTheRunningBuild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to read process states from")
	}
	repo := lsptest.NewRepo(t, map[string]string{"a.txt": "x\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		// The first build is slow and would leave a file behind; a child
		// process does the writing, so only killing the group stops it.
		// "started" is written after child.pid, so the pid is complete.
		"onSave": "if [ ! -e started ]; then (sleep 1; touch late.txt) & echo $! > child.pid; touch started; wait; fi",
	}}})
	s.OpenFile("a.txt")
	s.Save("a.txt")
	// Waiting for the external shell to start, not for the server.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(repo.Dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first build never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, err := os.ReadFile(filepath.Join(repo.Dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("child.pid: %v", err)
	}
	s.Save("a.txt") // cancels the first build
	s.AwaitIdle("")
	// The kill was sent before the first build ended; give the kernel a
	// moment to finish the child's exit, far less than its 1 s timer, so a
	// child that outlived its group is still seen running.
	state := processState(t, child)
	for end := time.Now().Add(300 * time.Millisecond); state != "gone" && state != "Z" && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
		state = processState(t, child)
	}
	if state != "gone" && state != "Z" {
		t.Fatalf("the cancelled build's child %d is still running (state %s)", child, state)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "late.txt")); err == nil {
		t.Fatal("the cancelled build's child process kept running")
	}
	s.Shutdown()
}

// processState is the state letter of a process from /proc/<pid>/stat
// ("R", "S", "Z", …), or "gone" when it no longer exists.
func processState(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "gone"
	}
	if err != nil {
		t.Fatalf("state of process %d: %v", pid, err)
	}
	// The state follows the command name, which is in parentheses and
	// may itself contain spaces or parentheses.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) == 0 {
		t.Fatalf("unexpected /proc/%d/stat: %q", pid, data)
	}
	return fields[0]
}

// TestBuildThatCannotRunIsTold: a build.onSave naming a command that does
// not exist fails on every save with nothing to show on a line; the user
// is told once, with the exit status and what the shell said, not left
// with what looks like a clean build.
func TestBuildThatCannotRunIsTold(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.go": "package main\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{"onSave": "kodyls-no-such-build ./..."}}})
	s.OpenFile("main.go")
	told := func() []string {
		var out []string
		for _, m := range s.Messages() {
			if strings.Contains(m, `build.onSave "kodyls-no-such-build ./..."`) {
				out = append(out, m)
			}
		}
		return out
	}
	for i := 0; i < 2; i++ {
		s.Save("main.go")
		s.AwaitIdle("")
	}
	got := told()
	if len(got) != 1 || !strings.Contains(got[0], "exit status 127") || !strings.Contains(got[0], "kodyls-no-such-build: not found") {
		t.Fatalf("after two saves with a build command that does not exist: %q, want one message with the exit status and the shell's words", s.Messages())
	}
	// Fixed, then broken again: told again, once.
	setBuild := func(cmd string) {
		s.Settings = map[string]any{"build": map[string]any{"onSave": cmd}}
		s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
		s.AwaitIdle("")
		s.Save("main.go")
		s.AwaitIdle("")
	}
	setBuild("true")
	setBuild("kodyls-no-such-build ./...")
	setBuild("kodyls-no-such-build ./...")
	if got := told(); len(got) != 2 {
		t.Fatalf("after the build was fixed and broken again: told %d times, want twice: %q", len(got), s.Messages())
	}
	s.Shutdown()
}

func hasBuildDiagnostic(ds []protocol.Diagnostic) bool {
	for _, d := range ds {
		if src, _ := d.Source.Get(); src == "build" {
			return true
		}
	}
	return false
}

// TestBuildOnSaveTurnedOff: turning build.onSave off clears the
// diagnostics of its last build, and a build still running when it is
// turned off shows nothing.
func TestBuildOnSaveTurnedOff(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	s := start(t, repo.Dir, lsp.Options{})
	setBuild := func(cmd string) {
		s.Settings = map[string]any{"build": map[string]any{"onSave": cmd}}
		s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	}
	s.Settings = map[string]any{"build": map[string]any{"onSave": "echo 'main.c:1:5: error: boom'; exit 1"}}
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	s.OpenFile("main.c")
	s.Save("main.c")
	s.AwaitDiagnostics("main.c", hasBuildDiagnostic)
	setBuild("")
	s.AwaitDiagnostics("main.c", func(ds []protocol.Diagnostic) bool { return !hasBuildDiagnostic(ds) })

	// A slow build, turned off while it runs.
	setBuild("sleep 1; echo 'main.c:1:5: error: late'; exit 1")
	s.AwaitIdle("")
	s.Save("main.c")
	setBuild("")
	s.AwaitIdle("")
	if ds := s.Diagnostics("main.c"); hasBuildDiagnostic(ds) {
		t.Fatalf("a build running when build.onSave was turned off showed %s", lsptest.Describe(ds))
	}
	s.Shutdown()
}
