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

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// The review's protocol glue: triggers, commands, diagnostics and code
// actions. The findings and their tracking through edits live in
// workspace.Reviews; the review itself in workspace.Folder.

// armIdleReview (re)starts the idle timer of a buffer the user edited, when
// the review trigger is "idle". Called from the diagnose pass, off the read
// loop; the armed timer counts as pending work for the document.
func (s *Server) armIdleReview(key string, version int32) {
	cfg := s.settings()
	od := s.openDoc(key)
	if cfg.Review.Trigger != contract.TriggerIdle || od == nil || version == od.openVersion {
		return
	}
	od.mu.Lock()
	defer od.mu.Unlock()
	if od.idleVersion == version {
		return // already armed for this version
	}
	if od.idle != nil {
		od.idle.Stop()
	}
	if od.idleDone == nil {
		od.idleDone = s.work.add(key)
	}
	done := od.idleDone
	od.idleVersion = version
	od.idle = time.AfterFunc(time.Duration(cfg.Review.IdleDelayMS)*time.Millisecond, func() {
		od.mu.Lock()
		if od.idleDone != nil {
			od.idleDone = nil
		}
		od.mu.Unlock()
		if s.ctx.Err() != nil {
			done()
			return
		}
		s.goBackground(func(ctx context.Context) {
			defer done()
			_, _ = s.reviewDoc(ctx, key, nil)
		})
	})
}

// stopIdle stops a buffer's idle timer and releases its pending work.
func (s *Server) stopIdle(od *openDoc) {
	od.mu.Lock()
	defer od.mu.Unlock()
	if od.idle != nil && od.idle.Stop() && od.idleDone != nil {
		od.idleDone()
	}
	od.idle, od.idleDone = nil, nil
}

// reviewOnSave starts a review when the trigger is "save".
func (s *Server) reviewOnSave(od *openDoc) {
	if s.settings().Review.Trigger != contract.TriggerSave || !s.svc.ModelConfigured() || od.folder == nil || od.isRule {
		return
	}
	key := string(od.uri)
	done := s.work.add(key)
	s.goBackground(func(ctx context.Context) {
		defer done()
		_, _ = s.reviewDoc(ctx, key, nil)
	})
}

// reviewDoc reviews the current snapshot of a buffer and publishes the
// findings, moved to the buffer's version when it is published.
func (s *Server) reviewDoc(ctx context.Context, key string, token protocol.ProgressToken) (*contract.ReviewSummary, error) {
	done := s.work.add(key)
	defer done()
	select {
	case <-s.rulesLoaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	od := s.openDoc(key)
	snap, _ := s.snapshot(key)
	switch {
	case snap == nil:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "the document is not open")
	case snap.Folder == nil:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "the document is outside every workspace folder")
	}
	if err := s.withBaseline(ctx, snap); err != nil {
		return nil, err
	}
	if s.openDoc(key) != od {
		// Closed (and maybe reopened) while git read the baseline.
		return nil, jsonrpc2.NewError(protocol.CodeContentModified, workspace.ErrStale.Error())
	}

	// One progress report per review that talks to the model: not for one
	// that joins a running review of the same version, nor while waiting.
	var prog *progress
	res, err := s.reviews.Run(ctx, snap, func() {
		prog = s.beginProgress(ctx, token, "Kody review: "+snap.Rel)
		s.modelWorkStarted()
	})
	end := func(msg string) {
		if prog != nil {
			prog.End(msg)
		}
	}
	s.reviewDegraded(res.Degraded, err)
	if prog != nil {
		s.modelWorkEnded()
	}
	sum := &contract.ReviewSummary{URI: uri.URI(key), Version: snap.Version, Hunks: res.Hunks, CachedHunks: res.CachedHunks, Skipped: string(res.Skipped), Degraded: res.Degraded}
	switch {
	case errors.Is(err, filereview.ErrOffline):
		sum.Offline = true
	case errors.Is(err, workspace.ErrStale):
		end("superseded: a newer version of the buffer is reviewed")
		return nil, jsonrpc2.NewError(protocol.CodeContentModified, err.Error())
	case err != nil:
		end("cancelled")
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	sum.Findings = len(res.Findings)
	end(fmt.Sprintf("%d findings (%d of %d hunks from cache)", sum.Findings, res.CachedHunks, res.Hunks))
	// A commit during the review moved the baseline: the findings about
	// what it committed leave before they are shown.
	s.dropCommittedFindings(ctx, key, snap.Baseline)
	s.publishReview(ctx, key)
	return sum, nil
}

// publishReview moves a buffer's findings to its current version and
// publishes them: the review publishes its own diagnostics.
func (s *Server) publishReview(ctx context.Context, key string) {
	snap, doc := s.snapshot(key)
	if snap == nil {
		return
	}
	s.reviews.Follow(key, snap.Version)
	if !s.diags.Set(ctx, uri.URI(key), SourceReview, snap.Version, s.reviewDiagnostics(snap, doc)) {
		return
	}
	s.tellModelViolations(ctx, key)
}

// hunkContext is how far from a changed line a review finding may lie and
// still be about the change: the context lines of a hunk.
const hunkContext = 3

// dropCommittedFindings drops, once the baseline moved away from before
// (a commit, a checkout), the review findings of a buffer that were about
// the change and no longer are: near a changed line then, near none now.
// The change they were about is in the baseline. A finding that was near
// no change (a remark about the whole file) is left alone, and nothing
// is dropped when the baseline did not move (git status rewrites the
// index without changing it).
func (s *Server) dropCommittedFindings(ctx context.Context, key string, before changes.Baseline) {
	snap, doc := s.snapshot(key)
	if snap == nil || !snap.Checked() || sameBaseline(before, snap.Baseline) {
		return
	}
	s.reviews.Follow(key, snap.Version)
	if _, v := s.reviews.Findings(key); v != snap.Version {
		return
	}
	was := changes.AllLines()
	if before.Kind != changes.Untracked {
		was = changes.Changed(before.Text, snap.Text)
	}
	now := snap.ChangedLines()
	near := func(set changes.LineSet, from, to int) bool {
		for l := from - hunkContext; l <= to+hunkContext; l++ {
			if set.Has(l) {
				return true
			}
		}
		return false
	}
	n := s.reviews.Remove(key, func(f filereview.Finding) bool {
		from := int(doc.PositionAt(f.Span.Start, s.encoding).Line)
		to := int(doc.PositionAt(f.Span.End, s.encoding).Line)
		return near(was, from, to) && !near(now, from, to)
	})
	if n > 0 {
		s.publishReview(ctx, key)
	}
}

// tellModelViolations tells the editor when the Kody Rule violations the
// model found in a buffer, which the violations panel lists too, were
// found, moved or dropped since it was last told.
func (s *Server) tellModelViolations(ctx context.Context, key string) {
	findings, _ := s.reviews.Findings(key)
	var where []string
	for _, f := range findings {
		if f.RuleID != "" {
			where = append(where, fmt.Sprintf("%s@%d-%d", f.ID, f.Span.Start, f.Span.End))
		}
	}
	if s.rules.modelChanged(key, where) {
		s.notifyViolationsChanged(ctx, uri.URI(key))
	}
}

// reviewDiagnostics renders a buffer's findings; nil when they are not for
// the snapshot's version.
func (s *Server) reviewDiagnostics(snap *workspace.Snapshot, doc *textdoc.Document) []protocol.Diagnostic {
	findings, version := s.reviews.Findings(snap.URI)
	if version != snap.Version {
		return nil
	}
	out := make([]protocol.Diagnostic, 0, len(findings))
	for _, f := range findings {
		data, _ := json.Marshal(contract.DiagnosticData{ID: f.ID, Kind: contract.DiagnosticKindReview, Rule: f.RuleID})
		level := f.Severity
		if level == "" {
			level = "medium"
		}
		msg := f.OneSentenceSummary
		if f.SuggestionContent != "" && f.SuggestionContent != msg {
			msg += "\n\n" + f.SuggestionContent
		}
		code := f.Label
		if f.RuleID != "" {
			code = f.RuleID // a Kody Rule violation: the rule's id, as for detectors
		}
		d := protocol.Diagnostic{
			Range:    s.spanRange(doc, f.Span),
			Severity: severity(snap.Settings.Severity, level),
			Code:     protocol.String(code),
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
					URI:   s.clientURI(filepath.Join(snap.Folder.Root, filepath.FromSlash(dup.File))),
					Range: protocol.Range{Start: protocol.Position{Line: uint32(max(dup.LinesStart-1, 0))}, End: protocol.Position{Line: uint32(max(dup.LinesEnd, dup.LinesStart))}},
				},
				Message: "the same suggestion applies here",
			})
		}
		out = append(out, d)
	}
	return out
}

func (s *Server) spanRange(doc *textdoc.Document, sp anchor.Span) protocol.Range {
	return protocol.Range{Start: toProtocol(doc.PositionAt(sp.Start, s.encoding)), End: toProtocol(doc.PositionAt(sp.End, s.encoding))}
}

// fixEdit is the quick fix of a finding against the current text; false
// when the finding is not in the current text (its code was edited, or it
// is gone). The findings are moved to the current version first: the user
// may ask right after a keystroke, before the diagnose job moved them.
func (s *Server) fixEdit(u uri.URI, id string) (*protocol.WorkspaceEdit, bool) {
	key := string(u)
	doc, ok := s.docs.Get(key)
	if !ok {
		return nil, false
	}
	s.reviews.Follow(key, doc.Version())
	f, version, ok := s.reviews.Find(key, id)
	if ok && version != doc.Version() {
		// An edit arrived meanwhile and the findings followed it.
		doc, ok = s.docs.Get(key)
	}
	if !ok || version != doc.Version() {
		return nil, false
	}
	newText := anchor.Replacement(doc.Text(), f.Span, f.ImprovedCode)
	return &protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{
		u: {{Range: s.spanRange(doc, f.Span), NewText: newText}},
	}}, true
}

func (s *Server) dismissSuggestion(ctx context.Context, arg []byte) (any, error) {
	var a contract.DismissArgs
	if err := json.Unmarshal(arg, &a); err != nil || a.ID == "" || a.URI == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, `kodyls.dismissSuggestion expects {"id": "...", "uri": "...", "scope": "" | "file"}`)
	}
	od := s.openDoc(string(a.URI))
	f, _, ok := s.reviews.Find(string(a.URI), a.ID)
	path := ""
	if od != nil {
		path = od.path
	} else if a.URI.IsFile() {
		path = canonicalPath(a.URI.FsPath())
	}
	if !ok && path != "" {
		if v, found := s.changeSet.find(path, a.ID); found {
			return s.dismissChangeSet(ctx, a, path, v)
		}
	}
	if !ok || od == nil || od.folder == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("no current Kody suggestion %q in %s", prefix([]byte(a.ID), 80), prefix([]byte(a.URI), 200)))
	}
	rel, _ := od.folder.Rel(od.path)
	d := index.Dismissal{Workspace: od.folder.Root, File: rel, Kind: index.DismissFinding, Key: f.ID}
	if a.Scope == contract.DismissScopeFile {
		d.Kind, d.Key = index.DismissLabel, f.DismissGroup()
	}
	if err := s.svc.Dismiss(ctx, d); err != nil {
		return nil, err
	}
	drop := func(g filereview.Finding) bool {
		return g.ID == f.ID || (a.Scope == contract.DismissScopeFile && g.DismissGroup() == f.DismissGroup())
	}
	removed := s.reviews.Remove(string(a.URI), drop)
	// A pull-request violation also leaves the panel's store, so that it
	// does not come back when the buffer closes.
	if od.path != "" && s.changeSet.remove(od.path, drop) > 0 {
		s.notifyViolationsChanged(ctx, a.URI)
	}
	s.publishReview(ctx, string(a.URI))
	return &contract.DismissResult{Dismissed: removed}, nil
}

// dismissChangeSet dismisses a pull-request rule violation the panel
// lists and no buffer carries (the file at path is not open, or was
// opened after the check).
func (s *Server) dismissChangeSet(ctx context.Context, a contract.DismissArgs, path string, v changeSetViolation) (any, error) {
	d := index.Dismissal{Workspace: v.root, File: v.rel, Kind: index.DismissFinding, Key: v.finding.ID}
	if a.Scope == contract.DismissScopeFile {
		d.Kind, d.Key = index.DismissLabel, v.finding.DismissGroup()
	}
	if err := s.svc.Dismiss(ctx, d); err != nil {
		return nil, err
	}
	removed := s.changeSet.remove(path, func(g filereview.Finding) bool {
		return g.ID == v.finding.ID || (a.Scope == contract.DismissScopeFile && g.DismissGroup() == v.finding.DismissGroup())
	})
	s.notifyViolationsChanged(ctx, a.URI)
	return &contract.DismissResult{Dismissed: removed}, nil
}

// reviewCodeActions offers the fix and the dismissals of review findings.
// The findings are moved to the current version first, as the diagnose
// job will: a finding whose code was edited has none.
func (s *Server) reviewCodeActions(u uri.URI, d protocol.Diagnostic, data contract.DiagnosticData) []protocol.CodeAction {
	if doc, ok := s.docs.Get(string(u)); ok {
		s.reviews.Follow(string(u), doc.Version())
	}
	f, _, ok := s.reviews.Find(string(u), data.ID)
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
		// Offered only when it applies to the current text: an action
		// without an edit would do nothing when chosen.
		if edit, ok := s.fixEdit(u, f.ID); ok {
			fix := protocol.CodeAction{Title: "Apply Kody fix: " + summary, Kind: &quick, IsPreferred: &preferred, Diagnostics: []protocol.Diagnostic{d}}
			if s.clientCap.resolveEdit {
				raw, _ := json.Marshal(resolveData{URI: u, ID: f.ID})
				fix.Data = raw
			} else {
				fix.Edit = edit
			}
			actions = append(actions, fix)
		}
	}
	one, _ := json.Marshal(contract.DismissArgs{ID: f.ID, URI: u})
	all, _ := json.Marshal(contract.DismissArgs{ID: f.ID, URI: u, Scope: contract.DismissScopeFile})
	allTitle := fmt.Sprintf("Dismiss all %q Kody suggestions in this file", f.Label)
	if r, _ := s.findRule(f.RuleID, s.pathOf(u)); f.RuleID != "" && r != nil {
		allTitle = fmt.Sprintf("Dismiss all violations of Kody Rule %q in this file", r.Title)
	}
	actions = append(actions,
		protocol.CodeAction{Title: "Dismiss this Kody suggestion", Kind: &quick, Diagnostics: []protocol.Diagnostic{d},
			Command: protocol.Command{Title: "Dismiss", Command: contract.CommandDismissSuggestion, Arguments: []protocol.LSPAny{one}}},
		protocol.CodeAction{Title: allTitle, Kind: &quick, Diagnostics: []protocol.Diagnostic{d},
			Command: protocol.Command{Title: "Dismiss all like this", Command: contract.CommandDismissSuggestion, Arguments: []protocol.LSPAny{all}}},
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
	edit, ok := s.fixEdit(data.URI, data.ID)
	if !ok {
		return nil, protocol.ErrContentModified
	}
	a.Edit = edit
	return a, nil
}

// reviewWorkspace reviews every open buffer of the workspace folders, then
// judges the pull-request rules over each folder's whole change set.
func (s *Server) reviewWorkspace(ctx context.Context, token protocol.ProgressToken) ([]*contract.ReviewSummary, error) {
	var docs []*openDoc
	for _, od := range s.openDocs() {
		if od.folder != nil && !od.isRule {
			docs = append(docs, od)
		}
	}
	// A stable order: of equally severe findings, clustering makes the
	// first file's the primary, which must not change from one run to
	// the next.
	sort.Slice(docs, func(i, j int) bool { return docs[i].uri < docs[j].uri })
	prog := s.beginProgress(ctx, token, "Kody review: workspace")
	out := []*contract.ReviewSummary{}
	for i, od := range docs {
		if ctx.Err() != nil {
			break
		}
		rel, _ := od.folder.Rel(od.path)
		prog.Report(rel, uint32(100*i/max(1, len(docs))))
		sum, err := s.reviewDoc(ctx, string(od.uri), nil)
		if err != nil {
			s.log.Info("review skipped", "file", rel, "error", err)
			continue
		}
		out = append(out, sum)
	}
	s.checkChangeSetRules(ctx, docs)
	for u, n := range s.capChange(ctx, docs) {
		for _, sum := range out {
			if string(sum.URI) == u {
				sum.Findings = max(0, sum.Findings-n)
			}
		}
	}
	s.clusterOpenFindings(ctx, docs)
	prog.End(fmt.Sprintf("%d files reviewed", len(out)))
	return out, ctx.Err()
}

// clusterOpenFindings links the findings that repeat across the reviewed
// buffers of each workspace: the primary lists the others as related
// information; each duplicate points back at the primary.
func (s *Server) clusterOpenFindings(ctx context.Context, docs []*openDoc) {
	byRoot := map[*workspace.Folder][]*openDoc{}
	for _, od := range docs {
		byRoot[od.folder] = append(byRoot[od.folder], od)
	}
	for folder, group := range byRoot {
		if len(group) < 2 || ctx.Err() != nil {
			continue
		}
		results := make([]filereview.Result, len(group))
		for i, od := range group {
			rel, _ := folder.Rel(od.path)
			findings, _ := s.reviews.Findings(string(od.uri))
			results[i] = filereview.Result{Path: rel, Findings: findings}
		}
		results = folder.Cluster(ctx, results)
		for i, od := range group {
			linked := map[string]filereview.Finding{}
			for _, f := range results[i].Findings {
				linked[f.ID] = f
			}
			s.reviews.Link(string(od.uri), linked)
			s.publishReview(ctx, string(od.uri))
		}
	}
}

// uriArg accepts a command argument given as {"uri": "..."} or "...".
func uriArg(arg []byte) (uri.URI, bool) {
	var obj contract.ReviewFileArgs
	if json.Unmarshal(arg, &obj) == nil && obj.URI != "" {
		return obj.URI, true
	}
	// A bare string is decoded as the object's uri is, so that both
	// spellings of an escaped name (%5b, %5B) find the open buffer.
	var u uri.URI
	if json.Unmarshal(arg, &u) == nil && u != "" {
		return u, true
	}
	return "", false
}

// withBaseline reads snap's baseline when the buffer's is not read yet (it
// was opened a moment ago), so that a review asked for at once sees the
// buffer's changes.
func (s *Server) withBaseline(ctx context.Context, snap *workspace.Snapshot) error {
	if snap.BaselineReady {
		return nil
	}
	b, err := s.loadBaseline(ctx, snap.Folder, snap.Path, snap.Settings.BaseRef)
	if err != nil {
		return fmt.Errorf("baseline of %s: %w", snap.Rel, err)
	}
	snap.Baseline, snap.BaselineReady = b, true
	return nil
}
