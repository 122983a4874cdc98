package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// codeAction offers, for each Kody Rule diagnostic in the request, a command
// that opens the rule so the user can read its instructions and examples,
// and for each review finding its quick fix and dismissals.
func (s *Server) codeAction(_ context.Context, p *protocol.CodeActionParams) ([]protocol.CodeAction, error) {
	actions := []protocol.CodeAction{}
	seen := map[string]bool{}
	for _, d := range p.Context.Diagnostics {
		// Every diagnostic, kodyls's or another server's, can be explained.
		actions = append(actions, explainAction(p.TextDocument.URI, d))
		if fa, ok := fixAction(p.TextDocument.URI, d); ok {
			actions = append(actions, fa)
		}
		if len(d.Data) == 0 {
			continue
		}
		// Some clients send back only part of a diagnostic (Neovim keeps
		// code and data); the data alone identifies a review finding.
		var data contract.DiagnosticData
		if json.Unmarshal(d.Data, &data) != nil {
			continue
		}
		detector := false
		if data.Kind == contract.DiagnosticKindReview {
			actions = append(actions, s.reviewCodeActions(p.TextDocument.URI, d, data)...)
		} else if src, _ := d.Source.Get(); src != diagnosticSource {
			continue
		} else {
			detector = true
		}
		// A Kody Rule's violation, found by its detector or by the model,
		// opens the rule; a detector's with a replacement is fixed by it.
		if data.Rule == "" {
			continue
		}
		if detector {
			if fix, ok := s.detectorFix(p.TextDocument.URI, d, data); ok {
				actions = append(actions, fix)
			}
		}
		if seen[data.Rule] {
			continue
		}
		seen[data.Rule] = true
		// The rule of the document's workspace folder: another folder may
		// have a rule of the same uuid.
		r, _ := s.findRule(data.Rule, s.pathOf(p.TextDocument.URI))
		if r == nil {
			continue
		}
		arg, _ := json.Marshal(contract.ShowRuleArgs{UUID: r.UUID, URI: p.TextDocument.URI})
		kind := protocol.CodeActionKindQuickFix
		actions = append(actions, protocol.CodeAction{
			Title:       "Show Kody Rule: " + r.Title,
			Kind:        &kind,
			Diagnostics: []protocol.Diagnostic{d},
			Command: protocol.Command{
				Title:     "Show Kody Rule",
				Command:   contract.CommandShowRule,
				Arguments: []protocol.LSPAny{arg},
			},
		})
	}
	return actions, nil
}

// detectorFix is the quick fix of a detector's violation whose rule has a
// replacement: the match replaced, computed on the buffer's current text.
//
// A violation's id names its place (rule, file, line, column): once lines
// are added above it, the violation of that id in the current text may be
// another one. A diagnostic of an older version is therefore followed
// through the edits made since to where its violation is now; when it
// cannot be (its text was edited, or its version is no longer known), it
// has no fix. A diagnostic without a version (an older client, a hand-made
// one) gets the fix only when the violation of its id is still under its
// range.
func (s *Server) detectorFix(u uri.URI, d protocol.Diagnostic, data contract.DiagnosticData) (protocol.CodeAction, bool) {
	key := string(u)
	doc, ok := s.docs.Get(key)
	if !ok || data.ID == "" {
		return protocol.CodeAction{}, false
	}
	found, version := s.rules.get(key)
	if version != doc.Version() {
		// The check of the latest edit has not run yet (the user asked
		// right after typing): check the current text now.
		snap, current := s.snapshot(key)
		if snap == nil || current.Version() != doc.Version() {
			return protocol.CodeAction{}, false
		}
		found = snap.CheckRules()
	}
	is := func(v workspace.RuleFinding) bool { return v.ID == data.ID }
	switch {
	case data.Version == doc.Version():
	case data.Version != 0:
		was, ok := s.rules.spanAt(key, data.Version, data.ID)
		if !ok {
			return protocol.CodeAction{}, false
		}
		edits, ok := s.edits(key, data.Version, doc.Version())
		if !ok {
			return protocol.CodeAction{}, false
		}
		now, ok := anchor.Track(was, edits)
		if !ok {
			return protocol.CodeAction{}, false // its text was edited
		}
		is = func(v workspace.RuleFinding) bool {
			start := doc.LineStart(v.Line)
			return v.Rule.UUID == data.Rule && start+v.Start == now.Start && start+v.End == now.End
		}
	default:
		is = func(v workspace.RuleFinding) bool { return v.ID == data.ID && s.findingRange(doc, v) == d.Range }
	}
	for _, v := range found {
		if !v.HasFix || !is(v) {
			continue
		}
		rng := s.findingRange(doc, v)
		quick := protocol.CodeActionKindQuickFix
		preferred := true
		return protocol.CodeAction{
			Title:       "Apply Kody fix: " + v.Rule.Title,
			Kind:        &quick,
			IsPreferred: &preferred,
			Diagnostics: []protocol.Diagnostic{d},
			Edit: &protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{
				u: {{Range: rng, NewText: v.Fix}},
			}},
		}, true
	}
	return protocol.CodeAction{}, false
}

// findingRange is the range of a detector's violation found in doc.
func (s *Server) findingRange(doc *textdoc.Document, v workspace.RuleFinding) protocol.Range {
	start := doc.LineStart(v.Line)
	return protocol.Range{
		Start: toProtocol(doc.PositionAt(start+v.Start, s.encoding)),
		End:   toProtocol(doc.PositionAt(start+v.End, s.encoding)),
	}
}
