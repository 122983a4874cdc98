package lsp

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sort"
	"sync"

	"go.lsp.dev/jsonrpc2"
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
	// SourceRuleFile are the load problems of a rule file, or of a file a
	// rule file imports or references.
	SourceRuleFile = "rule-file"
)

// notifier sends a notification to the client.
type notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// publisher keeps the diagnostics of every file per source and sends the
// merged set only when it differs from what the client last received. It is
// the one place where staleness is decided: diagnostics computed for an
// older version of a document than the current one, or than one already
// published, are refused.
type publisher struct {
	conn    notifier
	log     *slog.Logger
	current func(uri.URI) (int32, bool) // the open document's version

	mu    sync.Mutex
	files map[uri.URI]*fileDiagnostics
}

type fileDiagnostics struct {
	version  int32
	sources  map[string][]protocol.Diagnostic
	lastHash [sha256.Size]byte
	lastSent int32 // the version the last notification carried
	sent     bool  // something non-empty was sent and not yet cleared
}

func newPublisher(conn notifier, log *slog.Logger, current func(uri.URI) (int32, bool)) *publisher {
	if current == nil {
		current = func(uri.URI) (int32, bool) { return 0, true } // no document store: every version is current
	}
	return &publisher{conn: conn, log: log, current: current, files: map[uri.URI]*fileDiagnostics{}}
}

// Set replaces the diagnostics of one source for a file and publishes the
// merged set if it changed. version is the document version the diagnostics
// were computed for (0 when not tied to an open buffer). It reports false,
// publishing nothing, when version is older than the document's current
// version or than what was already published.
func (p *publisher) Set(ctx context.Context, u uri.URI, source string, version int32, diags []protocol.Diagnostic) bool {
	return p.SetSources(ctx, u, version, map[string][]protocol.Diagnostic{source: diags})
}

// SetSources is Set for several sources at once, published together.
func (p *publisher) SetSources(ctx context.Context, u uri.URI, version int32, sources map[string][]protocol.Diagnostic) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if version > 0 {
		if cur, open := p.current(u); !open || version < cur {
			return false
		}
	}
	f := p.files[u]
	if f != nil && version > 0 && version < f.version {
		return false
	}
	if f == nil {
		empty := true
		for _, d := range sources {
			empty = empty && len(d) == 0
		}
		if empty {
			return true
		}
		f = &fileDiagnostics{sources: map[string][]protocol.Diagnostic{}}
		p.files[u] = f
	}
	for source, diags := range sources {
		if len(diags) == 0 {
			delete(f.sources, source)
		} else {
			f.sources[source] = diags
		}
	}
	if version > 0 {
		f.version = version
	}
	p.publishLocked(ctx, u, f)
	return true
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
	// An unchanged set is not re-sent for the version it was sent for. It is
	// re-sent for a newer version: clients that check the version (Helix)
	// drop a notification for a version older than their buffer's, so when
	// the user typed on while the last one was on its way, only the set for
	// the newer version is ever shown.
	// Encoded once, for the hash and for the wire: with thousands of
	// findings the encoding is most of a publish's cost. The same set for
	// the same version encodes the same.
	body, err := protocol.Marshal(params)
	if err != nil {
		p.log.Error("encode diagnostics", "uri", u, "error", err)
		return
	}
	h := sha256.Sum256(body)
	if len(merged) == 0 {
		// A clear of an open buffer is re-sent for newer versions too, for
		// the same reason: a dropped clear would leave a stale finding.
		// Once no buffer holds the file, nothing more is needed.
		if !f.sent && (f.version == 0 || f.version == f.lastSent) {
			if f.version == 0 {
				delete(p.files, u)
			}
			return
		}
	} else if f.sent && h == f.lastHash && f.version == f.lastSent {
		return
	}
	if err := p.conn.Notify(ctx, protocol.MethodTextDocumentPublishDiagnostics, jsonrpc2.RawMessage(body)); err != nil {
		p.log.Warn("publish diagnostics", "uri", u, "error", err)
		return
	}
	f.lastHash, f.lastSent = h, f.version
	f.sent = len(merged) > 0
	if len(merged) == 0 && f.version == 0 {
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
