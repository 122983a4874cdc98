package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultProbeTimeout bounds the check that ends a cooldown (at most the
// per-call timeout).
const DefaultProbeTimeout = 5 * time.Second

// probeFeature names the check in the usage log.
const probeFeature = "endpoint-check"

// breaker is a consecutive-failure circuit breaker. It exists because
// kodyls calls the model from the typing path: without it a dead endpoint
// would be retried (with backoff) for every keystroke, queueing work and
// burning the user's CPU and patience.
type breaker struct {
	mu       sync.Mutex
	state    string
	since    time.Time
	failures int
	until    time.Time // end of the cooldown while down
	lastErr  string
	failure  string // lastErr's error in full
	probing  bool   // a probe call is in flight
}

// admission is what allow decided for one call.
type admission struct {
	probe bool
}

// allow decides whether a call may go to the network. It returns the
// transition to report (if any) and ErrUnavailable-wrapping errors while
// the breaker is open or a probe is already in flight.
func (g *Gateway) allow(now time.Time) (admission, *Status, error) {
	b := &g.breaker
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateOK:
		return admission{}, nil, nil
	case StateDown:
		if now.Before(b.until) {
			return admission{}, nil, fmt.Errorf("%w: %s", ErrUnavailable, g.statusLocked(now).Message)
		}
		b.state, b.since, b.probing = StateProbing, now, true
		st := g.statusLocked(now)
		return admission{probe: true}, &st, nil
	default: // probing
		if b.probing {
			return admission{}, nil, fmt.Errorf("%w: %s", ErrUnavailable, g.statusLocked(now).Message)
		}
		// The previous probe was abandoned (its caller gave up); this call
		// becomes the probe.
		b.probing = true
		return admission{probe: true}, nil, nil
	}
}

// succeeded records a call that reached the endpoint and got an answer
// (including a non-retriable 4xx: the endpoint is alive).
func (g *Gateway) succeeded(a admission, now time.Time) *Status {
	b := &g.breaker
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = 0
	if a.probe {
		b.probing = false
	}
	if b.state == StateOK {
		return nil
	}
	b.state, b.since, b.lastErr, b.failure = StateOK, now, "", ""
	st := g.statusLocked(now)
	return &st
}

// failed records a call that failed after its retries with an error that
// says the endpoint is not answering properly.
func (g *Gateway) failed(a admission, now time.Time, err error) *Status {
	b := &g.breaker
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastErr, b.failure = shortReason(err), err.Error()
	if a.probe {
		b.probing = false
	}
	if b.state == StateDown {
		return nil
	}
	b.failures++
	// A timeout opens the breaker at once: each further call would cost
	// the user another whole timeout, so a dead endpoint may cost one per
	// process, not one per stage and file.
	var ce *callError
	timedOut := errors.As(err, &ce) && ce.timedOut
	if b.state == StateOK && b.failures < g.cfg.BreakerThreshold && !timedOut {
		return nil
	}
	b.state, b.since, b.until = StateDown, now, now.Add(g.cfg.BreakerCooldown)
	st := g.statusLocked(now)
	return &st
}

// abandoned records a call that ended without telling anything about the
// endpoint (the caller cancelled it), so a probe slot is freed for the next
// call.
func (g *Gateway) abandoned(a admission) {
	if !a.probe {
		return
	}
	b := &g.breaker
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// probe is the check made by the first call after a cooldown, before the
// call itself: a one-token completion bounded by the probe timeout (5 s by
// default) instead of the call's own timeout (60 s). Were the call the
// probe, an endpoint still hung would cost its user a whole timeout after
// every cooldown; and a short limit on the call itself would keep a slow
// model that does answer down for good. Any answer short of a server
// error proves the endpoint alive (a 400 for the one-token limit too);
// silence or a refused connection opens the breaker again, and the call
// fails at once with ErrUnavailable.
func (g *Gateway) probe(ctx context.Context, a admission, model string) error {
	start := time.Now()
	u := Usage{Feature: probeFeature, Model: model, At: start}
	if err := g.acquire(ctx); err != nil {
		g.abandoned(a)
		return err
	}
	timeout := min(g.probeTimeout, g.cfg.Timeout)
	info := &respInfo{}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	resp, err := g.client.CreateChatCompletion(withRespInfo(pctx, info), probeRequest(model))
	timedOut := errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	g.release()
	now := time.Now()
	u.Attempts, u.Latency = 1, now.Sub(start)
	if err == nil {
		u.PromptTokens, u.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		g.record(ctx, u)
		g.notify(g.succeeded(a, now))
		return nil
	}
	u.Err = err.Error()
	g.record(ctx, u)
	if ctx.Err() != nil {
		g.abandoned(a)
		return fmt.Errorf("llm call canceled: %w", ctx.Err())
	}
	var ce *callError
	if timedOut {
		ce = &callError{
			reason:   fmt.Sprintf("no answer within %s", timeout),
			timedOut: true,
			err:      fmt.Errorf("llm endpoint %s did not answer a check within %s: %w", g.endpoint, timeout, err),
		}
	} else {
		ce = g.classify(err, info, false, model)
	}
	if !isEndpointFailure(ce) {
		g.notify(g.succeeded(a, now))
		return nil
	}
	g.notify(g.failed(a, now, ce))
	return fmt.Errorf("%w: %s", ErrUnavailable, g.Status().Message)
}

// probeRequest is the smallest completion a server answers: one token.
func probeRequest(model string) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:    model,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Reply with OK."}},
	}
	if isReasoningModel(model) {
		req.MaxCompletionTokens = 1
	} else {
		//lint:ignore SA1019 older OpenAI-compatible servers (llama.cpp, vLLM, Ollama) only know max_tokens
		req.MaxTokens = 1
	}
	return req
}

// notify logs a transition and reports it to the status hook. It runs
// outside the breaker's lock, so a slow log handler or a hook that reads
// Status cannot block or deadlock other calls.
func (g *Gateway) notify(st *Status) {
	if st == nil {
		return
	}
	switch st.State {
	case StateDown:
		g.log.Warn("llm endpoint marked down", "endpoint", g.endpoint, "reason", st.LastError, "cooldown", g.cfg.BreakerCooldown)
	default:
		g.log.Info("llm endpoint state changed", "endpoint", g.endpoint, "state", st.State)
	}
	if g.statusHook != nil {
		g.statusHook(*st)
	}
}

// Status reports whether the endpoint is considered up.
func (g *Gateway) Status() Status {
	g.breaker.mu.Lock()
	defer g.breaker.mu.Unlock()
	return g.statusLocked(time.Now())
}

func (g *Gateway) statusLocked(now time.Time) Status {
	b := &g.breaker
	st := Status{State: b.state, Since: b.since, LastError: b.lastErr, Endpoint: g.endpoint, Failure: b.failure}
	switch b.state {
	case StateDown:
		wait := "on the next request"
		if d := b.until.Sub(now); d > 0 {
			wait = fmt.Sprintf("in %ds", int(math.Ceil(d.Seconds())))
		}
		st.Message = fmt.Sprintf("LLM endpoint %s is not answering (%s); kodyls works offline and retries %s", g.endpoint, b.lastErr, wait)
	case StateProbing:
		st.Message = fmt.Sprintf("LLM endpoint %s was not answering (%s); kodyls is checking it again", g.endpoint, b.lastErr)
	}
	return st
}
