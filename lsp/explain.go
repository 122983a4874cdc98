package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/editors/contract"
)

func (s *Server) explainError(ctx context.Context, arg []byte, token protocol.ProgressToken) (any, error) {
	var a contract.ExplainArgs
	if err := json.Unmarshal(arg, &a); err != nil || (a.Text == "" && (a.URI == "" || a.Message == "")) {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.explainError expects {"uri", "range", "message"} or {"text"}`)
	}
	done := s.work.add(string(a.URI))
	defer done()
	if !a.Offline && s.svc.ModelConfigured() {
		s.modelWorkStarted()
		defer s.modelWorkEnded()
	}
	root := s.rootFor(a.URI)
	x := s.explainer(root)
	prog := s.beginProgress(ctx, token, "Explaining the error")
	emit := func(ev agent.Event) {
		if msg := progressLine(ev); msg != "" {
			prog.Report(msg, 0)
		}
	}
	var rep *rca.Report
	var err error
	if a.Text != "" {
		rep, err = x.Explain(ctx, a.Text, a.Offline, emit)
	} else {
		e := s.diagnosticError(root, a)
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
	return &contract.ExplainResult{Markdown: rep.Markdown(), RCA: rep}, nil
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
	return s.svc.Explainer(s.ctx, root)
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

// progressLine is the $/progress message of an agent or graph event, ""
// for events not worth one (a node finishing, an iteration starting): the
// editor shows where an explanation or a fix is, step by step.
func progressLine(ev agent.Event) string {
	switch ev.Kind {
	case agent.EventAction:
		return fmt.Sprintf("step %d: %s %s", ev.Iteration, ev.Tool, shortText(ev.Input, 60))
	case agent.EventThought:
		return fmt.Sprintf("step %d: %s", ev.Iteration, shortText(ev.Text, 80))
	case graph.EventResumed:
		return fmt.Sprintf("resuming the interrupted run from step %d", ev.Iteration)
	case agent.EventEscalated:
		return "planning a deeper investigation: " + shortText(ev.Text, 80)
	case graph.EventNodeStarted:
		return ev.Node + "…"
	case agent.EventPlanCreated, agent.EventStepDone, agent.EventReflected, agent.EventAdjusted:
		return strings.ReplaceAll(ev.Kind, "_", " ") + ": " + shortText(ev.Text, 100)
	}
	return ""
}
