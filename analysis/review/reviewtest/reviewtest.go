// Package reviewtest scripts the fake LLM endpoint for a whole file review,
// so tests of the features built on the review pipeline (the editor, the
// CLI) can say which suggestions the model makes and nothing else.
package reviewtest

import (
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review"
)

// Suggestion is what the model's analysis returns for one finding.
type Suggestion struct {
	// RelevantFile is the file the model says the finding is about;
	// usually left out.
	RelevantFile       string `json:"relevantFile,omitempty"`
	SuggestionContent  string `json:"suggestionContent"`
	ExistingCode       string `json:"existingCode"`
	ImprovedCode       string `json:"improvedCode"`
	OneSentenceSummary string `json:"oneSentenceSummary"`
	RelevantLinesStart int    `json:"relevantLinesStart"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd"`
	Label              string `json:"label"`
	Severity           string `json:"severity"`
}

// Scripts are the fake endpoint's scripts for each stage, so tests can
// count the calls of each.
type Scripts struct {
	Mode, Analyze, Severity, Safeguard, Implemented *llmtest.Script
}

// Calls is the number of requests the review stages received.
func (s Scripts) Calls() int {
	return s.Mode.Times() + s.Analyze.Times() + s.Severity.Times() + s.Safeguard.Times() + s.Implemented.Times()
}

// Script makes every review on s answer in light mode with the given
// suggestions, keep them all through the safeguard and report none as
// implemented. analyze replaces the analysis reply (e.g. with a hang or a
// failure) when given.
func Script(s *llmtest.Server, suggestions []Suggestion, analyze ...llmtest.Reply) Scripts {
	n := len(suggestions)
	keep := make([]map[string]any, n)
	notDone := make([]map[string]any, n)
	sev := make([]map[string]any, n)
	for i := range suggestions {
		keep[i] = map[string]any{"index": i + 1, "action": "no_changes", "reason": "correct"}
		notDone[i] = map[string]any{"index": i + 1, "implementationStatus": "not_implemented"}
		sev[i] = map[string]any{"index": i + 1, "severity": "medium"}
	}
	replies := analyze
	if len(replies) == 0 {
		replies = []llmtest.Reply{llmtest.JSON(map[string]any{"codeSuggestions": suggestions})}
	}
	return Scripts{
		Mode:        s.On(llmtest.SchemaName(review.SchemaMode), llmtest.JSON(map[string]string{"reviewMode": "light_mode"})),
		Analyze:     s.On(llmtest.SchemaName(review.SchemaAnalyze), replies...),
		Severity:    s.On(llmtest.SchemaName(review.SchemaSeverity), llmtest.JSON(map[string]any{"codeSuggestions": sev})),
		Safeguard:   s.On(llmtest.SchemaName(review.SchemaSafeguard), llmtest.JSON(map[string]any{"codeSuggestions": keep})),
		Implemented: s.On(llmtest.SchemaName(review.SchemaImplemented), llmtest.JSON(map[string]any{"codeSuggestions": notDone})),
	}
}

// Answer is the analysis' reply to the reviews whose prompt When matches.
type Answer struct {
	When        llmtest.Matcher
	Suggestions []Suggestion
}

// ScriptAnswers is Script for reviews whose suggestions depend on what is
// reviewed: the analysis answers with the first Answer whose When matches
// the prompt (none: no suggestion), and the safeguard, severity and
// implementation stages keep every suggestion of any answer as it is.
// Its Scripts' Analyze is the first Answer's script; count every model
// call with the server's CountChat.
func ScriptAnswers(s *llmtest.Server, answers ...Answer) Scripts {
	n := 1
	for _, a := range answers {
		n = max(n, len(a.Suggestions))
	}
	keep := make([]map[string]any, n)
	notDone := make([]map[string]any, n)
	sev := make([]map[string]any, n)
	for i := range n {
		keep[i] = map[string]any{"index": i + 1, "action": "no_changes", "reason": "correct"}
		notDone[i] = map[string]any{"index": i + 1, "implementationStatus": "not_implemented"}
		sev[i] = map[string]any{"index": i + 1, "severity": "medium"}
	}
	var analyze *llmtest.Script
	for _, a := range answers {
		sc := s.On(llmtest.All(llmtest.SchemaName(review.SchemaAnalyze), a.When), llmtest.JSON(map[string]any{"codeSuggestions": a.Suggestions}))
		if analyze == nil {
			analyze = sc
		}
	}
	none := s.On(llmtest.SchemaName(review.SchemaAnalyze), llmtest.JSON(map[string]any{"codeSuggestions": []Suggestion{}}))
	if analyze == nil {
		analyze = none
	}
	return Scripts{
		Mode:        s.On(llmtest.SchemaName(review.SchemaMode), llmtest.JSON(map[string]string{"reviewMode": "light_mode"})),
		Analyze:     analyze,
		Severity:    s.On(llmtest.SchemaName(review.SchemaSeverity), llmtest.JSON(map[string]any{"codeSuggestions": sev})),
		Safeguard:   s.On(llmtest.SchemaName(review.SchemaSafeguard), llmtest.JSON(map[string]any{"codeSuggestions": keep})),
		Implemented: s.On(llmtest.SchemaName(review.SchemaImplemented), llmtest.JSON(map[string]any{"codeSuggestions": notDone})),
	}
}

// RuleViolation is what the model's Kody Rules check returns for one
// violation. Rule is the 1-based position of the rule in the prompt.
type RuleViolation struct {
	Rule               int    `json:"rule"`
	Reason             string `json:"reason"`
	SuggestionContent  string `json:"suggestionContent"`
	ExistingCode       string `json:"existingCode"`
	ImprovedCode       string `json:"improvedCode"`
	OneSentenceSummary string `json:"oneSentenceSummary"`
	RelevantLinesStart int    `json:"relevantLinesStart"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd"`
}

// RuleScripts are the fake endpoint's scripts for the Kody Rules stages.
type RuleScripts struct {
	Check, Guardian *llmtest.Script
}

// Rules makes every Kody Rules check on s whose prompt matches m (any
// check when m is nil) report the given violations, and the guardian keep
// every standard suggestion.
func Rules(s *llmtest.Server, m llmtest.Matcher, violations ...RuleViolation) RuleScripts {
	if m == nil {
		m = llmtest.Any()
	}
	if violations == nil {
		violations = []RuleViolation{}
	}
	return RuleScripts{
		Check:    s.On(llmtest.All(llmtest.SchemaName(review.SchemaKodyRules), m), llmtest.JSON(map[string]any{"violations": violations})),
		Guardian: s.On(llmtest.SchemaName(review.SchemaGuardian), llmtest.JSON(map[string]any{"decisions": []any{}})),
	}
}
