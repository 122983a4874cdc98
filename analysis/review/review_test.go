package review

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/prompts"
)

// TestReviewFileHappyPath walks every stage: the analysis finds seven
// suggestions; one is already in the buffer, the severity stage fills one
// level, the safeguard discards one and corrects one, the implementation
// check removes one, the threshold drops a low one and the per-file cap
// the least severe of the rest.
func TestReviewFileHappyPath(t *testing.T) {
	s := newServer(t)
	updated := "Pass customerID as the $1 parameter of the query so that no input can change the SQL."
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze: {llmtest.JSON(suggestions(sugSQL, sugRows, sugScan, sugPrint, sugRace, sugRowsErr, sugDone))},
		// sugDone is gone before the refinement stages: six suggestions,
		// of which only sugRows lacks a severity.
		SchemaSafeguard: {llmtest.JSON(verdicts(6, map[int]map[string]any{
			1: {"action": "update", "oneSentenceSummary": updated, "reason": "the summary understated the fix"},
			3: {"action": "discard", "reason": "Evidence: a failed Scan of a single int64 column cannot happen here."},
		}))},
		SchemaImplemented: {llmtest.JSON(statuses(6, 5))},
	})
	p := New(newGateway(t, s.URL), Options{Config: config(func(c *kodusconfig.Config) {
		c.SuggestionControl.SeverityLevelFilter = "medium"
		c.SuggestionControl.LimitationType = kodusconfig.LimitFile
		c.SuggestionControl.MaxSuggestions = 2
	})})
	in := fixture(t)
	res := review(t, p, in)

	if res.Mode != ModeHeavy || res.Path != in.Path {
		t.Errorf("mode, path = %q, %q; want heavy, %q", res.Mode, res.Path, in.Path)
	}
	if len(res.Degraded) != 0 {
		t.Errorf("Degraded = %q, want none", res.Degraded)
	}
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugRows)}; !slices.Equal(got, want) {
		t.Fatalf("suggestions = %v, want SQL and rows %v", got, want)
	}
	sql, rows := res.Suggestions[0], res.Suggestions[1]
	if sql.OneSentenceSummary != updated || sql.SuggestionContent != sugSQL.SuggestionContent || sql.Severity != "critical" {
		t.Errorf("SQL suggestion = %+v, want the safeguard's summary, the original content and critical", sql)
	}
	if rows.Severity != "high" {
		t.Errorf("rows severity = %q, want high from the severity stage", rows.Severity)
	}
	if rows.RelevantFile != in.Path || rows.Language != "go" || rows.RelevantLinesStart != 43 || rows.RelevantLinesEnd != 46 || rows.Label != "bug" {
		t.Errorf("rows suggestion = %+v", rows)
	}
	want := map[string][]string{
		StageImplemented: {idOf(sugDone), idOf(sugRace)},
		StageSafeguard:   {idOf(sugScan)},
		StageThreshold:   {idOf(sugPrint)},
		StageCap:         {idOf(sugRowsErr)},
	}
	if got := discardsByStage(res.Discarded); !reflect.DeepEqual(got, want) {
		t.Errorf("discarded = %v, want %v", got, want)
	}
	for _, d := range res.Discarded {
		if d.Reason == "" {
			t.Errorf("discard of %s by %s has no reason", d.Suggestion.ID, d.Stage)
		}
		if d.Stage == StageSafeguard && !strings.Contains(d.Reason, "Evidence") {
			t.Errorf("safeguard discard reason = %q, want the model's", d.Reason)
		}
	}

	// Positions in replies are restricted to the suggestions sent.
	schema := string(requestsFor(s, SchemaSafeguard)[0].Chat.ResponseFormat.JSONSchema.Schema)
	if !strings.Contains(schema, `"enum":[1,2,3,4,5,6`) || !strings.Contains(schema, `"no_changes","update","discard"`) {
		t.Errorf("the safeguard schema does not restrict index and action: %s", schema)
	}
	// Only the suggestion without a level went to the severity stage.
	sev := requestsFor(s, SchemaSeverity)
	if len(sev) != 1 || !strings.Contains(sev[0].Chat.Text(), sugRows.SuggestionContent) || strings.Contains(sev[0].Chat.Text(), sugSQL.SuggestionContent) {
		t.Errorf("severity requests: %d, want one about the rows suggestion only", len(sev))
	}
	// Heavy mode shows the whole file to the analysis and the safeguard.
	for _, schema := range []string{SchemaAnalyze, SchemaSafeguard} {
		rs := requestsFor(s, schema)
		if len(rs) != 1 || !strings.Contains(rs[0].Chat.Text(), "// Package billing charges") {
			t.Errorf("%s: want one request with the whole file", schema)
		}
	}
	// The implementation check never saw the suggestion the buffer had.
	if txt := requestsFor(s, SchemaImplemented)[0].Chat.Text(); strings.Contains(txt, sugDone.OneSentenceSummary) {
		t.Error("the locally implemented suggestion reached the implementation check")
	}
}

func TestLightModeSendsTheDiffOnly(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{SchemaMode: {llmtest.JSON(map[string]string{"reviewMode": "light_mode"})}})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if res.Mode != ModeLight {
		t.Fatalf("mode = %q, want light", res.Mode)
	}
	for _, r := range s.ChatRequests() {
		if strings.Contains(r.Chat.Text(), "// Package billing charges") {
			t.Errorf("%s request carries the whole file in light mode", r.Chat.SchemaName())
		}
	}
	if len(res.Suggestions) != 3 {
		t.Errorf("suggestions = %d, want 3", len(res.Suggestions))
	}
}

// A file too large for the model's window is reviewed from its diff rather
// than not at all.
func TestHeavyModeFallsBackToLightWhenTheFileDoesNotFit(t *testing.T) {
	s := newServer(t)
	script(s, nil)
	in := fixture(t)
	in.Content += strings.Repeat("// filler line to make the file larger than the window\n", 2000)
	res := review(t, New(newGateway(t, s.URL), Options{}), in)
	if res.Mode != ModeLight {
		t.Errorf("mode = %q, want light", res.Mode)
	}
	if got := degradedStages(res); !slices.Equal(got, []string{StageMode}) {
		t.Errorf("degraded = %q, want the mode stage", res.Degraded)
	}
	if txt := requestsFor(s, SchemaAnalyze)[0].Chat.Text(); strings.Contains(txt, "filler line") {
		t.Error("the analysis got the whole file anyway")
	}
	if len(res.Suggestions) != 3 {
		t.Errorf("suggestions = %d, want 3", len(res.Suggestions))
	}
}

func TestSafeguardDiscardIsHonoured(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{
		SchemaSafeguard: {llmtest.JSON(verdicts(3, map[int]map[string]any{2: {"action": "discard", "reason": "Scope: not in the changed lines."}}))},
	})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	if len(res.Discarded) != 1 || res.Discarded[0].Stage != StageSafeguard || res.Discarded[0].Reason != "Scope: not in the changed lines." {
		t.Errorf("discarded = %+v, want the rows suggestion with the safeguard's reason", res.Discarded)
	}
}

// The safeguard must answer for every suggestion; one it leaves out has no
// verdict and is kept, and the gap is reported.
func TestSafeguardSilenceKeepsTheSuggestion(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{
		SchemaSafeguard: {llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{
			{"index": 1, "action": "discard", "reason": "wrong"},
			{"index": 3, "action": "no_changes"},
			{"index": 1, "action": "no_changes"}, // a second verdict on 1 does not count
			// Invented positions and actions are dropped by the
			// gateway (Allowed), so suggestion 2 still has no verdict.
			{"index": 9, "action": "discard"},
			{"index": 2, "action": "explode"},
		}})},
	})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugRows), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	if len(res.Degraded) != 1 || !strings.HasPrefix(res.Degraded[0], "safeguard: no verdict on suggestion 2 of 3") {
		t.Errorf("degraded = %q, want a note on the missing verdict", res.Degraded)
	}
}

func TestImplementedSuggestionIsRemoved(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{SchemaImplemented: {llmtest.JSON(statuses(3, 1))}})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugRows), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	if got := discardsByStage(res.Discarded); !reflect.DeepEqual(got, map[string][]string{StageImplemented: {idOf(sugSQL)}}) {
		t.Errorf("discarded = %v", got)
	}
}

// TestStageFailuresKeepFindings makes each stage fail in each way a model
// or endpoint fails: the suggestions must be those of the stage before,
// and Degraded must name the stage that failed.
func TestStageFailuresKeepFindings(t *testing.T) {
	failures := map[string]llmtest.Reply{
		"500 beyond retries": llmtest.ServerError(),
		"malformed body":     llmtest.Malformed(),
		"not JSON":           llmtest.Text("Looks good to me, no issues."),
		"wrong schema":       llmtest.WrongSchema(nil),
	}
	baseline := []string{idOf(sugSQL), idOf(sugRows), idOf(sugScan)}
	for _, stage := range []struct {
		name, schema string
		check        func(t *testing.T, res FileResult)
	}{
		{StageMode, SchemaMode, func(t *testing.T, res FileResult) {
			if res.Mode != ModeHeavy {
				t.Errorf("mode = %q, want heavy when the mode stage fails", res.Mode)
			}
		}},
		{StageSeverity, SchemaSeverity, func(t *testing.T, res FileResult) {
			if res.Suggestions[1].Severity != "medium" {
				t.Errorf("rows severity = %q, want medium when the severity stage fails", res.Suggestions[1].Severity)
			}
		}},
		{StageSafeguard, SchemaSafeguard, nil},
		{StageImplemented, SchemaImplemented, nil},
	} {
		for kind, reply := range failures {
			t.Run(stage.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				s := newServer(t)
				over := map[string][]llmtest.Reply{stage.schema: {reply}}
				// The refinement stages would have removed something, so a
				// failure that went unnoticed shows as a missing finding.
				if stage.schema != SchemaSafeguard {
					over[SchemaSafeguard] = []llmtest.Reply{llmtest.JSON(verdicts(3, nil))}
				}
				script(s, over)
				res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
				if got := ids(res.Suggestions); !slices.Equal(got, baseline) {
					t.Errorf("suggestions = %v, want the analysis' %v", got, baseline)
				}
				if got := degradedStages(res); !slices.Equal(got, []string{stage.name}) {
					t.Errorf("degraded = %q, want only %s", res.Degraded, stage.name)
				}
				if len(res.Discarded) != 0 {
					t.Errorf("discarded = %+v, want none", res.Discarded)
				}
				if stage.check != nil {
					stage.check(t, res)
				}
			})
		}
	}
}

func TestAnalyzeFailureYieldsNothingButSaysSo(t *testing.T) {
	for kind, reply := range map[string]llmtest.Reply{
		"500":          llmtest.ServerError(),
		"not JSON":     llmtest.Text("sure! here are my thoughts"),
		"wrong schema": llmtest.WrongSchema(map[string]any{"issues": []string{"x"}}),
	} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			script(s, map[string][]llmtest.Reply{SchemaAnalyze: {reply}})
			res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
			if len(res.Suggestions) != 0 {
				t.Errorf("suggestions = %d, want none", len(res.Suggestions))
			}
			if got := degradedStages(res); !slices.Equal(got, []string{StageAnalyze}) {
				t.Errorf("degraded = %q, want analyze", res.Degraded)
			}
			for _, schema := range []string{SchemaSeverity, SchemaSafeguard, SchemaImplemented} {
				if n := len(requestsFor(s, schema)); n != 0 {
					t.Errorf("%s was asked %d times with nothing to check", schema, n)
				}
			}
		})
	}
}

// One malformed suggestion must not cost the others: the gateway drops the
// item and the rest go on.
func TestAnalyzeDropsOneBadSuggestion(t *testing.T) {
	s := newServer(t)
	bad := map[string]any{"suggestionContent": "no lines and no code", "label": "bug", "relevantLinesStart": "somewhere"}
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze: {llmtest.JSON(map[string]any{"codeSuggestions": []any{sugSQL, bad, sugRows, sugScan}})},
	})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugRows), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	if len(res.Degraded) != 0 {
		t.Errorf("degraded = %q, want none", res.Degraded)
	}
}

// The analysis' own slips are cleaned up: a duplicate, a label outside the
// list, a range outside the file found again by its code, and one that
// cannot be placed at all.
func TestAnalyzeNormalisesSuggestions(t *testing.T) {
	s := newServer(t)
	moved := sugScan
	moved.RelevantLinesStart, moved.RelevantLinesEnd = 900, 902
	lost := sugPrint
	lost.ExistingCode = "fmt.Printf(\"never written\")"
	lost.RelevantLinesStart, lost.RelevantLinesEnd = 0, 0
	relabelled := sugRace
	relabelled.Label = "Potential Issues"
	relabelled.Severity = "URGENT"
	relabelled.RelevantFile = "some/other/file.go"
	script(s, map[string][]llmtest.Reply{
		SchemaAnalyze:     {llmtest.JSON(suggestions(sugSQL, sugSQL, moved, lost, relabelled))},
		SchemaSafeguard:   {llmtest.JSON(verdicts(3, nil))},
		SchemaSeverity:    {llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{{"index": 1, "severity": "critical"}}})},
		SchemaImplemented: {llmtest.JSON(statuses(3))},
	})
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	if len(res.Suggestions) != 3 {
		t.Fatalf("suggestions = %+v, want 3", res.Suggestions)
	}
	if m := res.Suggestions[1]; m.RelevantLinesStart != 48 || m.RelevantLinesEnd != 50 {
		t.Errorf("moved suggestion at %d-%d, want 48-50 where its code is", m.RelevantLinesStart, m.RelevantLinesEnd)
	}
	r := res.Suggestions[2]
	if r.Label != "bug" || r.Severity != "critical" || r.RelevantFile != "internal/billing/charge.go" {
		t.Errorf("relabelled = label %q severity %q file %q; want bug, critical (from the severity stage), the reviewed file", r.Label, r.Severity, r.RelevantFile)
	}
	if got := discardsByStage(res.Discarded)[StageAnalyze]; len(got) != 2 {
		t.Errorf("analysis discards = %v, want the duplicate and the unplaceable one", got)
	}
}

func TestReviewOptionsTurnCategoriesOff(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{
		SchemaSafeguard:   {llmtest.JSON(verdicts(2, nil))},
		SchemaImplemented: {llmtest.JSON(statuses(2))},
	})
	p := New(newGateway(t, s.URL), Options{Config: config(func(c *kodusconfig.Config) { c.ReviewOptions["security"] = false })})
	res := review(t, p, fixture(t))
	if got, want := ids(res.Suggestions), []string{idOf(sugRows), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	if got := discardsByStage(res.Discarded); !reflect.DeepEqual(got, map[string][]string{StageOptions: {idOf(sugSQL)}}) {
		t.Errorf("discarded = %v", got)
	}
	// The turned-off suggestion cost no further tokens.
	for _, r := range requestsFor(s, SchemaSafeguard) {
		if strings.Contains(r.Chat.Text(), sugSQL.OneSentenceSummary) {
			t.Error("the safeguard was asked about a suggestion of a category turned off")
		}
	}
}

// TestRefinementStagesRunConcurrently gives each of severity, safeguard
// and the implementation check a latency and checks that their requests
// were in flight at the same time.
func TestRefinementStagesRunConcurrently(t *testing.T) {
	s := newServer(t)
	slow := func(r llmtest.Reply) []llmtest.Reply { r.Latency = 300 * time.Millisecond; return []llmtest.Reply{r} }
	script(s, map[string][]llmtest.Reply{
		SchemaSeverity:    slow(llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{{"index": 1, "severity": "high"}}})),
		SchemaSafeguard:   slow(llmtest.JSON(verdicts(3, nil))),
		SchemaImplemented: slow(llmtest.JSON(statuses(3))),
	})
	start := time.Now()
	res := review(t, New(newGateway(t, s.URL), Options{}), fixture(t))
	elapsed := time.Since(start)
	if len(res.Suggestions) != 3 {
		t.Fatalf("suggestions = %d, want 3", len(res.Suggestions))
	}
	var latestStart, earliestEnd time.Time
	for _, schema := range []string{SchemaSeverity, SchemaSafeguard, SchemaImplemented} {
		rs := requestsFor(s, schema)
		if len(rs) != 1 {
			t.Fatalf("%s: %d requests, want 1", schema, len(rs))
		}
		if rs[0].Start.After(latestStart) {
			latestStart = rs[0].Start
		}
		if earliestEnd.IsZero() || rs[0].End.Before(earliestEnd) {
			earliestEnd = rs[0].End
		}
	}
	if !latestStart.Before(earliestEnd) {
		t.Errorf("the refinement requests did not overlap: the last started at %v, the first ended at %v", latestStart, earliestEnd)
	}
	t.Logf("review with three 300ms refinement stages took %v", elapsed.Round(time.Millisecond))
}

// A cancelled review stops its requests (the endpoint sees the client
// leave) and returns the context's error at once.
func TestCancelAbortsRunningRequests(t *testing.T) {
	s := newServer(t)
	script(s, map[string][]llmtest.Reply{SchemaSafeguard: {{Hang: true}}})
	p := New(newGateway(t, s.URL), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type result struct {
		res FileResult
		err error
	}
	done := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		res, err := p.ReviewFile(ctx, fixture(t))
		done <- result{res, err}
	})
	defer wg.Wait()

	if !s.WaitSchema(SchemaSafeguard, 1, 10*time.Second) {
		t.Fatal("the safeguard request never arrived")
	}
	cancel()
	// The endpoint never answers, so the review returns only because it
	// was cancelled; the bound only keeps a regression from hanging the run.
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ReviewFile did not return after the cancellation")
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", r.err)
	}
	if len(r.res.Suggestions) != 0 {
		t.Errorf("a cancelled review returned %d suggestions", len(r.res.Suggestions))
	}
	if !s.WaitDisconnects(1, 2*time.Second) {
		t.Errorf("disconnects = %d, want the hanging request abandoned", s.Disconnects())
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	s := newServer(t)
	script(s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(newGateway(t, s.URL), Options{}).ReviewFile(ctx, fixture(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := s.CountChat(); n != 0 {
		t.Errorf("%d requests sent for a cancelled review", n)
	}
}

func TestNoGateway(t *testing.T) {
	_, err := New(nil, Options{}).ReviewFile(context.Background(), fixture(t))
	if !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("err = %v, want llm.ErrNotConfigured", err)
	}
}

// Two reviews of the same code give the same IDs, so that a dismissed
// suggestion stays dismissed; the ID does not depend on the position in
// the reply.
func TestSuggestionIDsAreStable(t *testing.T) {
	run := func(replyOrder ...prompts.Suggestion) []string {
		s := newServer(t)
		script(s, map[string][]llmtest.Reply{SchemaAnalyze: {llmtest.JSON(suggestions(replyOrder...))}})
		got := ids(review(t, New(newGateway(t, s.URL), Options{}), fixture(t)).Suggestions)
		slices.Sort(got)
		return got
	}
	first := run(sugSQL, sugRows, sugScan)
	second := run(sugScan, sugSQL, sugRows)
	if !slices.Equal(first, second) {
		t.Errorf("IDs changed between reviews: %v then %v", first, second)
	}
	if len(first) != 3 || first[0] == "" || !strings.HasPrefix(first[0], "kody-") {
		t.Errorf("IDs = %v", first)
	}
	reindented := sugSQL
	reindented.ExistingCode = "   " + sugSQL.ExistingCode + "  \n"
	if idOf(reindented) != idOf(sugSQL) {
		t.Error("re-indenting the existing code changed the ID")
	}
	other := sugSQL
	other.RelevantFile = "internal/billing/refund.go"
	if idOf(other) == idOf(sugSQL) {
		t.Error("the same finding in another file has the same ID")
	}
}

// With a response cache, a second review of the same code sends nothing:
// every stage's request (prompt name, version and text) is the same.
func TestSecondReviewIsServedFromTheCache(t *testing.T) {
	s := newServer(t)
	script(s, nil)
	g := newGateway(t, s.URL, llm.WithCache(newMemCache()))
	p := New(g, Options{})
	first := review(t, p, fixture(t))
	n := s.CountChat()
	second := review(t, p, fixture(t))
	if s.CountChat() != n {
		t.Errorf("the second review sent %d requests, want 0", s.CountChat()-n)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the cached review differs:\n%+v\n%+v", first, second)
	}
}

// Every request of a file review carries the patch (except the severity
// stage's, whose prompt judges the suggestions' own text and has no place
// for it), and none carries a rule's UUID or a suggestion's ID: prompts
// number them instead.
func TestPromptsCarryThePatchAndNoIdentifiers(t *testing.T) {
	s := newServer(t)
	script(s, nil)
	rules := &fakeRules{}
	in := fixture(t)
	if len(in.Rules) == 0 {
		t.Fatal("the fixture has no rules")
	}
	res := review(t, New(newGateway(t, s.URL), Options{Rules: rules}), in)
	reqs := s.ChatRequests()
	if len(reqs) != 5 {
		t.Errorf("%d requests, want one per stage (mode, analyze, severity, safeguard, implemented)", len(reqs))
	}
	patch := strings.TrimSpace(in.Patch)
	for _, r := range reqs {
		txt := r.Chat.Text()
		if !strings.Contains(txt, patch) && r.Chat.SchemaName() != SchemaSeverity {
			t.Errorf("%s request lacks the patch", r.Chat.SchemaName())
		}
		for _, rule := range in.Rules {
			if strings.Contains(txt, rule.UUID) {
				t.Errorf("%s request carries the UUID of rule %q", r.Chat.SchemaName(), rule.Title)
			}
		}
		for _, sg := range res.Suggestions {
			if strings.Contains(txt, sg.ID) {
				t.Errorf("%s request carries a suggestion ID", r.Chat.SchemaName())
			}
		}
	}
	if txt := requestsFor(s, SchemaAnalyze)[0].Chat.Text(); !strings.Contains(txt, "1. "+in.Rules[0].Title) {
		t.Error("the analysis was not told the team's rules by number")
	}
}

func TestRulesHook(t *testing.T) {
	ruleSug := Suggestion{
		SuggestionContent:  "Library code must not print; use the logger.",
		ExistingCode:       `fmt.Println("charging", customerID, cents)`,
		ImprovedCode:       `s.log.Info("charging", "customer", customerID)`,
		OneSentenceSummary: "No fmt.Println in library code.",
		RelevantLinesStart: 54, RelevantLinesEnd: 54,
		Severity: "low",
	}
	t.Run("adds and removes", func(t *testing.T) {
		s := newServer(t)
		script(s, nil)
		rules := &fakeRules{add: []Suggestion{ruleSug}, drop: "Close the rows"}
		p := New(newGateway(t, s.URL), Options{Rules: rules, Config: config(func(c *kodusconfig.Config) {
			c.SuggestionControl.SeverityLevelFilter = "high"
		})})
		res := review(t, p, fixture(t))
		if got := ids(rules.got); !slices.Equal(got, []string{idOf(sugSQL), idOf(sugRows), idOf(sugScan)}) {
			t.Errorf("the hook got %v, want the analysis' suggestions", got)
		}
		wantRule := suggestionID("internal/billing/charge.go", ruleSug.ExistingCode, ruleSug.OneSentenceSummary)
		// The low rule suggestion passes the "high" threshold: filters
		// spare Kody Rules by default. The medium scan one does not.
		if got, want := ids(res.Suggestions), []string{idOf(sugSQL), wantRule}; !slices.Equal(got, want) {
			t.Fatalf("suggestions = %v, want %v", got, want)
		}
		r := res.Suggestions[1]
		if r.Label != LabelKodyRules || r.RelevantFile != "internal/billing/charge.go" || r.Language != "go" || r.Severity != "low" {
			t.Errorf("rule suggestion = %+v", r)
		}
		want := map[string][]string{StageRules: {idOf(sugRows)}, StageThreshold: {idOf(sugScan)}}
		if got := discardsByStage(res.Discarded); !reflect.DeepEqual(got, want) {
			t.Errorf("discarded = %v, want %v", got, want)
		}
	})
	t.Run("filters apply when configured", func(t *testing.T) {
		s := newServer(t)
		script(s, nil)
		p := New(newGateway(t, s.URL), Options{Rules: &fakeRules{add: []Suggestion{ruleSug}}, Config: config(func(c *kodusconfig.Config) {
			c.SuggestionControl.SeverityLevelFilter = "high"
			c.SuggestionControl.ApplyFiltersToKodyRules = true
		})})
		res := review(t, p, fixture(t))
		if got := discardsByStage(res.Discarded)[StageThreshold]; len(got) != 2 {
			t.Errorf("threshold discards = %v, want the scan and the rule suggestion", got)
		}
	})
	for name, hook := range map[string]*fakeRules{
		"error": {err: errors.New("rules endpoint down")},
		"panic": {panic: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t)
			script(s, nil)
			res := review(t, New(newGateway(t, s.URL), Options{Rules: hook}), fixture(t))
			if len(res.Suggestions) != 3 {
				t.Errorf("suggestions = %d, want the analysis' 3", len(res.Suggestions))
			}
			if got := degradedStages(res); !slices.Equal(got, []string{StageRules}) {
				t.Errorf("degraded = %q, want rules", res.Degraded)
			}
		})
	}
	t.Run("turned off", func(t *testing.T) {
		s := newServer(t)
		script(s, nil)
		hook := &fakeRules{add: []Suggestion{ruleSug}}
		p := New(newGateway(t, s.URL), Options{Rules: hook, Config: config(func(c *kodusconfig.Config) { c.ReviewOptions[LabelKodyRules] = false })})
		review(t, p, fixture(t))
		if hook.calls != 0 {
			t.Error("the hook ran with kody_rules turned off")
		}
	})
}

func TestClusterLinksDuplicatesAcrossFiles(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.SchemaName(SchemaCluster), llmtest.JSON(map[string]any{"clusters": []map[string]any{
		// The model names the later one first; the lowest number is
		// the primary anyway. 3 is claimed twice: the first claim wins.
		{"primary": 3, "duplicates": []int{1}, "problemDescription": "rows never closed", "actionStatement": "defer rows.Close()"},
		{"primary": 2, "duplicates": []int{3}},
	}}))
	p := New(newGateway(t, s.URL), Options{})
	a := Suggestion{ID: "a1", RelevantFile: "a.go", OneSentenceSummary: "close rows", RelevantLinesStart: 3, RelevantLinesEnd: 4, Label: "bug", Severity: "high"}
	a2 := Suggestion{ID: "a2", RelevantFile: "a.go", OneSentenceSummary: "other", RelevantLinesStart: 9, RelevantLinesEnd: 9, Label: "bug", Severity: "low"}
	b := Suggestion{ID: "b1", RelevantFile: "b.go", OneSentenceSummary: "close rows too", RelevantLinesStart: 7, RelevantLinesEnd: 8, Label: "bug", Severity: "high"}
	rule := Suggestion{ID: "r1", RelevantFile: "b.go", Label: LabelKodyRules, Severity: "low"}
	in := []FileResult{
		{Path: "a.go", Suggestions: []Suggestion{a, a2}},
		{Path: "b.go", Suggestions: []Suggestion{b, rule}},
	}
	out := p.Cluster(context.Background(), in)

	primary := out[0].Suggestions[0]
	if want := []DuplicateRef{{ID: "b1", File: "b.go", LinesStart: 7, LinesEnd: 8}}; !reflect.DeepEqual(primary.Duplicates, want) {
		t.Errorf("primary duplicates = %+v, want %+v", primary.Duplicates, want)
	}
	if out[1].Suggestions[0].DuplicateOf != "a1" {
		t.Errorf("b1 DuplicateOf = %q, want a1", out[1].Suggestions[0].DuplicateOf)
	}
	if d := out[0].Suggestions[1]; d.DuplicateOf != "" || d.Duplicates != nil {
		t.Errorf("a2 joined a cluster: %+v", d)
	}
	if len(out[0].Suggestions) != 2 || len(out[1].Suggestions) != 2 {
		t.Error("clustering removed suggestions from their files")
	}
	if in[1].Suggestions[0].DuplicateOf != "" || in[0].Suggestions[0].Duplicates != nil {
		t.Error("Cluster modified its input")
	}
	txt := requestsFor(s, SchemaCluster)[0].Chat.Text()
	if strings.Contains(txt, "Suggestion 4") || strings.Contains(txt, "a1") {
		t.Error("the cluster prompt shows the Kody Rules suggestion or an ID")
	}
}

func TestClusterDegrades(t *testing.T) {
	in := []FileResult{
		{Path: "a.go", Suggestions: []Suggestion{{ID: "a1", RelevantFile: "a.go", Label: "bug"}}},
		{Path: "b.go", Suggestions: []Suggestion{{ID: "b1", RelevantFile: "b.go", Label: "bug"}}},
		{Path: "c.go"},
	}
	for kind, reply := range map[string]llmtest.Reply{
		"500":          llmtest.ServerError(),
		"wrong schema": llmtest.WrongSchema(nil),
	} {
		t.Run(kind, func(t *testing.T) {
			s := newServer(t)
			s.On(llmtest.SchemaName(SchemaCluster), reply)
			out := New(newGateway(t, s.URL), Options{}).Cluster(context.Background(), in)
			for i, r := range out {
				if !reflect.DeepEqual(r.Suggestions, in[i].Suggestions) {
					t.Errorf("%s: suggestions changed on failure", r.Path)
				}
				wantDegraded := len(in[i].Suggestions) > 0
				if got := slices.Equal(degradedStages(r), []string{StageCluster}); got != wantDegraded {
					t.Errorf("%s: degraded = %q", r.Path, r.Degraded)
				}
			}
		})
	}
	t.Run("too many to fit", func(t *testing.T) {
		s := newServer(t)
		s.On(llmtest.SchemaName(SchemaCluster), llmtest.JSON(map[string]any{"clusters": []any{}}))
		big := cloneResults(in)
		for i := range 400 {
			big[0].Suggestions = append(big[0].Suggestions, Suggestion{ID: fmt.Sprint("x", i), RelevantFile: "a.go", Label: "bug",
				SuggestionContent: strings.Repeat("words ", 20), ExistingCode: strings.Repeat("x := y\n", 5), ImprovedCode: strings.Repeat("x := z\n", 5)})
		}
		out := New(newGateway(t, s.URL), Options{}).Cluster(context.Background(), big)
		if s.CountChat() != 0 || !slices.Equal(degradedStages(out[0]), []string{StageCluster}) {
			t.Errorf("requests %d, degraded %q: want no request and a note", s.CountChat(), out[0].Degraded)
		}
	})
	t.Run("grouping off", func(t *testing.T) {
		s := newServer(t)
		p := New(newGateway(t, s.URL), Options{Config: config(func(c *kodusconfig.Config) { c.SuggestionControl.GroupingMode = kodusconfig.GroupingMinimal })})
		out := p.Cluster(context.Background(), in)
		if s.CountChat() != 0 || !reflect.DeepEqual(out, in) {
			t.Error("clustering ran with groupingMode minimal")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		s := newServer(t)
		s.On(llmtest.SchemaName(SchemaCluster), llmtest.Reply{Hang: true})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		out := New(newGateway(t, s.URL), Options{}).Cluster(ctx, in)
		if !reflect.DeepEqual(out, in) {
			t.Error("a cancelled clustering changed the results")
		}
	})
}

// TestPromptTokensLightVsHeavy measures what a review of the fixture
// change costs in prompt tokens in each mode. It asserts only that heavy
// costs more; the numbers are logged for the record.
func TestPromptTokensLightVsHeavy(t *testing.T) {
	measure := func(mode string) (gateway, gpt4o int, byStage map[string]int) {
		s := newServer(t)
		script(s, map[string][]llmtest.Reply{SchemaMode: {llmtest.JSON(map[string]string{"reviewMode": mode})}})
		g := newGateway(t, s.URL)
		review(t, New(g, Options{}), fixture(t))
		byStage = map[string]int{}
		for _, r := range s.ChatRequests() {
			n := llm.CountTokens("gpt-4o", r.Chat.Text())
			gpt4o += n
			byStage[r.Chat.SchemaName()] += n
		}
		return g.Totals()[feature].PromptTokens, gpt4o, byStage
	}
	lg, lt, ls := measure("light_mode")
	hg, ht, hs := measure("heavy_mode")
	t.Logf("prompt tokens per review of the fixture (%d-line file, %d-byte patch), gateway-reported (fake: ~4 chars/token) / gpt-4o tokenizer:",
		strings.Count(fixture(t).Content, "\n"), len(fixture(t).Patch))
	t.Logf("  light: %d / %d  %v", lg, lt, ls)
	t.Logf("  heavy: %d / %d  %v", hg, ht, hs)
	t.Logf("  heavy costs %+d gpt-4o tokens (%.0f%% more)", ht-lt, 100*float64(ht-lt)/float64(lt))
	if ht <= lt || hg <= lg {
		t.Errorf("heavy (%d) does not cost more than light (%d)", ht, lt)
	}
}

func TestAlreadyImplemented(t *testing.T) {
	content := "package x\n\nfunc f() error {\n\tif err := g(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc h() {\n\treturn\n}\n"
	for _, tt := range []struct {
		name string
		s    Suggestion
		want bool
	}{
		{"block present at its place", Suggestion{ExistingCode: "g()", ImprovedCode: "if err := g(); err != nil {\n  return err\n}", RelevantLinesStart: 4, RelevantLinesEnd: 4}, true},
		{"block present a few lines off", Suggestion{ExistingCode: "g()", ImprovedCode: "if err := g(); err != nil {\nreturn err\n}", RelevantLinesStart: 6, RelevantLinesEnd: 6}, true},
		{"block present far away", Suggestion{ExistingCode: "g()", ImprovedCode: "if err := g(); err != nil {\nreturn err\n}", RelevantLinesStart: 11, RelevantLinesEnd: 11}, false},
		{"block present, no place given", Suggestion{ExistingCode: "g()", ImprovedCode: "if err := g(); err != nil {\nreturn err\n}"}, true},
		{"single line elsewhere", Suggestion{ExistingCode: "return", ImprovedCode: "return nil", RelevantLinesStart: 11, RelevantLinesEnd: 11}, false},
		{"single line at its place", Suggestion{ExistingCode: "return err", ImprovedCode: "return nil", RelevantLinesStart: 7, RelevantLinesEnd: 7}, true},
		{"single line, no place", Suggestion{ExistingCode: "return", ImprovedCode: "return nil"}, false},
		{"improved equals existing", Suggestion{ExistingCode: "return nil", ImprovedCode: "return nil", RelevantLinesStart: 7, RelevantLinesEnd: 7}, false},
		{"fix that only removes lines", Suggestion{ExistingCode: "if err := g(); err != nil {\nreturn err\n}\nreturn nil", ImprovedCode: "return nil", RelevantLinesStart: 4, RelevantLinesEnd: 7}, false},
		{"not present", Suggestion{ExistingCode: "g()", ImprovedCode: "if err := g(); err != nil {\n\treturn fmt.Errorf(\"g: %w\", err)\n}", RelevantLinesStart: 4, RelevantLinesEnd: 6}, false},
		{"empty improved code", Suggestion{ExistingCode: "g()", RelevantLinesStart: 4}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := alreadyImplemented(content, tt.s); got != tt.want {
				t.Errorf("alreadyImplemented = %v, want %v", got, tt.want)
			}
		})
	}
	if alreadyImplemented("", Suggestion{ImprovedCode: "a\nb"}) {
		t.Error("an empty buffer implements something")
	}
}

func TestFindCode(t *testing.T) {
	content := "a\n\n  b\nc\n"
	for code, want := range map[string]int{"b\nc": 3, "a": 1, "  c  ": 4, "d": 0, "": 0, "a\nb": 1} {
		if got := findCode(content, code); got != want {
			t.Errorf("findCode(%q) = %d, want %d", code, got, want)
		}
	}
}

// memCache is an in-memory llm.Cache.
type memCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemCache() *memCache { return &memCache{m: map[string][]byte{}} }

func (c *memCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok, nil
}

func (c *memCache) Put(_ context.Context, key string, value []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = value
	return nil
}
