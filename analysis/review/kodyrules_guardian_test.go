package review

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/prompts"
)

// closeRule is a team rule the rows suggestion (defer rows.Close() in the
// service) contradicts.
var closeRule = prompts.RuleRef{
	UUID: "rule-rows", Title: "Services never close rows themselves", Severity: "high",
	Instructions: "Query rows are closed by db.Each, the repository helper; a service that calls rows.Close() closes them twice.",
}

// guardianReview reviews the fixture with the pipeline's own Kody Rules
// check, the guardian answering decisions and the check finding nothing.
func guardianReview(t *testing.T, decisions []map[string]any) (FileResult, *llmtest.Server) {
	t.Helper()
	s := newServer(t)
	script(s, nil)
	s.On(llmtest.SchemaName(SchemaGuardian), llmtest.JSON(map[string]any{"decisions": decisions}))
	s.On(llmtest.SchemaName(SchemaKodyRules), llmtest.JSON(map[string]any{"violations": []any{}}))
	in := fixture(t)
	in.Rules = []prompts.RuleRef{{UUID: "rule-errs", Title: "Errors are wrapped with context", Severity: "medium", Instructions: "Wrap errors with fmt.Errorf and %w."}, closeRule}
	return review(t, New(newGateway(t, s.URL), Options{KodyRules: true}), in), s
}

// TestGuardianRemovesSuggestionsThatContradictARule: the guardian sees the
// standard suggestions and the rules by position; a suggestion it marks
// for removal under a listed rule is discarded by the rules stage and the
// others are kept.
func TestGuardianRemovesSuggestionsThatContradictARule(t *testing.T) {
	res, s := guardianReview(t, []map[string]any{
		{"index": 1, "shouldRemove": false, "rule": 0, "reason": "no rule concerns query parameters"},
		{"index": 2, "shouldRemove": true, "rule": 2, "reason": "Rule 2: services never close rows; db.Each does."},
		{"index": 3, "shouldRemove": false, "rule": 0, "reason": "compatible"},
	})
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Fatalf("suggestions = %v, want the SQL and scan ones", got)
	}
	if got, want := discardsByStage(res.Discarded), map[string][]string{StageRules: {idOf(sugRows)}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("discarded = %v, want the rows suggestion by the rules stage", got)
	}
	if len(res.Degraded) != 0 {
		t.Fatalf("degraded: %v", res.Degraded)
	}
	guardian := requestsFor(s, SchemaGuardian)
	if len(guardian) != 1 {
		t.Fatalf("%d guardian calls, want 1", len(guardian))
	}
	prompt := guardian[0].Chat.Text()
	for _, want := range []string{closeRule.Title, sugRows.OneSentenceSummary, sugSQL.OneSentenceSummary, sugScan.OneSentenceSummary} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the guardian prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, closeRule.UUID) {
		t.Error("the guardian prompt names a rule by its uuid")
	}
}

// TestGuardianIgnoresDecisionsOutOfRange: a removal naming a suggestion or
// a rule that is not in the lists removes nothing.
func TestGuardianIgnoresDecisionsOutOfRange(t *testing.T) {
	res, _ := guardianReview(t, []map[string]any{
		{"index": 0, "shouldRemove": true, "rule": 1, "reason": "no suggestion 0"},
		{"index": 4, "shouldRemove": true, "rule": 1, "reason": "only 3 suggestions"},
		{"index": 2, "shouldRemove": true, "rule": 3, "reason": "only 2 rules"},
		{"index": 3, "shouldRemove": true, "rule": 0, "reason": "no rule named"},
		{"index": 1, "shouldRemove": true, "rule": -1, "reason": "negative rule"},
	})
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugRows), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Fatalf("suggestions = %v, want all three kept", got)
	}
	if len(res.Discarded) != 0 {
		t.Fatalf("discarded = %v, want none", discardsByStage(res.Discarded))
	}
}

// TestGuardianBatchesRulesToTheWindow: a rule set larger than the model's
// window allows reaches the guardian in several calls, each rule once and
// each call numbering its own rules from 1, every call leaving the reply
// its room; a removal under a rule of the last batch drops the suggestion.
func TestGuardianBatchesRulesToTheWindow(t *testing.T) {
	rs := benchRules(80)
	last := rs[len(rs)-1]
	s := newServer(t)
	script(s, nil)
	s.On(llmtest.All(llmtest.SchemaName(SchemaGuardian), llmtest.PromptContains(": "+last.Title+"\n")), llmtest.JSON(map[string]any{"decisions": []map[string]any{
		{"index": 2, "shouldRemove": true, "rule": 1, "reason": "contradicts rule 1 of this list"},
	}}))
	s.On(llmtest.SchemaName(SchemaGuardian), llmtest.JSON(map[string]any{"decisions": []any{}}))
	s.On(llmtest.SchemaName(SchemaKodyRules), llmtest.JSON(map[string]any{"violations": []any{}}))
	usage := &usageLog{}
	in := fixture(t)
	in.Rules = rs
	res := review(t, New(newGateway(t, s.URL, llm.WithUsage(usage)), Options{KodyRules: true}), in)

	guardian := requestsFor(s, SchemaGuardian)
	if len(guardian) < 2 {
		t.Fatalf("%d guardian calls for 80 rules in an %d-token window, want several", len(guardian), llm.DefaultContextWindow)
	}
	for _, r := range rs {
		n := 0
		for _, g := range guardian {
			n += strings.Count(g.Chat.Text(), ": "+r.Title+"\n")
		}
		if n != 1 {
			t.Errorf("rule %q reached the guardian %d times, want once", r.Title, n)
		}
	}
	for i, g := range guardian {
		if !strings.Contains(g.Chat.Text(), "### Rule 1: ") {
			t.Errorf("guardian call %d does not number its rules from 1", i+1)
		}
		for _, want := range []string{sugSQL.OneSentenceSummary, sugRows.OneSentenceSummary, sugScan.OneSentenceSummary} {
			if !strings.Contains(g.Chat.Text(), want) {
				t.Errorf("guardian call %d lacks the suggestion %q", i+1, want)
			}
		}
	}
	leavesReplyRoom(t, usage.calls())
	if got, want := ids(res.Suggestions), []string{idOf(sugSQL), idOf(sugScan)}; !slices.Equal(got, want) {
		t.Fatalf("suggestions = %v, want the rows one removed by the last batch's answer", got)
	}
}
