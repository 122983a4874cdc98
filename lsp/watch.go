package lsp

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
)

// watchDebounce groups the bursts of events an editor's save or a git
// command produces into one reload.
const watchDebounce = 200 * time.Millisecond

// fileChange is what a file event means to kodyls.
type fileChange int

const (
	changeNone     fileChange = 0
	changeRules    fileChange = 1 << iota // a Kody Rule file
	changeBaseline                        // the repository's HEAD or index
)

// classify maps a changed path to what must be refreshed. fsnotify and the
// client's didChangeWatchedFiles both come through here: one mechanism, two
// inputs.
func (s *Server) classify(path string) fileChange {
	path = filepath.Clean(path)
	for _, e := range s.allEngines() {
		rel, ok := e.Rel(path)
		if !ok {
			continue
		}
		switch {
		case rel == ".kody" || rel == ".kody/rules" || (strings.HasPrefix(rel, ".kody/rules/") && (strings.HasSuffix(rel, ".md") || !strings.Contains(filepath.Base(rel), "."))):
			return changeRules
		case rel == ".git/HEAD" || rel == ".git/index" || rel == ".git/packed-refs" || strings.HasPrefix(rel, ".git/refs/"):
			return changeBaseline
		}
	}
	return changeNone
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
		s.goBackground(func(ctx context.Context) { s.applyFileChanges(ctx, what) })
	}
}

// watchFiles watches the rule directories and the git metadata of every
// workspace until the session ends.
func (s *Server) watchFiles(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("file watching unavailable; use kodyls.reloadRules after editing rules", "error", err)
		return
	}
	defer w.Close()
	for _, e := range s.allEngines() {
		root := e.Root()
		for _, dir := range []string{root, filepath.Join(root, ".kody"), filepath.Join(root, ".git")} {
			_ = w.Add(dir) // a missing directory is normal
		}
		s.addTree(w, filepath.Join(root, ".kody", "rules"))
	}
	var pending fileChange
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			what := s.classify(ev.Name)
			if what == changeNone {
				continue
			}
			if what&changeRules != 0 && ev.Has(fsnotify.Create) {
				s.addTree(w, ev.Name) // a new rules directory
			}
			pending |= what
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
