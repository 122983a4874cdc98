package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// cannedTransport answers every request with the same completion, without
// a socket, so a benchmark measures only the gateway's own work.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{
		StatusCode:    200,
		Status:        "200 OK",
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)),
		Request:       r,
	}, nil
}

// missCache is a Cache that never hits, so every call pays for the key
// hashing and the store.
type missCache struct{}

func (missCache) Get(context.Context, string) ([]byte, bool, error)        { return nil, false, nil }
func (missCache) Put(context.Context, string, []byte, time.Duration) error { return nil }

func cannedCompletion(tb testing.TB, content any) []byte {
	tb.Helper()
	c, err := json.Marshal(content)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(c)}}},
		"usage": map[string]any{"prompt_tokens": 500, "completion_tokens": 120, "total_tokens": 620},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func benchGateway(b *testing.B, cache llm.Cache) *llm.Gateway {
	g, err := llm.New(llm.Config{BaseURL: "http://bench.invalid/v1", Model: "fake-model"},
		llm.WithHTTPClient(&http.Client{Transport: cannedTransport{body: cannedCompletion(b, sampleReview())}}),
		llm.WithRedactor(replacer{"SECRET123"}),
		llm.WithCache(cache),
	)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkGatewayOverhead is one Structured call minus the network:
// message redaction, cache-key hashing, request marshalling, response
// decoding, extraction, validation against the schema and decoding into
// the Go type, usage accounting.
func BenchmarkGatewayOverhead(b *testing.B) {
	g := benchGateway(b, missCache{})
	ctx := context.Background()
	req := reviewRequest()
	b.ReportAllocs()
	for b.Loop() {
		v, res, err := llm.Structured[Review](ctx, g, req, nil)
		if err != nil || res.Source != llm.SourceModel || len(v.CodeSuggestions) != 2 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkStructuredCacheHit is a Structured call answered by the cache.
func BenchmarkStructuredCacheHit(b *testing.B) {
	g := benchGateway(b, newMemCache())
	ctx := context.Background()
	req := reviewRequest()
	if _, _, err := llm.Structured[Review](ctx, g, req, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, res, err := llm.Structured[Review](ctx, g, req, nil)
		if err != nil || res.Source != llm.SourceCache {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
