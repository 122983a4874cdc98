package review

import (
	"fmt"
	"slices"

	"github.com/kodustech/kodyls/analysis/kodusconfig"
)

// Spared reports whether suggestionControl's severity threshold and cap
// spare s: Kody Rules suggestions are the team's own decisions and are
// shown whatever they say, unless applyFiltersToKodyRules is set.
func Spared(sc kodusconfig.SuggestionControl, s Suggestion) bool {
	return (s.FromRules || s.RuleID != "") && !sc.ApplyFiltersToKodyRules
}

// Filter applies suggestionControl to one file's suggestions: the
// severityLevelFilter, then maxSuggestions, whatever limitationType says
// (a file's share of a change never exceeds the change's cap; the caller
// clears MaxSuggestions where no cap applies). See CapKeeps for which are
// kept.
// It returns the suggestions kept, in their order, and those dropped.
func Filter(sc kodusconfig.SuggestionControl, ss []Suggestion) ([]Suggestion, []Discard) {
	keep, dropped := FilterKeeps(sc, ss)
	kept := make([]Suggestion, 0, len(ss))
	for i, s := range ss {
		if keep[i] {
			kept = append(kept, s)
		}
	}
	return kept, dropped
}

// FilterKeeps is Filter saying, for each suggestion of ss, whether it is
// kept.
func FilterKeeps(sc kodusconfig.SuggestionControl, ss []Suggestion) ([]bool, []Discard) {
	keep := make([]bool, len(ss))
	var dropped []Discard
	floor := sc.SeverityLevelFilter
	floorRank := kodusconfig.SeverityRank(floor)
	var above []int // indexes in ss of the suggestions the threshold keeps
	for i, s := range ss {
		if floorRank <= 1 || Spared(sc, s) || kodusconfig.SeverityRank(s.Severity) >= floorRank {
			above = append(above, i)
			continue
		}
		dropped = append(dropped, Discard{Suggestion: s, Stage: StageThreshold, Reason: fmt.Sprintf("severity %s is below the configured severityLevelFilter %s", s.Severity, floor)})
	}
	rest := make([]Suggestion, len(above))
	for k, i := range above {
		rest[k] = ss[i]
	}
	capped := CapKeeps(sc, rest)
	reason := fmt.Sprintf("over the limit of %d suggestions per file (suggestionControl.maxSuggestions); more severe ones are shown", sc.MaxSuggestions)
	for k, i := range above {
		if capped == nil || capped[k] {
			keep[i] = true
			continue
		}
		dropped = append(dropped, Discard{Suggestion: ss[i], Stage: StageCap, Reason: reason})
	}
	return keep, dropped
}

// CapKeeps applies suggestionControl.maxSuggestions (no cap when it is 0)
// to ss: of the suggestions it counts (not the Spared ones) the most
// severe are kept, earlier ones first among equals. It says, for each
// suggestion, whether it is kept; nil when all are.
func CapKeeps(sc kodusconfig.SuggestionControl, ss []Suggestion) []bool {
	if sc.MaxSuggestions <= 0 {
		return nil
	}
	var counted []int
	for i, s := range ss {
		if !Spared(sc, s) {
			counted = append(counted, i)
		}
	}
	if len(counted) <= sc.MaxSuggestions {
		return nil
	}
	slices.SortStableFunc(counted, func(a, b int) int {
		return kodusconfig.SeverityRank(ss[b].Severity) - kodusconfig.SeverityRank(ss[a].Severity)
	})
	keep := make([]bool, len(ss))
	for i := range keep {
		keep[i] = true
	}
	for _, i := range counted[sc.MaxSuggestions:] {
		keep[i] = false
	}
	return keep
}
