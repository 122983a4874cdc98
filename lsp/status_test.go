package lsp_test

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// violationsWatch checks the kodyls/ruleViolationsChanged notifications a
// step of a test produced: after AwaitIdle every notification the server
// sent for the step has been recorded.
type violationsWatch struct {
	t    *testing.T
	s    *lsptest.Session
	seen int
}

// expect waits until the server is idle and checks that the notifications
// since the last call are want, each naming only name's URI.
func (w *violationsWatch) expect(name string, want int, step string) {
	w.t.Helper()
	w.s.AwaitIdle("")
	all := w.s.ViolationsChanged()
	got := all[w.seen:]
	w.seen = len(all)
	if len(got) != want {
		w.t.Fatalf("%s: %d ruleViolationsChanged notifications, want %d: %+v", step, len(got), want, got)
	}
	for _, p := range got {
		if len(p.URIs) != 1 || p.URIs[0] != w.s.URI(name) {
			w.t.Fatalf("%s: notification names %v, want only %s", step, p.URIs, w.s.URI(name))
		}
	}
}

func TestRuleViolationsChangedOncePerChange(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	w := &violationsWatch{t: t, s: s}
	w.expect("v.go", 0, "initialized")

	// An untracked file: every line counts as changed.
	s.OpenText("v.go", "package main\n\nvar _ = fmt.Println(1)\n\n// notes\n")
	w.expect("v.go", 1, "open with a violation")

	// Below the first violation, so its line (and id) stays the same.
	s.Insert("v.go", protocol.Position{Line: 3, Character: 0}, "var _ = fmt.Println(2)\n")
	w.expect("v.go", 1, "a second violation")

	// Typing in the comment below both changes nothing about them.
	at := s.EndOfLine("v.go", `// notes`)
	for i := 0; i < 5; i++ {
		s.Insert("v.go", protocol.Position{Line: at.Line, Character: at.Character + uint32(i)}, "x")
	}
	w.expect("v.go", 0, "typing in a comment")
	if ds := s.Diagnostics("v.go"); len(ds) != 2 {
		t.Fatalf("diagnostics after typing in a comment: %s", lsptest.Describe(ds))
	}

	// Removing both violating lines at once.
	s.EditBuffer("v.go", lsptest.Edit{Range: protocol.Range{Start: protocol.Position{Line: 2}, End: protocol.Position{Line: 4}}})
	w.expect("v.go", 1, "removing every violation")

	s.Insert("v.go", protocol.Position{Line: 2, Character: 0}, "var _ = fmt.Println(3)\n")
	w.expect("v.go", 1, "a violation again")
	s.Close("v.go")
	w.expect("v.go", 1, "closing a file with violations")
	s.Shutdown()
}

// TestRuleViolationsChangedSurvivesBursts: typing right after a change can
// make the server refuse that run's diagnostics as stale; the change must
// still be reported once, by the run that publishes.
func TestRuleViolationsChangedSurvivesBursts(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	w := &violationsWatch{t: t, s: s}
	s.OpenText("v.go", "package main\n\nvar _ = 1\n\n// notes\n")
	w.expect("v.go", 0, "open without violations")
	for round := 0; round < 5; round++ {
		s.Insert("v.go", protocol.Position{Line: 2, Character: 0}, "var _ = fmt.Println(1)\n")
		for i := 0; i < 30; i++ { // in "// notes", below the violation
			s.Insert("v.go", protocol.Position{Line: 5, Character: 0}, "x")
		}
		w.expect("v.go", 1, "a violation, then a burst of typing")
		s.EditBuffer("v.go", lsptest.Edit{Range: protocol.Range{Start: protocol.Position{Line: 2}, End: protocol.Position{Line: 3}}})
		for i := 0; i < 30; i++ {
			s.Insert("v.go", protocol.Position{Line: 4, Character: 0}, "x")
		}
		w.expect("v.go", 1, "no violation, then a burst of typing")
	}
	s.Shutdown()
}

func TestRuleViolationsChangedNotSentForCleanFiles(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	w := &violationsWatch{t: t, s: s}
	s.OpenText("clean.go", "package main\n\nvar _ = 1\n")
	w.expect("clean.go", 0, "opening a file without violations")
	s.Insert("clean.go", protocol.Position{Line: 3, Character: 0}, "var _ = 2\n")
	w.expect("clean.go", 0, "an edit that adds no violation")
	s.Close("clean.go")
	w.expect("clean.go", 0, "closing a file without violations")
	s.Shutdown()
}

// checkNoRepeats fails when two consecutive kodyls/status notifications
// are equal: the server only sends changes.
func checkNoRepeats(t *testing.T, st []contract.StatusParams) {
	t.Helper()
	for i := 1; i < len(st); i++ {
		if st[i] == st[i-1] {
			t.Fatalf("status %d repeats the previous one %+v: %+v", i, st[i], st)
		}
	}
}

// subsequence reports whether the states of want appear in st in order,
// each matched by a distinct notification.
func subsequence(st []contract.StatusParams, want ...func(contract.StatusParams) bool) bool {
	i := 0
	for _, p := range st {
		if i < len(want) && want[i](p) {
			i++
		}
	}
	return i == len(want)
}

func stateIs(s contract.State) func(contract.StatusParams) bool {
	return func(p contract.StatusParams) bool { return p.State == s }
}

func TestStatusOfflineWithoutLLM(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	st := s.Statuses()
	if len(st) != 1 || st[0].State != contract.StateOffline || st[0].Message == "" || st[0].Reviewing != 0 {
		t.Fatalf("statuses after initialized without a model: %+v, want one offline with a message", st)
	}
	s.Shutdown()
}

func TestStatusFollowsAReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.AwaitIdle("")
	if st := e.Statuses(); len(st) == 0 || st[len(st)-1].State != contract.StateReady {
		t.Fatalf("statuses after initialized with a model: %+v, want ready last", st)
	}
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitIdle("")
	if ds := e.Diagnostics("main.go"); !hasReviewOnLine(6)(ds) {
		t.Fatalf("the review published %s", lsptest.Describe(ds))
	}
	st := e.Statuses()
	reviewing := func(p contract.StatusParams) bool {
		return p.State == contract.StateReviewing && p.Reviewing >= 1
	}
	if !subsequence(st, stateIs(contract.StateReady), reviewing, stateIs(contract.StateReady)) {
		t.Fatalf("statuses %+v, want ready, reviewing (≥1), ready", st)
	}
	if last := st[len(st)-1]; last.State != contract.StateReady || last.Reviewing != 0 {
		t.Fatalf("status after the review %+v, want ready with none running", last)
	}
	checkNoRepeats(t, st)
	e.Shutdown()
}

func TestStatusEndpointDown(t *testing.T) {
	s := startDeadEndpoint(t, reviewRepo(t))
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// x\n")
	s.Save("main.go")
	s.AwaitIdle("")
	st := s.Statuses()
	if len(st) == 0 {
		t.Fatal("no status sent")
	}
	last := st[len(st)-1]
	if last.State != contract.StateEndpointDown || !strings.Contains(last.Message, "127.0.0.1:1") {
		t.Fatalf("status after a review against a dead endpoint %+v, want endpointDown naming it; all: %+v", last, st)
	}
	checkNoRepeats(t, st)
	s.Shutdown()
}

// garbledMarker in a buffer makes the fake model answer the review's
// analysis with prose instead of the JSON asked for.
const garbledMarker = "// garbled"

// scriptGarbledAnalysis makes the analysis of any change containing
// garbledMarker come back as text that is not JSON; every other review
// finds rangeLoop.
func scriptGarbledAnalysis(fake *llmtest.Server) {
	fake.On(llmtest.All(llmtest.SchemaName(review.SchemaAnalyze), llmtest.PromptContains(garbledMarker)),
		llmtest.Text("Looks good to me, nothing to add!"))
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
}

// degradedSession starts a reviewing session whose first save of main.go
// (with the off-by-one loop) loses its analysis to garbled model output.
func degradedSession(t *testing.T, fake *llmtest.Server) *reviewEnv {
	t.Helper()
	return degradedSessionIn(t, fake, nil)
}

// degradedSessionIn is degradedSession with the initialize options
// adjusted by init.
func degradedSessionIn(t *testing.T, fake *llmtest.Server, init func(*lsptest.InitOptions)) *reviewEnv {
	t.Helper()
	scriptGarbledAnalysis(fake)
	e := startReviewingIn(t, reviewRepo(t), fake, t.TempDir(), "save", nil, init)
	e.OpenFile("main.go")
	typeBug(e)
	e.Insert("main.go", protocol.Position{Line: 0, Character: 0}, garbledMarker+"\n")
	e.Save("main.go")
	e.AwaitIdle("")
	return e
}

func TestStatusDegradedUntilACleanReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	e := degradedSession(t, fake)
	if ds := e.Diagnostics("main.go"); hasReviewOnLine(7)(ds) {
		t.Fatalf("a review whose analysis was garbled published a finding: %s", lsptest.Describe(ds))
	}
	st := e.Statuses()
	last := st[len(st)-1]
	if last.State != contract.StateDegraded || !strings.Contains(last.Message, "analyze:") || last.Reviewing != 0 {
		t.Fatalf("status after a review that lost its analysis %+v, want degraded with the cause and none running; all: %+v", last, st)
	}
	if msgs := e.Messages(); len(msgs) != 0 {
		t.Errorf("the kodyls plugin shows the status item; no message was wanted: %q", msgs)
	}
	if !subsequence(st, stateIs(contract.StateReady), stateIs(contract.StateReviewing), stateIs(contract.StateDegraded)) {
		t.Fatalf("statuses %+v, want ready, reviewing, degraded", st)
	}

	// The same file reviewed cleanly: the status is ready again.
	seen := len(st)
	e.EditBuffer("main.go", lsptest.Edit{Range: protocol.Range{End: protocol.Position{Line: 1}}})
	e.Save("main.go")
	e.AwaitIdle("")
	if ds := e.Diagnostics("main.go"); !hasReviewOnLine(6)(ds) {
		t.Fatalf("the clean review published %s", lsptest.Describe(ds))
	}
	st = e.Statuses()
	if !subsequence(st[seen:], stateIs(contract.StateReviewing), stateIs(contract.StateReady)) {
		t.Fatalf("statuses after a clean review %+v, want reviewing, ready", st[seen:])
	}
	if last := st[len(st)-1]; last.State != contract.StateReady || last.Message != "" || last.Reviewing != 0 {
		t.Fatalf("status after a clean review %+v, want ready with no message", last)
	}
	checkNoRepeats(t, st)
	e.Shutdown()
}

// TestStatusDegradedSurvivesACancelledReview: a review cancelled (its
// buffer closed) says nothing about the model, so the status must keep
// saying that the last review that ended lost a stage.
func TestStatusDegradedSurvivesACancelledReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	e := degradedSession(t, fake)
	if st := e.Statuses(); st[len(st)-1].State != contract.StateDegraded {
		t.Fatalf("statuses after a review that lost its analysis %+v, want degraded last", st)
	}

	fake.Reset()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop}, llmtest.Reply{Hang: true})
	e.Insert("main.go", protocol.Position{Line: 1, Character: 0}, "// more\n")
	e.Save("main.go")
	if !fake.WaitSchema(review.SchemaAnalyze, 1, 5*time.Second) {
		t.Fatal("the analysis request never left")
	}
	e.Close("main.go")
	if !fake.WaitDisconnects(1, 5*time.Second) {
		t.Fatal("closing the buffer did not cancel the running review")
	}
	e.AwaitIdle("")
	st := e.Statuses()
	if last := st[len(st)-1]; last.State != contract.StateDegraded || last.Reviewing != 0 {
		t.Fatalf("status after a cancelled review that followed a degraded one %+v, want degraded; all: %+v", last, st)
	}
	checkNoRepeats(t, st)
	e.Shutdown()
}

// TestDegradedReviewToldToAGenericClient: an editor without the kodyls
// plugin (Helix, eglot) has no status item, so it is told the cause of a
// degraded review once, not at every save.
func TestDegradedReviewToldToAGenericClient(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	e := degradedSessionIn(t, fake, func(o *lsptest.InitOptions) { o.Generic = true })
	e.Insert("main.go", protocol.Position{Line: 1, Character: 0}, "// again\n")
	e.Save("main.go")
	e.AwaitIdle("")
	told := 0
	for _, m := range e.Messages() {
		if strings.Contains(m, "lost model stages") && strings.Contains(m, "analyze:") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("told %d times about the degraded reviews, want once with the cause: %q", told, e.Messages())
	}
	e.Shutdown()
}

// TestDegradedCauseToldOncePerKind: a cause whose figures change from one
// review to the next (seconds to wait, tokens of a file) is one cause; the
// light-mode fallback and an endpoint already reported down are not told.
func TestDegradedCauseToldOncePerKind(t *testing.T) {
	s := lsp.New(lsp.Options{Getenv: func(string) string { return "" }})
	for _, secs := range []string{"27", "12", "3"} {
		s.ReviewDegraded([]string{"analyze: llm endpoint http://x failed with HTTP 503 (retry after " + secs + "s); no suggestions"})
	}
	if n := s.ToldCauses(); n != 1 {
		t.Fatalf("one cause with changing figures told as %d", n)
	}
	s.ReviewDegraded([]string{"mode: the whole file needs about 7012 tokens; light mode"})
	s.ReviewDegraded([]string{"analyze: " + llm.ErrUnavailable.Error() + ": kodyls works offline and retries in 27s; no suggestions"})
	if n := s.ToldCauses(); n != 1 {
		t.Fatalf("the light mode or a down endpoint was told: %d causes", n)
	}
}

// TestStatusNamesARejectedBaseURL: an llm.baseUrl kodyls cannot use is
// named in the status, not taken for no endpoint configured (which would
// tell the user to set what they did set).
func TestStatusNamesARejectedBaseURL(t *testing.T) {
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"llm": map[string]any{"baseUrl": "127.0.0.1:8089/v1", "model": "m"}}})
	s.AwaitIdle("")
	st := s.Statuses()
	if len(st) == 0 {
		t.Fatal("no status sent")
	}
	last := st[len(st)-1]
	if last.State != contract.StateOffline || !strings.Contains(last.Message, `llm.baseUrl "127.0.0.1:8089/v1" is not an http(s) URL`) || strings.Contains(last.Message, "no LLM endpoint configured") {
		t.Fatalf("status with an llm.baseUrl that is not a URL: %+v", last)
	}
	// Fixed at run time: the status follows.
	s.Settings = map[string]any{"llm": map[string]any{"baseUrl": "", "model": ""}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	st = s.Statuses()
	if last := st[len(st)-1]; !strings.Contains(last.Message, "no LLM endpoint configured") {
		t.Fatalf("status once the bad URL is replaced by none: %+v", last)
	}
	// Set at run time, with a blank inside.
	s.Settings = map[string]any{"llm": map[string]any{"baseUrl": "http://127.0.0.1:8089/ v1", "model": "m"}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	st = s.Statuses()
	if last := st[len(st)-1]; !strings.Contains(last.Message, `llm.baseUrl "http://127.0.0.1:8089/ v1" is not an http(s) URL`) {
		t.Fatalf("status once a bad URL is set at run time: %+v", last)
	}
	// Another bad URL, nothing else changed: the status names the new one.
	s.Settings = map[string]any{"llm": map[string]any{"baseUrl": "localhost:11434/v1", "model": "m"}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	st = s.Statuses()
	if last := st[len(st)-1]; !strings.Contains(last.Message, `llm.baseUrl "localhost:11434/v1" is not an http(s) URL`) {
		t.Fatalf("status once another bad URL is set: %+v", last)
	}
	checkNoRepeats(t, st)
	s.Shutdown()
}

// TestEndpointOutageToldOnce: a dead endpoint is told once per outage,
// not again each time the breaker tries it after its cooldown and finds
// it still down; its return is told, and a new outage after it.
func TestEndpointOutageToldOnce(t *testing.T) {
	s := start(t, reviewRepo(t).Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	down := llm.Status{State: llm.StateDown, Message: "LLM endpoint http://127.0.0.1:1/v1 is not answering (connection refused)"}
	for _, st := range []llm.Status{down, {State: llm.StateProbing}, down, {State: llm.StateProbing}, down,
		{State: llm.StateOK, Message: "LLM endpoint http://127.0.0.1:1/v1 answers again"}, down} {
		s.Server.LLMStatusChanged(st)
	}
	s.AwaitIdle("")
	var got []string
	for _, m := range s.Messages() {
		if strings.Contains(m, "127.0.0.1:1") {
			got = append(got, m)
		}
	}
	if len(got) != 3 || !strings.Contains(got[0], "not answering") || !strings.Contains(got[1], "answers again") || !strings.Contains(got[2], "not answering") {
		t.Fatalf("messages %q; want the outage, the return and the next outage, once each", got)
	}
}

// TestEndpointDownIsNotToldTwice: an editor without the status item is
// told the endpoint is down; the review that lost its stages to the same
// outage does not tell it a second time.
func TestEndpointDownIsNotToldTwice(t *testing.T) {
	s := start(t, reviewRepo(t).Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{Generic: true})
	s.AwaitIdle("")
	s.Server.LLMStatusChanged(llm.Status{State: llm.StateDown, Message: "LLM endpoint http://127.0.0.1:1/v1 is not answering (connection refused)"})
	s.Server.ReviewDegraded([]string{"analyze: llm call failed after 4 attempts: dial tcp 127.0.0.1:1: connect: connection refused"})
	s.AwaitIdle("")
	if msgs := s.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0], "not answering") {
		t.Fatalf("messages %q; want the outage told once", msgs)
	}
}
