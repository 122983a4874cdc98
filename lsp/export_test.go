package lsp

import (
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kodustech/kodyls/agents/llm"
)

// ReviewDegraded records a finished review's degraded stages, as a review
// does, for tests of what the user is told.
func (s *Server) ReviewDegraded(degraded []string) { s.reviewDegraded(degraded, nil) }

// ToldCauses is how many degraded causes an editor without the status
// item was told.
func (s *Server) ToldCauses() int {
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	return len(s.status.told)
}

// CachesBaseline reports whether a workspace folder keeps the baseline
// of the file at path in memory.
func (s *Server) CachesBaseline(path string) bool {
	for _, f := range s.allFolders() {
		if _, ok := f.Engine.Baseline(path); ok {
			return true
		}
	}
	return false
}

// LLMStatusChanged hands the server a status of the gateway, as the
// gateway's breaker does.
func (s *Server) LLMStatusChanged(st llm.Status) { s.llmStatusChanged(st) }

// WorkspaceWatches is how many times the file watcher walked a whole
// workspace to watch its directories.
func (s *Server) WorkspaceWatches() int { return int(s.workspaceWatches.Load()) }

// UnwatchGit stops watching the repositories' git directories, as if the
// kernel dropped their events.
func (s *Server) UnwatchGit() {
	s.git.mu.Lock()
	w, dirs := s.git.w, slices.Clone(s.git.dirs)
	s.git.mu.Unlock()
	if w == nil {
		panic("no file watcher")
	}
	for _, p := range w.WatchList() {
		for _, d := range dirs {
			_, inGit := relSlash(d.Git, p)
			_, inCommon := relSlash(d.Common, p)
			if p == d.Git || p == d.Common || inGit || inCommon {
				_ = w.Remove(p)
			}
		}
	}
}

// WatcherOverflows tells the file watcher that the kernel dropped events,
// as fsnotify does when its queue overflows.
func (s *Server) WatcherOverflows() {
	s.git.mu.Lock()
	w := s.git.w
	s.git.mu.Unlock()
	if w == nil {
		panic("no file watcher")
	}
	select {
	case w.Errors <- fsnotify.ErrEventOverflow:
	case <-time.After(10 * time.Second):
		panic("the file watcher does not read its errors")
	}
}
