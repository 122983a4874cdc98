package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// builds remembers, per workspace root, the files showing build
// diagnostics, so that a new build clears those it no longer reports. The
// builds themselves run in workspace.Folder.
type builds struct {
	mu    sync.Mutex
	shown map[string][]uri.URI // by root
	// told are the causes of failed builds told to the user, by causeKey.
	told map[string]bool
	// running are the builds started and not yet ended, by number.
	running map[uint64]runningBuild
	next    uint64
	// gen counts the stops of each root's builds (stopBuilds): a build
	// started before one shows nothing.
	gen map[string]uint64
	// publishing serializes the publishing of builds' results and their
	// clearing by stopBuilds, so that a result published while the
	// builds are stopped cannot outlive the stop.
	publishing sync.Mutex
}

// runningBuild is a build on save still running.
type runningBuild struct {
	root   string
	cancel context.CancelFunc
}

// buildOnSave starts the configured build for the workspace of a saved
// file; a newer save cancels it.
func (s *Server) buildOnSave(od *openDoc) {
	cfg := s.settings().Build
	if cfg.OnSave == "" || od.folder == nil {
		return
	}
	root := od.folder.Root
	ctx, cancel := context.WithCancel(s.ctx)
	s.build.mu.Lock()
	s.build.next++
	id, gen := s.build.next, s.build.gen[root]
	if s.build.running == nil {
		s.build.running = map[uint64]runningBuild{}
	}
	s.build.running[id] = runningBuild{root: root, cancel: cancel}
	s.build.mu.Unlock()
	b := od.folder.StartBuild(ctx, cfg.OnSave, time.Duration(cfg.TimeoutMS)*time.Millisecond)
	done := s.work.add("")
	s.goBackground(func(context.Context) {
		defer done()
		defer func() {
			s.build.mu.Lock()
			delete(s.build.running, id)
			s.build.mu.Unlock()
			cancel()
		}()
		errs, err := b.Wait()
		switch {
		case errors.Is(err, workspace.ErrBuildCancelled):
			s.log.Info("build cancelled", "workspace", root, "reason", err)
		case errors.Is(err, workspace.ErrBuildTimeout):
			// No newer build is coming: the last one's errors, on lines
			// that may no longer hold them, must not stay as if current,
			// and a build that never finished must not look clean.
			s.log.Warn("build on save", "error", err)
			if !s.publishBuild(root, gen, nil) {
				return
			}
			s.buildFailed(fmt.Sprintf("kodyls: build.onSave %q did not finish within %s (build.timeoutMs)", cfg.OnSave, time.Duration(cfg.TimeoutMS)*time.Millisecond))
		case errors.Is(err, workspace.ErrBuildUnrecognized):
			// The earlier build's errors are no longer true either.
			s.log.Warn("build on save", "error", err)
			if !s.publishBuild(root, gen, nil) {
				return
			}
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
			s.log.Info("build on save finished", "workspace", root, "command", cfg.OnSave, "errors", len(errs))
			if !s.publishBuild(root, gen, errs) {
				return
			}
			// A build that ran: a failure after it is a new one, told again.
			s.build.mu.Lock()
			s.build.told = nil
			s.build.mu.Unlock()
		}
	})
}

// stopBuilds cancels the running builds of the workspace roots stop
// reports, clears the build diagnostics shown for them and forgets the
// failures told: build.onSave changed (or was turned off), or the folder
// left the workspace, so no build is coming to replace them.
func (s *Server) stopBuilds(stop func(root string) bool) {
	s.build.publishing.Lock()
	defer s.build.publishing.Unlock()
	s.build.mu.Lock()
	if s.build.gen == nil {
		s.build.gen = map[string]uint64{}
	}
	stopped := map[string]bool{}
	for _, rb := range s.build.running {
		if stop(rb.root) {
			rb.cancel()
			stopped[rb.root] = true
		}
	}
	var clear []uri.URI
	for root, us := range s.build.shown {
		if stop(root) {
			clear = append(clear, us...)
			delete(s.build.shown, root)
			stopped[root] = true
		}
	}
	for root := range stopped {
		s.build.gen[root]++
	}
	s.build.told = nil
	s.build.mu.Unlock()
	for _, u := range clear {
		s.diags.Set(s.ctx, u, SourceBuild, 0, nil)
	}
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
// clears those of files that no longer have any. A build started before
// the builds were last stopped (gen) shows nothing: publishBuild reports
// false.
func (s *Server) publishBuild(root string, gen uint64, errs []errparse.Error) bool {
	byFile := map[uri.URI][]protocol.Diagnostic{}
	texts := map[uri.URI]*textdoc.Document{}
	for _, e := range errs {
		if e.File == "" || e.Line == 0 {
			continue
		}
		path := e.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, filepath.FromSlash(path))
		}
		u := s.clientURI(canonicalPath(path))
		doc, seen := texts[u]
		if !seen {
			doc = s.buildText(u, path)
			texts[u] = doc
		}
		sev := protocol.DiagnosticSeverityError
		switch e.Severity {
		case "warning":
			sev = protocol.DiagnosticSeverityWarning
		case "note":
			sev = protocol.DiagnosticSeverityInformation
		}
		d := protocol.Diagnostic{
			Range:    s.buildRange(doc, e),
			Severity: sev,
			Source:   protocol.NewOptional("build"),
			Message:  protocol.String(e.Message),
		}
		if e.Code != "" {
			d.Code = protocol.String(e.Code)
		}
		byFile[u] = append(byFile[u], d)
	}
	s.build.publishing.Lock()
	defer s.build.publishing.Unlock()
	s.build.mu.Lock()
	if gen != s.build.gen[root] {
		s.build.mu.Unlock()
		return false
	}
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
	return true
}

// buildText is the text a build error's column is counted in: the open
// buffer's, else the file's on disk; nil when neither can be read.
func (s *Server) buildText(u uri.URI, path string) *textdoc.Document {
	if doc, ok := s.docs.Get(string(u)); ok {
		return doc
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return textdoc.New(string(u), 0, string(data))
}

// buildRange is the range of a build error: the character at its column.
// The tool counts the column in its own unit (bytes for go and gcc,
// characters for rustc, UTF-16 code units for javac and tsc: see
// errparse.ColumnUnit), the editor in the negotiated position encoding:
// the column is placed in the line's text and counted again. With no text
// to read, the column is taken as it is.
func (s *Server) buildRange(doc *textdoc.Document, e errparse.Error) protocol.Range {
	line := uint32(e.Line - 1)
	start := uint32(max(e.Column-1, 0))
	end := start + 1
	if doc != nil && e.Line <= doc.LineCount() {
		text := doc.Line(e.Line - 1)
		off := e.ColumnUnit.ByteOffset(text, e.Column)
		cols := doc.Columns(e.Line-1, s.encoding)
		start, end = cols.Char(off), cols.Char(off)+1
		if off < len(text) {
			_, size := utf8.DecodeRuneInString(text[off:])
			end = cols.Char(off + size)
		}
	}
	return protocol.Range{Start: protocol.Position{Line: line, Character: start}, End: protocol.Position{Line: line, Character: end}}
}
