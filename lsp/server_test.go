package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/goleak"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

func TestMain(m *testing.M) {
	// bleve starts a package-level analysis queue at init; it is not ours.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

const (
	printlnRule = "11111111-2222-4333-8444-555555555555"
	todoRule    = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
)

const mainGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Print(\"hi\")\n}\n"

// newWorkspace is a committed repository with two rules and a Go file.
func newWorkspace(t *testing.T) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		".kody/rules/todo.md":       lsptest.RuleFile("TODO needs an owner", todoRule, "low", "**/*", `TODO[^(]`),
		"main.go":                   mainGo,
	})
}

func start(t *testing.T, dir string, opts lsp.Options) *lsptest.Session {
	s := lsptest.StartInProcess(t, dir, opts)
	return s
}

func TestInitializeAndExitCodes(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{Version: "test"})
	res := s.Initialize(lsptest.InitOptions{})
	if res.ServerInfo.Name != "kodyls" {
		t.Errorf("serverInfo.name = %q, want kodyls", res.ServerInfo.Name)
	}
	if res.Capabilities.PositionEncoding != "utf-16" {
		t.Errorf("positionEncoding = %q, want utf-16 by default", res.Capabilities.PositionEncoding)
	}
	s.Shutdown()
	if code, err := s.Wait(time.Second); err != nil || code != 0 {
		t.Fatalf("exit after shutdown: code %d err %v, want 0", code, err)
	}

	s2 := start(t, repo.Dir, lsp.Options{})
	s2.Initialize(lsptest.InitOptions{})
	s2.Notify(protocol.MethodExit, nil)
	if code, err := s2.Wait(time.Second); err != nil || code != 1 {
		t.Fatalf("exit without shutdown: code %d err %v, want 1", code, err)
	}
}

func TestUTF8WhenClientPrefersIt(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	res := s.Initialize(lsptest.InitOptions{PositionEncodings: []string{"utf-8", "utf-16"}})
	if res.Capabilities.PositionEncoding != "utf-8" {
		t.Fatalf("positionEncoding = %q, want utf-8", res.Capabilities.PositionEncoding)
	}
	s.OpenFile("main.go")
	// In UTF-8 the column counts bytes: "日本" is 6 bytes, 2 UTF-16 units.
	line := "\ts := \"日本\"; fmt.Println(s)\n"
	s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, line)
	ds := s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 5))
	want := uint32(strings.Index(line, "fmt.Println"))
	if ds[0].Range.Start.Character != want {
		t.Fatalf("utf-8 column = %d, want %d", ds[0].Range.Start.Character, want)
	}
	s.Shutdown()
}

func TestRequestsBeforeInitialize(t *testing.T) {
	client, server := net.Pipe()
	srv := lsp.New(lsp.Options{Getenv: func(string) string { return "" }})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), server) }()
	raw := lsptest.NewRaw(t, client, client)
	raw.Request(1, "textDocument/codeAction", map[string]any{})
	if m := raw.Response("1"); m.Error == nil || m.Error.Code != -32002 {
		t.Fatalf("request before initialize: %+v, want error -32002", m.Error)
	}
	raw.Request(2, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	if m := raw.Response("2"); m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	raw.Request(3, "initialize", map[string]any{"capabilities": map[string]any{}})
	if m := raw.Response("3"); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("second initialize: %+v, want -32600", m.Error)
	}
	raw.Request(4, "shutdown", nil)
	raw.Response("4")
	raw.Request(5, "workspace/executeCommand", map[string]any{"command": "kodyls.ruleViolations"})
	if m := raw.Response("5"); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("request after shutdown: %+v, want -32600", m.Error)
	}
	raw.Notify("exit", nil)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("server did not exit")
	}
	client.Close()
}

func TestMalformedInputKeepsServing(t *testing.T) {
	repo := newWorkspace(t)
	client, server := net.Pipe()
	srv := lsp.New(lsp.Options{Getenv: func(string) string { return "" }})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), server) }()
	defer func() {
		client.Close()
		<-done
	}()
	raw := lsptest.NewRaw(t, client, client)
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})

	raw.Send(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{`) // truncated JSON
	if m := raw.Response("null"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("truncated frame: %+v, want -32700", m.Error)
	}
	raw.Send(`{"id":3,"jsonrpc":"1.0","method":"x"}`) // not JSON-RPC 2.0
	if m := raw.Response("3"); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("wrong version: %+v, want -32600", m.Error)
	}
	raw.Request(4, "textDocument/unknownThing", map[string]any{})
	if m := raw.Response("4"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("unknown method: %+v, want -32601", m.Error)
	}
	raw.Send(`{"jsonrpc":"2.0","id":5,"method":"workspace/executeCommand","params":{"command":42}}`)
	if m := raw.Response("5"); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("wrong param type: %+v, want -32602", m.Error)
	}
	// Frames whose header is broken: each is answered with -32700 and
	// skipped, and the frame after it is served.
	parseErr := func(what string) {
		t.Helper()
		if m := raw.Response("null"); m.Error == nil || m.Error.Code != -32700 {
			t.Fatalf("%s: %+v, want -32700", what, m.Error)
		}
	}
	raw.Write("Content-Length: abc\r\n\r\n")
	parseErr("Content-Length: abc")
	raw.Write("Content-Length: -5\r\n\r\n")
	parseErr("a negative Content-Length")
	raw.Write("hello world\r\n\r\n")
	parseErr("a header line without a colon")
	raw.Write("Content-Type: application/vscode-jsonrpc\r\n\r\n")
	parseErr("no Content-Length")
	// A Content-Length 5 bytes short: the body is cut (-32700), its last
	// bytes run into the next frame's header, which is still read.
	body := `{"jsonrpc":"2.0","id":7,"method":"textDocument/unknownThing","params":{}}`
	raw.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-5, body))
	parseErr("a body longer than its Content-Length")
	raw.Request(8, "textDocument/unknownThing", map[string]any{})
	parseErr("bytes before the next header")
	if m := raw.Response("8"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("the frame after the broken ones: %+v, want -32601", m.Error)
	}
	// Bytes that are no UTF-8 before a header on its line.
	body = `{"jsonrpc":"2.0","id":9,"method":"textDocument/unknownThing","params":{}}`
	raw.Write(strings.Repeat("\xff", 20) + "\u212a" + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	parseErr("invalid UTF-8 before a header")
	if m := raw.Response("9"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("the frame after invalid UTF-8: %+v, want -32601", m.Error)
	}
	// A frame without the blank line after its header: its body reads as
	// bytes before the next header; the error carries its id, so the
	// client's call ends, and the next frame is served.
	body = `{"jsonrpc":"2.0","id":10,"method":"textDocument/unknownThing","params":{}}`
	raw.Write(fmt.Sprintf("Content-Length: %d\r\n%s", len(body), body))
	raw.Request(11, "textDocument/unknownThing", map[string]any{})
	if m := raw.Response("10"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("a frame without its blank line: %+v, want -32700 for its id", m.Error)
	}
	if m := raw.Response("11"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("the frame after one without its blank line: %+v, want -32601", m.Error)
	}
	// A Content-Length 2 bytes long: the body takes the next header's
	// first bytes; the error still names the request.
	body = `{"jsonrpc":"2.0","id":12,"method":"textDocument/unknownThing","params":{}}`
	raw.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)+2, body))
	raw.Request(13, "textDocument/unknownThing", map[string]any{})
	if m := raw.Response("12"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("a body shorter than its Content-Length: %+v, want -32700 for its id", m.Error)
	}
	if m := raw.Response("13"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("the request after a body shorter than its Content-Length: %+v, want -32601", m.Error)
	}
	// A request whose id is null is answered, not taken for a
	// notification: shutdown is not applied.
	raw.Send(`{"jsonrpc":"2.0","id":null,"method":"shutdown"}`)
	if m := raw.Response("null"); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("a null id: %+v, want -32600", m.Error)
	}
	// A header line longer than any header is cut, reported, and skipped.
	raw.Write("X-Padding: " + strings.Repeat("a", 10000) + "\r\n\r\n")
	parseErr("a header line longer than any header")
	// A notification with wrong types has no reply and must not end the session.
	raw.Send(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":"nope","contentChanges":7}}`)
	raw.Notify("$/cancelRequest", map[string]any{"id": map[string]any{"bad": true}})
	raw.Request(6, "workspace/executeCommand", map[string]any{"command": "kodyls.ruleViolations"})
	m := raw.Response("6")
	if m.Error != nil {
		t.Fatalf("server stopped serving after bad input: %+v", m.Error)
	}
	var got contract.RuleViolations
	if err := json.Unmarshal(m.Result, &got); err != nil {
		t.Fatalf("ruleViolations result %s: %v", m.Result, err)
	}
}

func TestRuleDiagnosticsFollowEditsAndClear(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")

	// The committed fmt.Print line is not a violation; type one below it.
	at := s.EndOfLine("main.go", `fmt.Print\("hi"\)`)
	s.Insert("main.go", at, "\n\tfmt.Println(\"changed\")")
	ds := s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 6))
	d := ds[0]
	if src, _ := d.Source.Get(); src != "kody" {
		t.Errorf("source = %q, want kody", src)
	}
	if d.Severity != protocol.DiagnosticSeverityWarning {
		t.Errorf("severity = %d, want warning for high", d.Severity)
	}
	want := s.RegexpRange("main.go", `fmt\.Println\(`)
	if d.Range != want {
		t.Errorf("range = %+v, want %+v", d.Range, want)
	}

	// Two lines typed above move the finding down by two.
	s.Insert("main.go", protocol.Position{Line: 3, Character: 0}, "// one\n// two\n")
	s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		return len(ds) == 1 && ds[0].Range.Start.Line == 8
	})

	// Removing the violating call clears the file with [].
	r := s.RegexpRange("main.go", `fmt\.Println`)
	s.EditBuffer("main.go", lsptest.Edit{Range: r, Text: "fmt.Print"})
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.Shutdown()
}

func TestUnchangedDiagnosticsFollowTheVersion(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 7, Character: 0}, "var _ = fmt.Println(1)\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 7))
	before := s.PublishCount()
	shown := lsptest.Describe(s.Diagnostics("main.go"))
	// Typing below the finding changes nothing the user sees.
	const edits = 20
	for i := 0; i < edits; i++ {
		s.Insert("main.go", protocol.Position{Line: 8, Character: uint32(i)}, "x")
	}
	// Every didChange has been handled and the coalesced check has run.
	s.AwaitIdle("main.go")
	if _, ver, _ := s.Server.Document(string(s.URI("main.go"))); ver != s.Version("main.go") {
		t.Fatalf("server version %d, want %d", ver, s.Version("main.go"))
	}
	// The same set is re-sent only to name the newer version (at most once
	// per check, never more than once per edit), so that a client that
	// drops diagnostics for an older version than its buffer's still shows
	// them.
	if n := s.PublishCount() - before; n > edits {
		t.Fatalf("%d publishDiagnostics for %d edits that did not change the findings", n, edits)
	}
	if got := lsptest.Describe(s.Diagnostics("main.go")); got != shown {
		t.Fatalf("diagnostics changed by edits below them:\n%s\nwant\n%s", got, shown)
	}
	if v, ok := s.DiagnosticsVersion("main.go"); !ok || v != s.Version("main.go") {
		t.Fatalf("last diagnostics for version %d (%v), want the buffer's %d", v, ok, s.Version("main.go"))
	}
	s.Shutdown()
}

func TestUntrackedFileCountsAsChanged(t *testing.T) {
	repo := newWorkspace(t)
	repo.Write(map[string]string{"extra.go": "package main\n\nfunc f() { fmt.Println(1) } // TODO later\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("extra.go")
	ds := s.AwaitDiagnostics("extra.go", lsptest.Count(2))
	if lsptest.Code(ds[0]) != printlnRule || lsptest.Code(ds[1]) != todoRule {
		t.Fatalf("diagnostics: %s", lsptest.Describe(ds))
	}
	if ds[1].Severity != protocol.DiagnosticSeverityHint {
		t.Errorf("low severity maps to %d, want hint", ds[1].Severity)
	}
	s.Shutdown()
}

func TestUTF16ColumnsWithEmojiAndCJK(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 7, Character: 0}, "var s = \"😀 日本語 👩‍💻\"; var _ = fmt.Println(s)\n")
	ds := s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 7))
	want := s.RegexpRange("main.go", `fmt\.Println\(`)
	if ds[0].Range != want {
		t.Fatalf("range %+v, want %+v (UTF-16 units)", ds[0].Range, want)
	}
	// An edit placed after the emoji by UTF-16 column lands where the
	// editor meant it.
	pos := s.RegexpRange("main.go", `日本語`).End
	s.Insert("main.go", pos, "!")
	s.AwaitIdle("main.go")
	if text, _, _ := s.Server.Document(string(s.URI("main.go"))); text != s.Text("main.go") {
		t.Fatalf("server text %q, want the editor's %q", text, s.Text("main.go"))
	}
	s.Shutdown()
}

func TestOutOfRangeEditKeepsLastGoodText(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	u := s.URI("main.go")
	s.Notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{
			&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: 0}, End: protocol.Position{Line: 0}}, Text: "X"},
			&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: 500}, End: protocol.Position{Line: 501}}, Text: "boom"},
		},
	})
	// A version that goes backwards is refused too.
	s.Notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 0},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: "garbage"}},
	})
	// Ranges that are no positions: the protocol's union type would read
	// each as the whole new text.
	for _, rng := range []string{`{"start":{"line":-1,"character":-3},"end":{"line":0,"character":0}}`,
		`{"start":{"line":"x","character":0},"end":{"line":0,"character":0}}`,
		`{"start":{"line":4294967296,"character":0},"end":{"line":0,"character":0}}`, `{"start":{"line":0}}`} {
		s.Notify(protocol.MethodTextDocumentDidChange, json.RawMessage(`{"textDocument":{"uri":"`+string(u)+`","version":3},"contentChanges":[{"range":`+rng+`,"text":"Z"}]}`))
	}
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	text, ver, _ := s.Server.Document(string(u))
	if text != mainGo || ver != 1 {
		t.Fatalf("after rejected edits: version %d text %q; want version 1 and the original text", ver, text)
	}
	s.AwaitIdle("")
	told := 0
	for _, m := range s.Messages() {
		if strings.Contains(m, "could not be applied") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the editor was told %d times that edits could not be applied, want once: %q", told, s.Messages())
	}
	// The session goes on: a valid edit applies.
	s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// ok\n")
	s.AwaitIdle("main.go")
	if text, _, _ := s.Server.Document(string(u)); text != "// ok\n"+mainGo {
		t.Fatalf("after a valid edit: text %q", text)
	}
	s.Shutdown()
}

// TestBurstOfEditsAppliedInOrder sends 2,000 didChange notifications without
// waiting and checks the server's text equals the editor's.
func TestBurstOfEditsAppliedInOrder(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	rng := rand.New(rand.NewSource(7))
	alphabet := []string{"a", "é", "日", "😀", "\n", "fmt.Println(", " "}
	for i := 0; i < 2000; i++ {
		text := s.Text("main.go")
		lines := strings.Split(text, "\n")
		line := rng.Intn(len(lines))
		col := len([]rune(lines[line])) // end of line keeps the column valid in UTF-16 too
		pos := lsptest.PositionUTF16(text, lineOffset(lines, line)+len(string([]rune(lines[line])[:rng.Intn(col+1)])))
		_ = col
		s.Insert("main.go", pos, alphabet[rng.Intn(len(alphabet))])
	}
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	text, ver, _ := s.Server.Document(string(s.URI("main.go")))
	if ver != 2001 {
		t.Fatalf("server version %d, want 2001", ver)
	}
	if text != s.Text("main.go") {
		t.Fatalf("server text differs from the editor's after 2,000 edits")
	}
	s.Shutdown()
}

func lineOffset(lines []string, n int) int {
	off := 0
	for i := 0; i < n; i++ {
		off += len(lines[i]) + 1
	}
	return off
}

func TestBrokenRuleFileIsReportedAndOthersWork(t *testing.T) {
	repo := newWorkspace(t)
	repo.Write(map[string]string{".kody/rules/broken.md": "---\ntitle: Broken\ndetector:\n  type: regex\n  pattern: '(unclosed'\n---\nbody\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile(".kody/rules/broken.md")
	ds := s.AwaitDiagnostics(".kody/rules/broken.md", lsptest.Count(1))
	if ds[0].Range.Start.Line != 4 || !strings.Contains(lsptest.Message(ds[0]), "not loaded") {
		t.Fatalf("broken rule diagnostic: %s (want on line 5, the pattern)", lsptest.Describe(ds))
	}
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 7, Character: 0}, "var _ = fmt.Println(1)\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 7))

	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.RuleErrors) != 1 || v.RuleErrors[0].File != ".kody/rules/broken.md" {
		t.Fatalf("ruleErrors = %+v", v.RuleErrors)
	}

	// Fixing the pattern and saving reloads the rules and clears the diagnostic.
	s.EditBuffer(".kody/rules/broken.md", lsptest.Edit{Range: s.RegexpRange(".kody/rules/broken.md", `\(unclosed`), Text: `closed\(`})
	s.Save(".kody/rules/broken.md")
	s.AwaitDiagnostics(".kody/rules/broken.md", lsptest.Empty)
	s.Shutdown()
}

func TestRuleViolationsGroupedAndShowRule(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("a.go", "package main\n\nvar _ = fmt.Println(1) // TODO x\nvar _ = fmt.Println(2)\n")
	s.OpenText("b.go", "package main\n\nvar _ = fmt.Println(3)\n")
	s.AwaitDiagnostics("a.go", lsptest.Count(3))
	s.AwaitDiagnostics("b.go", lsptest.Count(1))
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Groups) != 2 {
		t.Fatalf("groups = %+v, want 2 rules", v.Groups)
	}
	counts := map[string]int{}
	for _, g := range v.Groups {
		counts[g.Rule.UUID] = len(g.Violations)
	}
	if counts[printlnRule] != 3 || counts[todoRule] != 1 {
		t.Fatalf("violations per rule = %v, want 3 println and 1 todo", counts)
	}

	ds := s.Diagnostics("b.go")
	actions := s.CodeActions("b.go", ds[0].Range, ds)
	if len(actions) != 2 || actions[0].Title != "Explain this error" || !strings.Contains(actions[1].Title, "No fmt.Println") {
		t.Fatalf("code actions = %+v", actions)
	}
	var loc protocol.Location
	cmd := actions[1].Command
	if err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: cmd.Command, Arguments: cmd.Arguments}, &loc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(loc.URI), "/.kody/rules/no-println.md") {
		t.Fatalf("showRule location %s", loc.URI)
	}
	// showRule waits for the editor's answer to showDocument before it
	// returns, so the request has been recorded.
	if n := len(s.Shown()); n != 1 {
		t.Fatalf("%d showDocument requests, want 1", n)
	}
	s.Shutdown()
}

func TestReloadRulesReportsProgress(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	var res map[string]int
	// The editor passes its own token, as VS Code does for commands.
	err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{
		WorkDoneProgressParams: protocol.WorkDoneProgressParams{WorkDoneToken: protocol.String("cmd-1")},
		Command:                contract.CommandReloadRules,
	}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if res["rules"] != 2 {
		t.Fatalf("reload result %v", res)
	}
	var kinds []string
	for _, p := range s.Progress() {
		if string(p.Token) == `"cmd-1"` {
			kinds = append(kinds, p.Value.Kind)
		}
	}
	joined := strings.Join(kinds, ",")
	if !strings.HasPrefix(joined, "begin") || !strings.HasSuffix(joined, "end") {
		t.Fatalf("progress kinds for the command's token = %v, want begin … end", kinds)
	}
	// The load at start-up used a token the server created.
	s.AwaitIdle("")
	startup := false
	for _, p := range s.Progress() {
		if strings.HasPrefix(string(p.Token), `"kodyls/`) && p.Value.Kind == "end" {
			startup = true
		}
	}
	if !startup {
		t.Fatalf("no progress end for the start-up load: %+v", s.Progress())
	}
	s.Shutdown()
}

func TestConfigurationScopeFile(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "critical", "**/*.go", `fmt\.Println\(`),
		"old.go":                    "package main\n\nvar _ = fmt.Println(0)\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Settings = map[string]any{"rules": map[string]any{"scope": "file"}}
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("old.go")
	ds := s.AwaitDiagnostics("old.go", lsptest.HasCodeOnLine(printlnRule, 2))
	if ds[0].Severity != protocol.DiagnosticSeverityError {
		t.Errorf("critical maps to %d, want error", ds[0].Severity)
	}
	// Back to changed lines only: the committed line is no longer reported.
	s.Settings = map[string]any{"rules": map[string]any{"scope": "changed"}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitDiagnostics("old.go", lsptest.Empty)
	s.Shutdown()
}

func TestCloseClearsDiagnostics(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("n.go", "package main\nvar _ = fmt.Println(1)\n")
	s.AwaitDiagnostics("n.go", lsptest.Count(1))
	s.Close("n.go")
	s.AwaitDiagnostics("n.go", lsptest.Empty)
	s.Shutdown()
}

// blockingCommand returns a command that signals when it starts and returns
// only when its context is cancelled.
func blockingCommand(started chan<- struct{}) lsp.CommandFunc {
	return func(ctx context.Context, _ []byte) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

func TestCancelRequest(t *testing.T) {
	repo := newWorkspace(t)
	started := make(chan struct{}, 1)
	client, server := net.Pipe()
	srv := lsp.New(lsp.Options{Getenv: func(string) string { return "" }, Commands: map[string]lsp.CommandFunc{"test.block": blockingCommand(started)}})
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), server) }()
	raw := lsptest.NewRaw(t, client, client)
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	raw.Request(2, "workspace/executeCommand", map[string]any{"command": "test.block"})
	<-started
	// While it blocks, other requests and edits are served.
	raw.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + repo.Dir + "/x.go", "languageId": "go", "version": 1, "text": "var _ = fmt.Println(1)\n"}})
	diag := raw.Next(func(m lsptest.RawMessage) bool { return m.Method == "textDocument/publishDiagnostics" })
	if !strings.Contains(string(diag.Params), printlnRule) {
		t.Fatalf("diagnostics while a request blocks: %s", diag.Params)
	}
	raw.Request(3, "workspace/executeCommand", map[string]any{"command": "kodyls.ruleViolations"})
	if m := raw.Response("3"); m.Error != nil {
		t.Fatalf("request behind a blocked one: %+v", m.Error)
	}
	sent := time.Now()
	raw.Notify("$/cancelRequest", map[string]any{"id": 2})
	m := raw.Response("2")
	if m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("cancelled request: %+v, want -32800", m.Error)
	}
	if d := time.Since(sent); d > time.Second {
		t.Errorf("cancellation took %v", d)
	}
	raw.Request(4, "shutdown", nil)
	raw.Response("4")
	raw.Notify("exit", nil)
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
	client.Close()
}

func TestShutdownWithWorkInFlight(t *testing.T) {
	repo := newWorkspace(t)
	started := make(chan struct{}, 4)
	s := start(t, repo.Dir, lsp.Options{Commands: map[string]lsp.CommandFunc{"test.block": blockingCommand(started)}})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	for i := 0; i < 3; i++ {
		go func() { _ = s.ExecuteCommand("test.block", nil, nil) }()
		<-started
	}
	for i := 0; i < 50; i++ {
		s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "//x\n")
	}
	begin := time.Now()
	s.Notify(protocol.MethodExit, nil)
	code, err := s.Wait(time.Second)
	if err != nil {
		t.Fatalf("server did not exit within 1s of exit with work in flight")
	}
	if code != 1 {
		t.Errorf("exit without shutdown returned %d, want 1", code)
	}
	t.Logf("exited in %v with 3 requests in flight", time.Since(begin))
}

// TestConfigurationProblemsShownOnce: a setting kodyls cannot use is shown
// to the user in one warning, not only logged; the same problem is not
// shown again when the settings are sent again, a new one is.
func TestConfigurationProblemsShownOnce(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	bad := map[string]any{"review": map[string]any{"trigger": "sometimes"}, "llm": map[string]any{"timeoutMs": 5}}
	s.Settings = bad
	s.Initialize(lsptest.InitOptions{InitializationOptions: bad})
	s.AwaitIdle("")
	shown := func() []string {
		var out []string
		for _, m := range s.Messages() {
			if strings.HasPrefix(m, "kodyls settings: ") {
				out = append(out, m)
			}
		}
		return out
	}
	got := shown()
	if len(got) != 1 || !strings.Contains(got[0], "llm.timeoutMs 5 is outside") || !strings.Contains(got[0], `review.trigger "sometimes" is not one of`) {
		t.Fatalf("warnings after start-up: %q", got)
	}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	if got := shown(); len(got) != 1 {
		t.Fatalf("the same problems shown again: %q", got)
	}
	s.Settings = map[string]any{"rules": map[string]any{"scope": "repo"}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	got = shown()
	if len(got) != 2 || !strings.Contains(got[1], `rules.scope "repo"`) || strings.Contains(got[1], "timeoutMs") {
		t.Fatalf("warnings after a new problem: %q", got)
	}
	s.Shutdown()
}

// TestConfigurationNeverAnswered: an editor that loses the server's
// workspace/configuration request (eglot 1.9 can) does not keep the rules
// from loading: after a bounded wait the server goes on with the settings it
// has, and a violation is reported.
func TestConfigurationNeverAnswered(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{ConfigurationWait: 200 * time.Millisecond})
	s.DropConfiguration()
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("n.go", "package main\nvar _ = fmt.Println(1)\n")
	s.AwaitDiagnostics("n.go", lsptest.Count(1))
	s.Shutdown()
}

// TestMissingWorkspaceFolderIsReported: a workspace folder that does not
// exist is named to the user once, and the session serves on.
func TestMissingWorkspaceFolderIsReported(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	s := start(t, missing, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	told := 0
	for _, m := range s.Messages() {
		if strings.Contains(m, missing) && strings.Contains(m, "not a directory kodyls can read") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("told %d times about the missing folder, want once: %q", told, s.Messages())
	}
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatalf("the session stopped serving: %v", err)
	}
	s.Shutdown()
}

// TestConfigurationProblemShownAgainWhenItComesBack: a setting made good
// and then bad again is shown again; while it stays bad it is not
// repeated at every change of the settings.
func TestConfigurationProblemShownAgainWhenItComesBack(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Settings = map[string]any{"review": map[string]any{"trigger": "save"}}
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	shown := func() int {
		n := 0
		for _, m := range s.Messages() {
			if strings.Contains(m, `review.trigger "sometimes"`) {
				n++
			}
		}
		return n
	}
	set := func(trigger string) {
		s.Settings = map[string]any{"review": map[string]any{"trigger": trigger}}
		s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
		s.AwaitIdle("")
	}
	for i, step := range []struct {
		trigger string
		want    int
	}{{"sometimes", 1}, {"sometimes", 1}, {"save", 1}, {"sometimes", 2}} {
		set(step.trigger)
		if got := shown(); got != step.want {
			t.Fatalf("step %d (%s): the problem was shown %d times, want %d: %q", i+1, step.trigger, got, step.want, s.Messages())
		}
	}
	s.Shutdown()
}

// TestQuicklyClosedFilesLeaveNoBaselineBehind: files opened and closed
// at once (a preview, an extension opening documents in bulk) do not keep
// their committed text in memory once their baseline load ends.
func TestQuicklyClosedFilesLeaveNoBaselineBehind(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("pkg/f%d.go", i)] = fmt.Sprintf("package pkg\n\nconst C%d = %d\n", i, i)
	}
	repo := lsptest.NewRepo(t, files)
	e := lsptest.StartInProcess(t, repo.Dir, lsp.Options{})
	e.Initialize(lsptest.InitOptions{})
	for name := range files {
		e.OpenFile(name)
		e.Close(name)
	}
	e.AwaitIdle("")
	kept := 0
	for name := range files {
		if e.Server.CachesBaseline(e.Path(name)) {
			kept++
		}
	}
	if kept != 0 {
		t.Errorf("%d of %d closed files keep their baseline in memory", kept, len(files))
	}
	e.Shutdown()
}

// TestServerEndsWithTheEditorsProcess: the editor's process, named in
// initialize, is gone (killed while something else keeps the server's
// input open): the server exits rather than run on as an orphan.
func TestServerEndsWithTheEditorsProcess(t *testing.T) {
	editor := exec.Command("sleep", "60")
	if err := editor.Start(); err != nil {
		t.Skip("cannot start a stand-in editor process:", err)
	}
	e := lsptest.StartInProcess(t, lsptest.NewRepo(t, map[string]string{"main.go": "package main\n"}).Dir, lsp.Options{})
	e.Initialize(lsptest.InitOptions{ProcessID: int32(editor.Process.Pid)})
	if code, err := e.Wait(500 * time.Millisecond); err == nil {
		t.Fatalf("the server exited (%d) while the editor's process runs", code)
	}
	_ = editor.Process.Kill()
	_ = editor.Wait()
	if code, err := e.Wait(10 * time.Second); err != nil || code != 1 {
		t.Fatalf("after the editor's process ended: exit %d, %v; want the server gone (exit 1)", code, err)
	}
}

// TestProblemOfSettingsSentTwiceToldOnce: a client that sends the same
// settings as initializationOptions and through workspace/configuration
// (the Neovim plugin does) is told each problem once.
func TestProblemOfSettingsSentTwiceToldOnce(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	bad := map[string]any{"reveiw": map[string]any{"trigger": "save"}}
	s.Settings = bad
	s.Initialize(lsptest.InitOptions{InitializationOptions: bad})
	s.AwaitIdle("")
	told := strings.Count(strings.Join(s.Messages(), "\n"), `unknown setting "reveiw"`)
	if told != 1 {
		t.Fatalf("the unknown setting was told %d times, want once: %q", told, s.Messages())
	}
	s.Shutdown()
}
