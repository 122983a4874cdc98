package review

import (
	"reflect"
	"slices"
	"strings"
	"testing"

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
