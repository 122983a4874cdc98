package lsp

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/errparse"
)

// builds runs the build-on-save command of each workspace: one run at a
// time per workspace, a newer save cancelling the running one and killing
// its whole process group (compilers spawn children).
type builds struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc // by workspace root
	shown   map[string][]uri.URI          // files with build diagnostics, by root
}

// buildOnSave starts the configured build for the workspace of a saved
// file.
func (s *Server) buildOnSave(od *openDoc) {
	cfg := s.settings().Build
	if cfg.OnSave == "" || od.folder == nil {
		return
	}
	root := od.folder.Root
	ctx, cancel := context.WithTimeout(s.ctx, time.Duration(cfg.TimeoutMS)*time.Millisecond)
	s.build.mu.Lock()
	if prev := s.build.running[root]; prev != nil {
		prev()
	}
	s.build.running[root] = cancel
	s.build.mu.Unlock()
	done := s.work.add("")
	s.goBackground(func(context.Context) {
		defer done()
		defer cancel()
		out, err := runBuild(ctx, root, cfg.OnSave)
		if ctx.Err() != nil {
			s.log.Info("build cancelled", "workspace", root, "reason", ctx.Err())
			return
		}
		if err != nil && !isExit(err) {
			s.log.Warn("build command failed to run", "command", cfg.OnSave, "error", err)
			return
		}
		s.publishBuild(root, errparse.Parse(out, errparse.Options{Workspace: root}))
	})
}

// runBuild runs command with sh in its own process group, so cancelling
// kills the compilers it started too.
func runBuild(ctx context.Context, root, command string) (string, error) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.String(), ctx.Err()
	}
}

func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
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
		u := fileURI(filepath.Clean(path))
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
