package lsp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/analysis/changes"
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
	changeBaseline                        // the repository's HEAD, index or refs
	changeRepo                            // a .git appeared or went: look up the repositories again
)

// classify maps a changed path to what must be refreshed. fsnotify and the
// client's didChangeWatchedFiles both come through here: one mechanism, two
// inputs.
func (s *Server) classify(path string) fileChange {
	path = filepath.Clean(path)
	what := s.git.classify(path)
	for _, e := range s.allEngines() {
		if rel, ok := e.Rel(path); ok {
			what |= classifyRel(e.Registry(), rel)
			if rel == ".git" || strings.HasSuffix(rel, "/.git") {
				// git init, a clone or a submodule: a buffer's baseline
				// may now come from another repository.
				what |= changeRepo | changeBaseline
			}
			if what&changeRules == 0 && (readsRuleFrom(e.Rules(), rel) || hasProblemIn(e.LoadErrors(), rel) || hasProblemIn(e.Warnings(), rel)) {
				// A file the sources do not own but a rule was read
				// from: one that CLAUDE.md imports, one a rule
				// references, the one a rule file links to (broken
				// or not).
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
		if r.File == rel || r.RealFile == rel {
			return true
		}
		for _, ref := range r.References {
			if ref.Path == rel || ref.RealPath == rel {
				return true
			}
		}
	}
	return false
}

// hasProblemIn reports whether one of problems is about rel or a link
// leading to it.
func hasProblemIn(problems []*rules.LoadError, rel string) bool {
	for _, p := range problems {
		if p.RealFile == rel {
			return true
		}
	}
	return false
}

// watchRuleFiles watches the directories of the files the loaded rules were
// read from and of the files they reference, and of the files those lead to
// through symbolic links, so that editing a file CLAUDE.md imports, the
// style guide a rule points at, or shared/alpha.md that
// .kody/rules/alpha.md links to, reloads the rules. fsnotify ignores a
// directory already watched.
func (s *Server) watchRuleFiles(w *fsnotify.Watcher) {
	for _, e := range s.allEngines() {
		dirOf := func(rel string) {
			if rel != "" {
				_ = w.Add(filepath.Join(e.Root(), filepath.FromSlash(path.Dir(rel))))
			}
		}
		for _, r := range e.Rules() {
			dirOf(r.File)
			dirOf(r.RealFile)
			for _, ref := range r.References {
				dirOf(ref.Path)
				dirOf(ref.RealPath)
			}
		}
		// A broken rule file behind a link is fixed where it leads.
		for _, p := range slices.Concat(e.LoadErrors(), e.Warnings()) {
			dirOf(p.RealFile)
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
	if what&changeRepo != 0 {
		s.lookUpRepos(ctx)
	}
	if what&changeBaseline != 0 {
		s.refreshBaselines()
	}
}

func (s *Server) didChangeWatchedFiles(p *protocol.DidChangeWatchedFilesParams) {
	var what fileChange
	for _, c := range p.Changes {
		what |= s.classify(canonicalEventPath(c.URI.FsPath()))
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

// canonicalEventPath is canonicalPath for a file that may be gone: its
// directory is resolved, so that a path the editor names through a
// symbolic link still matches the watched directories.
func canonicalEventPath(p string) string {
	return filepath.Join(canonicalPath(filepath.Dir(p)), filepath.Base(p))
}

// watchFiles watches the rule sources' paths and the git metadata of every
// workspace until the session ends.
// ready is called once the watches are in place (or watching failed), so
// that the server is not idle before it would see a change on disk.
func (s *Server) watchFiles(ctx context.Context, ready func()) {
	// Nothing waits for the watcher to follow the workspace folders once
	// it is gone.
	defer func() {
		for _, done := range s.takeFolderWatches(true) {
			done()
		}
	}()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		ready()
		s.log.Warn("file watching unavailable; use kodyls.reloadRules after editing rules", "error", err)
		return
	}
	defer func() {
		s.stopGitWatch()
		_ = w.Close()
	}()
	// The workspace folders watched, by root.
	watched := map[string]bool{}
	for _, e := range s.allEngines() {
		s.watchWorkspace(w, e)
		watched[e.Root()] = true
	}
	s.startGitWatch(ctx, w)
	ready()
	// Once the rules are loaded, the files they were read from too.
	loaded := s.rulesLoaded
	var pending fileChange
	// The directories created since the last reload, watched when the
	// burst of events is over: a checkout that creates thousands of them
	// is walked once, not once per directory.
	var created createdDirs
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
	wait := func(what fileChange) {
		pending |= what
		if pendingDone == nil {
			pendingDone = s.work.add("")
		}
		timer.Reset(watchDebounce)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-loaded:
			loaded = nil
			s.watchRuleFiles(w)
		case <-s.folderWatch.wake:
			// Folders were added to the workspace or removed from it.
			pending := s.takeFolderWatches(false)
			s.syncFolderWatches(ctx, w, watched)
			for _, done := range pending {
				done()
			}
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			what := s.classify(ev.Name)
			if ev.Has(fsnotify.Rename) {
				unwatchTree(w, ev.Name)
			}
			if ev.Has(fsnotify.Create) && s.git.refsDir(ev.Name) {
				// refs/heads/feature/ for refs/heads/feature/x: its
				// refs are watched too (fsnotify is not recursive).
				s.addTree(w, ev.Name)
			}
			if ev.Has(fsnotify.Create) && isDir(ev.Name) {
				if what&changeRules != 0 {
					// .kody, .kody/rules or a directory in it.
					created.sources = true
				}
				if s.walksDir(ev.Name) {
					// A new directory may come with an AGENTS.md
					// already in it (a checkout, a move).
					created.nested = append(created.nested, ev.Name)
					what |= changeRules
				}
			}
			if what != changeNone {
				wait(what)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were dropped: a rule file written, a directory
				// created, a baseline moved, no one knows which. All
				// is watched and read again.
				s.log.Warn("file watcher lost events; reloading the rules and baselines", "error", err)
				created.all = true
				wait(changeRules | changeBaseline | changeRepo)
				continue
			}
			s.log.Warn("file watcher", "error", err)
		case <-timer.C:
			what := pending
			pending = changeNone
			// Watched before the reload reads them, so that what is
			// written in them from now on is an event.
			s.watchCreated(w, created)
			created = createdDirs{}
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

// createdDirs are the directories created since the watcher last added
// watches.
type createdDirs struct {
	// nested are the ones where the rule sources look for nested
	// instruction files, absolute.
	nested []string
	// sources: a directory appeared on a rule source's path.
	sources bool
	// all: events were lost; every workspace is watched again.
	all bool
}

// watchCreated watches the directories created during a burst of events:
// each workspace again after lost events; the rule sources' paths when a
// directory appeared on one; else each new directory's tree where nested
// instruction files are looked for, once: a directory inside another new
// one was seen by that one's walk.
func (s *Server) watchCreated(w *fsnotify.Watcher, c createdDirs) {
	if c.all {
		for _, e := range s.allEngines() {
			s.watchWorkspace(w, e)
		}
		return
	}
	if c.sources {
		for _, e := range s.allEngines() {
			s.watchSources(w, e)
		}
	}
	slices.Sort(c.nested) // parents first
	walked := map[string]bool{}
	for _, dir := range slices.Compact(c.nested) {
		if underAny(walked, dir) {
			continue
		}
		if s.watchNestedDir(w, dir) {
			walked[dir] = true
		}
	}
}

// underAny reports whether one of dir's parents is in dirs.
func underAny(dirs map[string]bool, dir string) bool {
	for p := filepath.Dir(dir); p != dir; dir, p = p, filepath.Dir(p) {
		if dirs[p] {
			return true
		}
	}
	return false
}

// unwatchTree drops the watches of a directory that was moved away, and
// of the directories under it. The kernel's watches follow the directory
// to its new name, but fsnotify keeps naming their events by the old one
// and keeps them when the new name is added: a directory created under
// the new name would be reported under the old one, which no longer
// exists, and go unwatched. The new name's Create event has it walked and
// watched afresh. A renamed file matches no watch.
func unwatchTree(w *fsnotify.Watcher, name string) {
	prefix := name + string(filepath.Separator)
	for _, p := range w.WatchList() {
		if p == name || strings.HasPrefix(p, prefix) {
			_ = w.Remove(p) // already gone with its directory: nothing to drop
		}
	}
}

func isDir(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.IsDir()
}

// walksDir reports, from its path alone, whether the rule sources of a
// workspace look for nested instruction files in the directory name.
func (s *Server) walksDir(name string) bool {
	for _, e := range s.allEngines() {
		if rel, ok := e.Rel(name); ok && e.Registry().WalksDir(rel) {
			return true
		}
	}
	return false
}

// watchWorkspace watches the rule sources' paths of one workspace
// (watchSources) and the subdirectories where AGENTS.md and CLAUDE.md are
// looked for, within the registry's bounds: a walk of the whole
// workspace, done at start and after lost events.
func (s *Server) watchWorkspace(w *fsnotify.Watcher, e *rulecheck.Engine) {
	s.workspaceWatches.Add(1)
	s.watchSources(w, e)
	root := e.Root()
	for _, dir := range e.Registry().NestedDirs(context.Background(), root, ".") {
		_ = w.Add(filepath.Join(root, filepath.FromSlash(dir)))
	}
}

// watchSources watches the root of one workspace (where a .git may
// appear; the git directories are gitWatch's), every directory above a
// watch path of its rule sources (so that creating the path is noticed)
// and the watch paths themselves with every directory below them. Missing
// directories are normal and skipped. Parents are watched before their
// trees are walked, so a directory created meanwhile is either seen by the
// walk or reported as an event.
func (s *Server) watchSources(w *fsnotify.Watcher, e *rulecheck.Engine) {
	root := e.Root()
	_ = w.Add(root)
	for _, p := range e.Registry().WatchPaths() {
		for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
			_ = w.Add(filepath.Join(root, filepath.FromSlash(dir)))
		}
		s.addTree(w, filepath.Join(root, filepath.FromSlash(p)))
	}
}

// watchNestedDir starts watching a directory created where the rule
// sources look for nested instruction files, with its subdirectories. It
// reports whether it did.
func (s *Server) watchNestedDir(w *fsnotify.Watcher, name string) bool {
	if !isDir(name) {
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

// gitWatch is the git metadata watched for baseline moves: for every
// repository in use (a workspace folder's, an open buffer's), the
// directory with its HEAD and index and the one with its refs. A
// workspace folder below the repository's root, a linked worktree and a
// submodule keep them outside the workspace, so they are asked of git.
// objects/ and logs/ are not watched: every baseline move also writes
// HEAD, the index or a ref.
type gitWatch struct {
	mu    sync.Mutex
	w     *fsnotify.Watcher // nil while no watcher runs
	asked map[string]bool   // directories whose repository was looked up
	dirs  []changes.GitDirs // the repositories found, each once
}

// classify says whether path, absolute and clean, is a file git rewrites
// when a baseline moves: a work tree's HEAD or index, a ref or the packed
// refs. Lock files are not: git renames them onto those names.
func (g *gitWatch) classify(path string) fileChange {
	if strings.HasSuffix(path, ".lock") {
		return changeNone
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range g.dirs {
		if rel, ok := relSlash(d.Git, path); ok && (rel == "HEAD" || rel == "index") {
			return changeBaseline
		}
		if rel, ok := relSlash(d.Common, path); ok && (rel == "packed-refs" ||
			strings.HasPrefix(rel, "refs/") || strings.HasPrefix(rel, "reftable/")) {
			return changeBaseline
		}
	}
	return changeNone
}

// refsDir reports whether path is a directory in a watched repository's
// refs/, whose files and subdirectories must be watched too.
func (g *gitWatch) refsDir(path string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range g.dirs {
		if rel, ok := relSlash(d.Common, path); ok && strings.HasPrefix(rel, "refs/") {
			return true
		}
	}
	return false
}

// relSlash is path relative to dir, slash-separated, and false when path
// is not below dir.
func relSlash(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// watchRepoOf watches the git directories of the repository containing
// dir, once per dir unless again is set (a .git appeared or went since).
// Without a running watcher the directories are kept for it to add when
// it starts.
func (s *Server) watchRepoOf(ctx context.Context, dir string, again bool) {
	if dir == "" {
		return
	}
	g := &s.git
	g.mu.Lock()
	if g.asked[dir] && !again {
		g.mu.Unlock()
		return
	}
	if g.asked == nil {
		g.asked = map[string]bool{}
	}
	g.asked[dir] = true
	g.mu.Unlock()
	d, ok, err := changes.FindGitDirs(ctx, dir)
	if err != nil {
		g.mu.Lock()
		delete(g.asked, dir) // asked again next time
		g.mu.Unlock()
		s.log.Debug("cannot find the git directories", "dir", dir, "error", err)
		return
	}
	if !ok {
		return
	}
	g.mu.Lock()
	known := slices.Contains(g.dirs, d)
	if !known {
		g.dirs = append(g.dirs, d)
	}
	w := g.w
	g.mu.Unlock()
	if w != nil && (!known || again) {
		s.addGitDirs(w, d)
	}
}

// addGitDirs watches one repository's git directories: HEAD and index,
// packed-refs, and refs/ with every directory below it.
func (s *Server) addGitDirs(w *fsnotify.Watcher, d changes.GitDirs) {
	for _, dir := range []string{d.Git, d.Common} {
		if err := w.Add(dir); err != nil {
			s.log.Debug("cannot watch", "dir", dir, "error", err)
		}
	}
	s.addTree(w, filepath.Join(d.Common, "refs"))
	if st, err := os.Stat(filepath.Join(d.Common, "reftable")); err == nil && st.IsDir() {
		_ = w.Add(filepath.Join(d.Common, "reftable"))
	}
}

// startGitWatch hands the watcher to gitWatch and watches the
// repositories of the workspace folders and of the buffers already open.
func (s *Server) startGitWatch(ctx context.Context, w *fsnotify.Watcher) {
	s.git.mu.Lock()
	s.git.w = w
	s.git.mu.Unlock()
	for _, e := range s.allEngines() {
		s.watchRepoOf(ctx, e.Root(), false)
	}
	s.git.mu.Lock()
	dirs := slices.Clone(s.git.dirs)
	s.git.mu.Unlock()
	for _, d := range dirs {
		s.addGitDirs(w, d)
	}
}

func (s *Server) stopGitWatch() {
	s.git.mu.Lock()
	s.git.w = nil
	s.git.mu.Unlock()
}

// lookUpRepos looks up again the repositories of the workspace folders and
// of the buffers' baselines: a .git appeared (git init, a clone, a
// submodule) or went.
func (s *Server) lookUpRepos(ctx context.Context) {
	s.git.mu.Lock()
	dirs := make([]string, 0, len(s.git.asked))
	for dir := range s.git.asked {
		dirs = append(dirs, dir)
	}
	s.git.mu.Unlock()
	for _, e := range s.allEngines() {
		if !slices.Contains(dirs, e.Root()) {
			dirs = append(dirs, e.Root())
		}
	}
	for _, dir := range dirs {
		s.watchRepoOf(ctx, dir, true)
	}
}

// loadBufferBaseline reads a buffer's baseline at the base ref the
// settings name when it starts (loadBaseline: with its fallbacks, told to
// the user), one load of a buffer at a time, and watches the git
// directories of the repository it came from. The error is only ctx's.
func (s *Server) loadBufferBaseline(ctx context.Context, od *openDoc) error {
	od.loadMu.Lock()
	defer od.loadMu.Unlock()
	b, err := s.loadBaseline(ctx, od.folder, od.path, s.settings().BaseRef)
	if err != nil {
		return err
	}
	s.watchRepoOf(ctx, b.RepoRoot, false)
	return nil
}

// refreshBaselineOnSave re-reads a saved buffer's baseline and keeps it
// when it did not change. It catches the baseline moves the watcher
// cannot see: a git directory on a network file system, a repository
// created around the workspace after start.
func (s *Server) refreshBaselineOnSave(ctx context.Context, od *openDoc) {
	od.loadMu.Lock()
	defer od.loadMu.Unlock()
	ref := s.settings().BaseRef
	b, err := changes.Load(ctx, od.path, ref)
	if err != nil {
		s.log.Debug("cannot re-read the baseline on save", "path", od.path, "error", err)
		return
	}
	old, ok := od.folder.Engine.Baseline(od.path)
	if !ok || sameBaseline(old, b) {
		return // unchanged, or never read: opening reads it
	}
	// Read again through the engine, which caches it (and keeps the text
	// on disk as the baseline outside a repository).
	if b, err = s.loadBaseline(ctx, od.folder, od.path, ref); err != nil {
		return // the session is ending
	}
	s.watchRepoOf(ctx, b.RepoRoot, false)
	s.dropCommittedFindings(ctx, string(od.uri), old)
}

// sameBaseline reports whether a baseline just read says what the cached
// one says. Outside a repository the baseline is the text the file had
// when it was opened, which a save must not replace.
func sameBaseline(cached, read changes.Baseline) bool {
	if cached.Kind == changes.OutsideRepo && read.Kind == changes.OutsideRepo {
		return true
	}
	return cached.Kind == read.Kind && cached.RepoRoot == read.RepoRoot &&
		cached.RelPath == read.RelPath && cached.Rev == read.Rev && cached.Text == read.Text
}
