package lsp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// diagnosticSource is the `source` of every kodyls diagnostic.
const diagnosticSource = "kody"

// ruleState is what the local detectors found in each open document,
// for the violations panel.
type ruleState struct {
	mu   sync.Mutex
	docs map[string]*docViolations
}

type docViolations struct {
	found   []workspace.RuleFinding
	version int32  // the version found was computed for
	hash    string // of found
	told    string // the hash the editor was last told about ("" before)
	// modelTold is, for the violations the model found at the last review,
	// what the editor was last told about.
	modelTold string
	// past are where the fixable violations of the last checked versions
	// were, by id, oldest first: a code action may come with a diagnostic
	// of an older version (the panel's, which is refreshed only when the
	// violations change), whose id another violation may have taken since.
	past []checkedSpans
}

// checkedSpans are the byte spans of the fixable violations found in the
// checked versions from..to, which all found them at the same places
// (typing elsewhere in the file moves none of them).
type checkedSpans struct {
	from, to int32
	sum      string // of spans
	spans    map[string]anchor.Span
}

// maxPast bounds the layouts of fixable violations whose places are kept.
const maxPast = 32

// modelChanged records the rule violations the model found in a document
// (their ids and places) and reports whether they differ from what the
// editor was last told.
func (r *ruleState) modelChanged(key string, where []string) bool {
	sum := strings.Join(where, "\x00")
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docLocked(key)
	changed := d.modelTold != sum
	d.modelTold = sum
	return changed
}

// set records a document's violations, found in doc.
func (r *ruleState) set(key string, doc *textdoc.Document, found []workspace.RuleFinding) {
	h, hs := sha256.New(), sha256.New()
	var spans map[string]anchor.Span
	for _, f := range found {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\n", f.ID, f.Line, f.Start, f.End)
		if !f.HasFix {
			continue // only a fix needs its violation found again
		}
		if spans == nil {
			spans = map[string]anchor.Span{}
		}
		start := doc.LineStart(f.Line)
		sp := anchor.Span{Start: start + f.Start, End: start + f.End}
		spans[f.ID] = sp
		fmt.Fprintf(hs, "%s\x00%d\x00%d\n", f.ID, sp.Start, sp.End)
	}
	sum, spanSum := string(h.Sum(nil)), string(hs.Sum(nil))
	v := doc.Version()
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docLocked(key)
	d.found, d.version, d.hash = found, v, sum
	d.past = addChecked(d.past, v, spanSum, spans)
}

// addChecked records that version v found the fixable violations spans
// (whose hash is sum). A version that finds them where the last checked
// one did extends its range (the versions between were not checked, so no
// diagnostic of theirs was shown); a version checked again (the rules or
// the settings changed) keeps what its last check found.
func addChecked(past []checkedSpans, v int32, sum string, spans map[string]anchor.Span) []checkedSpans {
	if n := len(past); n > 0 {
		last := &past[n-1]
		switch {
		case v >= last.from && last.sum == sum:
			last.to = max(last.to, v)
			return past
		case v == last.to && last.from < v:
			last.to = v - 1 // v found them elsewhere on this check
		case v == last.to:
			past = past[:n-1]
		}
	}
	past = slices.DeleteFunc(past, func(c checkedSpans) bool { return c.from == v && c.to == v })
	past = append(past, checkedSpans{from: v, to: v, sum: sum, spans: spans})
	slices.SortStableFunc(past, func(a, b checkedSpans) int { return cmp.Compare(a.from, b.from) })
	if len(past) > maxPast {
		past = slices.Delete(past, 0, len(past)-maxPast)
	}
	return past
}

// spanAt returns the byte span the violation id had in version of a
// document, when that version's check is still remembered.
func (r *ruleState) spanAt(key string, version int32, id string) (anchor.Span, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.docs[key]; d != nil {
		for i := len(d.past) - 1; i >= 0; i-- {
			if c := d.past[i]; version >= c.from && version <= c.to {
				sp, ok := c.spans[id]
				return sp, ok
			}
		}
	}
	return anchor.Span{}, false
}

// docLocked returns a document's state, created when missing. r.mu is held.
func (r *ruleState) docLocked(key string) *docViolations {
	d := r.docs[key]
	if d == nil {
		d = &docViolations{}
		r.docs[key] = d
	}
	return d
}

// takeChange reports whether a document's violations differ from what the
// editor was last told, and records that it is being told now. It compares
// with the last notification rather than the last run, so a change made by
// a run whose diagnostics were refused as stale is still reported by the
// next run that publishes. A first check that finds nothing changes nothing.
func (r *ruleState) takeChange(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[key]
	if d == nil {
		return false
	}
	changed := d.hash != d.told && (d.told != "" || len(d.found) > 0)
	d.told = d.hash
	return changed
}

// get returns a document's violations and the version they are for.
func (r *ruleState) get(key string) ([]workspace.RuleFinding, int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.docs[key]; d != nil {
		return d.found, d.version
	}
	return nil, 0
}

// forget drops a closed document's violations; it reports whether it had
// any, found by the detectors or by the model.
func (r *ruleState) forget(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[key]
	delete(r.docs, key)
	return d != nil && (len(d.found) > 0 || d.modelTold != "")
}

// violationDiagnostic is the diagnostic of a detector's violation found in
// doc; cols converts the columns of its line (one per line, kept while
// the violations of that line are converted in order).
func (s *Server) violationDiagnostic(cols *textdoc.Columns, doc *textdoc.Document, v workspace.RuleFinding, sev map[string]string) protocol.Diagnostic {
	line := uint32(v.Line)
	start := cols.Char(v.Start)
	rng := protocol.Range{
		Start: protocol.Position{Line: line, Character: start},
		End:   protocol.Position{Line: line, Character: start + cols.Width(v.Start, v.End)},
	}
	msg := v.Rule.Title
	if first := v.Rule.Lead(); first != "" {
		msg += "\n" + first
	}
	data, _ := json.Marshal(contract.DiagnosticData{ID: v.ID, Rule: v.Rule.UUID, Version: doc.Version()})
	return protocol.Diagnostic{
		Range:    rng,
		Severity: severity(sev, string(v.Rule.Severity)),
		Code:     protocol.String(v.Rule.UUID),
		Source:   protocol.NewOptional(diagnosticSource),
		Message:  protocol.String(msg),
		Data:     data,
	}
}

func toProtocol(p textdoc.Position) protocol.Position {
	return protocol.Position{Line: p.Line, Character: p.Character}
}

// severity maps a Kody severity to an LSP one through the configured table.
func severity(table map[string]string, level string) protocol.DiagnosticSeverity {
	switch table[strings.ToLower(level)] {
	case "error":
		return protocol.DiagnosticSeverityError
	case "warning":
		return protocol.DiagnosticSeverityWarning
	case "hint":
		return protocol.DiagnosticSeverityHint
	default:
		return protocol.DiagnosticSeverityInformation
	}
}

// reloadRules re-reads every workspace's rules, reports broken rule files and
// re-checks the open buffers. It reports progress when the client supports it.
func (s *Server) reloadRules(ctx context.Context, token protocol.ProgressToken) (int, []*rules.LoadError) {
	return s.reloadFolders(ctx, token, s.allFolders())
}

// reloadFolders is reloadRules for some of the workspace folders (those
// added to the workspace): their rules are read again, then every open
// buffer is checked again.
func (s *Server) reloadFolders(ctx context.Context, token protocol.ProgressToken, folders []*workspace.Folder) (int, []*rules.LoadError) {
	prog := s.beginProgress(ctx, token, "Loading Kody Rules")
	total := 0
	var allErrs []*rules.LoadError
	for i, f := range folders {
		prog.Report(fmt.Sprintf("%s (%d/%d)", filepath.Base(f.Root), i+1, len(folders)), uint32(100*i/max(1, len(folders))))
		rs, errs := f.Reload(ctx)
		total += len(rs)
		allErrs = append(allErrs, errs...)
		for _, le := range errs {
			if le.File == "." {
				s.log.Warn("Kody Rules not loaded: the workspace folder cannot be read", "workspace", f.Root, "error", le.Msg)
				continue
			}
			s.log.Warn("broken Kody Rule file", "workspace", f.Root, "error", le.Error())
		}
		for _, w := range f.Engine.Warnings() {
			s.log.Info("Kody Rule file", "workspace", f.Root, "warning", w.Error())
		}
		s.log.Info("loaded Kody Rules", "workspace", f.Root, "rules", len(rs), "broken", len(errs))
	}
	prog.End(fmt.Sprintf("%d rules loaded, %d broken", total, len(allErrs)))
	for _, f := range folders {
		s.tellReviewProblems(ctx, f)
		if f.SplitPending() {
			s.splitRules(f)
		}
	}
	for _, od := range s.openDocs() {
		// A rule file's problems, and those of the files rules import
		// or reference, which no source owns.
		if od.folder != nil {
			s.publishRuleFileErrors(ctx, od)
		}
		s.dropGoneRuleFindings(ctx, od)
	}
	s.recheckAll()
	return total, allErrs
}

// tellReviewProblems tells the user the problems of a folder's review
// configuration (a kodus-config.yml that does not parse, an ignorePaths
// pattern kodyls cannot use, a broken prompt override): each once, and
// again if it comes back after it was fixed. A log line alone would leave
// the user believing the file took effect.
func (s *Server) tellReviewProblems(ctx context.Context, f *workspace.Folder) {
	rv, probs := f.Reviewer()
	// A rule file the ignore list keeps unread is no rule at all: said
	// here, not only on the file (which the user may never open).
	for _, w := range f.Engine.Warnings() {
		if w.Skipped {
			probs = append(probs, "Kody Rule file "+w.Error())
		}
	}
	now := make(map[string]bool, len(probs))
	var fresh []string
	s.mu.Lock()
	if s.reviewProbs == nil {
		s.reviewProbs = map[string]map[string]bool{}
	}
	for _, p := range probs {
		if !s.reviewProbs[f.Root][p] && !now[p] {
			fresh = append(fresh, p)
		}
		now[p] = true
	}
	s.reviewProbs[f.Root] = now
	s.mu.Unlock()
	if len(fresh) == 0 || s.conn == nil {
		return
	}
	msg := fmt.Sprintf("kodyls: the review configuration of %s has problems: %s", f.Root, strings.Join(fresh, "; "))
	if rv != nil && rv.Gate != nil && rv.Gate.Incomplete() != "" {
		msg += ". Until it is fixed no file is sent to the model: its ignorePaths may not all apply"
	}
	if err := s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowShowMessage,
		&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// dropGoneRuleFindings removes the model's Kody Rules findings of od whose
// rule no longer applies to it: deleted, edited away, replaced by the model's
// split of its file, disabled, given a detector, or narrowed by its globs or
// languages so that the file is no longer in its reach. A finding must not
// outlive its rule until the next save.
func (s *Server) dropGoneRuleFindings(ctx context.Context, od *openDoc) {
	if od.folder == nil {
		return
	}
	snap, _ := s.snapshot(string(od.uri))
	if snap == nil {
		return
	}
	applies := map[string]bool{}
	all := od.folder.Rules()
	for _, r := range all {
		// Pull-request rules judge the change set, not one file.
		if r.Enabled && r.Scope == rules.ScopePullRequest {
			applies[r.UUID] = true
		}
	}
	for _, r := range snap.ModelRules() {
		applies[r.UUID] = true
	}
	key := string(od.uri)
	if s.reviews.Remove(key, func(f filereview.Finding) bool {
		return f.RuleID != "" && !applies[f.RuleID]
	}) > 0 {
		s.publishReview(ctx, key)
	}
}

// splitRules has the model split, in the background, the assistants' rule
// files of f whose split is not cached, and reloads the rules once one is:
// until then the files' sections and bullets are the rules, so that
// loading rules never waits for a model.
func (s *Server) splitRules(f *workspace.Folder) {
	done := s.work.add("")
	s.goBackground(func(ctx context.Context) {
		defer done()
		if f.SplitRules(ctx) {
			s.reloadRules(ctx, nil)
		}
	})
}

// publishRuleFileErrors shows on an open rule file what `kodyls rules
// check` reports for it: the errors that keep a rule from loading, and the
// warnings (unknown keys, unresolved or refused references and imports, an
// empty file) of a file that still loads.
func (s *Server) publishRuleFileErrors(ctx context.Context, od *openDoc) {
	var diags []protocol.Diagnostic
	doc, _ := s.docs.Get(string(od.uri))
	add := func(le *rules.LoadError, severity protocol.DiagnosticSeverity, msg string) {
		if filepath.Join(od.folder.Root, filepath.FromSlash(le.File)) != od.path {
			return
		}
		line := uint32(max(le.Line, 1) - 1)
		col := uint32(max(le.Column, 1) - 1)
		// LoadError.Column counts bytes of the line's UTF-8 text (the
		// YAML parser's characters are turned into bytes by the
		// loader); the editor counts in the negotiated position
		// encoding.
		if doc != nil && int(line) < doc.LineCount() && int(col) <= len(doc.Line(int(line))) {
			col = doc.PositionAt(doc.LineStart(int(line))+int(col), s.encoding).Character
		}
		diags = append(diags, protocol.Diagnostic{
			Range:    protocol.Range{Start: protocol.Position{Line: line, Character: col}, End: protocol.Position{Line: line + 1}},
			Severity: severity,
			Code:     protocol.String("rule-file"),
			Source:   protocol.NewOptional(diagnosticSource),
			Message:  protocol.String(msg),
		})
	}
	for _, le := range od.folder.Engine.LoadErrors() {
		add(le, protocol.DiagnosticSeverityError, "This Kody Rule is not loaded: "+le.Msg)
	}
	for _, le := range od.folder.Engine.Warnings() {
		add(le, protocol.DiagnosticSeverityWarning, le.Msg)
	}
	s.diags.Set(ctx, od.uri, SourceRuleFile, 0, diags)
}

// ruleViolations is the panel's data: what the local detectors currently
// find in the open buffers, grouped by rule, plus the rule files that failed
// to load.
func (s *Server) ruleViolations() *contract.RuleViolations {
	// A group is one rule of one workspace folder: two folders may have
	// rules of the same uuid (the same rule file in two repositories, or
	// the same path, whose uuid defaults to it).
	type groupKey struct{ root, uuid string }
	groups := map[groupKey]*contract.ViolationGroup{}
	folders := s.allFolders()
	group := func(f *workspace.Folder, r *rules.Rule) *contract.ViolationGroup {
		k := groupKey{f.Root, r.UUID}
		if g := groups[k]; g != nil {
			return g
		}
		g := &contract.ViolationGroup{Rule: s.ruleInfo(f, r)}
		groups[k] = g
		return g
	}
	// modelGroup is the group of a rule of the folder at root the model
	// found violated; nil when the rule or the folder is gone.
	modelGroup := func(root, id string) *contract.ViolationGroup {
		i := slices.IndexFunc(folders, func(f *workspace.Folder) bool { return f.Root == root })
		if i < 0 {
			return nil
		}
		r := ruleIn(folders[i], id)
		if r == nil {
			return nil
		}
		return group(folders[i], r)
	}
	for _, od := range s.openDocs() {
		doc, ok := s.docs.Get(string(od.uri))
		if !ok || od.folder == nil {
			continue
		}
		vs, version := s.rules.get(string(od.uri))
		if version != doc.Version() {
			continue // not yet checked; the next run refreshes it
		}
		for _, v := range vs {
			g := group(od.folder, v.Rule)
			start := doc.LineStart(v.Line)
			g.Violations = append(g.Violations, contract.ViolationInfo{
				URI: od.uri,
				Range: protocol.Range{
					Start: toProtocol(doc.PositionAt(start+v.Start, s.encoding)),
					End:   toProtocol(doc.PositionAt(start+v.End, s.encoding)),
				},
				Match:     v.Match,
				Version:   version,
				CheckedBy: contract.CheckedByDetector,
				ID:        v.ID,
				Fixable:   v.HasFix,
			})
		}
		// The violations the model found at the last review, moved with
		// the edits since.
		findings, fversion := s.reviews.Findings(string(od.uri))
		if fversion != doc.Version() {
			continue
		}
		for _, f := range findings {
			if f.RuleID == "" {
				continue
			}
			g := modelGroup(od.folder.Root, f.RuleID)
			if g == nil {
				continue // the rule was removed since the review
			}
			g.Violations = append(g.Violations, contract.ViolationInfo{
				URI: od.uri, Range: s.spanRange(doc, f.Span), Match: f.ExistingCode, Version: fversion,
				CheckedBy: contract.CheckedByModel, ID: f.ID, Message: f.SuggestionContent,
				Fixable: strings.TrimSpace(f.ImprovedCode) != "",
			})
		}
	}
	// Pull-request rule violations no open buffer carries.
	for _, e := range s.changeSetPanel() {
		f := e.v.finding
		g := modelGroup(e.v.root, f.RuleID)
		if g == nil {
			continue // the rule, or its folder, was removed since the review
		}
		g.Violations = append(g.Violations, contract.ViolationInfo{
			URI: e.uri, Range: e.v.rng, Match: f.ExistingCode, CheckedBy: contract.CheckedByModel,
			ID: f.ID, Message: f.SuggestionContent,
		})
	}
	out := &contract.RuleViolations{Groups: []contract.ViolationGroup{}, RuleErrors: []contract.RuleError{}}
	for _, g := range groups {
		sort.Slice(g.Violations, func(i, j int) bool {
			a, b := g.Violations[i], g.Violations[j]
			if a.URI != b.URI {
				return a.URI < b.URI
			}
			return a.Range.Start.Line < b.Range.Start.Line || (a.Range.Start.Line == b.Range.Start.Line && a.Range.Start.Character < b.Range.Start.Character)
		})
		out.Groups = append(out.Groups, *g)
	}
	sort.Slice(out.Groups, func(i, j int) bool {
		a, b := out.Groups[i].Rule, out.Groups[j].Rule
		if a.File != b.File {
			return a.File < b.File
		}
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		return a.UUID < b.UUID
	})
	offline := !s.svc.ModelConfigured()
	out.NotChecked = []contract.RuleInfo{}
	for _, f := range folders {
		for _, le := range f.Engine.LoadErrors() {
			out.RuleErrors = append(out.RuleErrors, contract.RuleError{
				File: le.File, URI: s.clientURI(filepath.Join(f.Root, filepath.FromSlash(le.File))), Line: le.Line, Message: le.Msg,
			})
		}
		if !offline {
			continue
		}
		for _, r := range f.Rules() {
			if r.Enabled && r.Detector == nil {
				out.NotChecked = append(out.NotChecked, s.ruleInfo(f, r))
			}
		}
	}
	return out
}

// ruleInfo is how the panel names a rule of the workspace folder f.
func (s *Server) ruleInfo(f *workspace.Folder, r *rules.Rule) contract.RuleInfo {
	return contract.RuleInfo{
		UUID: r.UUID, Title: r.Title, Severity: string(r.Severity), File: r.File,
		URI: s.clientURI(filepath.Join(f.Root, filepath.FromSlash(r.File))),
	}
}

// findRule returns a loaded rule by uuid, with the absolute path of its
// file. Two workspace folders may have rules of one uuid (the same rule
// file in two repositories, or the same path, whose uuid defaults to
// it): the rule is looked up first in the folder of the file at near (an
// absolute path: the document of the diagnostic, the rule file the panel
// names), then in every folder in order.
func (s *Server) findRule(id, near string) (*rules.Rule, string) {
	if near != "" {
		if f := s.folderFor(near); f != nil {
			if r := ruleIn(f, id); r != nil {
				return r, filepath.Join(f.Root, filepath.FromSlash(r.File))
			}
		}
	}
	for _, f := range s.allFolders() {
		if r := ruleIn(f, id); r != nil {
			return r, filepath.Join(f.Root, filepath.FromSlash(r.File))
		}
	}
	return nil, ""
}

// ruleIn returns the loaded rule of f with uuid id.
func ruleIn(f *workspace.Folder, id string) *rules.Rule {
	for _, r := range f.Rules() {
		if r.UUID == id {
			return r
		}
	}
	return nil
}

// pathOf is the absolute, canonical path of the file at u: an open
// buffer's, else the URI's own; "" for a URI that is no file.
func (s *Server) pathOf(u uri.URI) string {
	if od := s.openDoc(string(u)); od != nil {
		return od.path
	}
	if u == "" || !u.IsFile() {
		return ""
	}
	return canonicalEventPath(u.FsPath())
}
