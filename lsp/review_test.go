package lsp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const reviewGo = `package main

import "fmt"

func total(items []int) int {
	sum := 0
	for i := 0; i < len(items); i++ {
		sum += items[i]
	}
	return sum
}

func main() {
	fmt.Print(total(nil))
}
`

// rangeLoop is what the fake model suggests for the typed loop.
var rangeLoop = reviewtest.Suggestion{
	SuggestionContent:  "Ranging over the slice is clearer and avoids an index error.",
	ExistingCode:       "for i := 0; i <= len(items); i++ {",
	ImprovedCode:       "for _, it := range items {",
	OneSentenceSummary: "Use range instead of an off-by-one index loop",
	RelevantLinesStart: 7, RelevantLinesEnd: 7,
	Label: "bug", Severity: "high",
}

type reviewEnv struct {
	*lsptest.Session
	fake  *llmtest.Server
	store *index.Store
	repo  *lsptest.Repo
}

// startReviewing starts a server whose review talks to a fake endpoint,
// with a real store in dataDir.
func startReviewing(t *testing.T, repo *lsptest.Repo, fake *llmtest.Server, dataDir string, trigger string) *reviewEnv {
	t.Helper()
	return startReviewingWith(t, repo, fake, dataDir, trigger, nil)
}

// startReviewingWith is startReviewing with a hook run on the editor before
// it initializes the session.
func startReviewingWith(t *testing.T, repo *lsptest.Repo, fake *llmtest.Server, dataDir string, trigger string, beforeInit func(*lsptest.Session)) *reviewEnv {
	t.Helper()
	return startReviewingIn(t, repo, fake, dataDir, trigger, beforeInit, nil)
}

// startReviewingIn is startReviewingWith with the initialize options
// adjusted by init (more workspace folders, a generic client…).
func startReviewingIn(t *testing.T, repo *lsptest.Repo, fake *llmtest.Server, dataDir string, trigger string, beforeInit func(*lsptest.Session), init func(*lsptest.InitOptions)) *reviewEnv {
	t.Helper()
	st, err := index.OpenStore(context.Background(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := workspace.Open(context.Background(), workspace.Config{
		Getenv: func(string) string { return "" },
		Store:  st,
		AdjustLLM: func(c *llm.Config) {
			c.MaxRetries, c.Timeout, c.BreakerThreshold = -1, 5*time.Second, 100
		},
	})
	t.Cleanup(svc.Close)
	s := lsptest.StartInProcess(t, repo.Dir, lsp.Options{Services: svc})
	if beforeInit != nil {
		beforeInit(s)
	}
	o := lsptest.InitOptions{InitializationOptions: map[string]any{
		"llm":    map[string]any{"baseUrl": fake.URL, "model": "fake-model"},
		"review": map[string]any{"trigger": trigger},
	}}
	if init != nil {
		init(&o)
	}
	s.Initialize(o)
	return &reviewEnv{Session: s, fake: fake, store: st, repo: repo}
}

func reviewRepo(t *testing.T) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
}

// typeBug replaces the loop header with an off-by-one one.
func typeBug(e *reviewEnv) {
	e.EditBuffer("main.go", lsptest.Edit{Range: e.RegexpRange("main.go", `for i := 0; i < len\(items\); i\+\+ \{`), Text: "for i := 0; i <= len(items); i++ {"})
}

// slowLoop is the model's analysis suggesting rangeLoop, answered after
// latency: long enough for a test to act while the review runs.
func slowLoop(latency time.Duration) llmtest.Reply {
	r := llmtest.JSON(map[string]any{"codeSuggestions": []reviewtest.Suggestion{rangeLoop}})
	r.Latency = latency
	return r
}

func hasReviewOnLine(line uint32) func([]protocol.Diagnostic) bool {
	return func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == "bug" && d.Range.Start.Line == line {
				return true
			}
		}
		return false
	}
}

// TestFailedReviewKeepsTheFindingsShown: a save whose review the model
// fails (HTTP 500 on the analysis) does not take away the findings shown
// for code the user did not edit; they stay, moved with the edits, until a
// review succeeds.
func TestFailedReviewKeepsTheFindingsShown(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, nil, llmtest.JSON(map[string]any{"codeSuggestions": []reviewtest.Suggestion{rangeLoop}}), llmtest.ServerError())
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitDiagnostics("main.go", hasReviewOnLine(6))

	// A line typed below the finding joins its hunk; the next review of
	// that hunk fails.
	e.Insert("main.go", protocol.Position{Line: 7, Character: 0}, "\t\t// counted below\n")
	e.Save("main.go")
	e.AwaitIdle("main.go")
	if scripts.Analyze.Times() != 2 {
		t.Fatalf("analyze calls %d, want 2", scripts.Analyze.Times())
	}
	if ds := e.Diagnostics("main.go"); !hasReviewOnLine(6)(ds) {
		t.Fatalf("the finding went with the failed review: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}

// TestReviewsOfOneVersionShareTheRun: a save, "review this file" and
// "review the workspace" on the same text, one after the other while the
// first review runs, all succeed with the same findings, and the model is
// asked once.
func TestReviewsOfOneVersionShareTheRun(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	slow := slowLoop(300 * time.Millisecond)
	scripts := reviewtest.Script(fake, nil, slow)
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	var file contract.ReviewSummary
	var all []contract.ReviewSummary
	errs := make(chan error, 2)
	go func() {
		errs <- e.ExecuteCommand(contract.CommandReviewFile, contract.ReviewFileArgs{URI: e.URI("main.go")}, &file)
	}()
	go func() { errs <- e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &all) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a review of the same text failed: %v", err)
		}
	}
	if file.Findings != 1 || len(all) != 1 || all[0].Findings != 1 {
		t.Fatalf("reviewFile %+v, reviewWorkspace %+v; want the finding in both", file, all)
	}
	e.AwaitIdle("")
	if n := scripts.Analyze.Times(); n != 1 {
		t.Errorf("the model analysed the same text %d times, want once", n)
	}
	e.Shutdown()
}

func TestReviewOnSaveShowsFindingAndFixApplies(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")

	ds := e.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	d := ds[0]
	if d.Severity != protocol.DiagnosticSeverityWarning || !strings.Contains(lsptest.Message(d), "Use range instead") {
		t.Errorf("diagnostic %s", lsptest.Describe(ds))
	}
	if want := e.RegexpRange("main.go", `for i := 0; i <= len\(items\); i\+\+ \{`); d.Range != want {
		t.Errorf("range %+v, want the loop header %+v", d.Range, want)
	}

	// Lines typed above move the finding with its code.
	e.Insert("main.go", protocol.Position{Line: 3, Character: 0}, "// total adds.\n")
	ds = e.AwaitDiagnostics("main.go", hasReviewOnLine(7))

	actions := e.CodeActions("main.go", ds[0].Range, ds)
	var fix *protocol.CodeAction
	for i := range actions {
		if strings.HasPrefix(actions[i].Title, "Apply Kody fix: ") {
			fix = &actions[i]
		}
	}
	if fix == nil || len(actions) != 4 { // explain, fix, dismiss, dismiss all
		t.Fatalf("code actions %+v", actions)
	}
	e.ApplyEdit(fix.Edit)
	if lines := strings.Split(e.Text("main.go"), "\n"); lines[7] != "\tfor _, it := range items {" {
		t.Fatalf("after the fix:\n%s", e.Text("main.go"))
	}
	// Editing the finding's own line drops it.
	e.AwaitDiagnostics("main.go", lsptest.Empty)
	if scripts.Analyze.Times() != 1 {
		t.Fatalf("analyze calls %d", scripts.Analyze.Times())
	}
	e.Shutdown()
}

// TestFindingKeepsItsPlaceUnderFastTyping: lines typed above a finding
// back to back (a held Enter key, a paste split by the editor) move it
// with its code. Edits that arrive while the keystroke job moves the
// finding must be applied once, not again at the next keystroke.
func TestFindingKeepsItsPlaceUnderFastTyping(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	for range 3 {
		for range 40 {
			e.Insert("main.go", protocol.Position{Line: 3}, "\t// x\n")
		}
		e.AwaitIdle("main.go")
		loop := e.RegexpRange("main.go", `for i := 0; i <= len\(items\); i\+\+ \{`)
		if v, _ := e.DiagnosticsVersion("main.go"); v != e.Version("main.go") {
			t.Fatalf("diagnostics of version %d after idle, buffer at %d", v, e.Version("main.go"))
		}
		var found []protocol.Range
		for _, d := range e.Diagnostics("main.go") {
			if lsptest.Code(d) == "bug" {
				found = append(found, d.Range)
			}
		}
		if len(found) != 1 || found[0] != loop {
			t.Fatalf("review finding at %+v, want the loop header at %+v", found, loop)
		}
	}
}

func TestUnchangedHunksCostNoCallsAcrossRestart(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	repo := reviewRepo(t)
	data := t.TempDir()
	e := startReviewing(t, repo, fake, data, "manual")
	e.OpenFile("main.go")
	typeBug(e)
	var sum contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e.URI("main.go")}, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Findings != 1 || sum.Hunks != 1 || sum.CachedHunks != 0 {
		t.Fatalf("first review %+v", sum)
	}
	calls := scripts.Calls()
	if err := e.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e.URI("main.go")}, &sum); err != nil {
		t.Fatal(err)
	}
	if scripts.Calls() != calls || sum.CachedHunks != 1 || sum.Findings != 1 {
		t.Fatalf("second review made %d calls: %+v", scripts.Calls()-calls, sum)
	}
	e.Shutdown()
	e.Wait(2 * time.Second)
	e.store.Close()

	// A new server on the same data dir: still no call.
	e2 := startReviewing(t, repo, fake, data, "manual")
	e2.OpenFile("main.go")
	typeBug(e2)
	if err := e2.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e2.URI("main.go")}, &sum); err != nil {
		t.Fatal(err)
	}
	if scripts.Calls() != calls || sum.Findings != 1 {
		t.Fatalf("after a restart the review made %d calls: %+v", scripts.Calls()-calls, sum)
	}
	e2.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	e2.Shutdown()
}

// TestTypingAfterSaveLetsTheReviewFinish: typing on while a review runs
// does not abort it: its finding is shown where its code moved, and the
// next save finds the hunk in the cache instead of asking again.
func TestTypingAfterSaveLetsTheReviewFinish(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	slow := slowLoop(500 * time.Millisecond)
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop}, slow)
	// Twelve lines above the loop keep the typed line out of its hunk.
	repo := lsptest.NewRepo(t, map[string]string{"main.go": strings.Repeat("// header\n", 12) + reviewGo})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	if !fake.WaitSchema(review.SchemaAnalyze, 1, 5*time.Second) {
		t.Fatal("the analysis request never left")
	}
	e.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// more\n")
	e.AwaitDiagnostics("main.go", hasReviewOnLine(19))
	e.Save("main.go")
	e.AwaitIdle("main.go")
	if n := fake.Disconnects(); n != 0 {
		t.Errorf("%d requests aborted by typing", n)
	}
	// The second save asks about the typed line only: the loop's hunk
	// is in the cache.
	analyses := 0
	for _, q := range fake.ChatRequests() {
		if q.Chat.SchemaName() != review.SchemaAnalyze {
			continue
		}
		if analyses++; analyses > 1 && strings.Contains(q.Chat.Text(), "i <= len(items)") {
			t.Errorf("analysis %d sent the loop's hunk again", analyses)
		}
	}
	if analyses != scripts.Analyze.Times() || analyses > 2 {
		t.Errorf("%d analysis calls, want at most one per save", analyses)
	}
	e.Shutdown()
}

func TestDismissedFindingStaysGoneAfterRestart(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	second := rangeLoop
	second.ExistingCode, second.ImprovedCode = "return sum", "return sum // total"
	second.OneSentenceSummary, second.Label, second.RelevantLinesStart, second.RelevantLinesEnd = "Document the result", "documentation", 10, 10
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop, second})
	repo := reviewRepo(t)
	data := t.TempDir()
	e := startReviewing(t, repo, fake, data, "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.EditBuffer("main.go", lsptest.Edit{Range: e.RegexpRange("main.go", `return sum`), Text: "return sum "})
	e.Save("main.go")
	ds := e.AwaitDiagnostics("main.go", lsptest.Count(2))
	bug := ds[0]
	actions := e.CodeActions("main.go", bug.Range, []protocol.Diagnostic{bug})
	var dismiss protocol.Command
	for _, a := range actions {
		if a.Title == "Dismiss this Kody suggestion" {
			dismiss = a.Command
		}
	}
	var res map[string]int
	if err := e.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: dismiss.Command, Arguments: dismiss.Arguments}, &res); err != nil || res["dismissed"] != 1 {
		t.Fatalf("dismiss: %v %v", res, err)
	}
	e.AwaitDiagnostics("main.go", lsptest.Count(1))
	e.Shutdown()
	e.Wait(2 * time.Second)
	e.store.Close()

	// The saved file on disk carries both changes.
	e2 := startReviewing(t, repo, fake, data, "save")
	e2.OpenFile("main.go")
	e2.Save("main.go")
	ds = e2.AwaitDiagnostics("main.go", lsptest.Count(1))
	if lsptest.Code(ds[0]) != "documentation" {
		t.Fatalf("the dismissed finding came back: %s", lsptest.Describe(ds))
	}
	e2.Shutdown()
}

func TestSafeguardDiscardAndBrokenStageKeepFindings(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	second := rangeLoop
	second.ExistingCode, second.ImprovedCode = "return sum", "return sum // total"
	second.OneSentenceSummary, second.Label, second.RelevantLinesStart, second.RelevantLinesEnd = "Document the result", "documentation", 10, 10
	second.Severity = "" // the severity stage must fill it, and it answers garbage
	fake.On(llmtest.SchemaName("review_safeguard"), llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{
		{"index": 1, "action": "no_changes"}, {"index": 2, "action": "discard", "reason": "not a real problem"},
	}}))
	fake.On(llmtest.SchemaName("review_severity"), llmtest.Malformed())
	// The third suggestion is one the buffer already carries out.
	done := rangeLoop
	done.ExistingCode, done.ImprovedCode = "sum := 0", "var sum int"
	done.OneSentenceSummary, done.Label, done.RelevantLinesStart, done.RelevantLinesEnd = "Declare sum", "style", 6, 6
	fake.On(llmtest.SchemaName("review_implemented"), llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{
		{"index": 1, "implementationStatus": "not_implemented"}, {"index": 2, "implementationStatus": "not_implemented"}, {"index": 3, "implementationStatus": "implemented"},
	}}))
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop, second, done})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "manual")
	e.OpenFile("main.go")
	typeBug(e)
	e.EditBuffer("main.go", lsptest.Edit{Range: e.RegexpRange("main.go", `return sum`), Text: "return sum "})
	var sum contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": e.URI("main.go")}, &sum); err != nil {
		t.Fatal(err)
	}
	ds := e.AwaitDiagnostics("main.go", lsptest.Count(1))
	if lsptest.Code(ds[0]) != "bug" {
		t.Fatalf("want only the bug: the safeguard discarded one, another is implemented: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}

func TestReviewOffWithoutLLM(t *testing.T) {
	repo := reviewRepo(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	var sum contract.ReviewSummary
	raw, _ := json.Marshal(map[string]any{"uri": s.URI("main.go")})
	err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: contract.CommandReviewFile, Arguments: []protocol.LSPAny{raw}}, &sum)
	if err != nil || !sum.Offline && sum.Hunks != 0 {
		t.Fatalf("review without an LLM: %+v %v", sum, err)
	}
	s.Shutdown()
}

func TestIdleTriggerReviewsWithoutSave(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	repo := reviewRepo(t)
	st, err := index.OpenStore(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := workspace.Open(context.Background(), workspace.Config{
		Getenv: func(string) string { return "" },
		Store:  st,
		AdjustLLM: func(c *llm.Config) {
			c.MaxRetries = -1
		},
	})
	defer svc.Close()
	s := lsptest.StartInProcess(t, repo.Dir, lsp.Options{Services: svc})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{
		"llm":    map[string]any{"baseUrl": fake.URL, "model": "fake-model"},
		"review": map[string]any{"trigger": "idle", "idleDelayMs": 100},
	}})
	s.OpenFile("main.go")
	s.EditBuffer("main.go", lsptest.Edit{Range: s.RegexpRange("main.go", `for i := 0; i < len\(items\); i\+\+ \{`), Text: "for i := 0; i <= len(items); i++ {"})
	s.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	s.Shutdown()
}

func TestReviewWorkspaceLinksRepeatedFindings(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("review_clusters"), llmtest.JSON(map[string]any{"clusters": []map[string]any{{"primary": 1, "duplicates": []int{2}}}}))
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo, "other.go": reviewGo})
	e := startReviewing(t, repo, fake, t.TempDir(), "manual")
	e.OpenFile("main.go")
	e.OpenFile("other.go")
	typeBug(e)
	e.EditBuffer("other.go", lsptest.Edit{Range: e.RegexpRange("other.go", `for i := 0; i < len\(items\); i\+\+ \{`), Text: "for i := 0; i <= len(items); i++ {"})
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil || len(sums) != 2 {
		t.Fatalf("reviewWorkspace: %+v %v", sums, err)
	}
	ds := e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		return len(ds) == 1 && len(ds[0].RelatedInformation) == 1
	})
	if !strings.HasSuffix(string(ds[0].RelatedInformation[0].Location.URI), "/other.go") || ds[0].RelatedInformation[0].Location.Range.Start.Line != 6 {
		t.Fatalf("related information %+v", ds[0].RelatedInformation)
	}
	e.Shutdown()
}

// deadEndpoint is an endpoint nothing listens on.
const deadEndpoint = "http://127.0.0.1:1/v1"

// startDeadEndpoint starts a server whose model is at deadEndpoint, with a
// breaker that opens on the first failure and stays open.
func startDeadEndpoint(t *testing.T, repo *lsptest.Repo) *lsptest.Session {
	t.Helper()
	svc := workspace.Open(context.Background(), workspace.Config{
		Getenv:  func(string) string { return "" },
		NoStore: true,
		AdjustLLM: func(c *llm.Config) {
			c.MaxRetries, c.BreakerThreshold, c.BreakerCooldown = -1, 1, time.Hour
		},
	})
	t.Cleanup(svc.Close)
	s := lsptest.StartInProcess(t, repo.Dir, lsp.Options{Services: svc})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{
		"llm":    map[string]any{"baseUrl": deadEndpoint, "model": "m"},
		"review": map[string]any{"trigger": "save"},
	}})
	return s
}

func TestDeadEndpointIsReportedOnce(t *testing.T) {
	s := startDeadEndpoint(t, reviewRepo(t))
	s.OpenFile("main.go")
	for i := 0; i < 5; i++ {
		s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// x\n")
		var sum contract.ReviewSummary
		_ = s.ExecuteCommand(contract.CommandReviewFile, map[string]any{"uri": s.URI("main.go")}, &sum)
	}
	s.AwaitIdle("")
	msgs := s.Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "127.0.0.1:1") {
		t.Fatalf("want exactly one message about the dead endpoint, got %q", msgs)
	}
	s.Shutdown()
}

// TestExplainAnyDiagnosticOffline: another server's diagnostic is explained
// from built-in guidance when there is no model, and says so.
func TestExplainAnyDiagnosticOffline(t *testing.T) {
	repo := reviewRepo(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	d := protocol.Diagnostic{
		Range:   protocol.Range{Start: protocol.Position{Line: 5, Character: 1}, End: protocol.Position{Line: 5, Character: 4}},
		Source:  protocol.NewOptional("compiler"),
		Message: protocol.String("declared and not used: sum"),
	}
	actions := s.CodeActions("main.go", d.Range, []protocol.Diagnostic{d})
	if len(actions) != 1 || actions[0].Title != "Explain this error" {
		t.Fatalf("actions %+v", actions)
	}
	// The contract's result, with its rca document typed as the explainer
	// produces it.
	var res struct {
		Markdown string      `json:"markdown"`
		RCA      *rca.Report `json:"rca"`
	}
	cmd := actions[0].Command
	if err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: cmd.Command, Arguments: cmd.Arguments}, &res); err != nil {
		t.Fatal(err)
	}
	if res.RCA == nil || res.RCA.RCA.Source != "offline" || !strings.Contains(res.Markdown, "### Root cause") || !strings.Contains(res.Markdown, "no model was used") {
		t.Fatalf("explanation %+v\n%s", res.RCA, res.Markdown)
	}
	if e := res.RCA.Errors[0]; e.File != "main.go" || e.Line != 6 || e.Column != 2 || e.Tool != "compiler" {
		t.Fatalf("error from the diagnostic: %+v", e)
	}
	s.Shutdown()
}

// TestCommittedChangeTakesItsReviewFindingsAlong: once the reviewed change
// is committed, its lines are no longer changed, and the review's finding
// about them leaves at once, without waiting for another save.
func TestCommittedChangeTakesItsReviewFindingsAlong(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	e.repo.Commit("the loop")
	e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == "bug" {
				return false
			}
		}
		return true
	})
	e.Shutdown()
}

// TestEditorGoneEndsTheRunningReview: an editor that goes away without
// shutdown (killed, crashed) while its "review this file" waits on the
// model ends the server at once: the model call is aborted, not waited
// for on behalf of an editor that is gone.
func TestEditorGoneEndsTheRunningReview(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop}, llmtest.Reply{Hang: true})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "off")
	e.OpenFile("main.go")
	typeBug(e)
	go func() {
		_ = e.ExecuteCommand(contract.CommandReviewFile, contract.ReviewFileArgs{URI: e.URI("main.go")}, nil)
	}()
	if !fake.WaitSchema(review.SchemaAnalyze, 1, 5*time.Second) {
		t.Fatal("the analysis request never left")
	}
	e.HangUp()
	// The model call's own timeout is 5 s here (a minute by default).
	if code, err := e.Wait(3 * time.Second); err != nil || code != 1 {
		t.Fatalf("server after the editor went away: exit %d, %v; want it ended (exit 1) without waiting for the model", code, err)
	}
	if !fake.WaitDisconnects(1, 2*time.Second) {
		t.Error("the model call was not aborted")
	}
}

// printRemark is a suggestion about a line the change did not touch (the
// model sees the whole file): not about the change, so a commit does not
// take it along, and git rewriting its index takes nothing.
var printRemark = reviewtest.Suggestion{
	SuggestionContent:  "Print a newline after the total.",
	ExistingCode:       "fmt.Print(total(nil))",
	ImprovedCode:       "fmt.Println(total(nil))",
	OneSentenceSummary: "End the output with a newline",
	RelevantLinesStart: 14, RelevantLinesEnd: 14,
	Label: "style", Severity: "low",
}

// TestGitStatusKeepsReviewFindings: git rewriting its index (git status
// after a save, as editors run it) moves no baseline, and every finding
// stays; a commit then takes only the finding about the committed change.
func TestGitStatusKeepsReviewFindings(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop, printRemark})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	both := func(ds []protocol.Diagnostic) bool { return hasReviewOnLine(6)(ds) && hasRuleOnLine("style", 13)(ds) }
	e.AwaitDiagnostics("main.go", both)
	e.repo.Git("status", "--short")
	e.repo.Write(map[string]string{"notes.txt": "x\n"})
	e.repo.Git("add", "notes.txt")
	e.AwaitIdle("")
	if ds := e.Diagnostics("main.go"); !both(ds) {
		t.Fatalf("after git status and git add of another file: %s", lsptest.Describe(ds))
	}
	e.repo.Commit("the loop")
	e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool { return !hasReviewOnLine(6)(ds) && hasRuleOnLine("style", 13)(ds) })
	e.Shutdown()
}

// TestCommitDuringReviewTakesItsFindingsAlong: a review that ends after
// the change it was about was committed shows no finding about it.
func TestCommitDuringReviewTakesItsFindingsAlong(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	slow := slowLoop(time.Second)
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop}, slow)
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	if !fake.WaitSchema(review.SchemaAnalyze, 1, 5*time.Second) {
		t.Fatal("the analysis request never left")
	}
	e.repo.Commit("the loop")
	e.AwaitIdle("")
	if ds := e.Diagnostics("main.go"); hasReviewOnLine(6)(ds) {
		t.Fatalf("a finding about the committed change is shown: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}

// TestExplainAndFixNameTheSettingToFix: with an llm.baseUrl kodyls had to
// refuse, "Explain this error" and "Fix this error" say which setting to
// fix, not to configure a model the user did configure.
func TestExplainAndFixNameTheSettingToFix(t *testing.T) {
	s := start(t, reviewRepo(t).Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"llm": map[string]any{"baseUrl": "127.0.0.1:8089/v1", "model": "m"}}})
	s.OpenFile("main.go")
	args := contract.ExplainArgs{URI: s.URI("main.go"), Message: "declared and not used: sum",
		Range: &protocol.Range{Start: protocol.Position{Line: 5, Character: 1}, End: protocol.Position{Line: 5, Character: 4}}}
	var res struct {
		Markdown string `json:"markdown"`
	}
	if err := s.ExecuteCommand(contract.CommandExplainError, args, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Markdown, `llm.baseUrl "127.0.0.1:8089/v1"`) {
		t.Errorf("the explanation does not name the refused URL:\n%s", res.Markdown)
	}
	err := s.ExecuteCommand(contract.CommandFixError, args, nil)
	if err == nil || !strings.Contains(err.Error(), `llm.baseUrl "127.0.0.1:8089/v1"`) {
		t.Errorf("fixError: %v; want the refused URL named", err)
	}
	s.Shutdown()
}
