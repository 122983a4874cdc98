package llm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
)

func TestMalformedBodyIsRetried(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Malformed(), llmtest.Text("fine"))
	g := newGateway(t, s.URL, nil)

	resp, err := g.Chat(context.Background(), chatRequest("hi"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != "fine" || resp.Usage.Attempts != 2 || s.CountChat() != 2 {
		t.Errorf("content %q, attempts %d, requests %d; want fine after 2", resp.Content, resp.Usage.Attempts, s.CountChat())
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Throttle("1"), llmtest.Text("ok"))
	g := newGateway(t, s.URL, nil)

	start := time.Now()
	resp, err := g.Chat(context.Background(), chatRequest("hi"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	reqs := s.ChatRequests()
	if resp.Content != "ok" || len(reqs) != 2 {
		t.Fatalf("content %q after %d requests", resp.Content, len(reqs))
	}
	if gap := reqs[1].Start.Sub(reqs[0].End); gap < time.Second {
		t.Errorf("retried after %s, want at least the 1s of Retry-After", gap)
	}
	if time.Since(start) < time.Second {
		t.Errorf("call took %s, want ≥ 1s", time.Since(start))
	}
}

func TestRetryAfterBeyondDeadlineStops(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Throttle("30"), llmtest.Text("ok"))
	g := newGateway(t, s.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	start := time.Now()
	_, err := g.Chat(ctx, chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "deadline") || !strings.Contains(err.Error(), "429") {
		t.Errorf("err = %v, want a clear rate-limit/deadline error", err)
	}
	if time.Since(start) > time.Second || s.CountChat() != 1 {
		t.Errorf("took %s with %d requests; want an immediate stop", time.Since(start), s.CountChat())
	}
}

func TestRetriesStopAtTheLimit(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.ServerError())
	g := newGateway(t, s.URL, func(c *llm.Config) { c.MaxRetries = 2 })

	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "3 attempts") || !strings.Contains(err.Error(), "500") {
		t.Errorf("err = %v, want failure after 3 attempts naming the 500", err)
	}
	if n := s.CountChat(); n != 3 {
		t.Errorf("requests = %d, want MaxRetries+1 = 3", n)
	}
}

func TestServerErrorIsRetried(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.ServerError(), llmtest.Reply{Status: 503}, llmtest.Text("ok"))
	g := newGateway(t, s.URL, nil)
	resp, err := g.Chat(context.Background(), chatRequest("hi"))
	if err != nil || resp.Content != "ok" || s.CountChat() != 3 {
		t.Errorf("resp %+v, err %v, requests %d; want ok on the third", resp, err, s.CountChat())
	}
}

func TestUnauthorizedIsNotRetried(t *testing.T) {
	s := newServer(t)
	s.RequireAPIKey("right-key")
	s.On(llmtest.Any(), llmtest.Text("ok"))
	g := newGateway(t, s.URL, func(c *llm.Config) { c.APIKey = "wrong-key" })

	_, err := g.Chat(context.Background(), chatRequest("hi"))
	var se *llm.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 {
		t.Fatalf("err = %v, want a 401 StatusError", err)
	}
	if !strings.Contains(err.Error(), "KODYLS_LLM_API_KEY") {
		t.Errorf("message %q does not say what to set", err)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1: a 401 is never retried", s.CountChat())
	}
	if g.Status().State != llm.StateOK {
		t.Errorf("a 401 opened the breaker: %+v", g.Status())
	}
}

func TestPerCallTimeoutOpensTheBreakerAtOnce(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{Hang: true})
	g := newGateway(t, s.URL, func(c *llm.Config) {
		c.Timeout = 150 * time.Millisecond
		c.MaxRetries = 3
		c.BreakerThreshold = 3
	})

	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 150ms") {
		t.Errorf("err = %v, want a timeout naming the limit", err)
	}
	if n := s.CountChat(); n != 1 {
		t.Errorf("requests = %d, want 1: a timed-out call is not retried", n)
	}
	if !s.WaitDisconnects(1, 2*time.Second) {
		t.Errorf("disconnects = %d, want 1: the timed-out request must be aborted", s.Disconnects())
	}
	if st := g.Status(); st.State != llm.StateDown {
		t.Fatalf("after one timeout the breaker is %+v, want down", st)
	}
	// The next calls fail at once, without reaching the endpoint.
	for range 5 {
		if _, err := g.Chat(context.Background(), chatRequest("again")); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	}
	if n := s.CountChat(); n != 1 {
		t.Errorf("requests = %d after the breaker opened, want still 1", n)
	}
}

func TestCancelAbortsTheRequest(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{Hang: true})
	g := newGateway(t, s.URL, nil)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.WaitRequests(1, 5*time.Second)
		cancel()
	}()
	start := time.Now()
	_, err := g.Chat(ctx, chatRequest("hi"))
	elapsed := time.Since(start)
	wg.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if elapsed > time.Second {
		t.Errorf("returned after %s, want promptly", elapsed)
	}
	if !s.WaitDisconnects(1, 2*time.Second) || s.Disconnects() != 1 {
		t.Errorf("disconnects = %d, want 1: the server must see the client go", s.Disconnects())
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1: a cancelled call is not retried", s.CountChat())
	}
	if g.Status().State != llm.StateOK {
		t.Errorf("cancellation counted against the endpoint: %+v", g.Status())
	}
}

func TestBreakerOpensFailsFastAndRecovers(t *testing.T) {
	s := newServer(t)
	s.On(isCheck, llmtest.Text("OK"))
	s.On(llmtest.Any(), llmtest.ServerError(), llmtest.ServerError(), llmtest.Text("back"))
	var hooks statusLog
	usage := &usageLog{}
	g := newGateway(t, s.URL, func(c *llm.Config) {
		c.MaxRetries = -1
		c.BreakerThreshold = 2
		c.BreakerCooldown = 300 * time.Millisecond
	}, llm.WithStatusHook(hooks.hook), llm.WithUsage(usage))
	ctx := context.Background()

	for i := range 2 {
		if _, err := g.Chat(ctx, chatRequest("hi")); err == nil || errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("call %d: err = %v, want the 500", i, err)
		}
	}
	st := g.Status()
	if st.State != llm.StateDown || !strings.Contains(st.Message, s.URL) || !strings.Contains(st.Message, "not answering") ||
		!strings.Contains(st.Message, "HTTP 500") || !strings.Contains(st.Message, "retries in") {
		t.Errorf("status = %+v, want down with a user-facing message", st)
	}
	for range 5 {
		if _, err := g.Chat(ctx, chatRequest("hi")); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("err = %v while open, want ErrUnavailable", err)
		}
	}
	if n := s.CountChat(); n != 2 {
		t.Errorf("requests = %d, want 2: an open breaker makes no HTTP request", n)
	}
	if got := hooks.get(); !slices.Equal(got, []string{"down"}) {
		t.Errorf("hook calls = %v, want one (down)", got)
	}

	time.Sleep(350 * time.Millisecond)
	resp, err := g.Chat(ctx, chatRequest("hi"))
	if err != nil || resp.Content != "back" {
		t.Fatalf("probe: %v %+v", err, resp)
	}
	if st := g.Status(); st.State != llm.StateOK || st.Message != "" {
		t.Errorf("status after probe = %+v, want ok", st)
	}
	if got := requestKinds(s); !slices.Equal(got, []string{"call", "call", "check", "call"}) {
		t.Errorf("requests = %v, want the two failed calls, then the check that ends the cooldown, then the call", got)
	}
	if got := hooks.get(); !slices.Equal(got, []string{"down", "probing", "ok"}) {
		t.Errorf("hook calls = %v, want down, probing, ok", got)
	}
	// Fail-fast calls are recorded too, with no attempt.
	fast := 0
	for _, u := range usage.records() {
		if u.Attempts == 0 && strings.Contains(u.Err, "unavailable") {
			fast++
		}
	}
	if fast != 5 {
		t.Errorf("fail-fast usage records = %d, want 5", fast)
	}
}

func TestBreakerProbeFailureReopens(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.ServerError())
	var hooks statusLog
	g := newGateway(t, s.URL, func(c *llm.Config) {
		c.MaxRetries = -1
		c.BreakerThreshold = 1
		c.BreakerCooldown = 100 * time.Millisecond
	}, llm.WithStatusHook(hooks.hook))
	ctx := context.Background()
	_, _ = g.Chat(ctx, chatRequest("hi"))
	time.Sleep(150 * time.Millisecond)
	// The check after the cooldown gets the 500 too: the call is refused
	// without going out.
	if _, err := g.Chat(ctx, chatRequest("hi")); !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("probe err = %v, want ErrUnavailable for the check's 500", err)
	}
	if _, err := g.Chat(ctx, chatRequest("hi")); !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("after a failed probe err = %v, want ErrUnavailable", err)
	}
	if got := hooks.get(); !slices.Equal(got, []string{"down", "probing", "down"}) {
		t.Errorf("hook calls = %v", got)
	}
	if got := requestKinds(s); !slices.Equal(got, []string{"call", "check"}) {
		t.Errorf("requests = %v, want the failed call and the check", got)
	}
}

// isCheck matches the one-token request that ends a cooldown.
func isCheck(r *llmtest.ChatRequest) bool { return r.MaxTokens == 1 }

// requestKinds lists the chat requests the endpoint received, in order:
// "check" for the one-token check that ends a cooldown, "call" for others.
func requestKinds(s *llmtest.Server) []string {
	var out []string
	for _, r := range s.ChatRequests() {
		if isCheck(r.Chat) {
			out = append(out, "check")
		} else {
			out = append(out, "call")
		}
	}
	return out
}

// After a cooldown, an endpoint that still never answers costs the next
// call the check's limit, not the call's own timeout. The timeout here is
// longer than go test's own deadline, so that a call that waited it would
// fail the run rather than pass slowly. When the endpoint answers again,
// a call slower than the check's limit goes through: the limit judges the
// check only.
func TestProbeAfterCooldownWaitsTheCheckNotTheTimeout(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.ServerError())
	var hooks statusLog
	g := newGateway(t, s.URL, func(c *llm.Config) {
		c.Timeout = time.Hour
		c.MaxRetries = -1
		c.BreakerThreshold = 1
		c.BreakerCooldown = 100 * time.Millisecond
	}, llm.WithStatusHook(hooks.hook))
	llm.SetProbeTimeoutForTest(g, 200*time.Millisecond)
	ctx := context.Background()
	if _, err := g.Chat(ctx, chatRequest("hi")); err == nil || g.Status().State != llm.StateDown {
		t.Fatalf("err = %v, status %+v: want the 500 to open the breaker", err, g.Status())
	}

	s.Reset()
	s.On(llmtest.Any(), llmtest.Reply{Hang: true})
	time.Sleep(150 * time.Millisecond)
	_, err := g.Chat(ctx, chatRequest("the user's request"))
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("err = %v, want ErrUnavailable after the check's 200ms", err)
	}
	if st := g.Status(); st.State != llm.StateDown || st.LastError != "no answer within 200ms" {
		t.Errorf("status = %+v, want down again for the unanswered check", st)
	}
	if got := requestKinds(s); !slices.Equal(got, []string{"check"}) {
		t.Errorf("requests = %v, want the check alone: the call does not go out", got)
	}
	if !s.WaitDisconnects(1, 5*time.Second) {
		t.Errorf("the unanswered check was not aborted")
	}

	s.Reset()
	s.On(isCheck, llmtest.Text("OK"))
	s.On(llmtest.Any(), llmtest.Reply{Content: "back", Latency: 400 * time.Millisecond})
	time.Sleep(150 * time.Millisecond)
	resp, err := g.Chat(ctx, chatRequest("the user's request"))
	if err != nil || resp.Content != "back" {
		t.Fatalf("once the endpoint answers: %v %+v, want the slow answer", err, resp)
	}
	if got := requestKinds(s); !slices.Equal(got, []string{"check", "call"}) {
		t.Errorf("requests = %v, want the check, then the call", got)
	}
	if got := hooks.get(); !slices.Equal(got, []string{"down", "probing", "down", "probing", "ok"}) {
		t.Errorf("hook calls = %v", got)
	}
}

func TestConnectionRefusedOpensBreakerWithMessage(t *testing.T) {
	url := deadURL(t)
	g := newGateway(t, url, func(c *llm.Config) { c.MaxRetries = -1; c.BreakerThreshold = 1 })
	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v, want connection refused", err)
	}
	want := "LLM endpoint " + url + " is not answering (connection refused); kodyls works offline and retries in 30s"
	if st := g.Status(); st.Message != want {
		t.Errorf("message = %q\nwant      %q", st.Message, want)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{Content: "ok", Latency: 80 * time.Millisecond})
	g := newGateway(t, s.URL, func(c *llm.Config) { c.MaxConcurrent = 2 })

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.Chat(context.Background(), chatRequest("hi"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
	}
	reqs := s.ChatRequests()
	peak := 0
	for _, r := range reqs {
		n := 0
		for _, o := range reqs {
			if !o.Start.After(r.Start) && o.End.After(r.Start) {
				n++
			}
		}
		peak = max(peak, n)
	}
	if len(reqs) != 6 || peak > 2 || peak < 2 {
		t.Errorf("%d requests, peak concurrency %d; want 6 with a peak of exactly 2", len(reqs), peak)
	}
}

func TestSemaphoreWaitHonoursContext(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{Hang: true})
	g := newGateway(t, s.URL, func(c *llm.Config) { c.MaxConcurrent = 1 })

	holder, release := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = g.Chat(holder, chatRequest("hold the slot"))
	}()
	s.WaitRequests(1, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := g.Chat(ctx, chatRequest("waits"))
	release()
	wg.Wait()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "free slot") {
		t.Errorf("err = %v, want the caller's deadline while waiting for a slot", err)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1", s.CountChat())
	}
}

// A response past MaxResponseBytes is refused with a clear error and not
// retried, whether its length is announced or not; a body cut off
// half-way is a malformed response, retried, then reported.
func TestOversizedAndCutBodies(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{HugeBody: 50 << 20})
	g := newGateway(t, s.URL, func(c *llm.Config) { c.Timeout = 10 * time.Second; c.MaxRetries = 2 })
	_, err := g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "larger than 8 MB") {
		t.Fatalf("err = %v, want the size limit named", err)
	}
	if n := s.CountChat(); n != 1 {
		t.Errorf("requests = %d, want 1: an oversized answer is not retried", n)
	}

	cut := newServer(t)
	cut.On(llmtest.Any(), llmtest.Reply{CutBody: true, Content: "an answer long enough to be cut in half"})
	g = newGateway(t, cut.URL, func(c *llm.Config) { c.Timeout = 10 * time.Second; c.MaxRetries = 1 })
	_, err = g.Chat(context.Background(), chatRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "malformed response") {
		t.Fatalf("err = %v, want a malformed response", err)
	}
	if n := cut.CountChat(); n != 2 {
		t.Errorf("requests = %d, want 2 (one retry)", n)
	}
}
