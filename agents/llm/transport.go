package llm

import (
	"context"
	"fmt"
	"io"
	"mime"
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
	mu          sync.Mutex
	status      int
	retryAfter  string
	contentType string
	tooLarge    bool // the body passed MaxResponseBytes
}

func (r *respInfo) setTooLarge() {
	r.mu.Lock()
	r.tooLarge = true
	r.mu.Unlock()
}

func (r *respInfo) isTooLarge() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tooLarge
}

// MaxResponseBytes bounds the body of one response. A completion is a few
// kilobytes; a server that sends megabytes is broken, and reading it all
// would cost the editor's process its memory.
const MaxResponseBytes = 8 << 20

// errTooLarge ends the read of a body past MaxResponseBytes.
var errTooLarge = fmt.Errorf("response body larger than %d MB", MaxResponseBytes>>20)

// limitedBody reads at most MaxResponseBytes of a response body.
type limitedBody struct {
	io.ReadCloser
	left int64
	info *respInfo
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if b.info != nil {
			b.info.setTooLarge()
		}
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

func (r *respInfo) set(status int, retryAfter, contentType string) {
	r.mu.Lock()
	r.status, r.retryAfter, r.contentType = status, retryAfter, contentType
	r.mu.Unlock()
}

// notAPI returns the media type of a successful answer that cannot be an
// OpenAI-compatible API's (an HTML page, plain text), "" otherwise: JSON,
// an event stream, or no type said.
func (r *respInfo) notAPI() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status < 200 || r.status >= 300 {
		return ""
	}
	mt, _, err := mime.ParseMediaType(r.contentType)
	if err != nil || mt == "" || strings.Contains(mt, "json") || mt == "text/event-stream" {
		return ""
	}
	return mt
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
		info, ok := req.Context().Value(respInfoKey{}).(*respInfo)
		if ok {
			info.set(resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
		}
		if resp.ContentLength > MaxResponseBytes {
			// Refuse at once what is announced too large.
			resp.Body.Close()
			if ok {
				info.setTooLarge()
			}
			return nil, errTooLarge
		}
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxResponseBytes, info: info}
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
