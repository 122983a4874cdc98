package lsp_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestNestedAgentsFileWrittenOnDiskIsLoaded: an AGENTS.md written on disk
// in a subdirectory, existing or created after start-up, is picked up by
// the file watcher without a reload command.
func TestNestedAgentsFileWrittenOnDiskIsLoaded(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":                "package main\n",
		"services/api/AGENTS.md": "Handlers validate their input.\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	notChecked := func() []string {
		var v contract.RuleViolations
		if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range v.NotChecked {
			ids = append(ids, r.UUID)
		}
		slices.Sort(ids)
		return ids
	}
	await := func(what string, want []string) {
		t.Helper()
		deadline := time.Now().Add(lsptest.DefaultTimeout)
		for {
			s.AwaitIdle("")
			got := notChecked()
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: rules %q, want %q", what, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	api := "agents:services/api/AGENTS.md#handlers-validate-their-input"
	await("at start-up", []string{api})

	write := func(rel, content string) {
		p := filepath.Join(repo.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("services/api/AGENTS.md", "Handlers log every rejected request.\n")
	api2 := "agents:services/api/AGENTS.md#handlers-log-every-rejected-request"
	await("after an edit on disk", []string{api2})

	// A directory that did not exist when watching started.
	write("web/app/CLAUDE.md", "Components are function components.\n")
	web := "claude:web/app/CLAUDE.md#components-are-function-components"
	await("after a new directory", []string{api2, web})
	s.Shutdown()
}
