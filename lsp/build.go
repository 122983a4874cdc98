package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/analysis/workspace"
)

// builds remembers, per workspace root, the files showing build
// diagnostics, so that a new build clears those it no longer reports. The
// builds themselves run in workspace.Folder.
type builds struct {
	mu    sync.Mutex
	shown map[string][]uri.URI // by root
	// told are the causes of failed builds told to the user, by causeKey.
	told map[string]bool
}

// buildOnSave starts the configured build for the workspace of a saved
// file; a newer save cancels it.
func (s *Server) buildOnSave(od *openDoc) {
	cfg := s.settings().Build
	if cfg.OnSave == "" || od.folder == nil {
		return
	}
	b := od.folder.StartBuild(s.ctx, cfg.OnSave, time.Duration(cfg.TimeoutMS)*time.Millisecond)
	done := s.work.add("")
	s.goBackground(func(context.Context) {
		defer done()
		errs, err := b.Wait()
		switch {
		case errors.Is(err, workspace.ErrBuildCancelled):
			s.log.Info("build cancelled", "workspace", od.folder.Root, "reason", err)
		case errors.Is(err, workspace.ErrBuildUnrecognized):
			// The earlier build's errors are no longer true either.
			s.log.Warn("build on save", "error", err)
			s.publishBuild(od.folder.Root, nil)
			var bf *workspace.BuildFailure
			if errors.As(err, &bf) {
				last := bf.LastLine
				if last == "" {
					last = "it printed nothing"
				}
				s.buildFailed(fmt.Sprintf("kodyls: build.onSave %q failed (%s) with no error kodyls can show on a line: %s", bf.Command, bf.Status, last))
			}
		case err != nil:
			s.log.Warn("build on save", "error", err)
			s.buildFailed(fmt.Sprintf("kodyls: build.onSave: %v", err))
		default:
			s.log.Info("build on save finished", "workspace", od.folder.Root, "command", cfg.OnSave, "errors", len(errs))
			// A build that ran: a failure after it is a new one, told again.
			s.build.mu.Lock()
			s.build.told = nil
			s.build.mu.Unlock()
			s.publishBuild(od.folder.Root, errs)
		}
	})
}

// buildFailed tells the user, once per cause, that the build on save
// failed with nothing to show as a diagnostic: a command that does not
// exist must not look like a clean build.
func (s *Server) buildFailed(msg string) {
	key := causeKey(msg)
	s.build.mu.Lock()
	told := s.build.told[key]
	if !told {
		if s.build.told == nil {
			s.build.told = map[string]bool{}
		}
		s.build.told[key] = true
	}
	s.build.mu.Unlock()
	if told || s.conn == nil {
		return
	}
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
		&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// publishBuild shows a build's errors as diagnostics (source "build") and
// clears those of files that no longer have any.
func (s *Server) publishBuild(root string, errs []errparse.Error) {
	byFile := map[uri.URI][]protocol.Diagnostic{}
	for _, e := range errs {
		if e.File == "" || e.Line == 0 {
			continue
		}
		path := e.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, filepath.FromSlash(path))
		}
		u := s.clientURI(canonicalPath(path))
		line := uint32(e.Line - 1)
		col := uint32(max(e.Column-1, 0))
		sev := protocol.DiagnosticSeverityError
		switch e.Severity {
		case "warning":
			sev = protocol.DiagnosticSeverityWarning
		case "note":
			sev = protocol.DiagnosticSeverityInformation
		}
		d := protocol.Diagnostic{
			Range:    protocol.Range{Start: protocol.Position{Line: line, Character: col}, End: protocol.Position{Line: line, Character: col + 1}},
			Severity: sev,
			Source:   protocol.NewOptional("build"),
			Message:  protocol.String(e.Message),
		}
		if e.Code != "" {
			d.Code = protocol.String(e.Code)
		}
		byFile[u] = append(byFile[u], d)
	}
	s.build.mu.Lock()
	prev := s.build.shown[root]
	var now []uri.URI
	for u := range byFile {
		now = append(now, u)
	}
	s.build.shown[root] = now
	s.build.mu.Unlock()
	for _, u := range prev {
		if _, still := byFile[u]; !still {
			s.diags.Set(s.ctx, u, SourceBuild, 0, nil)
		}
	}
	for u, ds := range byFile {
		s.diags.Set(s.ctx, u, SourceBuild, 0, ds)
	}
}
