package lsp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestBuildOnSave runs the real Go compiler on save: its error becomes a
// "build" diagnostic that offers "Explain this error", and fixing the code
// clears it.
func TestBuildOnSave(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"go.mod":  "module example.com/b\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n}\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{"onSave": "go build ./..."}}})
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 3, Character: 0}, "\tunused := 1\n")
	s.Save("main.go")
	ds := s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, _ := d.Source.Get(); src == "build" && d.Range.Start.Line == 3 && d.Range.Start.Character == 1 {
				return true
			}
		}
		return false
	})
	actions := s.CodeActions("main.go", ds[0].Range, ds)
	if len(actions) == 0 || actions[0].Title != "Explain this error" {
		t.Fatalf("a build error must offer Explain this error: %+v", actions)
	}
	s.EditBuffer("main.go", lsptest.Edit{Range: s.RegexpRange("main.go", "\tunused := 1\n"), Text: ""})
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
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
