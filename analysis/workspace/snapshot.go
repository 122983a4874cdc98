package workspace

import (
	"sync"
	"unsafe"

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

	// Detections, when set, holds what the detectors found in the
	// document's earlier versions, so that CheckRules runs them only over
	// the lines it has not seen before. The editor keeps one per open
	// document; without one every check starts from scratch.
	Detections *Detections

	changedOnce sync.Once
	changed     changes.LineSet
}

// Checked reports whether the document is checked at all: inside a folder,
// not a rule file, with its baseline read.
func (s *Snapshot) Checked() bool {
	return s.Folder != nil && !s.RuleFile && s.BaselineReady
}

// GitIgnored is why a file git ignores is not checked: an untracked file
// that .gitignore (or .git/info/exclude, core.excludesFile) leaves out of
// the change set `kodyls review` reviews, which the editor follows.
const GitIgnored gate.Reason = "ignored by git"

// Skipped says why the document is neither checked by the detectors nor
// reviewed: the file gate's verdict, or that git ignores the file; ""
// when it is checked.
func (s *Snapshot) Skipped() gate.Reason {
	if s.Skip.Skip() {
		return s.Skip
	}
	if s.BaselineReady && s.Baseline.Kind == changes.Ignored {
		return GitIgnored
	}
	return ""
}

// ChangedLines are the lines changed against the baseline (every line for
// an untracked file).
func (s *Snapshot) ChangedLines() changes.LineSet {
	s.changedOnce.Do(func() {
		if s.Baseline.Kind == changes.Untracked || s.Baseline.Kind == changes.Ignored || !s.BaselineReady {
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
	if !s.Checked() || s.Skipped().Skip() {
		return nil
	}
	var include func(int) bool
	if s.Settings.Rules.Scope == contract.ScopeChanged {
		if set := s.ChangedLines(); !set.All() {
			include = set.Has
		}
	}
	rs := s.detectorRules()
	vs := s.Detections.cache().Detect(rs, s.Rel, s.Text, include)
	out := make([]RuleFinding, len(vs))
	for i, v := range vs {
		out[i] = RuleFinding{ID: RuleFindingID(v.Rule.UUID, s.Rel, v.Line, v.Start), Violation: v}
	}
	return out
}

// detectorRules are the snapshot's rules that have a detector; the others
// (often most, imported from the assistants' files) are not matched against
// the path on every keystroke. With Detections the list is kept until the
// folder's rules change, and so is the same slice from one check to the
// next.
func (s *Snapshot) detectorRules() []*rules.Rule {
	all := s.Folder.Rules()
	d := s.Detections
	if d == nil {
		return s.filterDetectorRules(all)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid || !sameRules(all, d.from) || d.rel != s.Rel || d.language != s.Language {
		d.valid, d.from, d.rel, d.language = true, all, s.Rel, s.Language
		d.rules = s.filterDetectorRules(all)
	}
	return d.rules
}

func (s *Snapshot) filterDetectorRules(all []*rules.Rule) []*rules.Rule {
	var rs []*rules.Rule
	for _, r := range all {
		if r.Detector != nil && s.applies(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// Detections is what the detectors found in the versions of one document
// (see Snapshot.Detections): the lines checked and their violations,
// bounded by the document's lines, and the document's rules that have a
// detector. It starts over when the folder's rules change; the settings
// play no part in a line's violations (the scope only says which lines are
// checked). The zero value is ready to use.
type Detections struct {
	mu       sync.Mutex
	valid    bool
	from     []*rules.Rule // the folder's rules that rules were chosen from
	rel      string
	language string
	rules    []*rules.Rule

	lines rules.DetectCache
}

// cache is d's cache of lines; nil, which checks every line from scratch,
// for a nil d.
func (d *Detections) cache() *rules.DetectCache {
	if d == nil {
		return nil
	}
	return &d.lines
}

// sameRules reports whether a and b are the same slice. A folder's rules
// are replaced, never modified, when they are read again.
func sameRules(a, b []*rules.Rule) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// ReviewInput is what the review of the snapshot is computed from.
func (s *Snapshot) ReviewInput() filereview.Input {
	return filereview.Input{Path: s.Rel, Language: s.Language, Base: ReviewBase(s.Baseline), Current: s.Text}
}
