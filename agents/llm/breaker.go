package llm

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

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
