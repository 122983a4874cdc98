package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/langid"
	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// openDoc is what the server knows about an open buffer beyond its text.
type openDoc struct {
	uri         uri.URI
	path        string            // absolute, symlink-free; "" for non-file URIs
	folder      *workspace.Folder // nil outside every workspace folder
	isRule      bool              // a Kody Rule file
	language    string            // the client's languageId
	openVersion int32

	// loadMu makes the buffer's baseline loads run one at a time, each
	// reading the base ref when it starts: the last load started (after
	// a settings change, a git command) is the last one cached.
	loadMu sync.Mutex

	mu            sync.Mutex
	baselineReady bool
	skip          gate.Reason // the file gate's verdict at open or the last save
	idle          *time.Timer // the idle trigger's timer, when armed
	idleDone      func()      // releases the idle timer's pending work
	idleVersion   int32       // the version the idle timer was armed for
	toldRejected  bool        // the editor was told an edit could not be applied

	// detections carry the rule detectors' results from one version of
	// the buffer to the next.
	detections workspace.Detections
}

// The text synchronization handlers run on the read loop, in wire order.
// They update the document store and schedule the diagnose pass; every
// feature's work runs off the read loop.

func (s *Server) didOpen(p *protocol.DidOpenTextDocumentParams) {
	item := p.TextDocument
	key := string(item.URI)
	if s.openDoc(key) != nil {
		// The protocol wants a didClose first; a client that skipped it
		// means the new text to replace the old, with nothing of the old
		// buffer's findings or versions left behind.
		s.log.Warn("didOpen of a document already open: reopening it", "uri", key)
		s.didClose(s.ctx, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: item.URI}})
	}
	s.docs.Open(key, item.Version, item.Text)
	od := &openDoc{uri: item.URI, language: string(item.LanguageID), openVersion: item.Version}
	if item.URI.IsFile() {
		od.path = canonicalPath(item.URI.FsPath())
	}
	s.placeDoc(od)
	s.mu.Lock()
	s.open[key] = od
	s.mu.Unlock()
	s.attach(od)
}

// placeDoc sets the workspace folder of an open buffer: the innermost one
// holding its file, nil outside every folder (or for a non-file URI).
func (s *Server) placeDoc(od *openDoc) {
	if od.path == "" {
		return
	}
	od.folder = s.folderFor(od.path)
	od.isRule = od.folder != nil && od.folder.Engine.IsRuleFile(od.path)
}

// attach starts checking an open buffer in its workspace folder: the
// problems of a rule file, then, once its baseline is read, the diagnose
// pass. A buffer outside every folder is not checked.
func (s *Server) attach(od *openDoc) {
	if od.folder == nil {
		return
	}
	key := string(od.uri)
	s.publishRuleFileErrors(s.ctx, od)
	// The baseline needs git, which is too slow for the read loop: load it
	// in the background and diagnose once it is there.
	done := s.work.add(key)
	s.goBackground(func(ctx context.Context) {
		defer done()
		if err := s.loadBufferBaseline(ctx, od); err != nil {
			return // the session is ending
		}
		s.regate(od)
		od.mu.Lock()
		od.baselineReady = true
		od.mu.Unlock()
		s.checks.Trigger(key)
	})
}

// regate runs the file gate on a buffer's current text. It reads the whole
// text several times, so it runs when the buffer is opened and saved, off
// the read loop, never per keystroke.
func (s *Server) regate(od *openDoc) {
	doc, ok := s.docs.Get(string(od.uri))
	if !ok || od.folder == nil {
		return
	}
	rel, _ := od.folder.Rel(od.path)
	skip := od.folder.Gate(rel, doc.Text())
	od.mu.Lock()
	changed := od.skip != skip
	od.skip = skip
	od.mu.Unlock()
	if changed && skip.Skip() {
		s.log.Info("not checked", "file", rel, "reason", string(skip))
	}
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
	if _, err := s.docs.Change(key, p.TextDocument.Version, changes, s.encoding); err != nil {
		// The last good text is kept; the client's next full sync or a
		// reopen repairs the divergence.
		return fmt.Errorf("edit rejected, keeping the last good text: %w", err)
	}
	s.checks.Trigger(key)
	return nil
}

// checkChangeRanges rejects a didChange whose change has a range that is
// not two positions of unsigned line and character numbers. The
// protocol's union type would read such a change as the whole new text
// and replace the document with its fragment.
func checkChangeRanges(params []byte) error {
	if !bytes.Contains(params, []byte(`"range"`)) {
		return nil // whole-text changes: nothing to check, nothing to parse twice
	}
	var p struct {
		ContentChanges []map[string]json.RawMessage `json:"contentChanges"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("edit rejected, keeping the last good text: %w", err)
	}
	for i, c := range p.ContentChanges {
		raw, ok := c["range"]
		if !ok || string(raw) == "null" {
			continue // the whole text
		}
		var r struct {
			Start, End *struct{ Line, Character *uint32 }
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.Start == nil || r.End == nil ||
			r.Start.Line == nil || r.Start.Character == nil || r.End.Line == nil || r.End.Character == nil {
			return fmt.Errorf("edit rejected, keeping the last good text: change %d has a malformed range %s", i+1, raw)
		}
	}
	return nil
}

// editRejected tells the editor, once per opening of the document, that
// an edit could not be applied: the server's text and the editor's differ
// until the document is reopened.
func (s *Server) editRejected(u uri.URI, err error) {
	od := s.openDoc(string(u))
	if od == nil || s.conn == nil {
		return
	}
	od.mu.Lock()
	told := od.toldRejected
	od.toldRejected = true
	od.mu.Unlock()
	if told {
		return
	}
	msg := fmt.Sprintf("kodyls: an edit of %s could not be applied (%v). Findings follow the last good text until the file is closed and opened again.", u, err)
	// Off the read loop: a write that waits on an editor busy writing to
	// the server must not stop the server from reading.
	done := s.work.add("")
	s.goBackground(func(ctx context.Context) {
		defer done()
		if nerr := s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); nerr != nil {
			s.log.Debug("showMessage failed", "error", nerr)
		}
	})
}

func (s *Server) didClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) {
	key := string(p.TextDocument.URI)
	s.docs.Close(key)
	s.mu.Lock()
	od := s.open[key]
	delete(s.open, key)
	s.mu.Unlock()
	s.reviews.Forget(key)
	if od != nil {
		s.stopIdle(od)
		if od.folder != nil {
			od.folder.Engine.ForgetBaseline(od.path)
		}
	}
	// The panel now lists the pull-request violations the buffer carried.
	if s.rules.forget(key) || (od != nil && od.path != "" && s.changeSet.has(od.path)) {
		s.notifyViolationsChanged(ctx, p.TextDocument.URI)
	}
	// Rule and review findings exist only for open buffers.
	s.diags.Clear(ctx, p.TextDocument.URI)
}

func (s *Server) didSave(p *protocol.DidSaveTextDocumentParams) {
	od := s.openDoc(string(p.TextDocument.URI))
	if od != nil && od.isRule {
		done := s.work.add("")
		s.goBackground(func(ctx context.Context) {
			defer done()
			s.reloadRules(ctx, nil)
		})
		return
	}
	if od != nil {
		if od.folder != nil {
			key := string(od.uri)
			done := s.work.add(key)
			s.goBackground(func(ctx context.Context) {
				defer done()
				s.refreshBaselineOnSave(ctx, od)
				s.regate(od)
				s.checks.Trigger(key)
			})
		}
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

// currentVersion is the version of an open document; the publisher refuses
// diagnostics computed for an older one.
func (s *Server) currentVersion(u uri.URI) (int32, bool) {
	d, ok := s.docs.Get(string(u))
	if !ok {
		return 0, false
	}
	return d.Version(), true
}

// snapshot is the current version of an open document as the features see
// it; nil when the document is not open.
func (s *Server) snapshot(key string) (*workspace.Snapshot, *textdoc.Document) {
	od := s.openDoc(key)
	doc, ok := s.docs.Get(key)
	if od == nil || !ok {
		return nil, nil
	}
	snap := &workspace.Snapshot{
		URI: key, Path: od.path, Language: od.language, Folder: od.folder, RuleFile: od.isRule,
		Version: doc.Version(), Text: doc.Text(), Settings: s.settings(),
		Detections: &od.detections,
	}
	// The language a review prompt and a rule's `languages` see comes from
	// the file name, as in `kodyls review`, so that the editor and the CLI
	// send the same prompt and check the same rules.
	if lang := langid.Of(od.path); lang != "" {
		snap.Language = lang
	}
	if od.folder != nil {
		snap.Rel, _ = od.folder.Rel(od.path)
		od.mu.Lock()
		snap.BaselineReady, snap.Skip = od.baselineReady, od.skip
		od.mu.Unlock()
		snap.Baseline, _ = od.folder.Engine.Baseline(od.path)
	}
	return snap, doc
}

// edits gives the byte edits that turned version since of a buffer into
// version upTo, for moving results computed for since
// (workspace.EditsFunc).
func (s *Server) edits(key string, since, upTo int32) ([]anchor.Edit, bool) {
	es, ok := s.docs.EditsBetween(key, since, upTo)
	if !ok {
		return nil, false
	}
	out := make([]anchor.Edit, len(es))
	for i, e := range es {
		out[i] = anchor.Edit{Start: e.Start, End: e.End, NewLen: e.NewLen}
	}
	return out, true
}

// folderFor returns the innermost workspace folder containing path.
func (s *Server) folderFor(path string) *workspace.Folder {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *workspace.Folder
	for _, f := range s.folders {
		if _, ok := f.Rel(path); ok && (best == nil || len(f.Root) > len(best.Root)) {
			best = f
		}
	}
	return best
}

func (s *Server) allFolders() []*workspace.Folder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*workspace.Folder(nil), s.folders...)
}

// recheckAll re-runs the diagnose pass of every open buffer.
func (s *Server) recheckAll() {
	for _, od := range s.openDocs() {
		s.checks.Trigger(string(od.uri))
	}
}

// refreshBaselines re-reads every open buffer's baseline (HEAD moved, or the
// base ref setting changed) and re-checks.
func (s *Server) refreshBaselines() {
	done := s.work.add("")
	s.goBackground(func(ctx context.Context) {
		defer done()
		for _, od := range s.openDocs() {
			if od.folder == nil {
				continue
			}
			before, _ := od.folder.Engine.Baseline(od.path)
			if err := s.loadBufferBaseline(ctx, od); err != nil {
				return // the session is ending
			}
			s.dropCommittedFindings(ctx, string(od.uri), before)
			s.checks.Trigger(string(od.uri))
		}
	})
}

// allEngines returns the rules engines of the workspace folders, in order.
func (s *Server) allEngines() []*rulecheck.Engine {
	folders := s.allFolders()
	out := make([]*rulecheck.Engine, len(folders))
	for i, f := range folders {
		out[i] = f.Engine
	}
	return out
}
