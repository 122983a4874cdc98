package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// diagnosticSource is the `source` of every kodyls diagnostic.
const diagnosticSource = "kody"

// runChecks is the scheduler's job for one buffer: run the local rule
// detectors on its current snapshot and publish.
func (s *Server) runChecks(ctx context.Context, key string) {
	od := s.openDoc(key)
	doc, ok := s.docs.Get(key)
	if od == nil || !ok || od.engine == nil || od.isRule {
		return
	}
	od.mu.Lock()
	ready := od.baselineReady
	od.mu.Unlock()
	if !ready {
		return // the baseline loader triggers a run when it is done
	}
	cfg := s.settings()
	found := od.engine.Check(od.path, doc.Text(), cfg.Rules.Scope == contract.ScopeChanged)
	if cur, ok := s.docs.Get(key); !ok || cur.Version() != doc.Version() {
		return // a newer edit arrived; its run publishes
	}
	diags := make([]protocol.Diagnostic, 0, len(found))
	for _, v := range found {
		diags = append(diags, s.violationDiagnostic(doc, v, cfg.Severity))
	}
	od.mu.Lock()
	od.violations, od.version = found, doc.Version()
	od.mu.Unlock()
	s.diags.Set(ctx, od.uri, SourceRules, doc.Version(), diags)
	if rd, ok := s.reviewDiagnostics(od, doc, cfg.Severity); ok {
		s.diags.Set(ctx, od.uri, SourceReview, doc.Version(), rd)
	}
}

// diagnosticData is carried in Diagnostic.data so code actions can find the
// rule behind a diagnostic.
type diagnosticData struct {
	ID   string `json:"id"`
	Rule string `json:"rule,omitempty"`
}

func (s *Server) violationDiagnostic(doc *textdoc.Document, v rules.Violation, sev map[string]string) protocol.Diagnostic {
	start := doc.LineStart(v.Line)
	rng := protocol.Range{
		Start: toProtocol(doc.PositionAt(start+v.Start, s.encoding)),
		End:   toProtocol(doc.PositionAt(start+v.End, s.encoding)),
	}
	msg := v.Rule.Title
	if first := v.Rule.Lead(); first != "" {
		msg += "\n" + first
	}
	data, _ := json.Marshal(diagnosticData{
		ID:   fmt.Sprintf("%s:%d:%d", v.Rule.UUID, v.Line, v.Start),
		Rule: v.Rule.UUID,
	})
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
	engines := s.allEngines()
	prog := s.beginProgress(ctx, token, "Loading Kody Rules")
	total := 0
	var allErrs []*rules.LoadError
	for i, e := range engines {
		prog.Report(fmt.Sprintf("%s (%d/%d)", filepath.Base(e.Root()), i+1, len(engines)), uint32(100*i/max(1, len(engines))))
		rs, errs := e.Reload(ctx)
		total += len(rs)
		allErrs = append(allErrs, errs...)
		for _, le := range errs {
			s.log.Warn("broken Kody Rule file", "workspace", e.Root(), "error", le.Error())
		}
		s.log.Info("loaded Kody Rules", "workspace", e.Root(), "rules", len(rs), "broken", len(errs))
	}
	prog.End(fmt.Sprintf("%d rules loaded, %d broken", total, len(allErrs)))
	s.resetReviewers()
	for _, od := range s.openDocs() {
		if od.isRule {
			s.publishRuleFileErrors(ctx, od)
		}
	}
	s.recheckAll()
	return total, allErrs
}

// publishRuleFileErrors shows the load error of an open rule file on it.
func (s *Server) publishRuleFileErrors(ctx context.Context, od *openDoc) {
	var diags []protocol.Diagnostic
	for _, le := range od.engine.LoadErrors() {
		if filepath.Join(od.engine.Root(), filepath.FromSlash(le.File)) != od.path {
			continue
		}
		line := uint32(max(le.Line, 1) - 1)
		col := uint32(max(le.Column, 1) - 1)
		diags = append(diags, protocol.Diagnostic{
			Range:    protocol.Range{Start: protocol.Position{Line: line, Character: col}, End: protocol.Position{Line: line + 1}},
			Severity: protocol.DiagnosticSeverityError,
			Code:     protocol.String("rule-file"),
			Source:   protocol.NewOptional(diagnosticSource),
			Message:  protocol.String("This Kody Rule is not loaded: " + le.Msg),
		})
	}
	s.diags.Set(ctx, od.uri, SourceRules, 0, diags)
}

// RuleViolations is the result of kodyls.ruleViolations: what the local
// detectors currently find in the open buffers, grouped by rule, plus the rule
// files that failed to load.
type RuleViolations struct {
	Groups     []ViolationGroup `json:"groups"`
	RuleErrors []RuleError      `json:"ruleErrors"`
}

// ViolationGroup is one rule and its violations.
type ViolationGroup struct {
	Rule       RuleInfo        `json:"rule"`
	Violations []ViolationInfo `json:"violations"`
}

// RuleInfo identifies a rule.
type RuleInfo struct {
	UUID     string `json:"uuid"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	File     string `json:"file"`
}

// ViolationInfo is one violation. Line is 0-based like LSP positions.
type ViolationInfo struct {
	URI     uri.URI        `json:"uri"`
	Range   protocol.Range `json:"range"`
	Match   string         `json:"match"`
	Version int32          `json:"version"`
}

// RuleError is a rule file that failed to load. Line is 1-based.
type RuleError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (s *Server) ruleViolations() *RuleViolations {
	groups := map[string]*ViolationGroup{}
	for _, od := range s.openDocs() {
		doc, ok := s.docs.Get(string(od.uri))
		if !ok {
			continue
		}
		od.mu.Lock()
		vs, version := od.violations, od.version
		od.mu.Unlock()
		if version != doc.Version() {
			continue // not yet checked; the next run refreshes it
		}
		for _, v := range vs {
			g := groups[v.Rule.UUID]
			if g == nil {
				g = &ViolationGroup{Rule: RuleInfo{UUID: v.Rule.UUID, Title: v.Rule.Title, Severity: string(v.Rule.Severity), File: v.Rule.File}}
				groups[v.Rule.UUID] = g
			}
			start := doc.LineStart(v.Line)
			g.Violations = append(g.Violations, ViolationInfo{
				URI: od.uri,
				Range: protocol.Range{
					Start: toProtocol(doc.PositionAt(start+v.Start, s.encoding)),
					End:   toProtocol(doc.PositionAt(start+v.End, s.encoding)),
				},
				Match:   v.Match,
				Version: version,
			})
		}
	}
	out := &RuleViolations{Groups: []ViolationGroup{}, RuleErrors: []RuleError{}}
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
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Rule.File < out.Groups[j].Rule.File })
	for _, e := range s.allEngines() {
		for _, le := range e.LoadErrors() {
			out.RuleErrors = append(out.RuleErrors, RuleError{File: le.File, Line: le.Line, Message: le.Msg})
		}
	}
	return out
}

// findRule returns a loaded rule by uuid.
func (s *Server) findRule(id string) (*rules.Rule, string) {
	for _, e := range s.allEngines() {
		for _, r := range e.Rules() {
			if r.UUID == id {
				return r, filepath.Join(e.Root(), filepath.FromSlash(r.File))
			}
		}
	}
	return nil, ""
}
