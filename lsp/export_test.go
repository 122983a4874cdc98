package lsp

import "github.com/kodustech/kodyls/agents/llm"

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
