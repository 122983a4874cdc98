package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// codeRequestFailed is LSP 3.17's RequestFailed: the request was valid
// but the server cannot carry it out (here: no model is configured).
const codeRequestFailed jsonrpc2.Code = -32803

// fixAnnotation is the change annotation of a fix's edits: the editor asks
// the user to confirm them, showing a preview.
const fixAnnotation = "kodyls.fix"

// fixError runs "Fix this error" on a diagnostic and hands the edits to the
// editor as a workspace/applyEdit that needs confirmation; kodyls never
// writes the files itself.
func (s *Server) fixError(ctx context.Context, arg []byte, token protocol.ProgressToken) (answer any, err error) {
	var prog *progress
	defer s.recoverCall("fix the error", &answer, &err, &prog)
	var a contract.FixArgs
	if err := json.Unmarshal(arg, &a); err != nil || a.URI == "" || a.Message == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.fixError expects {"uri", "message", "range"?}`)
	}
	done := s.work.add(string(a.URI))
	defer done()
	root := s.rootFor(a.URI)
	fx := s.svc.Fixer(root)
	if fx.Gateway == nil {
		msg := fix.ErrNoModel.Error()
		s.mu.Lock()
		if why := s.cfg.WhyNoModel(); why != "" {
			msg = "Fix this error needs a model: " + why
		}
		s.mu.Unlock()
		return nil, jsonrpc2.NewError(codeRequestFailed, msg)
	}
	s.modelWorkStarted()
	defer s.modelWorkEnded()
	e := s.diagnosticError(root, contract.ExplainArgs{URI: a.URI, Range: a.Range, Message: a.Message, Code: a.Code, Source: a.Source})
	cfg := s.settings().Build
	req := fix.Request{Error: e, Output: fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, a.Message), Build: cfg.OnSave}
	if cfg.TimeoutMS > 0 {
		req.BuildTimeout = time.Duration(cfg.TimeoutMS) * time.Millisecond
	}
	prog = s.beginProgress(ctx, token, "Fixing the error")
	res, err := fx.Fix(ctx, req, func(ev agent.Event) {
		if msg := progressLine(ev); msg != "" {
			prog.Report(msg, 0)
		}
	})
	if err != nil {
		prog.End("no fix")
		if ctx.Err() != nil {
			return nil, protocol.ErrRequestCancelled
		}
		return nil, fmt.Errorf("fix: %w", err)
	}
	out := &contract.FixResult{Verified: res.Verified, Verification: res.Verification, Rounds: res.Rounds, Diff: res.Diff, Note: res.Note, Files: []string{}, Edits: []contract.FixEdit{}}
	for _, ed := range res.Edits {
		out.Edits = append(out.Edits, contract.FixEdit{File: ed.File, OldText: ed.OldText, NewText: ed.NewText})
		if !containsString(out.Files, ed.File) {
			out.Files = append(out.Files, ed.File)
		}
	}
	out.Markdown = fixMarkdown(res)
	if !res.Found() {
		// Edits of a plan that failed are no fix: nothing to offer.
		out.Edits, out.Files = []contract.FixEdit{}, []string{}
		prog.End("no fix found")
		return out, nil
	}
	edit, err := s.fixWorkspaceEdit(root, res)
	if err != nil {
		prog.End("the fix no longer applies")
		return nil, fmt.Errorf("fix: %w", err)
	}
	if !s.clientCap.previewEdits {
		// The editor would apply the edits as they come: the user sees
		// the diff and accepts it first.
		if ok, why := s.confirmFix(ctx, res, out.Files); !ok {
			out.Note = strings.TrimSpace(out.Note + " " + why)
			prog.End("fix not applied")
			if ctx.Err() != nil {
				return nil, protocol.ErrRequestCancelled
			}
			return out, nil
		}
	}
	var applied struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason,omitempty"`
	}
	if err := protocol.Call(ctx, s.conn, protocol.MethodWorkspaceApplyEdit, edit, &applied); err != nil {
		prog.End("the editor did not apply the fix")
		if ctx.Err() != nil {
			return nil, protocol.ErrRequestCancelled
		}
		return nil, fmt.Errorf("fix: workspace/applyEdit: %w", err)
	}
	s.log.Info("fix sent to the editor", "files", out.Files, "applied", applied.Applied, "reason", applied.FailureReason)
	out.Applied = applied.Applied
	if !applied.Applied && applied.FailureReason != "" {
		out.Note = strings.TrimSpace(out.Note + " The editor did not apply the edits: " + applied.FailureReason)
	}
	prog.End(fmt.Sprintf("fix %s after %d rounds", res.Verification, res.Rounds))
	return out, nil
}

// The workspace edit, on the wire: documentChanges of versioned documents
// with annotated edits. It is written out here because the protocol
// package's unions make these types awkward to build.
type (
	applyEditParams struct {
		Label string        `json:"label"`
		Edit  workspaceEdit `json:"edit"`
	}
	workspaceEdit struct {
		DocumentChanges   []documentEdit                       `json:"documentChanges"`
		ChangeAnnotations map[string]protocol.ChangeAnnotation `json:"changeAnnotations"`
	}
	documentEdit struct {
		TextDocument versionedDoc    `json:"textDocument"`
		Edits        []annotatedEdit `json:"edits"`
	}
	versionedDoc struct {
		URI     uri.URI `json:"uri"`
		Version *int32  `json:"version"`
	}
	annotatedEdit struct {
		Range        protocol.Range `json:"range"`
		NewText      string         `json:"newText"`
		AnnotationID string         `json:"annotationId"`
	}
)

// fixWorkspaceEdit turns a fix into one edit per file, against the open
// buffer's current version when the file is open, else the file on disk.
func (s *Server) fixWorkspaceEdit(root string, res *fix.Result) (jsonrpc2.RawMessage, error) {
	byFile := map[string][]fix.Edit{}
	var order []string
	for _, e := range res.Edits {
		if _, ok := byFile[e.File]; !ok {
			order = append(order, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	yes := true
	desc := fmt.Sprintf("verification: %s", res.Verification)
	we := workspaceEdit{ChangeAnnotations: map[string]protocol.ChangeAnnotation{
		fixAnnotation: {Label: "Fix this error", NeedsConfirmation: &yes, Description: &desc},
	}}
	for _, rel := range order {
		path := filepath.Join(root, filepath.FromSlash(rel))
		u := s.clientURI(path)
		doc, open := s.docs.Get(string(u))
		var version *int32
		if open {
			v := doc.Version()
			version = &v
		} else {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			doc = textdoc.New(string(u), 0, string(data))
		}
		text := doc.Text()
		next := text
		for _, e := range byFile[rel] {
			start, end, err := fix.Locate(next, e)
			if err != nil {
				return nil, err
			}
			next = next[:start] + e.NewText + next[end:]
		}
		// One edit covering what differs keeps the edits of one file from
		// overlapping, whatever order they were made in.
		pre, suf := changedSpan(text, next)
		a, b := doc.PositionAt(pre, s.encoding), doc.PositionAt(len(text)-suf, s.encoding)
		we.DocumentChanges = append(we.DocumentChanges, documentEdit{
			TextDocument: versionedDoc{URI: u, Version: version},
			Edits: []annotatedEdit{{
				Range:        protocol.Range{Start: protocol.Position{Line: a.Line, Character: a.Character}, End: protocol.Position{Line: b.Line, Character: b.Character}},
				NewText:      next[pre : len(next)-suf],
				AnnotationID: fixAnnotation,
			}},
		})
	}
	if len(we.DocumentChanges) == 0 {
		return nil, errors.New("the fix has no edits")
	}
	raw, err := json.Marshal(applyEditParams{Label: "Fix this error", Edit: we})
	return jsonrpc2.RawMessage(raw), err
}

// changedSpan is the span where text and next differ: next is text with
// text[pre:len(text)-suf] replaced by next[pre:len(next)-suf]. Neither end
// falls inside a character (é and è share their first byte) or between
// the two bytes of a CRLF, so that the edit's positions and its new text
// are both whole characters.
func changedSpan(text, next string) (pre, suf int) {
	for pre < len(text) && pre < len(next) && text[pre] == next[pre] {
		pre++
	}
	for pre > 0 && pre < len(text) && (!utf8.RuneStart(text[pre]) || text[pre] == '\n' && text[pre-1] == '\r') {
		pre--
	}
	for suf < len(text)-pre && suf < len(next)-pre && text[len(text)-1-suf] == next[len(next)-1-suf] {
		suf++
	}
	for suf > 0 {
		at := len(text) - suf
		if utf8.RuneStart(text[at]) && (text[at] != '\n' || at == 0 || text[at-1] != '\r') {
			break
		}
		suf--
	}
	return pre, suf
}

// fixAction offers "Fix this error" for an error diagnostic.
func fixAction(u uri.URI, d protocol.Diagnostic) (protocol.CodeAction, bool) {
	if d.Severity != protocol.DiagnosticSeverityError {
		return protocol.CodeAction{}, false
	}
	ex := explainAction(u, d)
	var a contract.FixArgs
	if len(ex.Command.Arguments) > 0 {
		_ = json.Unmarshal(ex.Command.Arguments[0], &a)
	}
	arg, _ := json.Marshal(a)
	kind := protocol.CodeActionKindQuickFix
	return protocol.CodeAction{
		Title:       "Fix this error",
		Kind:        &kind,
		Diagnostics: []protocol.Diagnostic{d},
		Command:     protocol.Command{Title: "Fix this error", Command: contract.CommandFixError, Arguments: []protocol.LSPAny{arg}},
	}, true
}

func fixMarkdown(res *fix.Result) string {
	var b strings.Builder
	switch res.Verification {
	case fix.VerifyPassed:
		fmt.Fprintf(&b, "**Fix verified**: `%s` passes with the edits (%d rounds).\n\n", res.Build, res.Rounds)
	case fix.VerifyFailed:
		fmt.Fprintf(&b, "**No verified fix**: `%s` still fails after %d rounds.\n\n", res.Build, res.Rounds)
	case fix.VerifyNotRun:
		fmt.Fprintf(&b, "**No verified fix**: `%s` did not run: %s.\n\n", res.Build, res.WhyNotRun())
	default:
		b.WriteString("**Fix not verified**: set `build.onSave` to have kodyls build it first.\n\n")
	}
	if res.Diff != "" {
		fmt.Fprintf(&b, "```diff\n%s```\n", res.Diff)
	}
	if res.RefusedDiff != "" {
		// Edits to the build's own files or to kodyls's configuration:
		// shown for the user to make, never built nor applied by kodyls.
		why := "they change the build itself"
		build, own := false, false
		for _, r := range res.Refused {
			own = own || r.OwnConfiguration()
			build = build || !r.OwnConfiguration()
		}
		switch {
		case own && build:
			why = "they change the build itself or kodyls's own configuration"
		case own:
			why = fix.OwnConfigurationReason
		}
		fmt.Fprintf(&b, "\n**Not applied** (%s; make them yourself if they are right):\n\n```diff\n%s```\n", why, res.RefusedDiff)
	}
	if res.Note != "" {
		fmt.Fprintf(&b, "\n> %s\n", res.Note)
	}
	return b.String()
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Prompt actions of confirmFix.
const (
	fixApply   = "Apply fix"
	fixDiscard = "Discard"
)

// confirmFixDiffLines bounds the diff shown in the prompt; the full diff is
// in the command's result.
const confirmFixDiffLines = 60

// confirmFix asks the user, with window/showMessageRequest, whether to apply
// a fix, showing its diff; an editor that previews annotated edits asks
// itself. It reports whether the user accepted, and otherwise why not.
func (s *Server) confirmFix(ctx context.Context, res *fix.Result, files []string) (bool, string) {
	diff := strings.Split(strings.TrimRight(res.Diff, "\n"), "\n")
	if len(diff) > confirmFixDiffLines {
		diff = append(diff[:confirmFixDiffLines], fmt.Sprintf("… %d more lines", len(diff)-confirmFixDiffLines))
	}
	msg := fmt.Sprintf("Kody fix of %s (verification: %s). Apply it?\n\n%s", strings.Join(files, ", "), res.Verification, strings.Join(diff, "\n"))
	var picked *protocol.MessageActionItem
	err := protocol.Call(ctx, s.conn, protocol.MethodWindowShowMessageRequest, &protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeInfo,
		Message: msg,
		Actions: []protocol.MessageActionItem{{Title: fixApply}, {Title: fixDiscard}},
	}, &picked)
	switch {
	case err != nil:
		s.log.Info("the editor cannot ask to confirm a fix", "error", err)
		// An editor that cannot ask may not show the command's result
		// either: the diff goes out as a message.
		shown := fmt.Sprintf("Kody fix of %s (verification: %s), not applied: this editor cannot ask you to confirm edits. Apply it by hand, or with `kodyls fix --apply` in a terminal.\n\n%s", strings.Join(files, ", "), res.Verification, strings.Join(diff, "\n"))
		if nerr := s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeInfo, Message: shown}); nerr != nil {
			s.log.Warn("show the fix", "error", nerr)
		}
		return false, "Not applied: the editor cannot ask you to confirm edits; the diff is above, and `kodyls fix --apply` applies it from a terminal."
	case picked == nil || picked.Title != fixApply:
		return false, "Not applied: you discarded it."
	}
	return true, ""
}
