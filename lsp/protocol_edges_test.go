package lsp_test

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// rawSession serves an in-process server to a raw client, for what a
// well-behaved editor (lsptest.Editor) never sends.
func rawSession(t *testing.T) *lsptest.Raw {
	t.Helper()
	client, server := net.Pipe()
	srv := lsp.New(lsp.Options{Getenv: func(string) string { return "" }})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), server) }()
	t.Cleanup(func() {
		client.Close()
		<-done
	})
	return lsptest.NewRaw(t, client, client)
}

// diagnosticsOf waits for a publish for u at version whose lines are
// lines (0-based).
func diagnosticsOf(t *testing.T, raw *lsptest.Raw, u string, version int, lines ...int) {
	t.Helper()
	raw.Next(func(m lsptest.RawMessage) bool {
		if m.Method != protocol.MethodTextDocumentPublishDiagnostics {
			return false
		}
		var p struct {
			URI         string `json:"uri"`
			Version     *int   `json:"version"`
			Diagnostics []struct {
				Range struct {
					Start struct{ Line int } `json:"start"`
				} `json:"range"`
			} `json:"diagnostics"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.URI != u || p.Version == nil || *p.Version != version || len(p.Diagnostics) != len(lines) {
			return false
		}
		for i, d := range p.Diagnostics {
			if d.Range.Start.Line != lines[i] {
				return false
			}
		}
		return true
	})
}

// TestReopenWithoutCloseReplacesTheBuffer: a client that opens a document
// again without closing it (versions start over) gets diagnostics for the
// new text, on the new lines, not the old buffer's.
func TestReopenWithoutCloseReplacesTheBuffer(t *testing.T) {
	repo := newWorkspace(t)
	raw := rawSession(t)
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	u := "file://" + filepath.Join(repo.Dir, "main.go")
	open := func(version int, text string) {
		raw.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "go", "version": version, "text": text}})
	}
	open(5, "package main\nfunc f() { fmt.Println(1) }\n")
	diagnosticsOf(t, raw, u, 5, 1)
	open(1, "package main\n\n\nfunc f() { fmt.Println(1) }\n")
	diagnosticsOf(t, raw, u, 1, 3)
	raw.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": u, "version": 2},
		"contentChanges": []map[string]any{{"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}, "text": "\n"}},
	})
	diagnosticsOf(t, raw, u, 2, 4)
}

// TestRemoteWorkspaceFolderIsSkipped: a workspace folder that is no local
// folder (a virtual or remote workspace) is skipped and the user told so,
// rather than read as a path relative to wherever the server started.
func TestRemoteWorkspaceFolderIsSkipped(t *testing.T) {
	raw := rawSession(t)
	raw.Request(1, "initialize", map[string]any{
		"workspaceFolders": []map[string]any{{"uri": "vscode-vfs://github/org/ws", "name": "ws"}, {"uri": "untitled:ws", "name": "scratch"}},
		"capabilities":     map[string]any{},
	})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	m := raw.Next(func(m lsptest.RawMessage) bool { return m.Method == protocol.MethodWindowShowMessage })
	var p protocol.ShowMessageParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Message, "local folders") || !strings.Contains(p.Message, "vscode-vfs://github/org/ws") || !strings.Contains(p.Message, "untitled:ws") {
		t.Fatalf("told %q, want the two folders named as skipped", p.Message)
	}
	raw.Request(2, "workspace/executeCommand", map[string]any{"command": contract.CommandRuleViolations})
	if m := raw.Response("2"); m.Error != nil {
		t.Fatalf("the session stopped serving: %+v", m.Error)
	}
}

// TestRepeatedInitializedStartsOneWatcher: a client that sends initialized
// more than once still gets one reload of the Kody Rules when a rule file
// changes, not one per notification.
func TestRepeatedInitializedStartsOneWatcher(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	for range 4 {
		s.Notify(protocol.MethodInitialized, map[string]any{})
	}
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// TODO tidy\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(todoRule, 0))
	s.AwaitIdle("")
	loads := func() int {
		n := 0
		for _, p := range s.Progress() {
			if p.Value.Kind == "begin" && p.Value.Title == "Loading Kody Rules" {
				n++
			}
		}
		return n
	}
	before := loads()
	// The rule now asks for something else: its finding leaves once the
	// rules are reloaded.
	repo.Write(map[string]string{".kody/rules/todo.md": lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `FIXME[^(]`)})
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.AwaitIdle("")
	if n := loads() - before; n != 1 {
		t.Fatalf("one change of a rule file loaded the rules %d times, want once", n)
	}
	s.Shutdown()
}

// TestReviewFileTakesAnyEscapingOfTheURI: kodyls.reviewFile with the URI
// as a bare string, escaped as Neovim escapes it (%5b, not %5B), finds the
// open buffer as the object form does.
func TestReviewFileTakesAnyEscapingOfTheURI(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("[id].go", "package main\n")
	lower := strings.NewReplacer("[", "%5b", "]", "%5d").Replace("file://" + filepath.Join(repo.Dir, "[id].go"))
	var res json.RawMessage
	err := s.ExecuteCommand(contract.CommandReviewFile, lower, &res)
	if err != nil && strings.Contains(err.Error(), "not open") {
		t.Fatalf("kodyls.reviewFile %s: %v", lower, err)
	}
	s.Shutdown()
}
