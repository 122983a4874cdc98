package llm

import "context"

type progressKey struct{}

// WithProgress returns a context whose model calls report to fn as they
// leave for the endpoint (cache hits and calls refused by the breaker do
// not): the call's feature and, for structured calls, its schema name,
// which names the stage of a pipeline. fn runs on the caller's goroutine
// and must return quickly.
func WithProgress(ctx context.Context, fn func(feature, schema string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func reportProgress(ctx context.Context, feature, schema string) {
	if fn, ok := ctx.Value(progressKey{}).(func(feature, schema string)); ok && fn != nil {
		fn(feature, schema)
	}
}
