package filereview

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// The canonical review cases: a file before and after a change that
// introduces one well-known defect, the lines of the defect in the new
// text, and the words a correct finding uses.
//
//go:embed evalcases
var evalFS embed.FS

// EvalCase is one canonical change.
type EvalCase struct {
	Name     string   `json:"name"`
	File     string   `json:"file"`
	Language string   `json:"language"`
	Lines    [2]int   `json:"lines"`    // the defect, 1-based, inclusive, in After
	Keywords []string `json:"keywords"` // one of these must appear in the finding
	Before   string   `json:"-"`
	After    string   `json:"-"`
}

// EvalCases returns the embedded canonical review cases.
func EvalCases() ([]EvalCase, error) {
	raw, err := evalFS.ReadFile("evalcases/cases.json")
	if err != nil {
		return nil, err
	}
	var cases []EvalCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return nil, fmt.Errorf("review eval cases: %w", err)
	}
	for i := range cases {
		for _, part := range []struct {
			suffix string
			to     *string
		}{{"before", &cases[i].Before}, {"after", &cases[i].After}} {
			b, err := evalFS.ReadFile("evalcases/" + cases[i].Name + "." + part.suffix)
			if err != nil {
				return nil, fmt.Errorf("review eval case %s: %w", cases[i].Name, err)
			}
			*part.to = string(b)
		}
	}
	return cases, nil
}

// EvalResult is the outcome of one review case.
type EvalResult struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	Pass     bool   `json:"pass"`
	Findings int    `json:"findings"`
	// Steps counts the pipeline stages that asked the model (mode,
	// analysis, severity, safeguard, implemented, Kody Rules, or for the
	// pull-request rules the evidence plan and the judgement).
	Steps   int           `json:"steps"`
	Latency time.Duration `json:"latencyNs"`
	// Property is the expected property that did not hold; Reason says
	// what was seen instead.
	Property string `json:"failedProperty,omitempty"`
	Reason   string `json:"reason,omitempty"` // why it failed
}

// The properties a review case expects, in the order they are checked.
const (
	PropertyReviewed = "the change is reviewed"
	PropertyOnLines  = "a finding on the defect's lines"
	PropertyNamesIt  = "the finding on the defect's lines names the defect"
)

// stageCounter counts the distinct model stages of one case's calls.
type stageCounter struct {
	mu     sync.Mutex
	stages map[string]bool
}

func (c *stageCounter) context(ctx context.Context) context.Context {
	c.stages = map[string]bool{}
	return llm.WithProgress(ctx, func(_, schema string) {
		c.mu.Lock()
		c.stages[schema] = true
		c.mu.Unlock()
	})
}

func (c *stageCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stages)
}

// EvalReport sums the review results.
type EvalReport struct {
	Results []EvalResult `json:"results"`
	Passed  int          `json:"passed"`
	Total   int          `json:"total"`
}

// Eval reviews every case with review and checks that a finding covers
// the defect's lines and names it.
func Eval(ctx context.Context, review func(context.Context, Input) (Result, error), cases []EvalCase) EvalReport {
	rep := EvalReport{Results: []EvalResult{}}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		res := EvalResult{Name: c.Name, Language: c.Language}
		var stages stageCounter
		start := time.Now()
		r, err := review(stages.context(ctx), Input{Path: c.File, Language: c.Language, Base: c.Before, Current: c.After})
		res.Latency = time.Since(start)
		res.Steps = stages.count()
		res.Findings = len(r.Findings)
		switch {
		case err != nil:
			res.Property, res.Reason = PropertyReviewed, err.Error()
		case r.Skipped != "":
			res.Property, res.Reason = PropertyReviewed, "skipped: "+string(r.Skipped)
		default:
			res.Pass, res.Property, res.Reason = judge(c, r.Findings)
		}
		if res.Pass {
			rep.Passed++
		}
		rep.Total++
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func judge(c EvalCase, fs []Finding) (bool, string, string) {
	if len(fs) == 0 {
		return false, PropertyOnLines, "no finding"
	}
	onLines := 0
	for _, f := range fs {
		if f.Span.EndLine+1 < c.Lines[0] || f.Span.StartLine+1 > c.Lines[1] {
			continue
		}
		onLines++
		text := strings.ToLower(f.OneSentenceSummary + "\n" + f.SuggestionContent)
		for _, k := range c.Keywords {
			if strings.Contains(text, strings.ToLower(k)) {
				return true, "", ""
			}
		}
	}
	if onLines == 0 {
		return false, PropertyOnLines, fmt.Sprintf("%d finding(s), none on lines %d-%d", len(fs), c.Lines[0], c.Lines[1])
	}
	return false, PropertyNamesIt, fmt.Sprintf("the finding on lines %d-%d mentions none of %q", c.Lines[0], c.Lines[1], c.Keywords)
}

// WriteText prints the results and the pass rate.
func (r EvalReport) WriteText(w io.Writer) {
	rs := append([]EvalResult(nil), r.Results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Language < rs[j].Language })
	for _, res := range rs {
		status := "pass"
		if !res.Pass {
			status = "FAIL " + res.Reason
		}
		fmt.Fprintf(w, "%-24s %-10s %5d ms  %s\n", res.Name, res.Language, res.Latency.Milliseconds(), status)
	}
	pct := 0.0
	if r.Total > 0 {
		pct = 100 * float64(r.Passed) / float64(r.Total)
	}
	fmt.Fprintf(w, "pass rate: %d/%d (%.0f%%)\n", r.Passed, r.Total, pct)
}
