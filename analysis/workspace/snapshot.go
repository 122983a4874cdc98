package workspace

import (
	"sync"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/editors/contract"
)

// Snapshot is one version of one document as every check sees it. It is
// immutable once built: a check that runs on a snapshot never races the
// editor, and its result says which version it is for.
type Snapshot struct {
	URI      string
	Path     string // absolute, symlink-free; "" for non-file URIs
	Rel      string // slash path relative to Folder.Root
	Language string // the client's languageId
	// Folder is the workspace folder containing the file; nil outside
	// every folder, where nothing is checked.
	Folder *Folder
	// RuleFile is set for a Kody Rule file: it is not checked itself.
	RuleFile bool

	Version int32
	Text    string

	// Baseline is the file at the base revision; BaselineReady is false
	// until it has been read (git runs off the typing path).
	Baseline      changes.Baseline
	BaselineReady bool

	Settings contract.Settings

	// Skip is the file gate's verdict on the document as it was last
	// opened or saved; a skipped document is not checked.
	Skip gate.Reason

	changedOnce sync.Once
	changed     changes.LineSet
}

// Checked reports whether the document is checked at all: inside a folder,
// not a rule file, with its baseline read.
func (s *Snapshot) Checked() bool {
	return s.Folder != nil && !s.RuleFile && s.BaselineReady
}

// ChangedLines are the lines changed against the baseline (every line for
// an untracked file).
func (s *Snapshot) ChangedLines() changes.LineSet {
	s.changedOnce.Do(func() {
		if s.Baseline.Kind == changes.Untracked || !s.BaselineReady {
			s.changed = changes.AllLines()
			return
		}
		s.changed = changes.Changed(s.Baseline.Text, s.Text)
	})
	return s.changed
}

// Rules are the enabled rules whose paths and languages match the
// document: those with a detector run on every keystroke (CheckRules), the
// others are the model's (ModelRules).
func (s *Snapshot) Rules() []*rules.Rule {
	if s.Folder == nil {
		return nil
	}
	var out []*rules.Rule
	for _, r := range s.Folder.Rules() {
		if s.applies(r) {
			out = append(out, r)
		}
	}
	return out
}

// ModelRules are the rules the model checks in the document's change:
// its Rules without a detector, of file scope.
func (s *Snapshot) ModelRules() []*rules.Rule {
	if s.Folder == nil {
		return nil
	}
	return filereview.ModelRules(s.Folder.Rules(), s.Rel, s.Language)
}

// applies reports whether rule r is one of the snapshot's Rules.
func (s *Snapshot) applies(r *rules.Rule) bool {
	return r.Enabled && r.AppliesTo(s.Rel) && r.AppliesToLanguage(s.Language)
}

// CheckRules runs the local detectors of the snapshot's rules on its text:
// on its changed lines, or on every line, as the settings say.
func (s *Snapshot) CheckRules() []RuleFinding {
	if !s.Checked() || s.Skip.Skip() {
		return nil
	}
	var include func(int) bool
	if s.Settings.Rules.Scope == contract.ScopeChanged {
		if set := s.ChangedLines(); !set.All() {
			include = set.Has
		}
	}
	// The snapshot's rules that have a detector; the others (often most,
	// imported from the assistants' files) are not matched against the
	// path on every keystroke.
	var rs []*rules.Rule
	for _, r := range s.Folder.Rules() {
		if r.Detector != nil && s.applies(r) {
			rs = append(rs, r)
		}
	}
	vs := rules.Detect(rs, s.Rel, s.Text, include)
	out := make([]RuleFinding, len(vs))
	for i, v := range vs {
		out[i] = RuleFinding{ID: RuleFindingID(v.Rule.UUID, s.Rel, v.Line, v.Start), Violation: v}
	}
	return out
}

// ReviewInput is what the review of the snapshot is computed from.
func (s *Snapshot) ReviewInput() filereview.Input {
	return filereview.Input{Path: s.Rel, Language: s.Language, Base: ReviewBase(s.Baseline), Current: s.Text}
}
