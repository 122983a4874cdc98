package strategies

import (
	"fmt"
	"strings"

	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/graph"
)

// Registry kinds of the strategies of "Fix this error" and of the review.
const (
	KindFix    = "fix"
	KindReview = "review"
)

// The names of the fix strategies. A fix is plan mode: its edits are
// proposed and its build verified by plan steps, so the loops that answer
// with text (ReAct, plan-execute, ReWoo) have no way to propose an edit
// nor to see a build fail; what can vary is how many plan versions the
// reflection may adjust.
const (
	// PlanMode generates a plan, executes it, reflects on the verifying
	// build and adjusts the plan, up to fix.DefaultRounds versions.
	PlanMode = "plan-mode"
	// SinglePlan runs one plan version: no adjustment after a failed
	// build, so a comparison with PlanMode shows what the reflection buys.
	SinglePlan = "single-plan"
)

// DefaultFix is the strategy "Fix this error" uses.
const DefaultFix = PlanMode

// Fix is a strategy of "Fix this error".
type Fix struct {
	Name string
	// Rounds is the number of plan versions the fix may try.
	Rounds int
}

// Configure sets f up to run the strategy.
func (s Fix) Configure(f *fix.Fixer) { f.Rounds = s.Rounds }

// The names of the review strategies: what the review can run over a
// change.
const (
	// Pipeline is the Kodus file pipeline: mode, analysis, then severity,
	// safeguard, implemented and Kody Rules checks at once, merged.
	Pipeline = "pipeline"
	// ReWooRules is the check of the pull-request scope Kody Rules: a
	// ReWoo plan of the evidence to gather in the workspace, its tool
	// calls run concurrently, then one judgement of the change set with
	// that evidence.
	ReWooRules = "rewoo"
)

// Review scopes: which of the review's entry points a strategy runs.
const (
	ScopeFile        = "file"
	ScopePullRequest = "pull_request"
)

// Review is a strategy of the review.
type Review struct {
	Name string
	// Scope is ScopeFile (one file's change through the pipeline) or
	// ScopePullRequest (the whole change set against the pull-request
	// rules).
	Scope string
}

func registerFeatures(r *graph.Registry) {
	add := func(kind, name, desc string, v any) {
		if err := r.Register(kind, name, desc, v); err != nil {
			panic(err) // names are constants: a duplicate is a programming error
		}
	}
	add(KindFix, PlanMode, fmt.Sprintf("plan mode: generate, execute, verify with the build, reflect and adjust, up to %d plan versions (the default)", fix.DefaultRounds), Fix{Name: PlanMode, Rounds: fix.DefaultRounds})
	add(KindFix, SinglePlan, "plan mode with one plan version: the build verifies it, nothing adjusts it", Fix{Name: SinglePlan, Rounds: 1})
	add(KindReview, Pipeline, "the Kodus file pipeline: mode, analysis, then severity, safeguard, implemented and Kody Rules checks concurrently", Review{Name: Pipeline, Scope: ScopeFile})
	add(KindReview, ReWooRules, "pull-request Kody Rules: plan the workspace evidence, gather it concurrently, judge the change set with it", Review{Name: ReWooRules, Scope: ScopePullRequest})
}

// Names lists the names of the strategies of kind (KindRCA, KindFix or
// KindReview), sorted.
func Names(kind string) []string {
	var out []string
	for _, n := range registry().Names(kind) {
		out = append(out, n[0])
	}
	return out
}

// Descriptions lists the strategies of kind as "name: description" lines.
func Descriptions(kind string) []string {
	var out []string
	for _, n := range registry().Names(kind) {
		out = append(out, n[0]+": "+n[1])
	}
	return out
}

// Known reports an error naming the known strategies of kind when name is
// not one of them.
func Known(kind, name string) error {
	if registry().Has(kind, name) {
		return nil
	}
	return fmt.Errorf("unknown %s strategy %q; choose one of: %s", kind, name, strings.Join(Names(kind), ", "))
}

// ForFix returns the fix strategy called name.
func ForFix(name string) (Fix, error) {
	s, ok := graph.Lookup[Fix](registry(), KindFix, name)
	if !ok {
		return Fix{}, Known(KindFix, name)
	}
	return s, nil
}

// ForReview returns the review strategy called name.
func ForReview(name string) (Review, error) {
	s, ok := graph.Lookup[Review](registry(), KindReview, name)
	if !ok {
		return Review{}, Known(KindReview, name)
	}
	return s, nil
}
