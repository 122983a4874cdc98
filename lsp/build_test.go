package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
// and kills its process group, so its late effects never happen.
func TestNewSaveKillsTheRunningBuild(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"a.txt": "x\n"})
	sentinel := filepath.Join(repo.Dir, "late.txt")
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		// The first build is slow and would leave a file behind; a child
		// process does the writing, so only killing the group stops it.
		"onSave": "if [ ! -e started ]; then touch started; (sleep 1; touch late.txt) & wait; fi",
	}}})
	s.OpenFile("a.txt")
	s.Save("a.txt")
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
	s.Save("a.txt") // cancels the first build
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("the cancelled build's child process kept running")
	}
	s.Shutdown()
}
