package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
)

func (s *Server) executeCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (any, error) {
	var arg0 []byte
	if len(p.Arguments) > 0 {
		arg0 = p.Arguments[0]
	}
	switch p.Command {
	case contract.CommandRuleViolations:
		return s.ruleViolations(), nil
	case contract.CommandReloadRules:
		done := s.work.add("")
		defer done()
		n, errs := s.reloadRules(ctx, p.WorkDoneToken)
		return &contract.ReloadRulesResult{Rules: n, Broken: len(errs)}, nil
	case contract.CommandShowRule:
		return s.showRule(ctx, arg0)
	case contract.CommandReviewFile:
		u, ok := uriArg(arg0)
		if !ok {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.reviewFile expects {"uri": "file:///…"}`)
		}
		if s.openDoc(string(u)) == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s is not open", u))
		}
		return s.reviewDoc(ctx, string(u), p.WorkDoneToken)
	case contract.CommandReviewWorkspace:
		return s.reviewWorkspace(ctx, p.WorkDoneToken)
	case contract.CommandDismissSuggestion:
		return s.dismissSuggestion(ctx, arg0)
	case contract.CommandExplainError:
		return s.explainError(ctx, arg0, p.WorkDoneToken)
	case contract.CommandFixError:
		return s.fixError(ctx, arg0, p.WorkDoneToken)
	}
	if fn, ok := s.opts.Commands[p.Command]; ok {
		return fn(ctx, arg0)
	}
	return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("unknown command %q", p.Command))
}

// showRule opens the rule file in the editor (window/showDocument) and
// returns its location, so clients without showDocument can open it too.
func (s *Server) showRule(ctx context.Context, arg []byte) (any, error) {
	var a contract.ShowRuleArgs
	if err := json.Unmarshal(arg, &a); err != nil || a.UUID == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.showRule expects {"uuid": "<rule uuid>", "uri": "file:///… (optional)"}`)
	}
	r, path := s.findRule(a.UUID, s.pathOf(a.URI))
	if r == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("no loaded Kody Rule has uuid %q; run kodyls.reloadRules if the file is new", a.UUID))
	}
	// A rule imported from a list of rules (CLAUDE.md, .cursorrules…)
	// starts on its own line of the file.
	line := uint32(max(r.Line, 1) - 1)
	loc := protocol.Location{URI: s.clientURI(path), Range: protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line}}}
	if s.clientCap.showDocument {
		takeFocus := true
		var res protocol.ShowDocumentResult
		if err := protocol.Call(ctx, s.conn, protocol.MethodWindowShowDocument, &protocol.ShowDocumentParams{URI: loc.URI, TakeFocus: &takeFocus, Selection: &loc.Range}, &res); err != nil {
			s.log.Debug("showDocument failed", "error", err)
		}
	}
	return loc, nil
}
