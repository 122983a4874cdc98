package llm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// prepared is a request ready for the wire: model chosen, parts trimmed,
// every text redacted, tools converted.
type prepared struct {
	feature     string
	model       string
	msgs        []Message // redacted
	tools       []openai.Tool
	toolsKey    []byte // canonical tool definitions, for the cache key
	toolChoice  any
	choiceKey   string
	maxTokens   int
	temperature *float64
	promptName  string
	promptVer   int
	trimmed     []string

	noRetry    bool        // one attempt only (health checks)
	probeLevel bool        // start at json_schema whatever was learned (health checks)
	usedLevel  formatLevel // set by attempts: the response format of the last request
}

// prepare checks req and turns it into a prepared request.
func (g *Gateway) prepare(req ChatRequest) (*prepared, error) {
	p := &prepared{
		feature:     req.Feature,
		model:       g.Model(req.Task),
		maxTokens:   req.MaxTokens,
		temperature: req.Temperature,
		promptName:  req.PromptName,
		promptVer:   req.PromptVersion,
	}
	if p.feature == "" {
		p.feature = "unspecified"
	}
	if p.model == "" {
		task := req.Task
		if task == "" {
			task = "default"
		}
		return p, fmt.Errorf("%w: no model is set for %s tasks; set KODYLS_LLM_MODEL", ErrNotConfigured, task)
	}
	switch {
	case len(req.Messages) > 0 && len(req.Parts) > 0:
		return p, errors.New("llm request sets both Messages and Parts; set one of them")
	case len(req.Parts) > 0:
		p.msgs, p.trimmed = g.assemble(p.model, req.Parts, req.MaxTokens)
	case len(req.Messages) > 0:
		p.msgs = make([]Message, len(req.Messages))
		for i, m := range req.Messages {
			p.msgs[i] = g.redactMessage(m)
		}
	default:
		return p, errors.New("llm request has no messages")
	}
	if err := g.prepareTools(p, req.Tools, req.ToolChoice); err != nil {
		return p, err
	}
	return p, nil
}

// redactMessage applies the redactor to every text of m.
func (g *Gateway) redactMessage(m Message) Message {
	if g.redactor == nil {
		return m
	}
	m.Content = g.redactor.String(m.Content)
	if len(m.ToolCalls) > 0 {
		calls := make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.Arguments = json.RawMessage(g.redactor.String(string(c.Arguments)))
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	return m
}

func (g *Gateway) redact(s string) string {
	if g.redactor == nil {
		return s
	}
	return g.redactor.String(s)
}

// Chat sends one request and returns the model's reply. Replies are served
// from the cache when one is set and req.NoCache is false.
func (g *Gateway) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	start := time.Now()
	p, err := g.prepare(req)
	if err != nil {
		g.record(ctx, Usage{Feature: p.feature, Model: p.model, Err: err.Error(), At: start})
		return nil, err
	}
	key := ""
	if g.cache != nil && !req.NoCache {
		key = g.cacheKey("chat", p, nil, "")
		if e, ok := g.cacheGet(ctx, key); ok {
			u := g.record(ctx, Usage{Feature: p.feature, Model: p.model, Cached: true, Latency: time.Since(start), At: start})
			return &ChatResponse{Content: e.Content, ToolCalls: e.toolCalls(), FinishReason: e.FinishReason, Usage: u, Cached: true, Trimmed: p.trimmed}, nil
		}
	}
	resp, _, err := g.exchange(ctx, p, nil, "")
	if err != nil {
		return nil, err
	}
	if key != "" && resp.FinishReason != string(openai.FinishReasonLength) && (resp.Content != "" || len(resp.ToolCalls) > 0) {
		g.cachePut(ctx, key, newCacheEntry(resp, nil))
	}
	return resp, nil
}

// exchange makes one call, with its retries, through the breaker, and
// records its usage, which it also returns on failure. sch, when set, asks
// for a structured reply.
func (g *Gateway) exchange(ctx context.Context, p *prepared, sch *schemaInfo, schemaName string) (*ChatResponse, Usage, error) {
	start := time.Now()
	u := Usage{Feature: p.feature, Model: p.model, At: start}
	adm, tr, err := g.allow(start)
	g.notify(tr)
	if err == nil && adm.probe {
		// The cooldown is over: a short check, not this call, finds out
		// whether the endpoint answers again; once it does, the call goes
		// out as any other.
		err = g.probe(ctx, adm, p.model)
		adm = admission{}
	}
	if err != nil {
		u.Err = err.Error()
		return nil, g.record(ctx, u), err
	}
	reportProgress(ctx, p.feature, schemaName)
	resp, attempts, err := g.attempts(ctx, p, sch, schemaName)
	u.Attempts = attempts
	u.Latency = time.Since(start)
	now := time.Now()
	switch {
	case err == nil:
		g.notify(g.succeeded(adm, now))
		g.mu.Lock()
		if g.answered == nil {
			g.answered = map[string]int{}
		}
		g.answered[p.model]++
		g.mu.Unlock()
	case ctx.Err() != nil:
		g.abandoned(adm)
	case isEndpointFailure(err):
		g.notify(g.failed(adm, now, err))
	default:
		// A non-retriable answer such as 401 or 400 still proves the
		// endpoint is alive.
		g.notify(g.succeeded(adm, now))
		var se *StatusError
		if errors.As(err, &se) && isSetupStatus(se.StatusCode) {
			g.mu.Lock()
			if g.refused == nil {
				g.refused = map[string]*StatusError{}
			}
			g.setupErr, g.refused[p.model] = se, se
			g.mu.Unlock()
		}
	}
	if err != nil {
		u.Err = err.Error()
		return nil, g.record(ctx, u), err
	}
	out := fromWire(resp)
	u.PromptTokens, u.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		// Some local servers report no usage; an estimate keeps the cost
		// accounting meaningful.
		u.PromptTokens = countMessages(p.model, p.msgs)
		u.CompletionTokens = countReply(p.model, out)
	}
	out.Usage = g.record(ctx, u)
	out.Trimmed = p.trimmed
	return out, out.Usage, nil
}

// attempts runs the retry loop of one call. It returns the response and the
// number of HTTP requests made.
func (g *Gateway) attempts(ctx context.Context, p *prepared, sch *schemaInfo, schemaName string) (*openai.ChatCompletionResponse, int, error) {
	level := levelNone
	if sch != nil {
		level = g.formatLevel(p.model)
		if p.probeLevel {
			level = levelJSONSchema
		}
	}
	maxRetries := g.cfg.MaxRetries
	if p.noRetry {
		maxRetries = 0
	}
	creq := g.buildRequest(p, sch, schemaName, level)
	n := 0
	for retry := 0; ; {
		p.usedLevel = level
		if err := g.acquire(ctx); err != nil {
			return nil, n, err
		}
		info := &respInfo{}
		actx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
		resp, err := g.client.CreateChatCompletion(withRespInfo(actx, info), creq)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		g.release()
		n++
		if err == nil && len(resp.Choices) == 0 {
			err = errors.New("response has no choices")
			info.set(200, "", "")
		}
		if err == nil {
			return &resp, n, nil
		}
		if ctx.Err() != nil {
			return nil, n, fmt.Errorf("llm call canceled: %w", ctx.Err())
		}
		ce := g.classify(err, info, timedOut, p.model)
		if ce.formatRej && sch != nil && level < levelNone {
			level = g.downgradeFormat(p.model, level, ce.err)
			creq = g.buildRequest(p, sch, schemaName, level)
			continue
		}
		if !ce.retriable {
			return nil, n, ce
		}
		if retry >= maxRetries {
			return nil, n, fmt.Errorf("llm call failed after %d attempts: %w", n, ce)
		}
		wait := g.backoff(retry)
		if ce.retryAfter > 0 {
			if ce.retryAfter > g.maxRetryAfter {
				return nil, n, fmt.Errorf("llm endpoint %s asks to wait %s before retrying, longer than kodyls waits (%s); try again later: %w",
					g.endpoint, ce.retryAfter.Round(time.Second), g.maxRetryAfter, ce)
			}
			wait = ce.retryAfter
		}
		if dl, ok := ctx.Deadline(); ok {
			if left := time.Until(dl); left < wait {
				return nil, n, fmt.Errorf("llm call gave up: the next retry is due in %s but the request's deadline is in %s: %w",
					wait.Round(time.Millisecond), left.Round(time.Millisecond), ce)
			}
		}
		g.log.Debug("llm attempt failed; retrying", "endpoint", g.endpoint, "model", p.model, "attempt", n, "wait", wait, "err", ce.err)
		if err := sleep(ctx, wait); err != nil {
			return nil, n, fmt.Errorf("llm call canceled: %w", err)
		}
		retry++
	}
}

// backoff is exponential backoff with full jitter: a uniform wait in
// [0, min(cap, base·2^retry)], which spreads out clients that failed
// together instead of synchronising their retries.
func (g *Gateway) backoff(retry int) time.Duration {
	limit := float64(g.backoffBase) * math.Pow(2, float64(retry))
	if limit > float64(g.backoffCap) {
		limit = float64(g.backoffCap)
	}
	return time.Duration(rand.Float64() * limit)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// acquire takes a slot of the concurrency limit, honouring ctx.
func (g *Gateway) acquire(ctx context.Context) error {
	select {
	case g.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("llm call canceled while waiting for a free slot: %w", ctx.Err())
	}
}

func (g *Gateway) release() { <-g.sem }

// isReasoningModel reports OpenAI reasoning models, which take
// max_completion_tokens and no temperature; go-openai rejects requests that
// do otherwise before sending them.
func isReasoningModel(model string) bool {
	m := normModel(model)
	return strings.HasPrefix(m, "o1") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4") || strings.HasPrefix(m, "gpt-5")
}

// buildRequest renders p for the wire at the given response-format level.
func (g *Gateway) buildRequest(p *prepared, sch *schemaInfo, schemaName string, level formatLevel) openai.ChatCompletionRequest {
	msgs := p.msgs
	if sch != nil {
		switch level {
		case levelJSONSchema:
		default:
			msgs = withSystemText(msgs, g.redact(g.fallbackPrompt(sch, schemaName)))
		}
	}
	creq := openai.ChatCompletionRequest{
		Model:    p.model,
		Messages: toWire(msgs),
		Tools:    p.tools,
	}
	if p.toolChoice != nil {
		creq.ToolChoice = p.toolChoice
	}
	reasoning := isReasoningModel(p.model)
	if p.maxTokens > 0 {
		if reasoning {
			creq.MaxCompletionTokens = p.maxTokens
		} else {
			//lint:ignore SA1019 older OpenAI-compatible servers (llama.cpp, vLLM, Ollama) only know max_tokens
			creq.MaxTokens = p.maxTokens
		}
	}
	if p.temperature != nil && !reasoning {
		t := float32(*p.temperature)
		if t == 0 {
			// go-openai drops a zero temperature (omitempty), which would
			// give the server's default instead of greedy decoding.
			t = math.SmallestNonzeroFloat32
		}
		creq.Temperature = t
	}
	if sch != nil {
		switch level {
		case levelJSONSchema:
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
				Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
					Name:   schemaName,
					Schema: sch.wire,
					Strict: sch.strict,
				},
			}
		case levelJSONObject:
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		}
	}
	return creq
}

// withSystemText appends text to the first system message, or puts a
// system message first. Appending instead of adding a second system
// message matters: several chat templates (Mistral's, some llama.cpp
// ones) reject system messages anywhere but first.
func withSystemText(msgs []Message, text string) []Message {
	out := make([]Message, 0, len(msgs)+1)
	for i, m := range msgs {
		if m.Role == "system" {
			out = append(out, msgs[:i]...)
			m.Content = strings.TrimRight(m.Content, "\n") + "\n\n" + text
			out = append(out, m)
			return append(out, msgs[i+1:]...)
		}
	}
	out = append(out, Message{Role: "system", Content: text})
	return append(out, msgs...)
}

// formatLevel is how a structured reply is asked for, from best to least.
type formatLevel int

const (
	levelJSONSchema formatLevel = iota // response_format json_schema, strict
	levelJSONObject                    // response_format json_object, schema in the prompt
	levelNone                          // no response_format, schema in the prompt
)

func (l formatLevel) String() string {
	return [...]string{"json_schema", "json_object", "none"}[l]
}

func (g *Gateway) formatLevel(model string) formatLevel {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.formats[model]
}

// downgradeFormat remembers that model's endpoint rejected level and
// returns the next level to use. It logs once per model and level.
func (g *Gateway) downgradeFormat(model string, level formatLevel, cause error) formatLevel {
	next := level + 1
	g.mu.Lock()
	cur := g.formats[model]
	if cur < next {
		g.formats[model] = next
	}
	g.mu.Unlock()
	if cur < next {
		g.log.Warn("llm endpoint rejected response_format; falling back", "endpoint", g.endpoint, "model", model,
			"rejected", level.String(), "now", next.String(), "err", cause)
	}
	return next
}

// toWire converts messages to go-openai's type.
func toWire(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == "tool" {
			// OpenAI's tool message has no name field; strict
			// implementations reject it.
			w.Name = ""
		}
		if len(m.ToolCalls) > 0 {
			w.ToolCalls = make([]openai.ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				w.ToolCalls[j] = openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Arguments)}}
			}
		}
		out[i] = w
	}
	return out
}

func fromWire(resp *openai.ChatCompletionResponse) *ChatResponse {
	c := resp.Choices[0]
	out := &ChatResponse{Content: c.Message.Content, FinishReason: string(c.FinishReason)}
	for _, tc := range c.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
	}
	return out
}

// cacheKey hashes everything that determines a reply: the kind of call,
// model, redacted messages, tools, response schema, prompt name and
// version, and sampling settings. Fields are length-prefixed so that no two
// different requests can produce the same byte stream.
func (g *Gateway) cacheKey(kind string, p *prepared, sch *schemaInfo, schemaName string) string {
	h := sha256.New()
	w := func(s string) { writeField(h, s) }
	w("kodyls-llm-cache-v1")
	w(kind)
	w(p.model)
	w(strconv.Itoa(len(p.msgs)))
	for _, m := range p.msgs {
		w(m.Role)
		w(m.Content)
		w(m.Name)
		w(m.ToolCallID)
		w(strconv.Itoa(len(m.ToolCalls)))
		for _, c := range m.ToolCalls {
			w(c.ID)
			w(c.Name)
			w(string(c.Arguments))
		}
	}
	h.Write(p.toolsKey)
	w(p.choiceKey)
	if sch != nil {
		w(schemaName)
		w(sch.hash)
	} else {
		w("")
	}
	w(p.promptName)
	w(strconv.Itoa(p.promptVer))
	if p.temperature != nil {
		w(strconv.FormatFloat(*p.temperature, 'g', -1, 64))
	} else {
		w("default")
	}
	w(strconv.Itoa(p.maxTokens))
	return "llm:" + hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// cacheEntry is what the cache stores. Tool-call arguments are kept as
// strings because the model's text need not be valid JSON, which a
// json.RawMessage field would refuse to marshal.
type cacheEntry struct {
	Content      string          `json:"content,omitempty"`
	ToolCalls    []cachedCall    `json:"tool_calls,omitempty"`
	FinishReason string          `json:"finish_reason,omitempty"`
	Doc          json.RawMessage `json:"doc,omitempty"` // structured replies: the validated document
	Dropped      []string        `json:"dropped,omitempty"`
}

type cachedCall struct {
	ID, Name, Arguments string
}

func newCacheEntry(r *ChatResponse, doc []byte) *cacheEntry {
	e := &cacheEntry{Content: r.Content, FinishReason: r.FinishReason, Doc: doc}
	for _, c := range r.ToolCalls {
		e.ToolCalls = append(e.ToolCalls, cachedCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	return e
}

func (e *cacheEntry) toolCalls() []ToolCall {
	var out []ToolCall
	for _, c := range e.ToolCalls {
		out = append(out, ToolCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
	}
	return out
}

func (g *Gateway) cacheGet(ctx context.Context, key string) (*cacheEntry, bool) {
	b, ok, err := g.cache.Get(ctx, key)
	if err != nil {
		g.log.Warn("llm cache read failed; calling the model", "err", err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil {
		g.log.Warn("llm cache entry unreadable; calling the model", "err", err)
		return nil, false
	}
	return &e, true
}

func (g *Gateway) cachePut(ctx context.Context, key string, e *cacheEntry) {
	b, err := json.Marshal(e)
	if err == nil {
		err = g.cache.Put(context.WithoutCancel(ctx), key, b, g.cfg.CacheTTL)
	}
	if err != nil {
		g.log.Warn("llm cache write failed", "err", err)
	}
}

// isSetupStatus reports whether an HTTP status says kodyls is set up
// wrong rather than that one request failed: a bad API key (401), a model
// the key may not use (403), a model or path the endpoint does not serve
// (404).
func isSetupStatus(code int) bool { return code == 401 || code == 403 || code == 404 }

// IsSetupError reports whether err is, or wraps, an answer of the
// endpoint that says kodyls is set up wrong (HTTP 401, 403 or 404), or an
// API key that cannot be sent at all: asking again will not help until the
// settings change.
func IsSetupError(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && isSetupStatus(se.StatusCode) || errors.Is(err, ErrKeyNotSendable)
}

// SetupFailure returns the last answer of the endpoint that says kodyls is
// set up wrong (HTTP 401, 403 or 404: see [StatusError] for what to do),
// nil when there was none, and whether that is what every call came to
// for some model: a model of one task class (llm.models) the endpoint
// does not serve fails that stage every time even while the others work.
// A one-shot command reports it once instead of per call.
func (g *Gateway) SetupFailure() (*StatusError, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for model, se := range g.refused {
		if g.answered[model] == 0 {
			return se, true
		}
	}
	return g.setupErr, false
}
