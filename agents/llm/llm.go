// Package llm is the single gateway through which every AI feature of
// kodyls (code review, Kody Rules, the root-cause agent) talks to a model.
//
// It speaks the OpenAI chat-completions protocol, so any compatible endpoint
// works: OpenAI itself, Ollama, vLLM, llama.cpp's server, LM Studio. The
// gateway exists because models and endpoints fail in ways that must never
// reach the user as a crash or as silently lost findings:
//
//   - replies that are not the JSON that was asked for are extracted
//     leniently, coerced, validated against a JSON Schema inferred from the
//     caller's Go type, salvaged item by item, repaired once, and only then
//     replaced by the caller's fallback value ([Structured]);
//   - endpoints without structured outputs are detected once and served with
//     json_object mode or plain prompting instead;
//   - throttling, 5xx answers, timeouts and broken bodies are retried with
//     jittered exponential backoff that honours Retry-After, and a circuit
//     breaker stops a dead endpoint from being hammered on every keystroke;
//   - every call is bounded by a per-call timeout and a concurrency limit,
//     redacted before it leaves the process, cached when asked, and
//     accounted for in a usage sink.
//
// The gateway starts no goroutines: all work happens on the caller's
// goroutine and stops when the caller's context is done.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// TaskClass groups calls that may be served by different models, so a team
// can send cheap classification work to a small local model and reviews to a
// stronger one.
type TaskClass string

// The task classes kodyls uses.
const (
	TaskReview TaskClass = "review"
	TaskRules  TaskClass = "rules"
	TaskAgent  TaskClass = "agent"
	TaskCheap  TaskClass = "cheap"
)

// Defaults applied by [New] to zero fields of [Config].
const (
	DefaultTimeout          = 60 * time.Second
	DefaultMaxRetries       = 3
	DefaultMaxConcurrent    = 4
	DefaultBreakerThreshold = 3
	DefaultBreakerCooldown  = 30 * time.Second
	DefaultCacheTTL         = 24 * time.Hour
	// DefaultContextWindow is used for models the built-in table does not know.
	DefaultContextWindow = 8192
)

// Config describes the endpoint and the limits the gateway keeps.
type Config struct {
	// BaseURL is the OpenAI-compatible API root, e.g. https://api.openai.com/v1
	// or http://localhost:11434/v1. Required.
	BaseURL string
	// APIKey is sent as a bearer token; local endpoints usually need none.
	APIKey string
	// Model is the default model for every task class.
	Model string
	// Models overrides Model per task class.
	Models map[TaskClass]string
	// Timeout bounds each HTTP call (each attempt, not the whole retry
	// sequence). Default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried, so at most
	// MaxRetries+1 attempts are made. 0 means the default (3); a negative
	// value disables retries.
	MaxRetries int
	// MaxConcurrent bounds simultaneous HTTP calls to the endpoint. Default 4.
	MaxConcurrent int
	// BreakerThreshold is the number of consecutive failed calls (after their
	// retries) that opens the circuit breaker. Default 3.
	BreakerThreshold int
	// BreakerCooldown is how long an open breaker fails fast before it lets
	// one probe call through. Default 30s.
	BreakerCooldown time.Duration
	// ContextWindow is the model's context size in tokens. 0 looks the model
	// up in a built-in table (see [ContextWindowFor]) and uses 8192 for
	// unknown models.
	ContextWindow int
	// CacheTTL is how long cached replies live. Default 24h.
	CacheTTL time.Duration
}

// Redactor removes secrets from text. The gateway applies it to every
// message text, tool-call argument and tool result right before a request
// is built, so nothing unredacted leaves the process and the cache key is
// computed over the redacted text.
type Redactor interface {
	String(text string) string
}

// Cache stores replies. Implementations must be safe for concurrent use.
// The gateway treats a failing cache as a miss and never fails a call
// because of it.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// UsageSink receives one [Usage] per call, including cache hits and
// failures. Errors are logged and otherwise ignored.
type UsageSink interface {
	RecordUsage(ctx context.Context, u Usage) error
}

// Usage describes one call, or, in [Gateway.Totals], the sum of the calls of
// one feature.
type Usage struct {
	Feature          string
	Model            string
	PromptTokens     int // as reported by the endpoint; estimated when it reports none
	CompletionTokens int
	Latency          time.Duration // wall time of the call, retries and backoff included
	Cached           bool
	Attempts         int // HTTP requests made; 0 for cache hits and fail-fast calls
	Err              string
	At               time.Time

	// Calls, CachedCalls and Failures count calls. A single call has
	// Calls 1 and CachedCalls/Failures 0 or 1, so that records can be summed.
	Calls       int
	CachedCalls int
	Failures    int
}

func (u *Usage) add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.Latency += o.Latency
	u.Attempts += o.Attempts
	u.Calls += o.Calls
	u.CachedCalls += o.CachedCalls
	u.Failures += o.Failures
	if o.Err != "" {
		u.Err = o.Err
	}
	if o.Model != "" {
		u.Model = o.Model
	}
	if o.At.After(u.At) {
		u.At = o.At
	}
	u.Cached = u.Cached || o.Cached
}

// Status is the breaker's view of the endpoint, for the editor's status bar.
type Status struct {
	State     string // StateOK, StateDown or StateProbing
	Since     time.Time
	LastError string
	// Endpoint is the base URL the status is about.
	Endpoint string
	// Failure is the full error of the last call that failed against the
	// endpoint, so that a caller can tell the failures the breaker already
	// reports apart from others; empty when the endpoint is fine.
	Failure string
	// Message is user-facing and says what kodyls does about it; empty when
	// the endpoint is fine.
	Message string
}

// Breaker states reported in [Status.State].
const (
	StateOK      = "ok"
	StateDown    = "down"
	StateProbing = "probing"
)

var (
	// ErrUnavailable is returned without any HTTP request while the circuit
	// breaker is open: the endpoint failed repeatedly and is left alone until
	// the cooldown ends.
	ErrUnavailable = errors.New("llm endpoint unavailable")
	// ErrNotConfigured means the configuration lacks something a call needs
	// (an endpoint or a model).
	ErrNotConfigured = errors.New("llm not configured")
	// ErrKeyNotSendable is returned without any HTTP request when the API
	// key holds a character an HTTP header cannot carry (a line break or
	// another control character): no retry or wait can help.
	ErrKeyNotSendable = errors.New("llm API key cannot be sent")
	// ErrInvalidReply is returned by [Structured] when the reply could not be
	// turned into a valid value and the caller gave no fallback.
	ErrInvalidReply = errors.New("llm reply invalid")
)

// Option configures a [Gateway].
type Option func(*Gateway)

// WithRedactor sets the redactor applied to everything sent.
func WithRedactor(r Redactor) Option { return func(g *Gateway) { g.redactor = r } }

// WithCache enables the response cache.
func WithCache(c Cache) Option { return func(g *Gateway) { g.cache = c } }

// WithUsage sets the sink that receives one record per call.
func WithUsage(s UsageSink) Option { return func(g *Gateway) { g.usage = s } }

// WithHTTPClient sets the HTTP client. The gateway wraps (a copy of) its
// transport to read Retry-After headers; the client itself is not modified.
func WithHTTPClient(c *http.Client) Option { return func(g *Gateway) { g.httpClient = c } }

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(g *Gateway) { g.log = l } }

// WithStatusHook sets a function called once per breaker transition (ok →
// down, down → probing, probing → ok or down), never per call. It is called
// synchronously on the goroutine of the call that caused the transition and
// must not block.
func WithStatusHook(f func(Status)) Option { return func(g *Gateway) { g.statusHook = f } }

// WithPrompts sets the renderer for the gateway's own prompts,
// [PromptJSONRepair] (data [RepairPrompt]) and [PromptJSONObjectFallback]
// (data [FallbackPrompt]). The built-in text is used when it is unset or
// returns an error.
func WithPrompts(f func(name string, data any) (string, error)) Option {
	return func(g *Gateway) { g.prompts = f }
}

// Gateway is the one path from kodyls to a model. It is safe for concurrent
// use.
type Gateway struct {
	cfg        Config
	endpoint   string // BaseURL without credentials, for messages
	client     *openai.Client
	httpClient *http.Client
	redactor   Redactor
	cache      Cache
	usage      UsageSink
	log        *slog.Logger
	statusHook func(Status)
	prompts    func(name string, data any) (string, error)

	sem     chan struct{}
	breaker breaker

	// backoffBase and backoffCap shape the retry waits; fields so tests can
	// shorten them.
	backoffBase, backoffCap time.Duration
	// maxRetryAfter is the longest Retry-After the gateway waits out; a
	// server asking for more is treated as unavailable for this call.
	maxRetryAfter time.Duration
	// probeTimeout bounds the check that ends a cooldown (see probe); a
	// field so tests can set it apart from the per-call timeout.
	probeTimeout time.Duration

	mu      sync.Mutex
	totals  map[string]Usage
	formats map[string]formatLevel // per model, learned from rejections
	// answered counts, per model, the calls the endpoint answered;
	// refused is, per model, the last answer that says the set-up is
	// wrong, and setupErr the last of all (see SetupFailure).
	answered map[string]int
	refused  map[string]*StatusError
	setupErr *StatusError
}

// New validates cfg, applies defaults and returns a gateway. It makes no
// network calls; use [Gateway.Check] for that.
func New(cfg Config, opts ...Option) (*Gateway, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		return nil, fmt.Errorf("%w: the llm base URL is empty; set KODYLS_LLM_BASE_URL, e.g. http://localhost:11434/v1", ErrNotConfigured)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm base URL %q is not an http(s) URL; example: http://localhost:11434/v1", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(base, "/")
	switch {
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("llm timeout %s is negative; use 0 for the default (%s)", cfg.Timeout, DefaultTimeout)
	case cfg.MaxConcurrent < 0:
		return nil, fmt.Errorf("llm max concurrent %d is negative; use 0 for the default (%d)", cfg.MaxConcurrent, DefaultMaxConcurrent)
	case cfg.BreakerThreshold < 0:
		return nil, fmt.Errorf("llm breaker threshold %d is negative; use 0 for the default (%d)", cfg.BreakerThreshold, DefaultBreakerThreshold)
	case cfg.BreakerCooldown < 0:
		return nil, fmt.Errorf("llm breaker cooldown %s is negative; use 0 for the default (%s)", cfg.BreakerCooldown, DefaultBreakerCooldown)
	case cfg.ContextWindow < 0:
		return nil, fmt.Errorf("llm context window %d is negative; use 0 to look it up by model name", cfg.ContextWindow)
	case cfg.CacheTTL < 0:
		return nil, fmt.Errorf("llm cache TTL %s is negative; use 0 for the default (%s)", cfg.CacheTTL, DefaultCacheTTL)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.BreakerThreshold == 0 {
		cfg.BreakerThreshold = DefaultBreakerThreshold
	}
	if cfg.BreakerCooldown == 0 {
		cfg.BreakerCooldown = DefaultBreakerCooldown
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	cfg.Model = strings.TrimSpace(cfg.Model)

	g := &Gateway{
		cfg:           cfg,
		endpoint:      displayURL(u),
		backoffBase:   500 * time.Millisecond,
		backoffCap:    20 * time.Second,
		maxRetryAfter: 2 * time.Minute,
		probeTimeout:  DefaultProbeTimeout,
		totals:        map[string]Usage{},
		formats:       map[string]formatLevel{},
	}
	for _, o := range opts {
		o(g)
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.log = g.log.With("component", "llm")
	g.sem = make(chan struct{}, cfg.MaxConcurrent)
	g.breaker = breaker{state: StateOK, since: time.Now()}

	hc := &http.Client{}
	if g.httpClient != nil {
		c := *g.httpClient
		hc = &c
	}
	base2 := hc.Transport
	if base2 == nil {
		base2 = http.DefaultTransport
	}
	hc.Transport = &headerTransport{base: base2}
	g.httpClient = hc

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = hc
	g.client = openai.NewClientWithConfig(oc)
	return g, nil
}

// displayURL renders u without user info, query or fragment, so messages
// and logs never carry credentials embedded in the base URL.
func displayURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return strings.TrimRight(c.String(), "/")
}

// Model returns the model used for task.
func (g *Gateway) Model(task TaskClass) string {
	if m := strings.TrimSpace(g.cfg.Models[task]); m != "" {
		return m
	}
	return g.cfg.Model
}

// Close releases the idle connections of the gateway's HTTP client. The
// gateway runs no goroutines, so there is nothing else to stop; calls made
// after Close still work and open new connections.
func (g *Gateway) Close() {
	g.httpClient.CloseIdleConnections()
}

// Endpoint returns the base URL without credentials.
func (g *Gateway) Endpoint() string { return g.endpoint }

// ContextWindow returns the context size used for model.
func (g *Gateway) ContextWindow(model string) int {
	if g.cfg.ContextWindow > 0 {
		return g.cfg.ContextWindow
	}
	return ContextWindowFor(model)
}

// Totals returns the usage of this process summed per feature.
func (g *Gateway) Totals() map[string]Usage {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]Usage, len(g.totals))
	for k, v := range g.totals {
		out[k] = v
	}
	return out
}

// record completes u (counts, time), adds it to the totals, hands it to
// the usage sink and returns it.
func (g *Gateway) record(ctx context.Context, u Usage) Usage {
	u.Calls = 1
	if u.Cached {
		u.CachedCalls = 1
	}
	if u.Err != "" {
		u.Failures = 1
	}
	if u.At.IsZero() {
		u.At = time.Now()
	}
	g.mu.Lock()
	t := g.totals[u.Feature]
	t.Feature = u.Feature
	t.add(u)
	g.totals[u.Feature] = t
	g.mu.Unlock()
	if g.usage != nil {
		// The record must land even when the call was cancelled, so the
		// sink gets a context that keeps the caller's values but not its
		// cancellation.
		if err := g.usage.RecordUsage(context.WithoutCancel(ctx), u); err != nil {
			g.log.Warn("recording llm usage failed", "feature", u.Feature, "err", err)
		}
	}
	return u
}

// Message is one chat message.
type Message struct {
	Role       string // "system", "user", "assistant" or "tool"
	Content    string
	ToolCalls  []ToolCall // assistant messages that call tools
	ToolCallID string     // tool messages: the call answered
	Name       string     // tool messages: the tool's name
}

// ToolCall is one tool invocation requested by the model. Arguments hold
// the model's text as is, which may not be valid JSON.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Tool describes a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a Go value whose type is turned into a JSON Schema with
	// jsonschema.For (e.g. a zero struct), a *jsonschema.Schema, or a
	// json.RawMessage holding a schema. nil means no parameters.
	Parameters any
}

// Part is a piece of a prompt assembled by the gateway, which drops and
// trims parts by priority when the prompt would not fit the context window.
type Part struct {
	Role     string // default "user"; consecutive parts of one role become one message
	Text     string
	Priority int // higher is more important; parts with the highest priority are never dropped
	Label    string
}

// ChatRequest is one call to the model.
type ChatRequest struct {
	Feature string // accounting key, e.g. "review"
	Task    TaskClass

	// Messages are sent as they are (after redaction). Alternatively Parts
	// are assembled into messages after trimming to the context window; set
	// one of the two.
	Messages []Message
	Parts    []Part

	Tools      []Tool
	ToolChoice string // "", "auto", "none", "required" or a tool name

	MaxTokens   int // reply budget; also reserved when trimming Parts
	Temperature *float64

	PromptName    string // with PromptVersion, part of the cache key
	PromptVersion int
	NoCache       bool
}

// ChatResponse is the model's reply.
type ChatResponse struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
	Cached       bool
	// Trimmed lists the parts dropped or shortened to fit the context window.
	Trimmed []string
}
