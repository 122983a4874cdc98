package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/langid"
	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/editors/contract"
)

// Folder is one workspace root: its Kody Rules, the baselines of its files
// and its reviewer. The editor and `kodyls review` check a file through the
// same Folder methods, so they find the same things.
type Folder struct {
	// Root is the absolute, symlink-free workspace root.
	Root string
	// Engine holds the rules and the cached baselines.
	Engine *rulecheck.Engine

	s *Services

	mu          sync.Mutex
	reviewer    *filereview.Reviewer
	problems    []string
	buildCancel context.CancelFunc // the running build's
	// pendingSplit are the assistants' files whose split by the model was
	// not cached at the last Reload (see SplitRules).
	pendingSplit []splitFile
}

func newFolder(s *Services, root string) *Folder {
	f := &Folder{Root: root, Engine: rulecheck.New(root), s: s}
	f.Engine.SetRefine(f.refineRules)
	return f
}

// Reload reads the folder's rules again; the reviewer is rebuilt with them.
func (f *Folder) Reload(ctx context.Context) ([]*rules.Rule, []*rules.LoadError) {
	rs, errs := f.Engine.Reload(ctx)
	f.resetReviewer()
	return rs, errs
}

// Rules returns the loaded rules.
func (f *Folder) Rules() []*rules.Rule { return f.Engine.Rules() }

// Rel returns the workspace-relative slash path of an absolute path.
func (f *Folder) Rel(abs string) (string, bool) { return f.Engine.Rel(abs) }

func (f *Folder) resetReviewer() {
	f.mu.Lock()
	f.reviewer, f.problems = nil, nil
	f.mu.Unlock()
}

// Reviewer returns the folder's reviewer, built on first use after the
// rules or the model changed, and the problems of its configuration files
// (kodus-config.yml, prompt overrides).
func (f *Folder) Reviewer() (*filereview.Reviewer, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reviewer == nil {
		f.reviewer, f.problems = f.s.reviewer(f.Root, f.Engine.Rules())
		for _, p := range f.problems {
			f.s.log.Warn("review configuration problem", "workspace", f.Root, "problem", p)
		}
	}
	return f.reviewer, f.problems
}

// Gate says whether a file is reviewed at all (ignore paths, the privacy
// list, lock, generated, minified, vendored, binary and huge files).
func (f *Folder) Gate(rel string, text string) gate.Reason {
	r, _ := f.Reviewer()
	if r.Gate == nil {
		return ""
	}
	return r.Gate.Check(rel, []byte(text))
}

// Private says why a file must never be read into a prompt, even when the
// user names it: kodus-config ignorePaths or a file that may hold
// secrets. "" when it may be read. Unlike Gate it says nothing about lock,
// generated or large files, which a user may still ask for by name.
func (f *Folder) Private(rel string) gate.Reason {
	r, _ := f.Reviewer()
	if r.Gate == nil {
		return ""
	}
	return r.Gate.Private(rel)
}

// RuleFinding is a violation of a rule's local detector.
type RuleFinding struct {
	ID string
	rules.Violation
}

// RuleFindingID identifies a detector violation: the rule, the file, the
// 1-based line and the byte column of the match.
func RuleFindingID(ruleUUID, rel string, line0, startByte int) string {
	return fmt.Sprintf("%s:%s:%d:%d", ruleUUID, rel, line0+1, startByte)
}

// FileSnapshot is the snapshot of a file that no editor holds, as
// `kodyls review` checks it: text against base, read from git, through the
// file gate, with the language named by the file's extension (as the editor
// names it in a review prompt).
func (f *Folder) FileSnapshot(rel, text string, base changes.Baseline, settings contract.Settings) *Snapshot {
	return &Snapshot{
		Path:          filepath.Join(f.Root, filepath.FromSlash(rel)),
		Rel:           rel,
		Language:      langid.Of(rel),
		Folder:        f,
		Text:          text,
		Baseline:      base,
		BaselineReady: true,
		Settings:      settings,
		Skip:          f.Gate(rel, text),
	}
}

// Review reviews one file's change with the model (or the cache) and drops
// what the user dismissed, before kodus-config.yml's cap counts the
// findings. With no model configured the result carries the cached
// findings and the error is filereview.ErrOffline.
func (f *Folder) Review(ctx context.Context, in filereview.Input) (filereview.Result, error) {
	r, _ := f.Reviewer()
	in.Dismissed = f.s.Dismissed(ctx, f.Root, in.Path)
	return r.Review(ctx, in)
}

// CapChange applies kodus-config.yml's maxSuggestions to the findings of
// a whole change when it caps the change (limitationType pr; see
// filereview.Reviewer.CapChange).
func (f *Folder) CapChange(results []filereview.Result) []filereview.Result {
	r, _ := f.Reviewer()
	return r.CapChange(results)
}

// CheckPullRequest runs the pull-request scope rules once over the whole
// change set and returns their violations by file, without the dismissed
// ones. Without a model, or without such rules, it returns nothing.
func (f *Folder) CheckPullRequest(ctx context.Context, inputs []filereview.Input) (map[string][]filereview.Finding, error) {
	r, _ := f.Reviewer()
	byFile, err := r.CheckPullRequest(ctx, inputs)
	if err != nil {
		return nil, err
	}
	for path, fs := range byFile {
		byFile[path] = f.s.WithoutDismissed(ctx, f.Root, path, fs)
	}
	return byFile, nil
}

// CheckPullRequestRule judges one pull-request rule with the model over
// inputs (see filereview.Reviewer.CheckPullRequestRule).
func (f *Folder) CheckPullRequestRule(ctx context.Context, rule *rules.Rule, inputs []filereview.Input) (map[string][]filereview.Finding, error) {
	r, _ := f.Reviewer()
	return r.CheckPullRequestRule(ctx, rule, inputs)
}

// CheckRule judges one rule with the model on a file (see
// filereview.Reviewer.CheckRule).
func (f *Folder) CheckRule(ctx context.Context, rule *rules.Rule, in filereview.Input) ([]filereview.Finding, error) {
	r, _ := f.Reviewer()
	return r.CheckRule(ctx, rule, in)
}

// Cluster links the findings that repeat across files.
func (f *Folder) Cluster(ctx context.Context, results []filereview.Result) []filereview.Result {
	r, _ := f.Reviewer()
	return r.Cluster(ctx, results)
}

// ReviewBase is the text a review compares with: empty for an untracked
// file, which is reviewed whole.
func ReviewBase(b changes.Baseline) string {
	if b.Kind == changes.Untracked || b.Kind == changes.Ignored {
		return ""
	}
	return b.Text
}
