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
	"time"

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
	Name     string        `json:"name"`
	Language string        `json:"language"`
	Pass     bool          `json:"pass"`
	Rounds   int           `json:"rounds"`
	Latency  time.Duration `json:"latencyNs"`
	Reason   string        `json:"reason,omitempty"`
}

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
		res.Pass, res.Rounds, res.Reason = evalOne(ctx, filepath.Join(dir, c.Name), newFixer, c)
		res.Latency = time.Since(start)
		if res.Pass {
			rep.Passed++
		}
		rep.Total++
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func evalOne(ctx context.Context, ws string, newFixer func(string) *Fixer, c EvalCase) (bool, int, string) {
	for rel, text := range c.Files {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, 0, err.Error()
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return false, 0, err.Error()
		}
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		return false, 0, fmt.Sprintf("git init: %v: %s", err, out)
	}
	build := exec.CommandContext(ctx, "sh", "-c", c.Build)
	build.Dir = ws
	out, err := build.CombinedOutput()
	if err == nil {
		return false, 0, "the case's build passes before any fix: the case is broken"
	}
	if _, ok := err.(*exec.ExitError); !ok {
		return false, 0, fmt.Sprintf("cannot run %q (is the toolchain installed?): %v", c.Build, err)
	}
	errs := errparse.Parse(string(out), errparse.Options{Workspace: ws})
	p := errparse.Primary(errs)
	if p < 0 {
		return false, 0, "no error recognised in the build output"
	}
	res, err := newFixer(ws).Fix(ctx, Request{Error: errs[p], Output: string(out), Build: c.Build, BuildTimeout: 2 * time.Minute}, nil)
	switch {
	case err != nil:
		return false, 0, err.Error()
	case !res.Verified:
		return false, res.Rounds, fmt.Sprintf("not verified (%s) after %d round(s)", res.Verification, res.Rounds)
	}
	return true, res.Rounds, ""
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
