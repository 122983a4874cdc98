package lsp

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Diagnostic sources. Each feature publishes under its own source, and the
// publisher merges them per file, so a rules update never erases review
// findings and the other way round.
const (
	SourceRules  = "rules"
	SourceReview = "review"
	SourceBuild  = "build"
)

// notifier sends a notification to the client.
type notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// publisher keeps the diagnostics of every file per source and sends the
// merged set only when it differs from what the client last received.
type publisher struct {
	conn notifier
	log  *slog.Logger

	mu    sync.Mutex
	files map[uri.URI]*fileDiagnostics
}

type fileDiagnostics struct {
	version  int32
	sources  map[string][]protocol.Diagnostic
	lastHash [sha256.Size]byte
	sent     bool // something non-empty was sent and not yet cleared
}

func newPublisher(conn notifier, log *slog.Logger) *publisher {
	return &publisher{conn: conn, log: log, files: map[uri.URI]*fileDiagnostics{}}
}

// Set replaces the diagnostics of one source for a file and publishes the
// merged set if it changed. version is the document version the diagnostics
// were computed for (0 when not tied to an open buffer).
func (p *publisher) Set(ctx context.Context, u uri.URI, source string, version int32, diags []protocol.Diagnostic) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.files[u]
	if f == nil {
		if len(diags) == 0 {
			return
		}
		f = &fileDiagnostics{sources: map[string][]protocol.Diagnostic{}}
		p.files[u] = f
	}
	if len(diags) == 0 {
		delete(f.sources, source)
	} else {
		f.sources[source] = diags
	}
	f.version = version
	p.publishLocked(ctx, u, f)
}

// Clear removes every source's diagnostics for a file, publishing [] if the
// client was showing any.
func (p *publisher) Clear(ctx context.Context, u uri.URI) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.files[u]
	if f == nil {
		return
	}
	f.sources = map[string][]protocol.Diagnostic{}
	f.version = 0
	p.publishLocked(ctx, u, f)
}

// Get returns the merged diagnostics currently published for a file.
func (p *publisher) Get(u uri.URI) []protocol.Diagnostic {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.files[u]
	if f == nil {
		return nil
	}
	return merge(f.sources)
}

func (p *publisher) publishLocked(ctx context.Context, u uri.URI, f *fileDiagnostics) {
	merged := merge(f.sources)
	params := &protocol.PublishDiagnosticsParams{URI: u, Diagnostics: merged}
	if f.version > 0 {
		params.Version = protocol.NewOptional(f.version)
	}
	// The hash covers the diagnostics only: a new version with the same
	// findings need not be re-sent.
	body, err := protocol.Marshal(merged)
	if err != nil {
		p.log.Error("encode diagnostics", "uri", u, "error", err)
		return
	}
	h := sha256.Sum256(body)
	if len(merged) == 0 {
		if !f.sent {
			delete(p.files, u)
			return
		}
	} else if f.sent && h == f.lastHash {
		return
	}
	if err := p.conn.Notify(ctx, protocol.MethodTextDocumentPublishDiagnostics, params); err != nil {
		p.log.Warn("publish diagnostics", "uri", u, "error", err)
		return
	}
	f.lastHash = h
	f.sent = len(merged) > 0
	if len(merged) == 0 {
		delete(p.files, u)
	}
}

// merge concatenates the sources in a stable order and sorts by position, so
// that the same findings always hash the same.
func merge(sources map[string][]protocol.Diagnostic) []protocol.Diagnostic {
	names := make([]string, 0, len(sources))
	n := 0
	for name, d := range sources {
		names = append(names, name)
		n += len(d)
	}
	sort.Strings(names)
	out := make([]protocol.Diagnostic, 0, n)
	for _, name := range names {
		out = append(out, sources[name]...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Range.Start, out[j].Range.Start
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Character < b.Character
	})
	return out
}
