package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// Review commands.
const (
	CommandReviewFile        = "kodyls.reviewFile"
	CommandReviewWorkspace   = "kodyls.reviewWorkspace"
	CommandDismissSuggestion = "kodyls.dismissSuggestion"
)

// reviewState is the LLM review of one open buffer.
type reviewState struct {
	cancel   context.CancelFunc // the running review, nil when none
	seq      uint64             // identifies the running review
	findings []filereview.Finding
	version  int32 // the buffer version the findings' spans refer to
	idle     *time.Timer
}

// liveReviewKind marks review diagnostics in Diagnostic.data.
const liveReviewKind = "review"

// reviewData is carried in a review diagnostic's data.
type reviewData struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// ReviewSummary is the result of kodyls.reviewFile.
type ReviewSummary struct {
	URI         uri.URI  `json:"uri"`
	Version     int32    `json:"version"`
	Findings    int      `json:"findings"`
	Hunks       int      `json:"hunks"`
	CachedHunks int      `json:"cachedHunks"`
	Skipped     string   `json:"skipped,omitempty"`
	Degraded    []string `json:"degraded,omitempty"`
	Offline     bool     `json:"offline,omitempty"`
}

// reviewer returns the reviewer of a workspace, built on first use and
// after the rules or the settings change.
func (s *Server) reviewer(e *rulecheck.Engine) *filereview.Reviewer {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if r := s.reviewers[e.Root()]; r != nil {
		return r
	}
	w := filereview.Workspace{Root: e.Root(), Gateway: s.gatewayLocked(), Rules: e.Rules(), Log: s.log}
	if s.opts.Store != nil {
		w.Cache = s.opts.Store.KV()
	}
	r, problems := filereview.ForWorkspace(w)
	for _, p := range problems {
		s.log.Warn("review configuration problem", "workspace", e.Root(), "problem", p)
	}
	s.reviewers[e.Root()] = r
	return r
}

// gatewayLocked returns the LLM gateway for the current settings, nil when
// none is configured. s.rmu is held.
func (s *Server) gatewayLocked() *llm.Gateway {
	cfg := s.settings()
	if !cfg.LLMConfigured() || s.opts.NewGateway == nil {
		return nil
	}
	if s.gateway != nil && sameLLM(s.gatewayCfg, cfg.LLM) {
		return s.gateway
	}
	if s.gateway != nil {
		s.gateway.Close()
	}
	g, err := s.opts.NewGateway(cfg, s.llmStatusChanged)
	if err != nil {
		s.log.Warn("LLM not available; the review is off", "error", err)
		s.gateway = nil
		return nil
	}
	s.gateway, s.gatewayCfg = g, cfg.LLM
	return g
}

func sameLLM(a, b contract.LLM) bool {
	return a.BaseURL == b.BaseURL && a.APIKey == b.APIKey && a.Model == b.Model &&
		a.TimeoutMS == b.TimeoutMS && a.MaxConcurrent == b.MaxConcurrent && sameMap(a.Models, b.Models)
}

// resetReviewers drops the built reviewers (rules or settings changed).
func (s *Server) resetReviewers() {
	s.rmu.Lock()
	clear(s.reviewers)
	s.rmu.Unlock()
}

// llmStatusChanged tells the user once when the endpoint goes down or
// comes back, not on every call.
func (s *Server) llmStatusChanged(st llm.Status) {
	typ := protocol.MessageTypeInfo
	if st.State == llm.StateDown {
		typ = protocol.MessageTypeWarning
	}
	if st.State == llm.StateProbing {
		return
	}
	msg := st.Message
	if msg == "" {
		msg = "LLM endpoint is " + st.State
	}
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: "kodyls: " + msg}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// onEdited runs on the read loop after an edit: a running review of an
// older version is cancelled, and the findings follow the text or are
// dropped when their code was edited.
func (s *Server) onEdited(od *openDoc, old, cur *textdoc.Document, changes []textdoc.Change) {
	od.mu.Lock()
	defer od.mu.Unlock()
	if od.rv.cancel != nil {
		od.rv.cancel()
		od.rv.cancel = nil
	}
	if len(od.rv.findings) > 0 {
		edits, ok := byteEdits(old, changes, s.encoding)
		kept := od.rv.findings[:0]
		if ok {
			for _, f := range od.rv.findings {
				if span, ok := anchor.Track(f.Span, edits); ok {
					f.Span = span
					kept = append(kept, f)
				}
			}
		}
		od.rv.findings = kept
	}
	od.rv.version = cur.Version()
	if s.settings().Review.Trigger == contract.TriggerIdle {
		s.armIdleLocked(od)
	}
}

// byteEdits converts LSP changes into byte edits, each in the offsets of
// the text the previous ones produced. A whole-document replacement
// replaces everything.
func byteEdits(old *textdoc.Document, changes []textdoc.Change, enc textdoc.Encoding) ([]anchor.Edit, bool) {
	out := make([]anchor.Edit, 0, len(changes))
	cur := old
	for i, c := range changes {
		if c.Range == nil {
			out = append(out, anchor.Edit{Start: 0, End: len(cur.Text()), NewLen: len(c.Text)})
		} else {
			a, err1 := cur.Offset(c.Range.Start, enc)
			b, err2 := cur.Offset(c.Range.End, enc)
			if err1 != nil || err2 != nil {
				return nil, false
			}
			out = append(out, anchor.Edit{Start: a, End: b, NewLen: len(c.Text)})
		}
		if i < len(changes)-1 {
			next, err := cur.Apply(cur.Version()+1, []textdoc.Change{c}, enc)
			if err != nil {
				return nil, false
			}
			cur = next
		}
	}
	return out, true
}

// armIdleLocked (re)starts the idle timer of a buffer. od.mu is held.
func (s *Server) armIdleLocked(od *openDoc) {
	delay := time.Duration(s.settings().Review.IdleDelayMS) * time.Millisecond
	if od.rv.idle != nil {
		od.rv.idle.Stop()
	}
	od.rv.idle = time.AfterFunc(delay, func() {
		if s.ctx.Err() != nil {
			return
		}
		s.goBackground(func(ctx context.Context) { _, _ = s.reviewDoc(ctx, od, nil) })
	})
}

// reviewOnSave starts a review when the trigger is "save".
func (s *Server) reviewOnSave(od *openDoc) {
	cfg := s.settings()
	if cfg.Review.Trigger != contract.TriggerSave || !cfg.LLMConfigured() || od.engine == nil || od.isRule {
		return
	}
	s.goBackground(func(ctx context.Context) { _, _ = s.reviewDoc(ctx, od, nil) })
}

var errStale = errors.New("the buffer changed during the review; its result was discarded")

// reviewDoc reviews the current snapshot of a buffer and publishes the
// findings. A newer edit cancels it (see onEdited).
func (s *Server) reviewDoc(ctx context.Context, od *openDoc, token protocol.ProgressToken) (*ReviewSummary, error) {
	key := string(od.uri)
	doc, ok := s.docs.Get(key)
	if !ok {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "the document is not open")
	}
	if od.engine == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "the document is outside every workspace folder")
	}
	rel, _ := od.engine.Rel(od.path)
	base, ok := od.engine.Baseline(od.path)
	if !ok {
		var err error
		if base, err = od.engine.RefreshBaseline(ctx, od.path, s.settings().BaseRef); err != nil {
			return nil, fmt.Errorf("baseline of %s: %w", rel, err)
		}
	}
	baseText := base.Text
	if base.Kind == changes.Untracked {
		baseText = ""
	}

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	od.mu.Lock()
	if od.rv.cancel != nil {
		od.rv.cancel() // an older review of this buffer
	}
	od.rv.seq++
	seq := od.rv.seq
	od.rv.cancel = cancel
	od.mu.Unlock()
	defer func() {
		od.mu.Lock()
		if od.rv.seq == seq {
			od.rv.cancel = nil
		}
		od.mu.Unlock()
	}()

	reviewer := s.reviewer(od.engine)
	prog := s.beginProgress(rctx, token, "Kody review: "+rel)
	res, err := reviewer.Review(rctx, filereview.Input{Path: rel, Language: od.language, Base: baseText, Current: doc.Text()})
	sum := &ReviewSummary{URI: od.uri, Version: doc.Version(), Hunks: res.Hunks, CachedHunks: res.CachedHunks, Skipped: string(res.Skipped), Degraded: res.Degraded}
	switch {
	case errors.Is(err, filereview.ErrOffline):
		sum.Offline = true
	case err != nil:
		prog.End("cancelled")
		if rctx.Err() != nil {
			if cur, ok := s.docs.Get(key); ok && cur.Version() != doc.Version() {
				return nil, errStale
			}
			return nil, rctx.Err()
		}
		return nil, err
	}
	findings := s.withoutDismissed(ctx, od.engine.Root(), rel, res.Findings)
	sum.Findings = len(findings)
	prog.End(fmt.Sprintf("%d findings (%d of %d hunks from cache)", len(findings), res.CachedHunks, res.Hunks))

	od.mu.Lock()
	cur, _ := s.docs.Get(key)
	if cur == nil || cur.Version() != doc.Version() || od.rv.seq != seq {
		od.mu.Unlock()
		return sum, errStale
	}
	od.rv.findings, od.rv.version = findings, doc.Version()
	od.mu.Unlock()
	s.checks.Trigger(key)
	return sum, nil
}

// withoutDismissed drops the findings the user dismissed.
func (s *Server) withoutDismissed(ctx context.Context, root, rel string, fs []filereview.Finding) []filereview.Finding {
	ids, labels := s.dismissed(ctx, root, rel)
	out := make([]filereview.Finding, 0, len(fs))
	for _, f := range fs {
		if !ids[f.ID] && !labels[f.Label] {
			out = append(out, f)
		}
	}
	return out
}

func (s *Server) dismissed(ctx context.Context, root, rel string) (ids, labels map[string]bool) {
	if s.opts.Store == nil {
		s.rmu.Lock()
		defer s.rmu.Unlock()
		return clone(s.memDismissed[root+"\x00"+rel+"\x00"+index.DismissFinding]), clone(s.memDismissed[root+"\x00"+rel+"\x00"+index.DismissLabel])
	}
	ids, labels, err := s.opts.Store.Dismissed(ctx, root, rel)
	if err != nil {
		s.log.Warn("cannot read dismissed findings", "error", err)
	}
	return ids, labels
}

func clone(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// reviewDiagnostics renders a buffer's findings for the current version.
func (s *Server) reviewDiagnostics(od *openDoc, doc *textdoc.Document, sev map[string]string) ([]protocol.Diagnostic, bool) {
	od.mu.Lock()
	defer od.mu.Unlock()
	if od.rv.version != doc.Version() && len(od.rv.findings) > 0 {
		return nil, false
	}
	out := make([]protocol.Diagnostic, 0, len(od.rv.findings))
	for _, f := range od.rv.findings {
		data, _ := json.Marshal(reviewData{ID: f.ID, Kind: liveReviewKind})
		level := f.Severity
		if level == "" {
			level = "medium"
		}
		msg := f.OneSentenceSummary
		if f.SuggestionContent != "" && f.SuggestionContent != msg {
			msg += "\n\n" + f.SuggestionContent
		}
		d := protocol.Diagnostic{
			Range:    s.spanRange(doc, f.Span),
			Severity: severity(sev, level),
			Code:     protocol.String(f.Label),
			Source:   protocol.NewOptional(diagnosticSource),
			Message:  protocol.String(msg),
			Data:     data,
		}
		if f.DuplicateOf != "" {
			d.Message = protocol.String(msg + "\n\n(The same suggestion is reported elsewhere; see its related locations.)")
		}
		for _, dup := range f.Duplicates {
			d.RelatedInformation = append(d.RelatedInformation, protocol.DiagnosticRelatedInformation{
				Location: protocol.Location{
					URI:   fileURI(filepath.Join(od.engine.Root(), filepath.FromSlash(dup.File))),
					Range: protocol.Range{Start: protocol.Position{Line: uint32(max(dup.LinesStart-1, 0))}, End: protocol.Position{Line: uint32(max(dup.LinesEnd, dup.LinesStart))}},
				},
				Message: "the same suggestion applies here",
			})
		}
		out = append(out, d)
	}
	return out, true
}

func (s *Server) spanRange(doc *textdoc.Document, sp anchor.Span) protocol.Range {
	return protocol.Range{Start: toProtocol(doc.PositionAt(sp.Start, s.encoding)), End: toProtocol(doc.PositionAt(sp.End, s.encoding))}
}

// findFinding returns a finding of an open buffer by id.
func (s *Server) findFinding(u uri.URI, id string) (*openDoc, filereview.Finding, bool) {
	od := s.openDoc(string(u))
	if od == nil {
		return nil, filereview.Finding{}, false
	}
	od.mu.Lock()
	defer od.mu.Unlock()
	for _, f := range od.rv.findings {
		if f.ID == id {
			return od, f, true
		}
	}
	return od, filereview.Finding{}, false
}

// fixEdit is the quick fix of a finding against the current text.
func (s *Server) fixEdit(od *openDoc, f filereview.Finding) (*protocol.WorkspaceEdit, bool) {
	doc, ok := s.docs.Get(string(od.uri))
	if !ok {
		return nil, false
	}
	od.mu.Lock()
	current := od.rv.version == doc.Version()
	od.mu.Unlock()
	if !current {
		return nil, false
	}
	text := doc.Text()
	newText := anchor.Replacement(text, f.Span, f.ImprovedCode)
	return &protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{
		od.uri: {{Range: s.spanRange(doc, f.Span), NewText: newText}},
	}}, true
}

// dismissArgs is the argument of kodyls.dismissSuggestion.
type dismissArgs struct {
	ID    string  `json:"id"`
	URI   uri.URI `json:"uri"`
	Scope string  `json:"scope,omitempty"` // "" (this finding) or "file" (all with its label in the file)
}

func (s *Server) dismissSuggestion(ctx context.Context, arg []byte) (any, error) {
	var a dismissArgs
	if err := json.Unmarshal(arg, &a); err != nil || a.ID == "" || a.URI == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.dismissSuggestion expects {"id": "...", "uri": "...", "scope": "" | "file"}`)
	}
	od, f, ok := s.findFinding(a.URI, a.ID)
	if !ok || od.engine == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("no current Kody suggestion %q in %s", a.ID, a.URI))
	}
	rel, _ := od.engine.Rel(od.path)
	d := index.Dismissal{Workspace: od.engine.Root(), File: rel, Kind: index.DismissFinding, Key: f.ID}
	if a.Scope == "file" {
		d.Kind, d.Key = index.DismissLabel, f.Label
	}
	if s.opts.Store != nil {
		if err := s.opts.Store.Dismiss(ctx, d); err != nil {
			return nil, fmt.Errorf("remember the dismissal: %w", err)
		}
	} else {
		s.rmu.Lock()
		k := d.Workspace + "\x00" + d.File + "\x00" + d.Kind
		if s.memDismissed[k] == nil {
			s.memDismissed[k] = map[string]bool{}
		}
		s.memDismissed[k][d.Key] = true
		s.rmu.Unlock()
	}
	od.mu.Lock()
	kept := od.rv.findings[:0]
	removed := 0
	for _, g := range od.rv.findings {
		if g.ID == f.ID || (a.Scope == "file" && g.Label == f.Label) {
			removed++
			continue
		}
		kept = append(kept, g)
	}
	od.rv.findings = kept
	od.mu.Unlock()
	s.checks.Trigger(string(od.uri))
	return map[string]int{"dismissed": removed}, nil
}

// reviewCodeActions offers the fix and the dismissals of review findings.
func (s *Server) reviewCodeActions(u uri.URI, d protocol.Diagnostic, data reviewData) []protocol.CodeAction {
	od, f, ok := s.findFinding(u, data.ID)
	if !ok {
		return nil
	}
	quick := protocol.CodeActionKindQuickFix
	preferred := true
	summary := f.OneSentenceSummary
	if summary == "" {
		summary = f.Label
	}
	var actions []protocol.CodeAction
	if strings.TrimSpace(f.ImprovedCode) != "" {
		fix := protocol.CodeAction{Title: "Apply Kody fix: " + summary, Kind: &quick, IsPreferred: &preferred, Diagnostics: []protocol.Diagnostic{d}}
		if s.clientCap.resolveEdit {
			raw, _ := json.Marshal(resolveData{URI: u, ID: f.ID})
			fix.Data = raw
		} else if edit, ok := s.fixEdit(od, f); ok {
			fix.Edit = edit
		}
		actions = append(actions, fix)
	}
	one, _ := json.Marshal(dismissArgs{ID: f.ID, URI: u})
	all, _ := json.Marshal(dismissArgs{ID: f.ID, URI: u, Scope: "file"})
	actions = append(actions,
		protocol.CodeAction{Title: "Dismiss this Kody suggestion", Kind: &quick, Diagnostics: []protocol.Diagnostic{d},
			Command: protocol.Command{Title: "Dismiss", Command: CommandDismissSuggestion, Arguments: []protocol.LSPAny{one}}},
		protocol.CodeAction{Title: fmt.Sprintf("Dismiss all %q Kody suggestions in this file", f.Label), Kind: &quick, Diagnostics: []protocol.Diagnostic{d},
			Command: protocol.Command{Title: "Dismiss all like this", Command: CommandDismissSuggestion, Arguments: []protocol.LSPAny{all}}},
	)
	return actions
}

// resolveData is what codeAction/resolve needs to compute a fix.
type resolveData struct {
	URI uri.URI `json:"uri"`
	ID  string  `json:"id"`
}

func (s *Server) resolveCodeAction(a *protocol.CodeAction) (*protocol.CodeAction, error) {
	var data resolveData
	if len(a.Data) == 0 || json.Unmarshal(a.Data, &data) != nil || data.ID == "" {
		return a, nil
	}
	od, f, ok := s.findFinding(data.URI, data.ID)
	if !ok {
		return nil, protocol.ErrContentModified
	}
	edit, ok := s.fixEdit(od, f)
	if !ok {
		return nil, protocol.ErrContentModified
	}
	a.Edit = edit
	return a, nil
}

// reviewWorkspace reviews every open buffer of the workspace folders.
func (s *Server) reviewWorkspace(ctx context.Context, token protocol.ProgressToken) ([]*ReviewSummary, error) {
	var docs []*openDoc
	for _, od := range s.openDocs() {
		if od.engine != nil && !od.isRule {
			docs = append(docs, od)
		}
	}
	// A stable order: clustering makes the first file's finding the
	// primary, which must not change from one run to the next.
	sort.Slice(docs, func(i, j int) bool { return docs[i].uri < docs[j].uri })
	prog := s.beginProgress(ctx, token, "Kody review: workspace")
	out := []*ReviewSummary{}
	for i, od := range docs {
		if ctx.Err() != nil {
			break
		}
		rel, _ := od.engine.Rel(od.path)
		prog.Report(rel, uint32(100*i/max(1, len(docs))))
		sum, err := s.reviewDoc(ctx, od, nil)
		if err != nil {
			s.log.Info("review skipped", "file", rel, "error", err)
			continue
		}
		out = append(out, sum)
	}
	s.clusterOpenFindings(ctx, docs)
	prog.End(fmt.Sprintf("%d files reviewed", len(out)))
	return out, ctx.Err()
}

// clusterOpenFindings links the findings that repeat across the reviewed
// buffers of each workspace: the primary lists the others as related
// information; each duplicate points back at the primary.
func (s *Server) clusterOpenFindings(ctx context.Context, docs []*openDoc) {
	byRoot := map[string][]*openDoc{}
	for _, od := range docs {
		byRoot[od.engine.Root()] = append(byRoot[od.engine.Root()], od)
	}
	for _, group := range byRoot {
		if len(group) < 2 || ctx.Err() != nil {
			continue
		}
		results := make([]filereview.Result, len(group))
		for i, od := range group {
			rel, _ := od.engine.Rel(od.path)
			od.mu.Lock()
			results[i] = filereview.Result{Path: rel, Findings: append([]filereview.Finding(nil), od.rv.findings...)}
			od.mu.Unlock()
		}
		results = s.reviewer(group[0].engine).Cluster(ctx, results)
		for i, od := range group {
			linked := map[string]filereview.Finding{}
			for _, f := range results[i].Findings {
				linked[f.ID] = f
			}
			od.mu.Lock()
			for j, f := range od.rv.findings {
				if l, ok := linked[f.ID]; ok {
					od.rv.findings[j].Duplicates, od.rv.findings[j].DuplicateOf = l.Duplicates, l.DuplicateOf
				}
			}
			od.mu.Unlock()
			s.checks.Trigger(string(od.uri))
		}
	}
}

// uriArg accepts a command argument given as {"uri": "..."} or "...".
func uriArg(arg []byte) (uri.URI, bool) {
	var obj struct {
		URI uri.URI `json:"uri"`
	}
	if json.Unmarshal(arg, &obj) == nil && obj.URI != "" {
		return obj.URI, true
	}
	var str string
	if json.Unmarshal(arg, &str) == nil && str != "" {
		return uri.URI(str), true
	}
	return "", false
}
