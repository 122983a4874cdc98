package review

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/prompts"
	"go.uber.org/goleak"
)

// TestMain checks that the pipeline leaves no goroutine behind: every
// stage it starts is waited for, cancelled or not.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newServer(t testing.TB) *llmtest.Server {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	return s
}

// newGateway builds a real gateway for the fake endpoint with short
// limits, so failure tests end in well under a second per stage. The
// breaker is set out of reach: these tests are about the pipeline's
// degradation, not the gateway's.
func newGateway(t testing.TB, url string, opts ...llm.Option) *llm.Gateway {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	opts = append([]llm.Option{llm.WithHTTPClient(&http.Client{Transport: tr})}, opts...)
	g, err := llm.New(llm.Config{
		BaseURL:          url,
		Model:            "fake-model",
		MaxRetries:       1,
		Timeout:          2 * time.Second,
		BreakerThreshold: 1000,
	}, opts...)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return g
}

// fixture is the change of the prompts package's examples: a Go file whose
// Charge method gained a concatenated SQL query, unclosed rows, an
// unchecked Scan and a debug print.
func fixture(t testing.TB) FileInput {
	t.Helper()
	ex, _ := prompts.Example("review_analyze_user")
	d := ex.(prompts.ReviewAnalyzeData)
	return FileInput{Path: d.FileName, Language: d.Language, Content: d.FileContent, Patch: d.Patch, Rules: d.Rules}
}

// Suggestions of the analysis, as a model writes them (prompts.Suggestion
// has the codeSuggestions JSON names). The IDs stay empty: models never
// see or send them.
var (
	sugSQL = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "The balance query concatenates customerID into the SQL text; pass it as a parameter.",
		ExistingCode:       `rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = '"+customerID+"'")`,
		ImprovedCode:       `rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = $1", customerID)`,
		OneSentenceSummary: "Pass customerID as a query parameter to prevent SQL injection.",
		RelevantLinesStart: 43, RelevantLinesEnd: 43,
		Label: "security", Severity: "critical",
	}
	sugRows = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "The rows returned by QueryContext are never closed, so each charge holds a connection.",
		ExistingCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT balance FROM accounts WHERE id = '\"+customerID+\"'\")\nif err != nil {\n\treturn fmt.Errorf(\"query balance: %w\", err)\n}",
		ImprovedCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT balance FROM accounts WHERE id = '\"+customerID+\"'\")\nif err != nil {\n\treturn fmt.Errorf(\"query balance: %w\", err)\n}\ndefer rows.Close()",
		OneSentenceSummary: "Close the rows returned by QueryContext.",
		RelevantLinesStart: 43, RelevantLinesEnd: 46,
		Label: "bug", Severity: "", // no severity: the severity stage fills it
	}
	sugScan = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "The error of rows.Scan is ignored.",
		ExistingCode:       "if rows.Next() {\n\trows.Scan(&balance)\n}",
		ImprovedCode:       "if rows.Next() {\n\tif err := rows.Scan(&balance); err != nil {\n\t\treturn fmt.Errorf(\"scan balance: %w\", err)\n\t}\n}",
		OneSentenceSummary: "Check the error of rows.Scan.",
		RelevantLinesStart: 48, RelevantLinesEnd: 50,
		Label: "bug", Severity: "medium",
	}
	sugPrint = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "Printing on every charge writes to stdout on the hot path.",
		ExistingCode:       `fmt.Println("charging", customerID, cents)`,
		ImprovedCode:       `s.log.Debug("charging", "customer", customerID, "cents", cents)`,
		OneSentenceSummary: "Drop the debug print from the charge path.",
		RelevantLinesStart: 54, RelevantLinesEnd: 54,
		Label: "performance", Severity: "low",
	}
	sugRace = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "The balance check and the debit are two statements; concurrent charges can overdraw.",
		ExistingCode:       "_, err = s.db.ExecContext(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2\", cents, customerID)\nreturn err",
		ImprovedCode:       "res, err := s.db.ExecContext(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1\", cents, customerID)\nif err != nil {\n\treturn err\n}\nif n, _ := res.RowsAffected(); n == 0 {\n\treturn ErrInsufficientFunds\n}\nreturn nil",
		OneSentenceSummary: "Make the check and the debit one conditional UPDATE.",
		RelevantLinesStart: 55, RelevantLinesEnd: 56,
		Label: "bug", Severity: "high",
	}
	sugRowsErr = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "rows.Err is never checked, so an iteration error reads as a zero balance.",
		ExistingCode:       "if rows.Next() {\n\trows.Scan(&balance)\n}",
		ImprovedCode:       "if rows.Next() {\n\trows.Scan(&balance)\n}\nif err := rows.Err(); err != nil {\n\treturn err\n}",
		OneSentenceSummary: "Check rows.Err after reading the balance.",
		RelevantLinesStart: 48, RelevantLinesEnd: 50,
		Label: "bug", Severity: "medium",
	}
	// sugDone proposes what lines 40-42 already hold.
	sugDone = prompts.Suggestion{
		RelevantFile:       "internal/billing/charge.go",
		Language:           "go",
		SuggestionContent:  "Reject non-positive amounts.",
		ExistingCode:       "if cents <= 0 {",
		ImprovedCode:       "if cents <= 0 {\n\treturn ErrInvalidAmount\n}",
		OneSentenceSummary: "Reject amounts of zero or less.",
		RelevantLinesStart: 40, RelevantLinesEnd: 40,
		Label: "bug", Severity: "low",
	}
)

func suggestions(ss ...prompts.Suggestion) map[string]any {
	return map[string]any{"codeSuggestions": ss}
}

// idOf is the ID the pipeline gives a suggestion of the analysis.
func idOf(s prompts.Suggestion) string {
	return suggestionID(s.RelevantFile, s.ExistingCode, s.OneSentenceSummary)
}

// verdicts builds a safeguard reply: one entry per suggestion, no_changes
// unless given.
func verdicts(n int, special map[int]map[string]any) map[string]any {
	var items []map[string]any
	for i := 1; i <= n; i++ {
		it := map[string]any{"index": i, "action": "no_changes", "reason": "real and correct"}
		for k, v := range special[i] {
			it[k] = v
		}
		items = append(items, it)
	}
	return map[string]any{"codeSuggestions": items}
}

func statuses(n int, implemented ...int) map[string]any {
	var items []map[string]any
	for i := 1; i <= n; i++ {
		st := "not_implemented"
		if slices.Contains(implemented, i) {
			st = "implemented"
		}
		items = append(items, map[string]any{"index": i, "implementationStatus": st})
	}
	return map[string]any{"codeSuggestions": items}
}

// script answers every stage: replies given in over take the place of the
// defaults, which are heavy mode, the SQL/rows/scan suggestions, "high"
// for the one without severity, and no objection from the safeguard or
// the implementation check.
func script(s *llmtest.Server, over map[string][]llmtest.Reply) {
	def := map[string][]llmtest.Reply{
		SchemaMode:        {llmtest.JSON(map[string]string{"reviewMode": "heavy_mode"})},
		SchemaAnalyze:     {llmtest.JSON(suggestions(sugSQL, sugRows, sugScan))},
		SchemaSeverity:    {llmtest.JSON(map[string]any{"codeSuggestions": []map[string]any{{"index": 1, "severity": "high", "reason": "leak under load"}}})},
		SchemaSafeguard:   {llmtest.JSON(verdicts(3, nil))},
		SchemaImplemented: {llmtest.JSON(statuses(3))},
		SchemaCluster:     {llmtest.JSON(map[string]any{"clusters": []any{}})},
	}
	for _, name := range []string{SchemaMode, SchemaAnalyze, SchemaSeverity, SchemaSafeguard, SchemaImplemented, SchemaCluster} {
		replies := def[name]
		if r, ok := over[name]; ok {
			replies = r
		}
		s.On(llmtest.SchemaName(name), replies...).Named(name)
	}
}

// requestsFor returns the recorded requests of one stage.
func requestsFor(s *llmtest.Server, schema string) []llmtest.Recorded {
	var out []llmtest.Recorded
	for _, r := range s.ChatRequests() {
		if r.Chat.SchemaName() == schema {
			out = append(out, r)
		}
	}
	return out
}

func ids(ss []Suggestion) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func discardsByStage(ds []Discard) map[string][]string {
	out := map[string][]string{}
	for _, d := range ds {
		out[d.Stage] = append(out[d.Stage], d.Suggestion.ID)
	}
	return out
}

// degradedStages returns the stage names of Degraded entries.
func degradedStages(res FileResult) []string {
	var out []string
	for _, d := range res.Degraded {
		stage, _, _ := strings.Cut(d, ":")
		out = append(out, stage)
	}
	return out
}

func review(t *testing.T, p *Pipeline, in FileInput) FileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.ReviewFile(ctx, in)
	if err != nil {
		t.Fatalf("ReviewFile: %v", err)
	}
	return res
}

// fakeRules is a RulesHook that keeps the standard suggestions except the
// ones whose summary contains drop, and adds its own.
type fakeRules struct {
	add   []Suggestion
	drop  string
	err   error
	panic bool
	delay time.Duration

	mu    sync.Mutex
	calls int
	got   []Suggestion
}

func (f *fakeRules) Check(ctx context.Context, in FileInput, ss []Suggestion) ([]Suggestion, error) {
	f.mu.Lock()
	f.calls++
	f.got = ss
	f.mu.Unlock()
	if f.panic {
		panic("rules engine bug")
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	var out []Suggestion
	for _, s := range ss {
		if f.drop != "" && strings.Contains(s.OneSentenceSummary, f.drop) {
			continue
		}
		out = append(out, s)
	}
	return append(out, f.add...), nil
}

func config(edit func(*kodusconfig.Config)) kodusconfig.Config {
	c := kodusconfig.Default()
	if edit != nil {
		edit(&c)
	}
	return c
}
