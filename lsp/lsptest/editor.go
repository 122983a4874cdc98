// Package lsptest is a fake editor for tests: it drives a kodyls server (in
// process or the real binary over stdio) the way an editor would, keeps its
// own copy of every buffer, and lets a test wait for the diagnostics it
// expects. It follows the spirit of gopls's integration tests:
//
//	ed.OpenFile("main.go")
//	ed.Insert("main.go", ed.EndOfLine("main.go", "func main"), "\n\tfmt.Println(1)")
//	ed.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(ruleUUID, 3))
package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/editors/contract"
)

// DefaultTimeout bounds every wait so that a broken server fails a test
// instead of hanging it.
const DefaultTimeout = 15 * time.Second

// Editor is a fake LSP client.
type Editor struct {
	t    testing.TB
	Root string
	conn jsonrpc2.Conn

	// Settings is what the editor answers to workspace/configuration.
	Settings any

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when diagnostics arrive
	diags    map[uri.URI]*protocol.PublishDiagnosticsParams
	publish  int // publishDiagnostics notifications received
	buffers  map[string]*buffer
	progress []Progress
	shown    []protocol.ShowDocumentParams
	// noShowDocument: window/showDocument is answered "method not found",
	// as by a client without it (InitOptions.NoShowDocument).
	noShowDocument bool
	messages       []string
	statuses       []contract.StatusParams
	vchanged       []contract.RuleViolationsChangedParams
	applied        []AppliedEdit
	// asked are the window/showMessageRequest prompts; answer is the
	// action the user picks, "" to close the prompt (nil when unset: the
	// first action, as a user accepting).
	asked  []protocol.ShowMessageRequestParams
	answer *string
	// refusePrompts answers window/showMessageRequest with "method not
	// found", as an editor that cannot ask.
	refusePrompts bool
	// configHold, when set, holds the answers to workspace/configuration
	// until it is closed.
	configHold chan struct{}
	// configDrop, when set, drops them (closed at the end of the test).
	configDrop chan struct{}
}

type buffer struct {
	text    string
	version int32
}

// codec marshals with the protocol package, which knows its union types.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if raw, ok := v.(jsonrpc2.RawMessage); ok {
		return raw, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// NewEditor connects an editor to a server stream. root is the workspace
// folder; files are named relative to it.
func NewEditor(t testing.TB, rwc io.ReadWriteCloser, root string) *Editor {
	e := &Editor{
		t:       t,
		Root:    root,
		changed: make(chan struct{}),
		diags:   map[uri.URI]*protocol.PublishDiagnosticsParams{},
		buffers: map[string]*buffer{},
	}
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(rwc), jsonrpc2.WithCodec(codec{}))
	e.conn.Go(context.Background(), e.handle)
	t.Cleanup(func() { _ = rwc.Close() })
	return e
}

// handle answers the server's requests and records its notifications.
func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method() {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := protocol.Unmarshal(req.Params(), &p); err != nil {
			e.t.Errorf("bad publishDiagnostics: %v", err)
			return nil, nil
		}
		e.mu.Lock()
		e.diags[p.URI] = &p
		e.publish++
		close(e.changed)
		e.changed = make(chan struct{})
		e.mu.Unlock()
		return nil, nil
	case protocol.MethodWorkspaceConfiguration:
		e.mu.Lock()
		hold, drop := e.configHold, e.configDrop
		e.mu.Unlock()
		if drop != nil {
			// Never answered, as a request the editor lost: the read loop
			// goes on, this reply waits for the end of the test.
			jsonrpc2.Async(ctx)
			<-drop
			return nil, errors.New("editor closed")
		}
		if hold != nil {
			<-hold // the editor's read loop waits too, as a busy editor's would
		}
		var p protocol.ConfigurationParams
		_ = protocol.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		s := e.Settings
		e.mu.Unlock()
		out := make([]any, len(p.Items))
		for i := range out {
			out[i] = s
		}
		raw, _ := json.Marshal(out)
		return jsonrpc2.RawMessage(raw), nil
	case protocol.MethodWindowWorkDoneProgressCreate, protocol.MethodClientRegisterCapability:
		return nil, nil
	case protocol.MethodProgress:
		var p Progress
		_ = json.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		e.progress = append(e.progress, p)
		e.mu.Unlock()
		return nil, nil
	case protocol.MethodWindowShowMessage:
		var p protocol.ShowMessageParams
		_ = protocol.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		e.messages = append(e.messages, p.Message)
		e.mu.Unlock()
		return nil, nil
	case contract.NotificationStatus:
		var p contract.StatusParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			e.t.Errorf("bad %s: %v", contract.NotificationStatus, err)
		}
		e.mu.Lock()
		e.statuses = append(e.statuses, p)
		e.mu.Unlock()
		return nil, nil
	case contract.NotificationRuleViolationsChanged:
		var p contract.RuleViolationsChangedParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			e.t.Errorf("bad %s: %v", contract.NotificationRuleViolationsChanged, err)
		}
		e.mu.Lock()
		e.vchanged = append(e.vchanged, p)
		e.mu.Unlock()
		return nil, nil
	case protocol.MethodWindowShowMessageRequest:
		var p protocol.ShowMessageRequestParams
		_ = protocol.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		e.asked = append(e.asked, p)
		answer, refuse := e.answer, e.refusePrompts
		e.mu.Unlock()
		if refuse {
			return nil, jsonrpc2.ErrMethodNotFound
		}
		pick := ""
		if answer != nil {
			pick = *answer
		} else if len(p.Actions) > 0 {
			pick = p.Actions[0].Title
		}
		if pick == "" {
			return jsonrpc2.RawMessage(`null`), nil
		}
		raw, _ := json.Marshal(protocol.MessageActionItem{Title: pick})
		return jsonrpc2.RawMessage(raw), nil
	case protocol.MethodWorkspaceApplyEdit:
		// The editor applies the edit to its buffers at once, as if the
		// user confirmed the preview; the test saves them when it wants.
		ae := AppliedEdit{Raw: append(json.RawMessage(nil), req.Params()...)}
		err := e.applyWorkspaceEdit(json.RawMessage(req.Params()))
		if err != nil {
			ae.Failure = err.Error()
		}
		e.mu.Lock()
		e.applied = append(e.applied, ae)
		e.mu.Unlock()
		if err != nil {
			raw, _ := json.Marshal(map[string]any{"applied": false, "failureReason": err.Error()})
			return jsonrpc2.RawMessage(raw), nil
		}
		return jsonrpc2.RawMessage(`{"applied":true}`), nil
	case protocol.MethodWindowShowDocument:
		e.mu.Lock()
		unsupported := e.noShowDocument
		e.mu.Unlock()
		if unsupported {
			return nil, jsonrpc2.ErrMethodNotFound
		}
		var p protocol.ShowDocumentParams
		_ = protocol.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		e.shown = append(e.shown, p)
		e.mu.Unlock()
		return jsonrpc2.RawMessage(`{"success":true}`), nil
	}
	if req.IsCall() {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	return nil, nil
}

func (e *Editor) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), DefaultTimeout)
}

// Call sends a request and decodes its result into result (may be nil).
func (e *Editor) Call(method string, params, result any) error {
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.conn.Call(ctx, method, params, result)
	return err
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	if err := e.conn.Notify(ctx, method, params); err != nil {
		e.t.Fatalf("notify %s: %v", method, err)
	}
}

// Conn exposes the connection for tests of raw protocol behaviour.
func (e *Editor) Conn() jsonrpc2.Conn { return e.conn }

// InitOptions tune Initialize.
type InitOptions struct {
	InitializationOptions any
	PositionEncodings     []string // client preference, e.g. {"utf-8","utf-16"}
	NoConfiguration       bool     // do not advertise workspace/configuration
	// Generic makes the editor a generic LSP client (Helix, eglot): it does
	// not declare contract.ClientExperimental, so the server shows command
	// results itself. By default it declares it, as the kodyls plugins do.
	Generic        bool
	NoShowDocument bool // do not advertise window/showDocument
	// ChangeAnnotations advertises workspaceEdit.changeAnnotationSupport:
	// the editor previews annotated edits that need confirmation, as VS
	// Code does, so the server does not ask first.
	ChangeAnnotations bool
	// Folders are more workspace folders after the root, as paths relative
	// to it (a nested folder) or absolute, in the order given.
	Folders []string
	// ProcessID is the editor's process id sent in initialize (none when 0).
	ProcessID int32
	// ResolveEdit advertises codeAction resolveSupport for "edit", as VS
	// Code does: the server may leave a code action's edit to
	// codeAction/resolve.
	ResolveEdit bool
}

// Initialize performs initialize and initialized.
func (e *Editor) Initialize(o InitOptions) *protocol.InitializeResult {
	e.t.Helper()
	root := uri.File(e.Root)
	cfg := !o.NoConfiguration
	wdp := true
	sd := protocol.ShowDocumentClientCapabilities{Support: !o.NoShowDocument}
	e.mu.Lock()
	e.noShowDocument = o.NoShowDocument
	e.mu.Unlock()
	p := &protocol.InitializeParams{
		// rootUri, as Neovim 0.7 sends it, exercises the server's fallback.
		RootURI:    &root, //lint:ignore SA1019 see above
		ClientInfo: protocol.ClientInfo{Name: "lsptest"},
		Capabilities: protocol.ClientCapabilities{
			Workspace: &protocol.WorkspaceClientCapabilities{Configuration: &cfg},
			Window:    &protocol.WindowClientCapabilities{WorkDoneProgress: &wdp, ShowDocument: &sd},
		},
	}
	if o.ProcessID != 0 {
		p.ProcessID = &o.ProcessID
	}
	if o.ChangeAnnotations {
		p.Capabilities.Workspace.WorkspaceEdit = &protocol.WorkspaceEditClientCapabilities{ChangeAnnotationSupport: &protocol.ChangeAnnotationsSupportOptions{}}
	}
	if o.ResolveEdit {
		data := true
		p.Capabilities.TextDocument = &protocol.TextDocumentClientCapabilities{CodeAction: &protocol.CodeActionClientCapabilities{
			DataSupport:    &data,
			ResolveSupport: protocol.ClientCodeActionResolveOptions{Properties: []string{"edit"}},
		}}
	}
	if !o.Generic {
		raw, _ := json.Marshal(map[string]any{contract.ExperimentalKey: contract.ClientExperimental{CommandResults: true}})
		p.Capabilities.Experimental = raw
	}
	folders := []protocol.WorkspaceFolder{{URI: root, Name: filepath.Base(e.Root)}}
	for _, f := range o.Folders {
		if !filepath.IsAbs(f) {
			f = filepath.Join(e.Root, f)
		}
		folders = append(folders, protocol.WorkspaceFolder{URI: uri.File(f), Name: filepath.Base(f)})
	}
	p.WorkspaceFolders = protocol.NewNullable(folders)
	if len(o.PositionEncodings) > 0 {
		g := &protocol.GeneralClientCapabilities{}
		for _, pe := range o.PositionEncodings {
			g.PositionEncodings = append(g.PositionEncodings, protocol.PositionEncodingKind(pe))
		}
		p.Capabilities.General = g
	}
	if o.InitializationOptions != nil {
		raw, _ := json.Marshal(o.InitializationOptions)
		p.InitializationOptions = raw
	}
	var res protocol.InitializeResult
	if err := e.Call(protocol.MethodInitialize, p, &res); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.Notify(protocol.MethodInitialized, &protocol.InitializedParams{})
	return &res
}

// Shutdown sends shutdown and exit.
func (e *Editor) Shutdown() {
	e.t.Helper()
	if err := e.Call(protocol.MethodShutdown, nil, nil); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
	e.Notify(protocol.MethodExit, nil)
}

// Path returns the absolute path of a workspace-relative name.
func (e *Editor) Path(name string) string { return filepath.Join(e.Root, filepath.FromSlash(name)) }

// URI returns the URI of a workspace-relative name.
func (e *Editor) URI(name string) uri.URI { return uri.File(e.Path(name)) }

// OpenFile opens a file with its content on disk.
func (e *Editor) OpenFile(name string) {
	e.t.Helper()
	data, err := os.ReadFile(e.Path(name))
	if err != nil {
		e.t.Fatalf("open %s: %v", name, err)
	}
	e.OpenText(name, string(data))
}

// OpenText opens a buffer with the given text (which need not be on disk).
func (e *Editor) OpenText(name, text string) {
	e.t.Helper()
	e.mu.Lock()
	e.buffers[name] = &buffer{text: text, version: 1}
	e.mu.Unlock()
	e.Notify(protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: e.URI(name), LanguageID: languageID(name), Version: 1, Text: text,
	}})
}

func languageID(name string) protocol.LanguageKind {
	switch filepath.Ext(name) {
	case ".go":
		return "go"
	case ".md":
		return "markdown"
	case ".ts":
		return "typescript"
	}
	return "plaintext"
}

// Text returns the editor's copy of a buffer.
func (e *Editor) Text(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.buffers[name].text
}

// Version returns the buffer's current version.
func (e *Editor) Version(name string) int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.buffers[name].version
}

// Edit is one ranged replacement in UTF-16 positions.
type Edit struct {
	Range protocol.Range
	Text  string
}

// EditBuffer applies edits to the editor's copy and sends them in one
// didChange with the next version.
func (e *Editor) EditBuffer(name string, edits ...Edit) {
	e.t.Helper()
	e.mu.Lock()
	b := e.buffers[name]
	if b == nil {
		e.mu.Unlock()
		e.t.Fatalf("edit %s: not open", name)
	}
	changes := make([]protocol.TextDocumentContentChangeEvent, 0, len(edits))
	for _, ed := range edits {
		next, err := applyUTF16(b.text, ed.Range, ed.Text)
		if err != nil {
			e.mu.Unlock()
			e.t.Fatalf("edit %s: %v", name, err)
		}
		b.text = next
		changes = append(changes, &protocol.TextDocumentContentChangePartial{Range: ed.Range, Text: ed.Text})
	}
	b.version++
	v := b.version
	e.mu.Unlock()
	e.Notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: e.URI(name)}, Version: v},
		ContentChanges: changes,
	})
}

// Insert types text at a position.
func (e *Editor) Insert(name string, at protocol.Position, text string) {
	e.t.Helper()
	e.EditBuffer(name, Edit{Range: protocol.Range{Start: at, End: at}, Text: text})
}

// Save writes the buffer to disk and sends didSave.
func (e *Editor) Save(name string) {
	e.t.Helper()
	if err := os.WriteFile(e.Path(name), []byte(e.Text(name)), 0o644); err != nil {
		e.t.Fatalf("save %s: %v", name, err)
	}
	e.Notify(protocol.MethodTextDocumentDidSave, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(name)}})
}

// Close closes a buffer.
func (e *Editor) Close(name string) {
	e.t.Helper()
	e.mu.Lock()
	delete(e.buffers, name)
	e.mu.Unlock()
	e.Notify(protocol.MethodTextDocumentDidClose, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(name)}})
}

// RegexpRange returns the UTF-16 range of the first match of re in a buffer.
func (e *Editor) RegexpRange(name, re string) protocol.Range {
	e.t.Helper()
	text := e.Text(name)
	loc := regexp.MustCompile(re).FindStringIndex(text)
	if loc == nil {
		e.t.Fatalf("%s: no match for %q", name, re)
	}
	return protocol.Range{Start: PositionUTF16(text, loc[0]), End: PositionUTF16(text, loc[1])}
}

// EndOfLine returns the position at the end of the first line matching re.
func (e *Editor) EndOfLine(name, re string) protocol.Position {
	e.t.Helper()
	text := e.Text(name)
	loc := regexp.MustCompile(re).FindStringIndex(text)
	if loc == nil {
		e.t.Fatalf("%s: no match for %q", name, re)
	}
	end := strings.IndexByte(text[loc[0]:], '\n')
	if end < 0 {
		return PositionUTF16(text, len(text))
	}
	return PositionUTF16(text, loc[0]+end)
}

// Diagnostics returns the last diagnostics published for a buffer.
func (e *Editor) Diagnostics(name string) []protocol.Diagnostic {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.diags[e.URI(name)]; p != nil {
		return p.Diagnostics
	}
	return nil
}

// DiagnosticsVersion is the document version the last diagnostics
// published for a buffer were for (false when they named none).
func (e *Editor) DiagnosticsVersion(name string) (int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.diags[e.URI(name)]; p != nil {
		return p.Version.Get()
	}
	return 0, false
}

// PublishCount is the number of publishDiagnostics received so far.
func (e *Editor) PublishCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.publish
}

// Progress is one $/progress notification.
type Progress struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	} `json:"value"`
}

// Progress returns the $/progress notifications received.
func (e *Editor) Progress() []Progress {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Progress(nil), e.progress...)
}

// Shown returns the window/showDocument requests received.
func (e *Editor) Shown() []protocol.ShowDocumentParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]protocol.ShowDocumentParams(nil), e.shown...)
}

// AwaitIdle waits until the server has no pending work (checks, reviews,
// builds, explanations) for a buffer, or for anything when name is "".
// Every notification the server sent before it was idle has been handled
// when AwaitIdle returns.
func (e *Editor) AwaitIdle(name string) {
	e.t.Helper()
	p := contract.AwaitIdleParams{}
	if name != "" {
		p.URI = e.URI(name)
	}
	if err := e.Call(contract.RequestAwaitIdle, &p, nil); err != nil {
		e.t.Fatalf("%s %s: %v", contract.RequestAwaitIdle, name, err)
	}
}

// HoldConfiguration makes the editor answer workspace/configuration only
// once release is called: a slow editor at start-up. Call it before
// Initialize.
func (e *Editor) HoldConfiguration() (release func()) {
	ch := make(chan struct{})
	e.mu.Lock()
	e.configHold = ch
	e.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// DropConfiguration makes the editor never answer workspace/configuration,
// as an editor that lost the request (eglot 1.9 can). Call it before
// Initialize.
func (e *Editor) DropConfiguration() {
	ch := make(chan struct{})
	e.mu.Lock()
	e.configDrop = ch
	e.mu.Unlock()
	e.t.Cleanup(func() { close(ch) })
}

// Statuses returns the kodyls/status notifications received, in order.
func (e *Editor) Statuses() []contract.StatusParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]contract.StatusParams(nil), e.statuses...)
}

// ViolationsChanged returns the kodyls/ruleViolationsChanged notifications
// received, in order.
func (e *Editor) ViolationsChanged() []contract.RuleViolationsChangedParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]contract.RuleViolationsChangedParams(nil), e.vchanged...)
}

// AwaitDiagnostics waits until the diagnostics published for a buffer
// satisfy pred, and returns them. It fails the test after DefaultTimeout
// with what was last seen.
func (e *Editor) AwaitDiagnostics(name string, pred func([]protocol.Diagnostic) bool) []protocol.Diagnostic {
	e.t.Helper()
	deadline := time.After(DefaultTimeout)
	u := e.URI(name)
	for {
		e.mu.Lock()
		p := e.diags[u]
		ch := e.changed
		e.mu.Unlock()
		var ds []protocol.Diagnostic
		if p != nil {
			ds = p.Diagnostics
		}
		if pred(ds) {
			return ds
		}
		select {
		case <-ch:
		case <-deadline:
			e.t.Fatalf("%s: timed out waiting for diagnostics; last published: %s", name, Describe(ds))
			return nil
		}
	}
}

// CodeActions requests code actions for a range with the given diagnostics.
func (e *Editor) CodeActions(name string, rng protocol.Range, diags []protocol.Diagnostic) []protocol.CodeAction {
	e.t.Helper()
	var out []protocol.CodeAction
	err := e.Call(protocol.MethodTextDocumentCodeAction, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: e.URI(name)},
		Range:        rng,
		Context:      protocol.CodeActionContext{Diagnostics: diags},
	}, &out)
	if err != nil {
		e.t.Fatalf("codeAction: %v", err)
	}
	return out
}

// ExecuteCommand runs a workspace/executeCommand and decodes the result.
func (e *Editor) ExecuteCommand(command string, arg any, result any) error {
	p := &protocol.ExecuteCommandParams{Command: command}
	if arg != nil {
		raw, err := json.Marshal(arg)
		if err != nil {
			return err
		}
		p.Arguments = []protocol.LSPAny{raw}
	}
	return e.Call(protocol.MethodWorkspaceExecuteCommand, p, result)
}

// Describe renders diagnostics for failure messages.
func Describe(ds []protocol.Diagnostic) string {
	if len(ds) == 0 {
		return "[]"
	}
	var b strings.Builder
	for _, d := range ds {
		src, _ := d.Source.Get()
		fmt.Fprintf(&b, "\n  %d:%d-%d:%d %s %v %q", d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character, src, d.Code, Message(d))
	}
	return b.String()
}

// Message returns a diagnostic's message text.
func Message(d protocol.Diagnostic) string {
	switch m := d.Message.(type) {
	case protocol.String:
		return string(m)
	case *protocol.MarkupContent:
		return m.Value
	}
	return ""
}

// Code returns a diagnostic's code as a string.
func Code(d protocol.Diagnostic) string {
	switch c := d.Code.(type) {
	case protocol.String:
		return string(c)
	case protocol.Integer:
		return fmt.Sprint(int32(c))
	}
	return ""
}

// Predicates for AwaitDiagnostics.

// Empty matches no diagnostics.
func Empty(ds []protocol.Diagnostic) bool { return len(ds) == 0 }

// HasCodeOnLine matches when a diagnostic with code is on a 0-based line.
func HasCodeOnLine(code string, line uint32) func([]protocol.Diagnostic) bool {
	return func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if Code(d) == code && d.Range.Start.Line == line {
				return true
			}
		}
		return false
	}
}

// Count matches exactly n diagnostics.
func Count(n int) func([]protocol.Diagnostic) bool {
	return func(ds []protocol.Diagnostic) bool { return len(ds) == n }
}

// PositionUTF16 converts a byte offset in text to an LSP position in UTF-16
// code units. It is written independently of the server's conversion so that
// tests check one against the other.
func PositionUTF16(text string, offset int) protocol.Position {
	line := strings.Count(text[:offset], "\n")
	start := strings.LastIndexByte(text[:offset], '\n') + 1
	return protocol.Position{Line: uint32(line), Character: uint32(len(utf16.Encode([]rune(text[start:offset]))))}
}

// applyUTF16 applies one ranged replacement to text (lines split on \n).
func applyUTF16(text string, r protocol.Range, repl string) (string, error) {
	a, err := offsetUTF16(text, r.Start)
	if err != nil {
		return "", err
	}
	b, err := offsetUTF16(text, r.End)
	if err != nil {
		return "", err
	}
	if a > b {
		return "", fmt.Errorf("range start after end")
	}
	return text[:a] + repl + text[b:], nil
}

func offsetUTF16(text string, p protocol.Position) (int, error) {
	off := 0
	for i := uint32(0); i < p.Line; i++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return 0, fmt.Errorf("line %d beyond end", p.Line)
		}
		off += nl + 1
	}
	units := uint32(0)
	for off < len(text) && text[off] != '\n' && units < p.Character {
		r, size := utf8.DecodeRuneInString(text[off:])
		units += uint32(len(utf16.Encode([]rune{r})))
		off += size
	}
	return off, nil
}

// ApplyEdit applies a workspace edit's changes to the open buffers, as an
// editor does when the user picks a code action, sending one didChange per
// buffer.
func (e *Editor) ApplyEdit(edit *protocol.WorkspaceEdit) {
	e.t.Helper()
	if edit == nil {
		e.t.Fatal("code action has no edit")
	}
	for u, edits := range edit.Changes {
		name := ""
		e.mu.Lock()
		for n := range e.buffers {
			if e.URI(n) == u {
				name = n
			}
		}
		e.mu.Unlock()
		if name == "" {
			e.t.Fatalf("edit for %s, which is not open", u)
		}
		// Apply from the end so earlier ranges stay valid.
		sorted := append([]protocol.TextEdit(nil), edits...)
		sort.Slice(sorted, func(i, j int) bool {
			a, b := sorted[i].Range.Start, sorted[j].Range.Start
			return a.Line > b.Line || (a.Line == b.Line && a.Character > b.Character)
		})
		var out []Edit
		for _, te := range sorted {
			out = append(out, Edit{Range: te.Range, Text: te.NewText})
		}
		e.EditBuffer(name, out...)
	}
}

// Messages returns the window/showMessage notifications received.
// AnswerPrompts sets the action the user picks in every later
// window/showMessageRequest prompt; "" closes them unanswered. By default the
// first action is picked.
func (e *Editor) AnswerPrompts(title string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer, e.refusePrompts = &title, false
}

// RefusePrompts makes the editor answer every later
// window/showMessageRequest with "method not found", as an editor that
// cannot ask its user.
func (e *Editor) RefusePrompts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refusePrompts = true
}

// Prompts returns the window/showMessageRequest prompts received.
func (e *Editor) Prompts() []protocol.ShowMessageRequestParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]protocol.ShowMessageRequestParams(nil), e.asked...)
}

func (e *Editor) Messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

// AppliedEdit is a workspace/applyEdit request the editor received.
type AppliedEdit struct {
	Raw     json.RawMessage // the request's params as sent
	Failure string          // why it was not applied; "" when it was
}

// AppliedEdits returns the workspace/applyEdit requests received.
func (e *Editor) AppliedEdits() []AppliedEdit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]AppliedEdit(nil), e.applied...)
}

// applyWorkspaceEdit applies the documentChanges of a workspace/applyEdit
// to open buffers, checking each document's version, and sends one
// didChange per buffer. It runs on the connection's goroutine, so it
// reports problems instead of failing the test.
func (e *Editor) applyWorkspaceEdit(params json.RawMessage) error {
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct {
					URI     uri.URI `json:"uri"`
					Version *int32  `json:"version"`
				} `json:"textDocument"`
				Edits []struct {
					Range   protocol.Range `json:"range"`
					NewText string         `json:"newText"`
				} `json:"edits"`
			} `json:"documentChanges"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return err
	}
	for _, dc := range p.Edit.DocumentChanges {
		e.mu.Lock()
		name := ""
		for n := range e.buffers {
			if e.URI(n) == dc.TextDocument.URI {
				name = n
			}
		}
		if name == "" {
			e.mu.Unlock()
			return fmt.Errorf("%s is not open", dc.TextDocument.URI)
		}
		b := e.buffers[name]
		if v := dc.TextDocument.Version; v != nil && *v != b.version {
			e.mu.Unlock()
			return fmt.Errorf("%s is at version %d, the edit is for version %d", name, b.version, *v)
		}
		sorted := dc.Edits
		sort.Slice(sorted, func(i, j int) bool {
			a, c := sorted[i].Range.Start, sorted[j].Range.Start
			return a.Line > c.Line || (a.Line == c.Line && a.Character > c.Character)
		})
		text := b.text
		changes := make([]protocol.TextDocumentContentChangeEvent, 0, len(sorted))
		for _, te := range sorted {
			next, err := applyUTF16(text, te.Range, te.NewText)
			if err != nil {
				e.mu.Unlock()
				return err
			}
			text = next
			changes = append(changes, &protocol.TextDocumentContentChangePartial{Range: te.Range, Text: te.NewText})
		}
		b.text = text
		b.version++
		v := b.version
		e.mu.Unlock()
		ctx, cancel := e.ctx()
		err := e.conn.Notify(ctx, protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: dc.TextDocument.URI}, Version: v},
			ContentChanges: changes,
		})
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
