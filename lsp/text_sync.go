package lsp

import (
	"context"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// openDoc is what the server knows about an open buffer beyond its text.
type openDoc struct {
	uri      uri.URI
	path     string            // absolute, symlink-free; "" for non-file URIs
	engine   *rulecheck.Engine // nil outside every workspace folder
	isRule   bool              // a Kody Rule file
	language string            // the client's languageId

	mu            sync.Mutex
	rv            reviewState
	baselineReady bool
	violations    []rules.Violation
	version       int32 // the version violations were computed for
}

func (s *Server) didOpen(p *protocol.DidOpenTextDocumentParams) {
	item := p.TextDocument
	key := string(item.URI)
	s.docs.Open(key, item.Version, item.Text)
	od := &openDoc{uri: item.URI, language: string(item.LanguageID)}
	if item.URI.IsFile() {
		od.path = canonicalPath(item.URI.FsPath())
		od.engine = s.engineFor(od.path)
		od.isRule = od.engine != nil && od.engine.IsRuleFile(od.path)
	}
	s.mu.Lock()
	s.open[key] = od
	s.mu.Unlock()
	if od.isRule {
		s.publishRuleFileErrors(s.ctx, od)
	}
	if od.engine == nil {
		return
	}
	// The baseline needs git, which is too slow for the read loop: load it
	// in the background and check once it is there.
	ref := s.settings().BaseRef
	s.goBackground(func(ctx context.Context) {
		if _, err := od.engine.RefreshBaseline(ctx, od.path, ref); err != nil {
			s.log.Warn("cannot read the baseline; checking every line", "path", od.path, "error", err)
		}
		od.mu.Lock()
		od.baselineReady = true
		od.mu.Unlock()
		s.checks.Trigger(key)
	})
}

func (s *Server) didChange(p *protocol.DidChangeTextDocumentParams) error {
	key := string(p.TextDocument.URI)
	changes := make([]textdoc.Change, 0, len(p.ContentChanges))
	for _, c := range p.ContentChanges {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangePartial:
			r := textdoc.Range{
				Start: textdoc.Position{Line: c.Range.Start.Line, Character: c.Range.Start.Character},
				End:   textdoc.Position{Line: c.Range.End.Line, Character: c.Range.End.Character},
			}
			changes = append(changes, textdoc.Change{Range: &r, Text: c.Text})
		case *protocol.TextDocumentContentChangeWholeDocument:
			changes = append(changes, textdoc.Change{Text: c.Text})
		default:
			return fmt.Errorf("unknown content change %T", c)
		}
	}
	old, _ := s.docs.Get(key)
	cur, err := s.docs.Change(key, p.TextDocument.Version, changes, s.encoding)
	if err != nil {
		// The last good text is kept; the client's next full sync or a
		// reopen repairs the divergence.
		return fmt.Errorf("edit rejected, keeping the last good text: %w", err)
	}
	if od := s.openDoc(key); od != nil {
		s.onEdited(od, old, cur, changes)
	}
	s.checks.Trigger(key)
	return nil
}

func (s *Server) didClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) {
	key := string(p.TextDocument.URI)
	s.docs.Close(key)
	s.mu.Lock()
	od := s.open[key]
	delete(s.open, key)
	s.mu.Unlock()
	if od != nil {
		od.mu.Lock()
		if od.rv.cancel != nil {
			od.rv.cancel()
		}
		if od.rv.idle != nil {
			od.rv.idle.Stop()
		}
		od.mu.Unlock()
		if od.engine != nil {
			od.engine.ForgetBaseline(od.path)
		}
	}
	// Rule findings exist only for open buffers.
	s.diags.Clear(ctx, p.TextDocument.URI)
}

func (s *Server) didSave(p *protocol.DidSaveTextDocumentParams) {
	od := s.openDoc(string(p.TextDocument.URI))
	if od != nil && od.isRule {
		s.goBackground(func(ctx context.Context) { s.reloadRules(ctx, nil) })
		return
	}
	if od != nil {
		s.reviewOnSave(od)
		s.buildOnSave(od)
	}
}

func (s *Server) openDoc(key string) *openDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[key]
}

func (s *Server) openDocs() []*openDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*openDoc, 0, len(s.open))
	for _, od := range s.open {
		out = append(out, od)
	}
	return out
}

// engineFor returns the rules engine of the innermost workspace folder
// containing path.
func (s *Server) engineFor(path string) *rulecheck.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *rulecheck.Engine
	for _, e := range s.engines {
		if _, ok := e.Rel(path); ok && (best == nil || len(e.Root()) > len(best.Root())) {
			best = e
		}
	}
	return best
}

func (s *Server) allEngines() []*rulecheck.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*rulecheck.Engine, 0, len(s.engines))
	for _, f := range s.folders {
		out = append(out, s.engines[f])
	}
	return out
}

// recheckAll re-runs the local checks of every open buffer.
func (s *Server) recheckAll() {
	for _, od := range s.openDocs() {
		s.checks.Trigger(string(od.uri))
	}
}

// refreshBaselines re-reads every open buffer's baseline (HEAD moved, or the
// base ref setting changed) and re-checks.
func (s *Server) refreshBaselines() {
	ref := s.settings().BaseRef
	s.goBackground(func(ctx context.Context) {
		for _, od := range s.openDocs() {
			if od.engine == nil {
				continue
			}
			if _, err := od.engine.RefreshBaseline(ctx, od.path, ref); err != nil {
				s.log.Warn("cannot refresh the baseline", "path", od.path, "error", err)
			}
			s.checks.Trigger(string(od.uri))
		}
	})
}
