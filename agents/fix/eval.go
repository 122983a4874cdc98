package fix

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/analysis/errparse"
)

// The canonical fix cases: small programs with one compile error each and
// the build that shows it. A case passes when the fix's edits make that
// build pass in a scratch copy (the fix's own verification).
//
//go:embed evalcases/cases.json
var evalFS embed.FS

// EvalCase is one canonical broken program.
type EvalCase struct {
	Name     string            `json:"name"`
	Language string            `json:"language"`
	Build    string            `json:"build"`
	Files    map[string]string `json:"files"`
}

// EvalCases returns the embedded canonical fix cases.
func EvalCases() ([]EvalCase, error) {
	raw, err := evalFS.ReadFile("evalcases/cases.json")
	if err != nil {
		return nil, err
	}
	var cases []EvalCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return nil, fmt.Errorf("fix eval cases: %w", err)
	}
	return cases, nil
}

// EvalResult is the outcome of one fix case.
type EvalResult struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	Pass     bool   `json:"pass"`
	Rounds   int    `json:"rounds"`
	// Steps counts the plan steps executed (done or failed), in every
	// plan version: investigations, edit proposals, verifying builds.
	Steps   int           `json:"steps"`
	Latency time.Duration `json:"latencyNs"`
	// Property is the expected property that did not hold; Reason says
	// what happened instead.
	Property string `json:"failedProperty,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// The properties a fix case expects, in the order they are checked.
const (
	PropertyCaseBreaks = "the case's build fails before the fix with an error kodyls recognises"
	PropertyFixRuns    = "the fix completes without an error"
	PropertyBuilds     = "the build passes with the fix's edits"
)

// EvalReport sums the fix results.
type EvalReport struct {
	Results []EvalResult `json:"results"`
	Passed  int          `json:"passed"`
	Total   int          `json:"total"`
}

// Eval writes each case into a fresh git repository under dir, runs its
// build for the real compiler output, and fixes the primary error with the
// Fixer newFixer returns for that workspace.
func Eval(ctx context.Context, dir string, newFixer func(workspace string) *Fixer, cases []EvalCase) EvalReport {
	rep := EvalReport{Results: []EvalResult{}}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		res := EvalResult{Name: c.Name, Language: c.Language}
		start := time.Now()
		evalOne(ctx, filepath.Join(dir, c.Name), newFixer, c, &res)
		res.Latency = time.Since(start)
		if res.Pass {
			rep.Passed++
		}
		rep.Total++
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func evalOne(ctx context.Context, ws string, newFixer func(string) *Fixer, c EvalCase, res *EvalResult) {
	fail := func(property, reason string) { res.Property, res.Reason = property, reason }
	for rel, text := range c.Files {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fail(PropertyCaseBreaks, err.Error())
			return
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			fail(PropertyCaseBreaks, err.Error())
			return
		}
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		fail(PropertyCaseBreaks, fmt.Sprintf("git init: %v: %s", err, out))
		return
	}
	build := exec.CommandContext(ctx, "sh", "-c", c.Build)
	build.Dir = ws
	out, err := build.CombinedOutput()
	if err == nil {
		fail(PropertyCaseBreaks, "the case's build passes before any fix: the case is broken")
		return
	}
	if _, ok := err.(*exec.ExitError); !ok {
		fail(PropertyCaseBreaks, fmt.Sprintf("cannot run %q (is the toolchain installed?): %v", c.Build, err))
		return
	}
	errs := errparse.Parse(string(out), errparse.Options{Workspace: ws})
	p := errparse.Primary(errs)
	if p < 0 {
		fail(PropertyCaseBreaks, "no error recognised in the build output")
		return
	}
	var steps atomic.Int64
	count := func(e agent.Event) {
		if e.Kind == agent.EventStepDone {
			steps.Add(1)
		}
	}
	r, err := newFixer(ws).Fix(ctx, Request{Error: errs[p], Output: string(out), Build: c.Build, BuildTimeout: 2 * time.Minute}, count)
	res.Steps = int(steps.Load())
	switch {
	case err != nil:
		fail(PropertyFixRuns, err.Error())
	case !r.Verified:
		res.Rounds = r.Rounds
		why := fmt.Sprintf("not verified (%s) after %d round(s)", r.Verification, r.Rounds)
		if r.Note != "" {
			why += ": " + r.Note
		}
		fail(PropertyBuilds, why)
	default:
		res.Rounds, res.Pass = r.Rounds, true
	}
}

// WriteText prints the results and the pass rate.
func (r EvalReport) WriteText(w io.Writer) {
	for _, res := range r.Results {
		status := "pass"
		if !res.Pass {
			status = "FAIL " + strings.TrimSpace(res.Reason)
		}
		fmt.Fprintf(w, "%-22s %-8s %d round(s) %6d ms  %s\n", res.Name, res.Language, res.Rounds, res.Latency.Milliseconds(), status)
	}
	pct := 0.0
	if r.Total > 0 {
		pct = 100 * float64(r.Passed) / float64(r.Total)
	}
	fmt.Fprintf(w, "pass rate: %d/%d (%.0f%%)\n", r.Passed, r.Total, pct)
}
