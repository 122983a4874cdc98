package rca

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The canonical cases: real tool outputs (copied from the parser fixtures,
// produced by running the tools) with the words a correct root cause and fix
// contain. $WORKSPACE in an output stands for the workspace path.
//
//go:embed evalcases
var evalFS embed.FS

// EvalCase is one canonical error.
type EvalCase struct {
	Name      string   `json:"name"`
	Language  string   `json:"language"`
	RootCause []string `json:"rootCause"` // one of these must appear in the root cause
	Fix       []string `json:"fix"`       // one of these must appear in the fix steps
	Output    string   `json:"-"`
}

// EvalCases returns the embedded canonical cases.
func EvalCases() ([]EvalCase, error) {
	raw, err := evalFS.ReadFile("evalcases/cases.json")
	if err != nil {
		return nil, err
	}
	var cases []EvalCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return nil, fmt.Errorf("eval cases: %w", err)
	}
	for i := range cases {
		out, err := evalFS.ReadFile("evalcases/" + cases[i].Name + ".txt")
		if err != nil {
			return nil, fmt.Errorf("eval case %s: %w", cases[i].Name, err)
		}
		cases[i].Output = string(out)
	}
	return cases, nil
}

// EvalResult is the outcome of one case.
type EvalResult struct {
	Name, Language string
	Pass           bool
	Source         string
	Confidence     float64
	Reason         string // why it failed
	// Property is the expected property that did not hold.
	Property string `json:",omitempty"`
}

// The properties an RCA case expects, in the order they are checked.
const (
	PropertyAnswer    = "an answer"
	PropertyModel     = "the model answered"
	PropertyRootCause = "the root cause names the cause"
	PropertyFix       = "the fix steps name the remedy"
)

// EvalReport sums the results per language.
type EvalReport struct {
	Results    []EvalResult      `json:"results"`
	ByLanguage map[string][2]int `json:"byLanguage"` // passed, total
	Passed     int               `json:"passed"`
	Total      int               `json:"total"`
}

// Eval explains every case with x (whose workspace is used for $WORKSPACE)
// and checks the answers' keywords.
func Eval(ctx context.Context, x *Explainer, cases []EvalCase) EvalReport {
	rep := EvalReport{ByLanguage: map[string][2]int{}}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		res := EvalResult{Name: c.Name, Language: c.Language}
		out := strings.ReplaceAll(c.Output, "$WORKSPACE", x.Workspace)
		r, err := x.Explain(ctx, out, false, nil)
		switch {
		case err != nil:
			res.Property, res.Reason = PropertyAnswer, err.Error()
		case r.RCA == nil:
			res.Property, res.Reason = PropertyAnswer, "no answer"
		default:
			res.Source, res.Confidence = r.RCA.Source, r.RCA.Confidence
			rc := strings.ToLower(r.RCA.RootCause)
			fix := strings.ToLower(strings.Join(r.RCA.FixGuidelines, "\n"))
			switch {
			case r.RCA.Source != SourceModel:
				// The built-in guidance answers without a model; it says
				// nothing of the model under evaluation.
				res.Property = PropertyModel
				res.Reason = fmt.Sprintf("the answer came from %s, not from the model", r.RCA.Source)
				if r.Note != "" {
					res.Reason += " (" + r.Note + ")"
				}
			case !containsAny(rc, c.RootCause):
				res.Property = PropertyRootCause
				res.Reason = fmt.Sprintf("root cause %q mentions none of %q", r.RCA.RootCause, c.RootCause)
			case !containsAny(fix, c.Fix):
				res.Property = PropertyFix
				res.Reason = fmt.Sprintf("fix steps mention none of %q", c.Fix)
			default:
				res.Pass = true
			}
		}
		n := rep.ByLanguage[c.Language]
		n[1]++
		if res.Pass {
			n[0]++
			rep.Passed++
		}
		rep.ByLanguage[c.Language] = n
		rep.Total++
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// WriteText prints the pass rate by language and the failures.
func (r EvalReport) WriteText(w io.Writer) {
	langs := make([]string, 0, len(r.ByLanguage))
	for l := range r.ByLanguage {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		n := r.ByLanguage[l]
		fmt.Fprintf(w, "%-12s %d/%d\n", l, n[0], n[1])
	}
	for _, res := range r.Results {
		if !res.Pass {
			fmt.Fprintf(w, "FAIL %s: %s\n", res.Name, res.Reason)
		}
	}
	pct := 0.0
	if r.Total > 0 {
		pct = 100 * float64(r.Passed) / float64(r.Total)
	}
	fmt.Fprintf(w, "pass rate: %d/%d (%.0f%%)\n", r.Passed, r.Total, pct)
}
