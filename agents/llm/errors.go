package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// StatusError is an HTTP error answer from the endpoint. Its message says
// what to do about it.
type StatusError struct {
	StatusCode int
	Endpoint   string
	Model      string
	Message    string // the server's own message, shortened
	Param      string // the parameter the server blamed, when it said
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	switch e.StatusCode {
	case 401:
		return fmt.Sprintf("401 from llm endpoint %s (%s): set KODYLS_LLM_API_KEY to a valid API key", e.Endpoint, msg)
	case 403:
		return fmt.Sprintf("403 from llm endpoint %s (%s): the API key may not use model %q; check KODYLS_LLM_API_KEY and KODYLS_LLM_MODEL", e.Endpoint, msg, e.Model)
	case 404:
		return fmt.Sprintf("404 from llm endpoint %s (%s): check that model %q is served there (KODYLS_LLM_MODEL, or the llm.models entry that names it) and that the base URL ends in /v1; `kodyls doctor` lists the available models", e.Endpoint, msg, e.Model)
	case 429:
		return fmt.Sprintf("llm endpoint %s is rate limiting requests (429: %s); wait a moment or lower the request rate", e.Endpoint, msg)
	}
	if e.StatusCode >= 500 {
		return fmt.Sprintf("llm endpoint %s failed with HTTP %d (%s)", e.Endpoint, e.StatusCode, msg)
	}
	return fmt.Sprintf("llm endpoint %s rejected the request with HTTP %d: %s", e.Endpoint, e.StatusCode, msg)
}

// BaseURLAdvice says what the base URL must be.
const BaseURLAdvice = "the base URL must be the API root, which ends in /v1 on most servers (e.g. http://localhost:11434/v1); set KODYLS_LLM_BASE_URL or llm.baseUrl"

// reasonNotAPI is the reason of an answer that is no API's.
const reasonNotAPI = "not an OpenAI-compatible API"

// callError is the outcome of one failed attempt, classified.
type callError struct {
	reason     string // short, for Status: "connection refused", "HTTP 503"
	retriable  bool   // the endpoint is not answering properly; trying again may help
	formatRej  bool   // the endpoint rejected response_format
	retryAfter time.Duration
	err        error
	// timedOut: the endpoint did not answer within the per-call timeout;
	// one such call opens the breaker (see Gateway.failed).
	timedOut bool
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// classify turns the error of one attempt into a callError. timedOut says
// the per-attempt timeout (not the caller) ended the attempt.
func (g *Gateway) classify(err error, info *respInfo, timedOut bool, model string) *callError {
	status, ra := info.get()
	if info.isTooLarge() {
		// Not retried: the same request would bring the same flood.
		return &callError{
			reason: "response too large",
			err:    fmt.Errorf("llm endpoint %s sent a response larger than %d MB; kodyls stopped reading it (is the base URL an OpenAI-compatible API?): %w", g.endpoint, MaxResponseBytes>>20, err),
		}
	}
	if timedOut {
		// Not retried: an endpoint that accepted the request and said
		// nothing for a whole timeout is hung or far too slow, and a retry
		// would make the user wait the timeout again for the same silence.
		return &callError{
			reason:   fmt.Sprintf("no answer within %s", g.cfg.Timeout),
			timedOut: true,
			err:      fmt.Errorf("llm endpoint %s did not answer within %s: %w", g.endpoint, g.cfg.Timeout, err),
		}
	}
	if se := statusErrorOf(err, status); se != nil {
		se.Endpoint, se.Model = g.endpoint, model
		ce := &callError{reason: fmt.Sprintf("HTTP %d", se.StatusCode), err: se}
		switch {
		case se.StatusCode == 429:
			ce.reason = "rate limited, HTTP 429"
			ce.retriable = true
		case se.StatusCode == 408 || se.StatusCode == 409 || se.StatusCode == 425 || se.StatusCode >= 500:
			ce.retriable = true
		}
		ce.formatRej = isFormatRejection(se)
		if ce.formatRej {
			ce.retriable = false
		}
		if ce.retriable {
			ce.retryAfter = parseRetryAfter(ra, time.Now())
		}
		return ce
	}
	if status == 0 && strings.Contains(err.Error(), "invalid header field value") {
		// net/http refuses a header value with a control character; the
		// only one kodyls fills from the user's settings is the key.
		return &callError{
			reason: "API key cannot be sent",
			err: fmt.Errorf("%w to %s: the key has a line break or another control character, which an HTTP header cannot carry; set llm.apiKey or KODYLS_LLM_API_KEY to the key alone (`kodyls doctor` shows where it comes from)",
				ErrKeyNotSendable, g.endpoint),
		}
	}
	var urlErr *url.Error
	if status == 0 && !errors.As(err, &urlErr) {
		// No request went out: go-openai refused it (for example a
		// parameter a reasoning model does not take). Retrying cannot help.
		return &callError{reason: "request refused by the client", err: fmt.Errorf("llm request for model %q not sent: %w", model, err)}
	}
	if mt := info.notAPI(); mt != "" {
		// Not retried: a web page or a proxy's text answers the same
		// every time. The base URL names a server, not its API.
		return &callError{
			reason: reasonNotAPI,
			err:    fmt.Errorf("llm endpoint %s answers, but not as an OpenAI-compatible API (got %s, not JSON): %s", g.endpoint, mt, BaseURLAdvice),
		}
	}
	if status >= 200 && status < 300 {
		// The endpoint answered 200 but the body could not be decoded:
		// proxies and overloaded local servers do send cut or garbled bodies.
		return &callError{
			reason:    "malformed response",
			retriable: true,
			err:       fmt.Errorf("llm endpoint %s sent a malformed response: %w", g.endpoint, err),
		}
	}
	reason := "connection failed"
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case errors.As(err, &dnsErr):
		reason = "host not found"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		reason = "connection closed by the server"
	case isDecodeError(err):
		reason = "malformed response"
	}
	return &callError{
		reason:    reason,
		retriable: true,
		err:       fmt.Errorf("llm endpoint %s: %s: %w", g.endpoint, reason, err),
	}
}

// statusErrorOf extracts the HTTP status and server message from
// go-openai's error types.
func statusErrorOf(err error, seen int) *StatusError {
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	se := &StatusError{}
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		se.StatusCode, se.Message = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Param != nil {
			se.Param = *apiErr.Param
		}
	case errors.As(err, &reqErr):
		se.StatusCode = reqErr.HTTPStatusCode
		se.Message = strings.TrimSpace(string(reqErr.Body))
		if errors.As(reqErr.Err, &apiErr) && apiErr.Message != "" {
			se.Message = apiErr.Message
		}
	default:
		return nil
	}
	if se.StatusCode == 0 {
		se.StatusCode = seen
	}
	if se.StatusCode == 0 {
		return nil
	}
	se.Message = shorten(se.Message, 300)
	return se
}

// isFormatRejection reports whether the endpoint refused the request
// because of response_format: older llama.cpp builds and some vLLM and
// Ollama set-ups answer 400 (or 422/501) for json_schema. A bare "not
// supported" counts only together with a word about formats or schemas, so
// that a rejected temperature does not cost the model its structured
// outputs.
func isFormatRejection(se *StatusError) bool {
	m := strings.ToLower(se.Message)
	mentions := se.Param == "response_format" || strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") ||
		strings.Contains(m, "response format") || strings.Contains(m, "json schema") || strings.Contains(m, "structured")
	unsupported := (strings.Contains(m, "not supported") || strings.Contains(m, "unsupported")) &&
		(strings.Contains(m, "format") || strings.Contains(m, "schema") || strings.Contains(m, "json"))
	switch se.StatusCode {
	case 400, 422, 501:
		return mentions || unsupported
	}
	// Older llama.cpp servers answer an unknown response_format type with
	// a 500 ("response_format type must be one of ...").
	return se.StatusCode >= 500 && strings.Contains(m, "response_format") &&
		(strings.Contains(m, "must be") || strings.Contains(m, "support") || strings.Contains(m, "invalid"))
}

func isDecodeError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

// shortReason is the reason shown in Status for err.
func shortReason(err error) string {
	var ce *callError
	if errors.As(err, &ce) {
		return ce.reason
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return shorten(err.Error(), 120)
}

// isEndpointFailure reports whether err says the endpoint is not answering
// properly, which is what the breaker counts.
func isEndpointFailure(err error) bool {
	var ce *callError
	return errors.As(err, &ce) && (ce.retriable || ce.timedOut)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
