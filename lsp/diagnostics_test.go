package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

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
	r.sent = append(r.sent, params.(*protocol.PublishDiagnosticsParams))
	return nil
}

func diag(line uint32, msg string) protocol.Diagnostic {
	return protocol.Diagnostic{Range: protocol.Range{Start: protocol.Position{Line: line}}, Message: protocol.String(msg)}
}

func TestPublisherMergesSourcesAndSendsOnlyChanges(t *testing.T) {
	rec := &recorder{}
	p := newPublisher(rec, slog.New(slog.DiscardHandler))
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

	// The same findings again: nothing is sent.
	p.Set(ctx, u, SourceRules, 3, []protocol.Diagnostic{diag(5, "rule")})
	if len(rec.sent) != 2 {
		t.Fatalf("unchanged set re-sent")
	}
	// One source cleared: the other stays.
	p.Set(ctx, u, SourceRules, 4, nil)
	if got := rec.sent[len(rec.sent)-1].Diagnostics; len(got) != 1 || got[0].Message != protocol.String("review") {
		t.Fatalf("after clearing rules: %+v", got)
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
	n := len(rec.sent)
	p.Clear(ctx, u)
	p.Set(ctx, u, SourceRules, 5, nil)
	if len(rec.sent) != n {
		t.Fatalf("empty set re-sent for a file already clear")
	}
}
