package lsp

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/analysis/rules"
)

// watchDebounce groups the bursts of events an editor's save or a git
// command produces into one reload.
const watchDebounce = 200 * time.Millisecond

// fileChange is what a file event means to kodyls.
type fileChange int

const (
	changeNone     fileChange = 0
	changeRules    fileChange = 1 << iota // a rule file, as the rule-source registry says
	changeBaseline                        // the repository's HEAD or index
)

// classify maps a changed path to what must be refreshed. fsnotify and the
// client's didChangeWatchedFiles both come through here: one mechanism, two
// inputs.
func (s *Server) classify(path string) fileChange {
	path = filepath.Clean(path)
	what := changeNone
	for _, e := range s.allEngines() {
		if rel, ok := e.Rel(path); ok {
			what |= classifyRel(e.Registry(), rel)
			if what&changeRules == 0 && readsRuleFrom(e.Rules(), rel) {
				// A file the sources do not own but a rule was read
				// from: one that CLAUDE.md imports, or one a rule
				// references.
				what |= changeRules
			}
		}
	}
	return what
}

// readsRuleFrom reports whether one of rules was read from rel, or
// includes the text of rel through a reference (@file:, [[file:…]]).
func readsRuleFrom(rs []*rules.Rule, rel string) bool {
	for _, r := range rs {
		if r.File == rel {
			return true
		}
		for _, ref := range r.References {
			if ref.Path == rel {
				return true
			}
		}
	}
	return false
}

// watchRuleFiles watches the directories of the files the loaded rules were
// read from and of the files they reference, so that editing a file
// CLAUDE.md imports, or the style guide a rule points at, reloads the
// rules. fsnotify ignores a directory already watched.
func (s *Server) watchRuleFiles(w *fsnotify.Watcher) {
	for _, e := range s.allEngines() {
		for _, r := range e.Rules() {
			if r.File != "" {
				_ = w.Add(filepath.Join(e.Root(), filepath.FromSlash(path.Dir(r.File))))
			}
			for _, ref := range r.References {
				_ = w.Add(filepath.Join(e.Root(), filepath.FromSlash(path.Dir(ref.Path))))
			}
		}
	}
}

// classifyRel says what a change of rel, a workspace-relative slash path,
// means.
func classifyRel(reg *rules.Registry, rel string) fileChange {
	switch {
	case reg.Owns(rel) || leadsToWatchPath(reg.WatchPaths(), rel):
		return changeRules
	case slices.Contains(kodusconfig.FileNames, rel):
		// kodus-config.yml shapes the review (reviewOptions,
		// suggestionControl, ignorePaths) and which nested rule files are
		// read: reloading the rules rebuilds the reviewer with it.
		return changeRules
	case rel == ".git/HEAD" || rel == ".git/index" || rel == ".git/packed-refs" || strings.HasPrefix(rel, ".git/refs/"):
		return changeBaseline
	}
	return changeNone
}

// leadsToWatchPath reports whether rel is one of the watch paths or a
// directory above one, such as ".kody" for ".kody/rules": creating,
// removing or renaming it changes what the sources read.
func leadsToWatchPath(watch []string, rel string) bool {
	if rel == "." || rel == "" {
		return false
	}
	for _, w := range watch {
		if w == rel || strings.HasPrefix(w, rel+"/") {
			return true
		}
	}
	return false
}

func (s *Server) applyFileChanges(ctx context.Context, what fileChange) {
	if what&changeRules != 0 {
		s.reloadRules(ctx, nil)
	}
	if what&changeBaseline != 0 {
		s.refreshBaselines()
	}
}

func (s *Server) didChangeWatchedFiles(p *protocol.DidChangeWatchedFilesParams) {
	var what fileChange
	for _, c := range p.Changes {
		what |= s.classify(c.URI.FsPath())
	}
	if what != changeNone {
		// Counted from here, on the read loop: a kodyls/awaitIdle that
		// follows the notification waits for the reload.
		done := s.work.add("")
		s.goBackground(func(ctx context.Context) {
			defer done()
			s.applyFileChanges(ctx, what)
		})
	}
}

// watchFiles watches the rule sources' paths and the git metadata of every
// workspace until the session ends.
// ready is called once the watches are in place (or watching failed), so
// that the server is not idle before it would see a change on disk.
func (s *Server) watchFiles(ctx context.Context, ready func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		ready()
		s.log.Warn("file watching unavailable; use kodyls.reloadRules after editing rules", "error", err)
		return
	}
	defer w.Close()
	for _, e := range s.allEngines() {
		s.watchWorkspace(w, e)
	}
	ready()
	// Once the rules are loaded, the files they were read from too.
	loaded := s.rulesLoaded
	var pending fileChange
	// A change seen and waiting for the debounce is pending work, so
	// kodyls/awaitIdle does not answer before the reload it leads to.
	var pendingDone func()
	defer func() {
		if pendingDone != nil {
			pendingDone()
		}
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-loaded:
			loaded = nil
			s.watchRuleFiles(w)
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			what := s.classify(ev.Name)
			if ev.Has(fsnotify.Create) && s.watchNestedDir(w, ev.Name) {
				// A new directory may come with an AGENTS.md already
				// in it (a checkout, a move).
				what |= changeRules
			}
			if what == changeNone {
				continue
			}
			if what&changeRules != 0 && ev.Has(fsnotify.Create) {
				s.watchCreatedDir(w, ev.Name)
			}
			pending |= what
			if pendingDone == nil {
				pendingDone = s.work.add("")
			}
			timer.Reset(watchDebounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("file watcher", "error", err)
		case <-timer.C:
			what := pending
			pending = changeNone
			s.applyFileChanges(ctx, what)
			if what&changeRules != 0 {
				s.watchRuleFiles(w)
			}
			if pendingDone != nil {
				pendingDone()
				pendingDone = nil
			}
		}
	}
}

// watchWorkspace watches the root and the git metadata of one workspace,
// every directory above a watch path of its rule sources (so that creating
// the path is noticed) and the watch paths themselves with every directory
// below them. Missing directories are normal and skipped. Parents are
// watched before their trees are walked, so a directory created meanwhile
// is either seen by the walk or reported as an event.
func (s *Server) watchWorkspace(w *fsnotify.Watcher, e *rulecheck.Engine) {
	root := e.Root()
	_ = w.Add(root)
	_ = w.Add(filepath.Join(root, ".git"))
	for _, p := range e.Registry().WatchPaths() {
		for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
			_ = w.Add(filepath.Join(root, filepath.FromSlash(dir)))
		}
		s.addTree(w, filepath.Join(root, filepath.FromSlash(p)))
	}
	// The subdirectories where AGENTS.md and CLAUDE.md are looked for,
	// within the registry's bounds.
	for _, dir := range e.Registry().NestedDirs(context.Background(), root, ".") {
		_ = w.Add(filepath.Join(root, filepath.FromSlash(dir)))
	}
}

// watchNestedDir starts watching a directory created where the rule
// sources look for nested instruction files, with its subdirectories. It
// reports whether it did.
func (s *Server) watchNestedDir(w *fsnotify.Watcher, name string) bool {
	if st, err := os.Stat(name); err != nil || !st.IsDir() {
		return false
	}
	added := false
	for _, e := range s.allEngines() {
		if rel, ok := e.Rel(name); ok && e.Registry().WalksDir(rel) {
			for _, dir := range e.Registry().NestedDirs(context.Background(), e.Root(), rel) {
				_ = w.Add(filepath.Join(e.Root(), filepath.FromSlash(dir)))
				added = true
			}
		}
	}
	return added
}

// watchCreatedDir starts watching a directory that appeared on a rule
// source's path, such as .kody, .kody/rules or a sub-directory of it, with
// whatever it already holds.
func (s *Server) watchCreatedDir(w *fsnotify.Watcher, name string) {
	if st, err := os.Stat(name); err != nil || !st.IsDir() {
		return
	}
	for _, e := range s.allEngines() {
		if _, ok := e.Rel(name); ok {
			s.watchWorkspace(w, e)
		}
	}
}

func (s *Server) addTree(w *fsnotify.Watcher, root string) {
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if err := w.Add(path); err != nil {
				s.log.Debug("cannot watch", "dir", path, "error", err)
			}
		}
		return nil
	})
}
