package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
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
		var rd reviewData
		if json.Unmarshal(d.Data, &rd) == nil && rd.Kind == liveReviewKind {
			actions = append(actions, s.reviewCodeActions(p.TextDocument.URI, d, rd)...)
		} else if src, _ := d.Source.Get(); src != diagnosticSource {
			continue
		}
		// A Kody Rule's violation, found by its detector or by the model,
		// opens the rule.
		var data diagnosticData
		if json.Unmarshal(d.Data, &data) != nil || data.Rule == "" || seen[data.Rule] {
			continue
		}
		seen[data.Rule] = true
		r, _ := s.findRule(data.Rule)
		if r == nil {
			continue
		}
		arg, _ := json.Marshal(contract.ShowRuleArgs{UUID: r.UUID})
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
