package lsp

import (
	"context"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/rulecheck"
	"github.com/kodustech/kodyls/analysis/workspace"
)

// didChangeWorkspaceFolders follows the folders the editor adds to the
// workspace and removes from it during the session. An added folder is
// set up as the folders named at initialize are: its rules loaded, its
// files and git directories watched, the open buffers it holds checked
// with its rules. A removed folder's watches, builds and pull-request
// violations go, and its open buffers' findings with them (or they are
// checked with the rules of another folder that holds them). Folders that
// are not file: URIs are skipped, as at initialize.
//
// The folder list changes here, on the read loop, so the notifications
// that follow (a didOpen of a file of the new folder) see it; the rules
// load in the background.
func (s *Server) didChangeWorkspaceFolders(ctx context.Context, ev *protocol.WorkspaceFoldersChangeEvent) {
	var added []*workspace.Folder
	var removed, newRemote []string
	// The folders that changed, as the editor names them.
	var changed []uri.URI
	s.mu.Lock()
	for _, wf := range ev.Removed {
		if wf.URI == "" {
			continue
		}
		if !wf.URI.IsFile() {
			s.remoteFolders = slices.DeleteFunc(s.remoteFolders, func(r string) bool { return r == string(wf.URI) })
			continue
		}
		root := canonicalPath(wf.URI.FsPath())
		i := slices.IndexFunc(s.folders, func(f *workspace.Folder) bool { return f.Root == root })
		if i < 0 {
			continue
		}
		s.folders = slices.Delete(s.folders, i, i+1)
		delete(s.givenRoots, root)
		delete(s.reviewProbs, root)
		removed = append(removed, root)
		changed = append(changed, wf.URI)
	}
	for _, wf := range ev.Added {
		if wf.URI == "" {
			continue
		}
		if !wf.URI.IsFile() {
			if !slices.Contains(s.remoteFolders, string(wf.URI)) {
				s.remoteFolders = append(s.remoteFolders, string(wf.URI))
				newRemote = append(newRemote, string(wf.URI))
			}
			continue
		}
		lf := localFolder(wf.URI.FsPath())
		if slices.ContainsFunc(s.folders, func(f *workspace.Folder) bool { return f.Root == lf.root }) {
			continue
		}
		f := s.svc.Folder(lf.root)
		s.folders = append(s.folders, f)
		if lf.given != lf.root {
			if s.givenRoots == nil {
				s.givenRoots = map[string]string{}
			}
			s.givenRoots[lf.root] = lf.given
		}
		added = append(added, f)
		changed = append(changed, wf.URI)
	}
	s.mu.Unlock()
	s.tellRemoteFolders(newRemote)
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	addedRoots := make([]string, len(added))
	for i, f := range added {
		addedRoots[i] = f.Root
	}
	s.log.Info("workspace folders changed", "added", addedRoots, "removed", removed)

	// What the panel lists changes for the folders (their broken rule
	// files, their rules not checked offline), for the buffers that
	// change folder and for the files of the removed folders'
	// pull-request violations.
	var dropped []string
	for _, root := range removed {
		dropped = append(dropped, s.changeSet.drop(root)...)
	}
	if len(removed) > 0 {
		s.stopBuilds(func(root string) bool { return slices.Contains(removed, root) })
	}
	changed = append(changed, s.replaceMovedDocs(ctx)...)
	s.followFolderWatches()

	done := s.work.add("")
	s.goBackground(func(ctx context.Context) {
		defer done()
		if len(added) > 0 {
			s.tellUnreadableFolders(added)
			s.reloadFolders(ctx, nil, added)
			s.svc.RecordWorkspaces(ctx, addedRoots)
			// The files the new rules were read from are watched too.
			s.followFolderWatches()
		}
		s.notifyChangeSetFiles(ctx, dropped)
		s.notifyViolationsChanged(ctx, changed...)
	})
}

// replaceMovedDocs gives every open buffer whose workspace folder changed
// (its folder left the workspace, or a folder nested closer to it came)
// a fresh state in its new folder: what was found with the old folder's
// rules and baseline is cleared, and the buffer is checked again in the
// new one, as if just opened there. It returns the buffers that moved.
func (s *Server) replaceMovedDocs(ctx context.Context) []uri.URI {
	var moved []uri.URI
	for _, od := range s.openDocs() {
		if od.path == "" || s.folderFor(od.path) == od.folder {
			continue
		}
		key := string(od.uri)
		fresh := &openDoc{uri: od.uri, path: od.path, language: od.language, openVersion: od.openVersion}
		s.placeDoc(fresh)
		od.mu.Lock()
		fresh.toldRejected = od.toldRejected
		od.mu.Unlock()
		s.mu.Lock()
		if s.open[key] != od {
			s.mu.Unlock()
			continue
		}
		s.open[key] = fresh
		s.mu.Unlock()
		s.stopIdle(od)
		if od.folder != nil {
			od.folder.Engine.ForgetBaseline(od.path)
		}
		s.reviews.Forget(key)
		s.rules.forget(key)
		// Other servers' and the build's diagnostics stay; the build's
		// leave with their folder's builds.
		s.diags.SetSources(ctx, od.uri, 0, map[string][]protocol.Diagnostic{SourceRules: nil, SourceReview: nil, SourceRuleFile: nil})
		moved = append(moved, od.uri)
		s.attach(fresh)
		// A check of the old folder may still be running: the next
		// check comes after it.
		s.checks.Trigger(key)
	}
	return moved
}

// folderWatches hands the file watcher the changes of the workspace
// folders, which it follows on its own goroutine.
type folderWatches struct {
	mu sync.Mutex
	// pending releases the work waiting for the watcher to follow them,
	// so that kodyls/awaitIdle does not answer before.
	pending []func()
	// stopped: no watcher runs (it could not start, or the session
	// ended): nothing waits for it.
	stopped bool
	wake    chan struct{}
}

// followFolderWatches has the file watcher watch the workspace folders
// added since it last looked and stop watching those removed. Before the
// watcher started it has nothing to do: the watcher starts with the
// folders of the moment.
func (s *Server) followFolderWatches() {
	if !s.initializedSeen.Load() {
		return
	}
	fw := &s.folderWatch
	fw.mu.Lock()
	if fw.stopped {
		fw.mu.Unlock()
		return
	}
	fw.pending = append(fw.pending, s.work.add(""))
	fw.mu.Unlock()
	select {
	case fw.wake <- struct{}{}:
	default: // already woken; it takes every pending request
	}
}

// takeFolderWatches returns the work waiting for the watcher; stop marks
// that no watcher will run any more.
func (s *Server) takeFolderWatches(stop bool) []func() {
	fw := &s.folderWatch
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.stopped = fw.stopped || stop
	pending := fw.pending
	fw.pending = nil
	return pending
}

// syncFolderWatches watches the workspace folders not in watched and
// stops watching those in watched that left the workspace; watched is
// updated.
func (s *Server) syncFolderWatches(ctx context.Context, w *fsnotify.Watcher, watched map[string]bool) {
	current := map[string]*rulecheck.Engine{}
	for _, e := range s.allEngines() {
		current[e.Root()] = e
	}
	var gone []string
	for root := range watched {
		if current[root] == nil {
			gone = append(gone, root)
			delete(watched, root)
		}
	}
	if len(gone) > 0 {
		s.unwatchFolders(ctx, w, gone, current)
	}
	for root, e := range current {
		if !watched[root] {
			watched[root] = true
			s.watchWorkspace(w, e)
			s.watchRepoOf(ctx, root, false)
		}
	}
	s.watchRuleFiles(w)
}

// unwatchFolders stops watching the directories of the folders that left
// the workspace, but those inside a folder still in it, and forgets their
// repositories' git directories; the repositories of the remaining folders
// are watched again, since one of them may be a removed folder's.
func (s *Server) unwatchFolders(ctx context.Context, w *fsnotify.Watcher, gone []string, current map[string]*rulecheck.Engine) {
	under := func(dir, path string) bool {
		_, ok := relSlash(dir, path)
		return path == dir || ok
	}
	inGone := func(path string) bool {
		return slices.ContainsFunc(gone, func(root string) bool { return under(root, path) })
	}
	kept := func(path string) bool {
		for root := range current {
			if under(root, path) {
				return true
			}
		}
		return false
	}
	g := &s.git
	g.mu.Lock()
	for dir := range g.asked {
		if inGone(dir) {
			delete(g.asked, dir)
		}
	}
	g.dirs = slices.DeleteFunc(g.dirs, func(d changes.GitDirs) bool { return inGone(d.Git) || inGone(d.Common) })
	g.mu.Unlock()
	for _, p := range w.WatchList() {
		if inGone(p) && !kept(p) {
			_ = w.Remove(p)
		}
	}
	for root := range current {
		s.watchRepoOf(ctx, root, true)
	}
}
