// Package report renders the findings of `kodyls review` for people (text),
// for programs (JSON) and for code-scanning tools (SARIF 2.1.0, as GitHub
// code scanning accepts it).
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sources of a finding.
const (
	SourceRule   = "rule"   // a Kody Rule's local detector
	SourceReview = "review" // the LLM review
)

// Finding is one finding of a review. Lines and columns are 1-based;
// columns count UTF-16 code units, as LSP positions and SARIF's
// utf16CodeUnits column kind do; 0 means unknown.
type Finding struct {
	ID           string     `json:"id"`
	Source       string     `json:"source"`
	File         string     `json:"file"`
	StartLine    int        `json:"startLine"`
	EndLine      int        `json:"endLine"`
	StartColumn  int        `json:"startColumn,omitempty"`
	EndColumn    int        `json:"endColumn,omitempty"`
	Severity     string     `json:"severity"`
	Label        string     `json:"label"`
	Summary      string     `json:"oneSentenceSummary"`
	Message      string     `json:"suggestionContent,omitempty"`
	ExistingCode string     `json:"existingCode,omitempty"`
	ImprovedCode string     `json:"improvedCode,omitempty"`
	RuleID       string     `json:"ruleId,omitempty"`
	RuleTitle    string     `json:"ruleTitle,omitempty"`
	DuplicateOf  string     `json:"duplicateOf,omitempty"`
	Duplicates   []Location `json:"duplicates,omitempty"`
}

// Location is another place a clustered finding applies to.
type Location struct {
	File      string `json:"file"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
}

// File is what happened to one changed file.
type File struct {
	Path        string   `json:"path"`
	Skipped     string   `json:"skipped,omitempty"`
	Hunks       int      `json:"hunks"`
	CachedHunks int      `json:"cachedHunks"`
	Degraded    []string `json:"degraded,omitempty"`
}

// Report is the outcome of one review run.
type Report struct {
	Version  string    `json:"version"`
	Base     string    `json:"base"`
	Offline  bool      `json:"offline"`
	Findings []Finding `json:"findings"`
	Files    []File    `json:"files"`
	Notes    []string  `json:"notes,omitempty"`
	// Interrupted is set when a signal stopped the review: Files lists
	// what was reviewed until then, and a note says how far it got.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Severities from the most to the least severe.
var Severities = []string{"critical", "high", "medium", "low"}

// Rank orders severities: critical 4 … low 1, unknown 0.
func Rank(sev string) int {
	for i, s := range Severities {
		if strings.EqualFold(s, sev) {
			return len(Severities) - i
		}
	}
	return 0
}

// Sort orders findings by file and position.
func (r *Report) Sort() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		return a.StartColumn < b.StartColumn
	})
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
}

// Fails reports whether a finding is at or above the threshold severity,
// a repeat of another finding (DuplicateOf) included: each place is a
// finding of its own severity, however the text groups them.
func (r *Report) Fails(threshold string) bool {
	t := Rank(threshold)
	for _, f := range r.Findings {
		if Rank(f.Severity) >= t {
			return true
		}
	}
	return false
}

// WriteText renders the report for a terminal: one block per finding, in
// the compiler style editors and terminals link (file:line:col).
func (r *Report) WriteText(w io.Writer) error {
	counts := map[string]int{}
	for _, f := range r.Findings {
		if f.DuplicateOf != "" {
			continue
		}
		counts[f.Severity]++
		col := max(f.StartColumn, 1)
		fmt.Fprintf(w, "%s:%d:%d: %s %s: %s\n", f.File, f.StartLine, col, f.Severity, f.Label, f.Summary)
		if f.Message != "" && f.Message != f.Summary {
			for _, line := range strings.Split(strings.TrimSpace(f.Message), "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
		if f.ImprovedCode != "" {
			fmt.Fprintln(w, "    suggested:")
			for _, line := range strings.Split(strings.TrimRight(f.ImprovedCode, "\n"), "\n") {
				fmt.Fprintf(w, "      %s\n", line)
			}
		}
		for _, d := range f.Duplicates {
			fmt.Fprintf(w, "    also at %s:%d\n", d.File, d.StartLine)
		}
	}
	for _, f := range r.Files {
		if f.Skipped != "" {
			fmt.Fprintf(w, "%s: not reviewed: %s\n", f.Path, f.Skipped)
		}
		for _, d := range f.Degraded {
			fmt.Fprintf(w, "%s: review degraded: %s\n", f.Path, d)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	total := 0
	var parts []string
	for _, s := range Severities {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			total += counts[s]
		}
	}
	summary := fmt.Sprintf("%s in %s", plural(total, "finding"), plural(len(r.Files), "changed file"))
	if len(parts) > 0 {
		summary += " (" + strings.Join(parts, ", ") + ")"
	}
	if r.Offline {
		summary += "; offline: local Kody Rules only"
	}
	if r.Interrupted {
		summary += "; interrupted: the review did not finish"
	}
	_, err := fmt.Fprintln(w, summary)
	return err
}

// WriteJSON renders the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Files == nil {
		r.Files = []File{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
