package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

type recorder struct {
	mu   sync.Mutex
	sent []*protocol.PublishDiagnosticsParams
}

func (r *recorder) Notify(_ context.Context, method string, params any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// As the editor reads it: the publisher sends the encoded params.
	var p protocol.PublishDiagnosticsParams
	if err := protocol.Unmarshal(params.(jsonrpc2.RawMessage), &p); err != nil {
		return err
	}
	r.sent = append(r.sent, &p)
	return nil
}

func diag(line uint32, msg string) protocol.Diagnostic {
	return protocol.Diagnostic{Range: protocol.Range{Start: protocol.Position{Line: line}}, Message: protocol.String(msg)}
}

func TestPublisherMergesSourcesAndSendsOnlyChanges(t *testing.T) {
	rec := &recorder{}
	p := newPublisher(rec, slog.New(slog.DiscardHandler), nil)
	ctx := context.Background()
	u := uri.File("/w/a.go")

	p.Set(ctx, u, SourceRules, 1, []protocol.Diagnostic{diag(5, "rule")})
	p.Set(ctx, u, SourceReview, 2, []protocol.Diagnostic{diag(1, "review")})
	if len(rec.sent) != 2 {
		t.Fatalf("sent %d, want 2", len(rec.sent))
	}
	last := rec.sent[1]
	if len(last.Diagnostics) != 2 || last.Diagnostics[0].Range.Start.Line != 1 {
		t.Fatalf("merged set not sorted by position: %+v", last.Diagnostics)
	}
	if v, _ := last.Version.Get(); v != 2 {
		t.Fatalf("version %d, want 2", v)
	}

	// The same findings again for the same version: nothing is sent.
	p.Set(ctx, u, SourceRules, 2, []protocol.Diagnostic{diag(5, "rule")})
	if len(rec.sent) != 2 {
		t.Fatalf("unchanged set re-sent for the same version")
	}
	// For a newer version they are sent again, with that version: a client
	// that drops notifications for older versions than its buffer's (Helix)
	// would otherwise never show them.
	p.Set(ctx, u, SourceRules, 3, []protocol.Diagnostic{diag(5, "rule")})
	if len(rec.sent) != 3 {
		t.Fatalf("unchanged set not re-sent for a newer version")
	}
	if v, _ := rec.sent[2].Version.Get(); v != 3 || len(rec.sent[2].Diagnostics) != 2 {
		t.Fatalf("re-sent version %d with %d diagnostics, want 3 with 2", v, len(rec.sent[2].Diagnostics))
	}
	// One source cleared: the other stays.
	p.Set(ctx, u, SourceRules, 4, nil)
	if got := rec.sent[len(rec.sent)-1].Diagnostics; len(got) != 1 || got[0].Message != protocol.String("review") {
		t.Fatalf("after clearing rules: %+v", got)
	}
	// Everything cleared while the buffer is open: [] for version 5, and
	// again for version 6 (a clear the client dropped as older than its
	// buffer would leave a stale finding), but once per version.
	p.Set(ctx, u, SourceReview, 5, nil)
	n := len(rec.sent)
	if v, _ := rec.sent[n-1].Version.Get(); len(rec.sent[n-1].Diagnostics) != 0 || v != 5 {
		t.Fatalf("clear sent %d diagnostics for version %d, want none for 5", len(rec.sent[n-1].Diagnostics), v)
	}
	p.Set(ctx, u, SourceReview, 5, nil)
	if len(rec.sent) != n {
		t.Fatal("a clear re-sent for the same version")
	}
	p.Set(ctx, u, SourceRules, 6, nil)
	if v, _ := rec.sent[len(rec.sent)-1].Version.Get(); len(rec.sent) != n+1 || v != 6 {
		t.Fatalf("a clear not re-sent for version 6 (%d sent, last for %d)", len(rec.sent)-n, v)
	}
	p.Set(ctx, u, SourceRules, 6, []protocol.Diagnostic{diag(1, "again")})
	p.Set(ctx, u, SourceReview, 6, []protocol.Diagnostic{diag(2, "review")})
	if got := rec.sent[len(rec.sent)-1].Diagnostics; len(got) != 2 {
		t.Fatalf("after new findings: %+v", got)
	}
	// Clearing everything sends [] (never null).
	p.Clear(ctx, u)
	final := rec.sent[len(rec.sent)-1]
	body, _ := protocol.Marshal(final)
	var wire struct {
		Diagnostics json.RawMessage `json:"diagnostics"`
	}
	_ = json.Unmarshal(body, &wire)
	if string(wire.Diagnostics) != "[]" {
		t.Fatalf("cleared file sent %s, want []", wire.Diagnostics)
	}
	// Clearing a clear file sends nothing more.
	n = len(rec.sent)
	p.Clear(ctx, u)
	p.Set(ctx, u, SourceRules, 5, nil)
	if len(rec.sent) != n {
		t.Fatalf("empty set re-sent for a file already clear")
	}
}

// TestPublisherRefusesStaleVersions: a producer that finishes after the
// user typed on must not overwrite newer findings with ones whose ranges
// refer to the old text, whatever the producer.
func TestPublisherRefusesStaleVersions(t *testing.T) {
	rec := &recorder{}
	docVersion := int32(5)
	open := true
	p := newPublisher(rec, slog.New(slog.DiscardHandler), func(uri.URI) (int32, bool) { return docVersion, open })
	ctx := context.Background()
	u := uri.File("/w/a.go")

	if p.Set(ctx, u, SourceReview, 4, []protocol.Diagnostic{diag(1, "computed for v4")}) {
		t.Fatal("diagnostics for version 4 accepted while the document is at 5")
	}
	if len(rec.sent) != 0 {
		t.Fatalf("stale diagnostics sent: %+v", rec.sent)
	}
	if !p.Set(ctx, u, SourceRules, 5, []protocol.Diagnostic{diag(2, "v5")}) {
		t.Fatal("current diagnostics refused")
	}
	// The document moves on to 7 and a result for 7 is published; a late
	// result for 6 of another source is refused too.
	docVersion = 7
	p.Set(ctx, u, SourceRules, 7, []protocol.Diagnostic{diag(3, "v7")})
	if p.Set(ctx, u, SourceReview, 6, []protocol.Diagnostic{diag(4, "late v6")}) {
		t.Fatal("diagnostics for version 6 accepted after 7 was published")
	}
	// Unversioned diagnostics (a build's) are always accepted.
	if !p.Set(ctx, u, SourceBuild, 0, []protocol.Diagnostic{diag(9, "build")}) {
		t.Fatal("build diagnostics refused")
	}
	last := rec.sent[len(rec.sent)-1]
	if len(last.Diagnostics) != 2 || last.Diagnostics[0].Message != protocol.String("v7") {
		t.Fatalf("published %+v, want v7 and build", last.Diagnostics)
	}
	// A closed document takes no versioned diagnostics.
	open = false
	if p.Set(ctx, u, SourceRules, 8, []protocol.Diagnostic{diag(1, "after close")}) {
		t.Fatal("diagnostics accepted for a closed document")
	}
}
