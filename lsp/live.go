package lsp

import (
	"context"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// A liveSource is a feature whose diagnostics on an open buffer follow its
// text: the local rule detectors, and the review's findings moving with the
// edits. After every edit the diagnose job asks each one for its
// diagnostics at the new version and publishes them together, so the set an
// editor shows for a version never mixes lines of two versions. The job
// knows no feature; each source owns its state.
type liveSource interface {
	// name is the diagnostic source the publisher files them under.
	name() string
	// diagnostics are the source's diagnostics for snap's version.
	diagnostics(snap *workspace.Snapshot, doc *textdoc.Document) []protocol.Diagnostic
	// shown is called once the set for snap's version went out.
	shown(ctx context.Context, snap *workspace.Snapshot)
}

// diagnose is the scheduler's job for one document: it takes a snapshot of
// the current version and publishes every live source's diagnostics for it.
// It runs off the read loop; the typing path only triggers it.
func (s *Server) diagnose(ctx context.Context, key string) {
	snap, doc := s.snapshot(key)
	if snap != nil && snap.Folder == nil && snap.Path != "" {
		// Outside every workspace folder, or its folder left the
		// workspace: nothing of the rules or the review is shown. Done
		// here too, after any run still going when the folder left.
		s.reviews.Forget(key)
		had := s.rules.forget(key)
		s.diags.SetSources(ctx, uri.URI(key), snap.Version, map[string][]protocol.Diagnostic{SourceRules: nil, SourceReview: nil, SourceRuleFile: nil})
		if had {
			s.notifyViolationsChanged(ctx, uri.URI(key))
		}
		return
	}
	if snap == nil || !snap.Checked() {
		return // the baseline loader triggers a run when it is ready
	}
	sources := make(map[string][]protocol.Diagnostic, len(s.live))
	for _, l := range s.live {
		sources[l.name()] = l.diagnostics(snap, doc)
	}
	if !s.diags.SetSources(ctx, uri.URI(key), snap.Version, sources) {
		return // a newer edit arrived; its run publishes
	}
	for _, l := range s.live {
		l.shown(ctx, snap)
	}
}

// ruleChecks is the live source of the local rule detectors.
type ruleChecks struct{ s *Server }

func (ruleChecks) name() string { return SourceRules }

func (r ruleChecks) diagnostics(snap *workspace.Snapshot, doc *textdoc.Document) []protocol.Diagnostic {
	found := snap.CheckRules()
	out := make([]protocol.Diagnostic, 0, len(found))
	var cols *textdoc.Columns
	line := -1
	for _, v := range found {
		if v.Line != line || cols == nil {
			line, cols = v.Line, doc.Columns(v.Line, r.s.encoding)
		}
		out = append(out, r.s.violationDiagnostic(cols, doc, v, snap.Settings.Severity))
	}
	// The panel's data is recorded before the diagnostics go out, so an
	// editor that asks for it on seeing them gets the same findings.
	r.s.rules.set(snap.URI, doc, found)
	return out
}

func (r ruleChecks) shown(ctx context.Context, snap *workspace.Snapshot) {
	if r.s.rules.takeChange(snap.URI) {
		r.s.notifyViolationsChanged(ctx, uri.URI(snap.URI))
	}
}

// liveReview is the live source of the review: its findings follow the
// edits (a finding whose code was edited leaves until the next review),
// and with the idle trigger the buffer's idle timer restarts.
type liveReview struct{ s *Server }

func (liveReview) name() string { return SourceReview }

func (r liveReview) diagnostics(snap *workspace.Snapshot, doc *textdoc.Document) []protocol.Diagnostic {
	r.s.reviews.Follow(snap.URI, snap.Version)
	return r.s.reviewDiagnostics(snap, doc)
}

func (r liveReview) shown(ctx context.Context, snap *workspace.Snapshot) {
	// The model's rule violations moved with the edits, or left.
	r.s.tellModelViolations(ctx, snap.URI)
	r.s.armIdleReview(snap.URI, snap.Version)
}
