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
	await := func(what string, want []string) { t.Helper(); awaitNotChecked(t, s, what, want) }
	api := "agents:services/api/AGENTS.md#handlers-validate-their-input"
	await("at start-up", []string{api})

	write := func(rel, content string) { t.Helper(); writeFile(t, repo.Dir, rel, content) }
	write("services/api/AGENTS.md", "Handlers log every rejected request.\n")
	api2 := "agents:services/api/AGENTS.md#handlers-log-every-rejected-request"
	await("after an edit on disk", []string{api2})

	// A directory that did not exist when watching started.
	write("web/app/CLAUDE.md", "Components are function components.\n")
	web := "claude:web/app/CLAUDE.md#components-are-function-components"
	await("after a new directory", []string{api2, web})
	s.Shutdown()
}

// TestImportedRuleFileEditedOnDiskIsReloaded: a file CLAUDE.md imports is
// not a rule source of its own, but editing it changes the rules read
// through the import, so the watcher reloads them.
func TestImportedRuleFileEditedOnDiskIsReloaded(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":             "package main\n",
		"CLAUDE.md":           "@docs/conventions.md\n",
		"docs/conventions.md": "- Errors are wrapped with context.\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	wrapped := "claude:docs/conventions.md#errors-are-wrapped-with-context"
	awaitNotChecked(t, s, "at start-up", []string{wrapped})
	writeFile(t, repo.Dir, "docs/conventions.md", "- Errors are wrapped with context.\n- Logs are structured.\n")
	awaitNotChecked(t, s, "after editing the imported file", []string{wrapped, "claude:docs/conventions.md#logs-are-structured"})
	s.Shutdown()
}

// notChecked lists the rules the server reports as not checked (no
// detector, no model), sorted by id.
func notChecked(t *testing.T, s *lsptest.Session) []string {
	t.Helper()
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

// awaitNotChecked waits until the rules not checked are want. AwaitIdle
// covers a change the file watcher has seen, through its reload, but the
// kernel's event may not have reached the watcher yet: it asks again after
// each idle answer, within a bound.
func awaitNotChecked(t *testing.T, s *lsptest.Session, what string, want []string) {
	t.Helper()
	deadline := time.Now().Add(lsptest.DefaultTimeout)
	for {
		s.AwaitIdle("")
		got := notChecked(t, s)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: rules %q, want %q", what, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeFile writes content to rel under dir, creating directories.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNestedAgentsFileInARenamedDirectory: after a directory is renamed,
// an instruction file written in a new directory under its new name is
// loaded (the watches kept the old name until they are dropped and the
// new tree watched).
func TestNestedAgentsFileInARenamedDirectory(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":                "package main\n",
		"services/api/AGENTS.md": "Handlers validate their input.\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	await := func(what string, want []string) { t.Helper(); awaitNotChecked(t, s, what, want) }
	await("at start-up", []string{"agents:services/api/AGENTS.md#handlers-validate-their-input"})
	if err := os.Rename(filepath.Join(repo.Dir, "services"), filepath.Join(repo.Dir, "svc")); err != nil {
		t.Fatal(err)
	}
	api := "agents:svc/api/AGENTS.md#handlers-validate-their-input"
	await("after the rename", []string{api})
	writeFile(t, repo.Dir, "svc/api/deep/AGENTS.md", "Deep things are shallow.\n")
	await("after a new directory under the new name", []string{api, "agents:svc/api/deep/AGENTS.md#deep-things-are-shallow"})
	s.Shutdown()
}
