// Package rulecheck runs a workspace's Kody Rules detectors over the lines of
// a buffer that changed against the baseline (the file at the base git
// revision). It owns the loaded rules and a cache of baselines, so that a
// keystroke costs one line diff and one regex pass, never a git process.
package rulecheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/rules"
)

// Engine holds the rules of one workspace root.
type Engine struct {
	root string
	reg  *rules.Registry

	// refine, when set, may replace the rules a Reload read before they
	// are kept.
	refine func(context.Context, []*rules.Rule) []*rules.Rule

	mu       sync.RWMutex
	rules    []*rules.Rule
	errs     []*rules.LoadError
	warnings []*rules.LoadError

	bmu       sync.Mutex
	baselines map[string]changes.Baseline // by absolute path
}

// New returns an engine for the workspace at root (an absolute path) that
// reads the rules of rules.DefaultRegistry. Call Reload to read the rules.
func New(root string) *Engine {
	return NewWithRegistry(root, nil)
}

// NewWithRegistry returns an engine for the workspace at root (an absolute
// path) that reads the rules of reg, or of rules.DefaultRegistry when reg is
// nil. Call Reload to read the rules.
func NewWithRegistry(root string, reg *rules.Registry) *Engine {
	if reg == nil {
		reg = rules.DefaultRegistry()
	}
	return &Engine{root: filepath.Clean(root), reg: reg, baselines: map[string]changes.Baseline{}}
}

// Root is the workspace root.
func (e *Engine) Root() string { return e.root }

// Registry is the registry of rule sources the engine reads.
func (e *Engine) Registry() *rules.Registry { return e.reg }

// SetRefine sets a function that may replace the rules every Reload reads
// before they are kept, such as a model's split of assistants' files
// served from a cache. It runs on every reload, so it must be fast and
// must not call a model. Set it before the first Reload.
func (e *Engine) SetRefine(fn func(context.Context, []*rules.Rule) []*rules.Rule) { e.refine = fn }

// Reload reads the rule files again. Broken files are reported and skipped;
// the good ones replace the previous set.
func (e *Engine) Reload(ctx context.Context) ([]*rules.Rule, []*rules.LoadError) {
	rep := e.reg.LoadReport(ctx, e.root)
	if e.refine != nil {
		rep.Rules = e.refine(ctx, rep.Rules)
	}
	e.mu.Lock()
	e.rules, e.errs, e.warnings = rep.Rules, rep.Errors, rep.Warnings
	e.mu.Unlock()
	return rep.Rules, rep.Errors
}

// Warnings returns the warnings of the last Reload: unknown keys kept,
// references that could not be resolved. They never stop a rule loading.
func (e *Engine) Warnings() []*rules.LoadError {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.warnings
}

// Rules returns the loaded rules.
func (e *Engine) Rules() []*rules.Rule {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.rules
}

// LoadErrors returns the problems of the last Reload.
func (e *Engine) LoadErrors() []*rules.LoadError {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.errs
}

// Rel returns the workspace-relative, slash-separated path of absPath, and
// false when the file lies outside the workspace.
func (e *Engine) Rel(absPath string) (string, bool) {
	rel, err := filepath.Rel(e.root, filepath.Clean(absPath))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// IsRuleFile reports whether absPath is a rule file of this workspace: a
// path one of the registry's sources owns.
func (e *Engine) IsRuleFile(absPath string) bool {
	rel, ok := e.Rel(absPath)
	return ok && e.reg.Owns(rel)
}

// RefreshBaseline loads the baseline of a file at ref (git HEAD by default)
// and caches it. It runs git, so callers keep it off the typing path: on
// open, on save and when the repository changes.
func (e *Engine) RefreshBaseline(ctx context.Context, absPath, ref string) (changes.Baseline, error) {
	b, err := changes.Load(ctx, absPath, ref)
	if err != nil {
		return b, fmt.Errorf("baseline of %s: %w", absPath, err)
	}
	if b.Kind == changes.OutsideRepo {
		// Outside any repository the content on disk when the file is first
		// seen is the baseline.
		if data, rerr := os.ReadFile(absPath); rerr == nil {
			b.Text = string(data)
		}
	}
	e.bmu.Lock()
	e.baselines[absPath] = b
	e.bmu.Unlock()
	return b, nil
}

// UseDiskBaseline caches the file's content on disk as its baseline, as
// for a file outside any repository: what the editor compares with when git
// cannot read the repository, so that the lines edited from now on are
// checked rather than every line.
func (e *Engine) UseDiskBaseline(absPath string) changes.Baseline {
	b := changes.Baseline{Kind: changes.OutsideRepo}
	if data, err := os.ReadFile(absPath); err == nil {
		b.Text = string(data)
	}
	e.bmu.Lock()
	e.baselines[absPath] = b
	e.bmu.Unlock()
	return b
}

// ForgetBaseline drops a cached baseline (the file was closed).
func (e *Engine) ForgetBaseline(absPath string) {
	e.bmu.Lock()
	delete(e.baselines, absPath)
	e.bmu.Unlock()
}

// Baseline returns the cached baseline of a file.
func (e *Engine) Baseline(absPath string) (changes.Baseline, bool) {
	e.bmu.Lock()
	defer e.bmu.Unlock()
	b, ok := e.baselines[absPath]
	return b, ok
}

// Check runs the detectors over text, the current content of absPath. With
// onlyChanged, only lines changed against the cached baseline are checked
// (all lines when there is no baseline yet or the file is untracked).
func (e *Engine) Check(absPath, text string, onlyChanged bool) []rules.Violation {
	rel, ok := e.Rel(absPath)
	if !ok {
		return nil
	}
	rs := e.Rules()
	if len(rs) == 0 {
		return nil
	}
	var include func(int) bool
	if onlyChanged {
		if b, ok := e.Baseline(absPath); ok && b.Kind != changes.Untracked {
			set := changes.Changed(b.Text, text)
			if !set.All() {
				include = set.Has
			}
		}
	}
	return rules.Detect(rs, rel, text, include)
}
