package llm

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// respInfo receives what the transport saw of one HTTP exchange. go-openai
// turns error responses into error values without their headers, so the
// Retry-After header of a 429 or 503 would be lost without it.
type respInfo struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (r *respInfo) set(status int, retryAfter string) {
	r.mu.Lock()
	r.status, r.retryAfter = status, retryAfter
	r.mu.Unlock()
}

func (r *respInfo) get() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter
}

type respInfoKey struct{}

func withRespInfo(ctx context.Context, r *respInfo) context.Context {
	return context.WithValue(ctx, respInfoKey{}, r)
}

// headerTransport records the status and Retry-After of every response in
// the respInfo carried by the request's context.
type headerTransport struct {
	base http.RoundTripper
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		if info, ok := req.Context().Value(respInfoKey{}).(*respInfo); ok {
			info.set(resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	return resp, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// wrapped transport.
func (t *headerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// parseRetryAfter reads a Retry-After value, either delay-seconds or an
// HTTP date, as a duration from now. It returns 0 for absent or unusable
// values. Fractional seconds are accepted because some proxies send them.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 365*24*3600 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
