package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
)

func (s *Server) explainError(ctx context.Context, arg []byte, token protocol.ProgressToken) (res any, err error) {
	var prog *progress
	defer s.recoverCall("explain the error", &res, &err, &prog)
	var a contract.ExplainArgs
	if err := json.Unmarshal(arg, &a); err != nil || (a.Text == "" && (a.URI == "" || a.Message == "")) {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.explainError expects {"uri", "message", "range"?} or {"text"}`)
	}
	done := s.work.add(string(a.URI))
	defer done()
	if !a.Offline && s.svc.ModelConfigured() {
		s.modelWorkStarted()
		defer s.modelWorkEnded()
	}
	root := s.rootFor(a.URI)
	x := s.explainer(root)
	prog = s.beginProgress(ctx, token, "Explaining the error")
	emit := func(ev agent.Event) {
		if msg := progressLine(ev); msg != "" {
			prog.Report(msg, 0)
		}
	}
	var rep *rca.Report
	if a.Text != "" {
		rep, err = x.Explain(ctx, a.Text, a.Offline, emit)
	} else {
		e := s.diagnosticError(root, a)
		// The diagnostic's line counts the buffer's lines: the code the
		// explanation reads is the buffer's, unsaved changes included.
		if doc, open := s.docs.Get(string(a.URI)); open && e.File != "" && !filepath.IsAbs(e.File) {
			x.Overlay = map[string]string{e.File: doc.Text()}
		}
		rep, err = x.ExplainError(ctx, e, fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message), a.Offline, emit)
	}
	if err != nil {
		prog.End("no explanation")
		if ctx.Err() != nil {
			return nil, protocol.ErrRequestCancelled
		}
		return nil, fmt.Errorf("explain: %w", err)
	}
	prog.End(fmt.Sprintf("%s (confidence %.0f%%)", rep.RCA.Source, rep.RCA.Confidence*100))
	out := &contract.ExplainResult{Markdown: rep.Markdown(), RCA: rep}
	if !s.clientCap.commandResults {
		// Shown once the editor has had the command's answer: an editor
		// that waits for it synchronously (eglot) can lose what arrives
		// with it.
		done := s.work.add(string(a.URI))
		s.goBackground(func(ctx context.Context) {
			defer done()
			select {
			case <-time.After(presentAfter):
			case <-ctx.Done():
				return
			}
			s.showExplanation(ctx, out.Markdown, rep)
		})
	}
	return out, nil
}

// recoverCall, deferred by a command handler, answers a panic with an
// InternalError that says what failed, ends the command's progress and
// logs the stack: one request must not end the session (jsonrpc2 would
// close the connection).
func (s *Server) recoverCall(what string, res *any, err *error, prog **progress) {
	r := recover()
	if r == nil {
		return
	}
	s.log.Error("a request panicked", "command", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	if *prog != nil {
		(*prog).End("failed")
	}
	*res = nil
	*err = jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("kodyls could not %s: internal error: %v (the kodyls log has the details)", what, r))
}

// keptExplanations is how many explanation documents showExplanation keeps.
const keptExplanations = 20

// presentAfter is how long after the command's answer showExplanation
// starts: the answer is written when the handler returns, and a message in
// the same read as the answer of a synchronous request is lost by eglot
// 1.9.
const presentAfter = 250 * time.Millisecond

// showDocumentWait bounds how long showExplanation waits for the editor to
// open the explanation before it sends it as a message instead.
const showDocumentWait = 5 * time.Second

// showExplanation shows an explanation to a client that drops the results
// of commands (a generic LSP client such as Helix or eglot, which run
// "Explain this error" from the code action and discard what it returns):
// as a Markdown document when the client opens it, else as a message.
// window/showDocument is tried even when the client does not advertise it:
// Helix 25.01 opens the document without saying it can, and a client that
// cannot answers with an error, which falls back to the message.
func (s *Server) showExplanation(ctx context.Context, md string, rep *rca.Report) {
	if s.conn == nil {
		return
	}
	path, err := s.writeExplanation(md)
	if err == nil {
		takeFocus := true
		var res protocol.ShowDocumentResult
		cctx, cancel := context.WithTimeout(ctx, showDocumentWait)
		err = protocol.Call(cctx, s.conn, protocol.MethodWindowShowDocument, &protocol.ShowDocumentParams{URI: s.clientURI(path), TakeFocus: &takeFocus}, &res)
		cancel()
		if err == nil && res.Success {
			return
		}
		if err == nil {
			err = errors.New("the editor did not open it")
		}
	}
	s.log.Info("explanation shown as a message", "reason", err)
	if err := s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowShowMessage,
		&protocol.ShowMessageParams{Type: protocol.MessageTypeInfo, Message: explanationText(rep)}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// writeExplanation writes md to a new file of the explanations directory
// (in the data directory, else the temporary one), keeping the latest
// keptExplanations, and returns its path.
func (s *Server) writeExplanation(md string) (string, error) {
	dir, _, err := index.DataDir(s.opts.Getenv)
	if err != nil {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("kodyls-%d", os.Getuid()))
	}
	dir = filepath.Join(dir, "explanations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, time.Now().UTC().Format("20060102-150405")+"-*.md")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(md)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", werr
	}
	if old, err := filepath.Glob(filepath.Join(dir, "*.md")); err == nil && len(old) > keptExplanations {
		slices.Sort(old) // named by time: oldest first
		for _, p := range old[:len(old)-keptExplanations] {
			os.Remove(p)
		}
	}
	return f.Name(), nil
}

// explanationText is an explanation as plain text, for window/showMessage.
func explanationText(rep *rca.Report) string {
	var b strings.Builder
	e := rep.Errors[rep.Primary]
	fmt.Fprintf(&b, "kodyls: %s\n", e.Message)
	if a := rep.RCA; a != nil {
		fmt.Fprintf(&b, "Root cause: %s\n", a.RootCause)
		for i, step := range a.FixGuidelines {
			fmt.Fprintf(&b, "%d. %s\n", i+1, step)
		}
		fmt.Fprintf(&b, "(confidence %.0f%%, source: %s)", a.Confidence*100, a.Source)
	}
	return strings.TrimRight(b.String(), "\n")
}

// diagnosticError turns an editor diagnostic (kodyls's or another
// server's) into the error the explainer works on.
func (s *Server) diagnosticError(root string, a contract.ExplainArgs) errparse.Error {
	path := a.URI.FsPath()
	rel := path
	if root != "" {
		if r, err := filepath.Rel(root, canonicalPath(path)); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
	}
	e := errparse.Error{Tool: a.Source, Language: errparse.LanguageOf(path), File: rel, Severity: "error", Code: a.Code, Message: strings.TrimSpace(strings.SplitN(a.Message, "\n", 2)[0])}
	if e.Tool == "" {
		e.Tool = "editor"
	}
	if a.Range != nil {
		e.Line, e.Column = int(a.Range.Start.Line)+1, int(a.Range.Start.Character)+1
	}
	e.Fingerprint = errparse.Fingerprint(e)
	return e
}

// rootFor is the workspace folder of a URI, or the first folder.
func (s *Server) rootFor(u uri.URI) string {
	if u != "" && u.IsFile() {
		if f := s.folderFor(canonicalPath(u.FsPath())); f != nil {
			return f.Root
		}
	}
	if fs := s.allFolders(); len(fs) > 0 {
		return fs[0].Root
	}
	return ""
}

// explainer is the explainer of a workspace, from the composition root.
func (s *Server) explainer(root string) *rca.Explainer {
	x := s.svc.Explainer(s.ctx, root)
	s.mu.Lock()
	x.NoModel = s.cfg.WhyNoModel() // the note names the setting to fix
	s.mu.Unlock()
	return x
}

// explainAction offers "Explain this error" for any diagnostic.
func explainAction(u uri.URI, d protocol.Diagnostic) protocol.CodeAction {
	src, _ := d.Source.Get()
	msg := ""
	switch m := d.Message.(type) {
	case protocol.String:
		msg = string(m)
	case *protocol.MarkupContent:
		msg = m.Value
	}
	code := ""
	switch c := d.Code.(type) {
	case protocol.String:
		code = string(c)
	case protocol.Integer:
		code = fmt.Sprint(int32(c))
	}
	r := d.Range
	arg, _ := json.Marshal(contract.ExplainArgs{URI: u, Range: &r, Message: msg, Code: code, Source: src})
	return protocol.CodeAction{
		Title:       "Explain this error",
		Diagnostics: []protocol.Diagnostic{d},
		Command:     protocol.Command{Title: "Explain this error", Command: contract.CommandExplainError, Arguments: []protocol.LSPAny{arg}},
	}
}

func shortText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// progressLine is the $/progress message of an agent or graph event: the
// editor shows where an explanation or a fix is, one short line for every
// event, never a tool's whole output or a whole plan.
func progressLine(ev agent.Event) string {
	switch ev.Kind {
	case agent.EventIteration:
		return fmt.Sprintf("step %d", ev.Iteration)
	case agent.EventAction:
		return fmt.Sprintf("%scalling %s %s", stepPrefix(ev), ev.Tool, shortText(ev.Input, 60))
	case agent.EventThought:
		return fmt.Sprintf("step %d: %s", ev.Iteration, shortText(ev.Text, 80))
	case agent.EventObservation:
		return fmt.Sprintf("%s%s returned %s", stepPrefix(ev), ev.Tool, shortText(ev.Text, 60))
	case graph.EventResumed:
		return fmt.Sprintf("resuming the interrupted run from step %d", ev.Iteration)
	case agent.EventEscalated:
		return "planning a deeper investigation: " + shortText(ev.Text, 80)
	case graph.EventNodeStarted:
		return ev.Node + "…"
	case graph.EventNodeFinished:
		return fmt.Sprintf("%s finished (%s)", ev.Node, ev.Text)
	}
	kind := strings.ReplaceAll(ev.Kind, "_", " ")
	if ev.Text == "" {
		return kind
	}
	return kind + ": " + shortText(ev.Text, 100)
}

// stepPrefix numbers the tool events of a ReAct step; a plan's steps
// carry no number.
func stepPrefix(ev agent.Event) string {
	if ev.Iteration > 0 {
		return fmt.Sprintf("step %d: ", ev.Iteration)
	}
	return ""
}
