package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/strategies"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
)

const evalUsage = `Usage: kodyls eval rca [--json] [--strategy NAME|all]
       kodyls eval fix [--json]
       kodyls eval review [--json]

Runs canonical cases against the configured LLM endpoint, so a user can
compare models and strategies. Nothing is cached or remembered.

  rca     real outputs of go, tsc, rustc, gcc, python, javac and node through
          the RCA agent; pass when the root cause and fix name the cause.
          --strategy runs the named agent strategy and reports its agent
          steps, tokens and latency besides the pass rate; "all" compares
          every strategy.
  fix     small Go programs with one compile error each: "Fix this error"
          (plan mode) must make their build pass; needs go on PATH.
  review  changes that introduce a well-known defect (Go, Python,
          TypeScript): the review must report it on its lines.

Exit status: 0, 2 on a usage or setup error (no endpoint configured, an
unknown strategy).
`

// strategyEval is the evaluation of one strategy.
type strategyEval struct {
	Name     string         `json:"name"`
	Passed   int            `json:"passed"`
	Total    int            `json:"total"`
	PassRate float64        `json:"passRate"`
	Steps    float64        `json:"stepsPerCase"` // agent iterations, averaged over the cases the agent ran
	Tokens   int            `json:"tokens"`       // prompt and completion, every case
	Calls    int            `json:"modelCalls"`
	Latency  float64        `json:"latencyMsPerCase"`
	Errors   int            `json:"agentErrors"`
	Report   rca.EvalReport `json:"report"`
}

func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, evalUsage)
		return 2
	}
	switch args[0] {
	case "rca":
	case "fix", "review":
		return evalOther(ctx, args[0], args[1:], stdout, stderr, logger)
	default:
		fmt.Fprint(stderr, evalUsage)
		return 2
	}
	fs := flag.NewFlagSet("eval rca", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	strategy := fs.String("strategy", "", "the agent strategy to evaluate: "+strings.Join(strategies.RCANames(), ", ")+", or all to compare them")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	var names []string
	switch *strategy {
	case "":
	case "all":
		names = strategies.RCANames()
	default:
		if _, err := strategies.ForRCA(*strategy); err != nil {
			fmt.Fprintf(stderr, "kodyls eval rca: %v (or all)\n", err)
			return 2
		}
		names = []string{*strategy}
	}
	cfg := contract.Resolve(os.Getenv, nil, nil).Settings
	if !cfg.LLMConfigured() {
		fmt.Fprintln(stderr, "kodyls eval rca: no LLM endpoint configured; set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL")
		return 2
	}
	// No store: an evaluation must measure the model, not the cache.
	svc := workspace.Open(ctx, workspace.Config{Settings: cfg, Getenv: os.Getenv, Log: logger, NoStore: true})
	defer svc.Close()
	g, err := svc.Gateway()
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval rca: %v\n", err)
		return 2
	}
	cases, err := rca.EvalCases()
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval rca: %v\n", err)
		return 2
	}
	ws, err := os.MkdirTemp("", "kodyls-eval-")
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval rca: %v\n", err)
		return 2
	}
	defer os.RemoveAll(ws)
	if len(names) == 0 {
		rep := rca.Eval(ctx, svc.Explainer(ctx, ws), cases)
		if *asJSON {
			writeJSON(stdout, rep)
			return 0
		}
		rep.WriteText(stdout)
		return 0
	}
	var evals []strategyEval
	for _, name := range names {
		evals = append(evals, evalStrategy(ctx, svc, g, ws, name, cases))
	}
	if *asJSON {
		writeJSON(stdout, map[string]any{"strategies": evals})
		return 0
	}
	for _, e := range evals {
		fmt.Fprintf(stdout, "== %s\n", e.Name)
		e.Report.WriteText(stdout)
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "%-14s %9s %8s %8s %7s %12s\n", "strategy", "pass", "steps", "tokens", "calls", "latency/case")
	for _, e := range evals {
		fmt.Fprintf(stdout, "%-14s %4d/%-4d %8.1f %8d %7d %10.0fms\n", e.Name, e.Passed, e.Total, e.Steps, e.Tokens, e.Calls, e.Latency)
	}
	return 0
}

// evalStrategy runs the cases with one strategy and measures it: the
// agent's steps and latency from its runs, tokens and calls from the
// gateway's totals of the rca feature before and after.
func evalStrategy(ctx context.Context, svc *workspace.Services, g *llm.Gateway, ws, name string, cases []rca.EvalCase) strategyEval {
	s, _ := strategies.ForRCA(name)
	m := strategies.Measure(s)
	x := svc.Explainer(ctx, ws)
	x.Strategy = m
	before := g.Totals()["rca"]
	start := time.Now()
	rep := rca.Eval(ctx, x, cases)
	elapsed := time.Since(start)
	after := g.Totals()["rca"]
	e := strategyEval{Name: name, Passed: rep.Passed, Total: rep.Total, Report: rep,
		Tokens: after.PromptTokens + after.CompletionTokens - before.PromptTokens - before.CompletionTokens,
		Calls:  after.Calls - before.Calls,
	}
	if rep.Total > 0 {
		e.PassRate = float64(rep.Passed) / float64(rep.Total)
		e.Latency = float64(elapsed.Milliseconds()) / float64(rep.Total)
	}
	runs := m.Runs()
	steps := 0
	for _, r := range runs {
		steps += r.Iterations
		if r.Err != nil {
			e.Errors++
		}
	}
	if len(runs) > 0 {
		e.Steps = float64(steps) / float64(len(runs))
	}
	return e
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// otherEval is the report of `eval fix` and `eval review`: the pass rate
// and what the cases cost.
type otherEval struct {
	Passed   int     `json:"passed"`
	Total    int     `json:"total"`
	PassRate float64 `json:"passRate"`
	Tokens   int     `json:"tokens"`
	Calls    int     `json:"modelCalls"`
	Latency  float64 `json:"latencyMsPerCase"`
	Report   any     `json:"report"`
}

func evalOther(ctx context.Context, what string, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	fs := flag.NewFlagSet("eval "+what, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := contract.Resolve(os.Getenv, nil, nil).Settings
	if !cfg.LLMConfigured() {
		fmt.Fprintf(stderr, "kodyls eval %s: no LLM endpoint configured; set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL\n", what)
		return 2
	}
	// No store: an evaluation must measure the model, not the cache.
	svc := workspace.Open(ctx, workspace.Config{Settings: cfg, Getenv: os.Getenv, Log: logger, NoStore: true})
	defer svc.Close()
	g, err := svc.Gateway()
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval %s: %v\n", what, err)
		return 2
	}
	dir, err := os.MkdirTemp("", "kodyls-eval-")
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval %s: %v\n", what, err)
		return 2
	}
	defer os.RemoveAll(dir)
	before := g.Totals()[what]
	start := time.Now()
	var (
		passed, total int
		report        any
		text          func(io.Writer)
	)
	switch what {
	case "fix":
		cases, err := fix.EvalCases()
		if err != nil {
			fmt.Fprintf(stderr, "kodyls eval fix: %v\n", err)
			return 2
		}
		rep := fix.Eval(ctx, dir, svc.Fixer, cases)
		passed, total, report, text = rep.Passed, rep.Total, rep, rep.WriteText
	default:
		cases, err := filereview.EvalCases()
		if err != nil {
			fmt.Fprintf(stderr, "kodyls eval review: %v\n", err)
			return 2
		}
		rep := filereview.Eval(ctx, svc.Folder(dir).Review, cases)
		passed, total, report, text = rep.Passed, rep.Total, rep, rep.WriteText
	}
	after := g.Totals()[what]
	e := otherEval{Passed: passed, Total: total, Report: report,
		Tokens: after.PromptTokens + after.CompletionTokens - before.PromptTokens - before.CompletionTokens,
		Calls:  after.Calls - before.Calls,
	}
	if total > 0 {
		e.PassRate = float64(passed) / float64(total)
		e.Latency = float64(time.Since(start).Milliseconds()) / float64(total)
	}
	if *asJSON {
		writeJSON(stdout, e)
		return 0
	}
	text(stdout)
	fmt.Fprintf(stdout, "tokens %d, model calls %d, %.0f ms per case\n", e.Tokens, e.Calls, e.Latency)
	return 0
}
