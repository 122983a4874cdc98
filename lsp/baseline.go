package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/workspace"
)

// loadBaseline reads and caches the baseline of a buffer at ref. When the
// baseline cannot be read there, the buffer is compared with what
// workspace.Folder.LoadBaseline falls back to (HEAD, or the file as it is
// on disk now) and the user is told once per cause: a baseRef that names
// no commit must not pass for "every line changed", nor for nothing said.
// The error is only ctx's.
func (s *Server) loadBaseline(ctx context.Context, folder *workspace.Folder, path, ref string) (changes.Baseline, error) {
	old, _ := folder.Engine.Baseline(path)
	b, fb, err := folder.LoadBaseline(ctx, path, ref)
	if err != nil {
		return b, err
	}
	s.dropClosedBaseline(folder, path)
	if fb != nil {
		s.baselineFallback(fb)
	}
	if b.Kind == changes.Ignored && old.Kind != changes.Ignored {
		// As `kodyls review` leaves it out: no detector, no review.
		s.log.Info("not checked", "file", path, "reason", string(workspace.GitIgnored))
	}
	return b, nil
}

// baselineFallback logs why a baseline could not be read and tells the
// user, once per cause (the same message for every file of a repository).
func (s *Server) baselineFallback(fb *workspace.BaselineFallback) {
	s.mu.Lock()
	from := ""
	if o := s.cfg.Origin["baseRef"]; o != "" && o != "default" {
		from = " (set in " + o + ")"
	}
	s.mu.Unlock()
	var msg string
	if fb.HEAD {
		msg = fmt.Sprintf("kodyls: baseRef %q%s cannot be read: %s; comparing with HEAD until it is fixed", fb.Ref, from, fb.Reason)
	} else {
		msg = fmt.Sprintf("kodyls: cannot compare with baseRef %q%s: %s; until it is fixed, files are compared with their content when opened, so only the lines edited since are checked", fb.Ref, from, fb.Reason)
	}
	s.mu.Lock()
	told := s.baselineTold[msg]
	if !told {
		if s.baselineTold == nil {
			s.baselineTold = map[string]bool{}
		}
		s.baselineTold[msg] = true
	}
	s.mu.Unlock()
	if told {
		return
	}
	s.log.Warn("cannot read the baseline", "baseRef", fb.Ref, "reason", fb.Reason, "comparedWithHEAD", fb.HEAD)
	if s.conn == nil {
		return
	}
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
		&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// dropClosedBaseline forgets a baseline just read for a file no buffer
// holds any more: closed while git read it, its didClose came before the
// load ended and would otherwise leave the file's text cached for the rest
// of the session. Under s.mu, so that a didOpen of the same file either
// came before (and the baseline stays) or loads its own after.
func (s *Server) dropClosedBaseline(folder *workspace.Folder, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, od := range s.open {
		if od.path == path {
			return
		}
	}
	folder.Engine.ForgetBaseline(path)
}
