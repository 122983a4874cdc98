package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/strategies"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/workspace"
)

const evalUsage = `Usage: kodyls eval rca|fix|review [--json] [--strategy NAME|all]

Runs canonical cases against the configured LLM endpoint, so a user can
compare models and strategies. Nothing is cached or remembered. Each
strategy reports every case (pass, or the expected property that failed;
steps, prompt+completion tokens, model calls, latency) and its totals
(pass rate, steps per case, tokens, p50 latency). Without --strategy, or
with "all", every strategy of the command runs.

  rca     real outputs of go, tsc, rustc, gcc, python, javac and node through
          the RCA agent; pass when the root cause and fix name the cause.
          A step is an agent iteration. Strategies: %s.
  fix     small Go programs with one compile error each: "Fix this error"
          must make their build pass; needs go on PATH. A step is a plan
          step run (an investigation, an edit proposal or a verifying
          build), in every plan version. Strategies: %s.
  review  pipeline: changes that introduce a well-known defect (Go, Python,
          TypeScript), passing when a finding on the defect's lines names
          it; rewoo: change sets judged against a pull-request Kody Rule
          whose verdict needs files outside the diff. A step is a stage
          that asked the model. Strategies: %s.

Exit status: 0, 2 on a usage or setup error (no endpoint configured, an
unknown strategy, a model, key or URL the endpoint refused on every call,
an endpoint that answered no call), 130 or 143 when interrupted (SIGINT,
SIGTERM).
`

// What a step counts, per command.
var evalSteps = map[string]string{
	strategies.KindRCA:    "an agent iteration",
	strategies.KindFix:    "a plan step run (investigation, edit proposal or verifying build), in every plan version",
	strategies.KindReview: "a pipeline stage that asked the model",
}

func evalUsageText() string {
	return fmt.Sprintf(evalUsage, strings.Join(strategies.Names(strategies.KindRCA), ", "),
		strings.Join(strategies.Names(strategies.KindFix), ", "), strings.Join(strategies.Names(strategies.KindReview), ", "))
}

func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, evalUsageText())
		return 2
	}
	kind := args[0]
	if isHelp(kind) {
		fmt.Fprint(stdout, evalUsageText())
		return 0
	}
	if _, ok := evalSteps[kind]; !ok {
		fmt.Fprintf(stderr, "kodyls eval: unknown command %q; give rca, fix or review first\n\n", kind)
		fmt.Fprint(stderr, evalUsageText())
		return 2
	}
	names := strategies.Names(kind)
	fs := flag.NewFlagSet("eval "+kind, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	strategy := fs.String("strategy", "all", "the strategy to evaluate: "+strings.Join(names, ", ")+", or all to compare them")
	pos, code, ok := parseCommand(fs, args[1:], evalUsageText(), stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls eval %s: unexpected argument %q\n", kind, pos[0])
		return 2
	}
	if *strategy != "all" {
		if err := strategies.Known(kind, *strategy); err != nil {
			fmt.Fprintf(stderr, "kodyls eval %s: %v (or all)\n", kind, err)
			return 2
		}
		names = []string{*strategy}
	}
	res := resolveSettings("eval "+kind, stderr)
	cfg := res.Settings
	if why := res.WhyNoModel(); why != "" {
		fmt.Fprintf(stderr, "kodyls eval %s: %s\n", kind, why)
		return 2
	}
	// No store: an evaluation must measure the model, not the cache.
	svc := openServices(ctx, workspace.Config{Settings: cfg, Getenv: os.Getenv, Log: logger, NoStore: true})
	defer svc.Close()
	g, err := svc.Gateway()
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval %s: %v\n", kind, err)
		return 2
	}
	dir, err := os.MkdirTemp("", "kodyls-eval-")
	if err != nil {
		fmt.Fprintf(stderr, "kodyls eval %s: %v\n", kind, err)
		return 2
	}
	defer os.RemoveAll(dir)
	e := evaluator{svc: svc, meter: strategies.Meter{Gateway: g, Feature: kind}, step: evalSteps[kind]}
	var evals []strategies.Summary
	for _, name := range names {
		// Each strategy works in its own directory: the cases' files are
		// written afresh and no strategy sees another's edits.
		sdir := filepath.Join(dir, name)
		var s strategies.Summary
		switch kind {
		case strategies.KindRCA:
			s, err = e.rca(ctx, sdir, name)
		case strategies.KindFix:
			s, err = e.fix(ctx, sdir, name)
		default:
			s, err = e.review(ctx, sdir, name)
		}
		if ctx.Err() != nil {
			return 2 // interrupted: a table of the cases run so far would pass for a result
		}
		if err != nil {
			fmt.Fprintf(stderr, "kodyls eval %s: %v\n", kind, err)
			return 2
		}
		// A model, key or URL the endpoint refused on every call measures
		// nothing: a set-up error, told once, as for a missing model. So
		// does an endpoint that never answered.
		if se, every := g.SetupFailure(); every {
			fmt.Fprintf(stderr, "kodyls eval %s: %v\n", kind, se)
			return 2
		}
		if why := neverAnswered(g, kind); why != "" {
			fmt.Fprintf(stderr, "kodyls eval %s: %s\n", kind, why)
			return 2
		}
		evals = append(evals, s)
	}
	if *asJSON {
		writeJSON(stdout, map[string]any{"command": kind, "step": e.step, "model": g.Model(evalTask[kind]), "strategies": evals})
		return 0
	}
	fmt.Fprintf(stdout, "kodyls eval %s, model %s\n\n", kind, g.Model(evalTask[kind]))
	for _, s := range evals {
		s.WriteText(stdout)
		fmt.Fprintln(stdout)
	}
	strategies.WriteComparison(stdout, evals)
	return 0
}

// evalTask is the model class each command's main calls use.
var evalTask = map[string]llm.TaskClass{
	strategies.KindRCA:    llm.TaskAgent,
	strategies.KindFix:    llm.TaskAgent,
	strategies.KindReview: llm.TaskReview,
}

// evaluator runs one command's cases, one at a time, so that the
// gateway's totals around a case are that case's cost.
type evaluator struct {
	svc   *workspace.Services
	meter strategies.Meter
	step  string
}

// start begins measuring a case, as the meter does, counting only the
// calls that reached the endpoint: a call the open circuit breaker
// refused made no request. Every call that went out made at least one
// request, so a case has at most as many calls as requests.
func (e evaluator) start() func(c *strategies.CaseRun) {
	before := e.meter.Gateway.Totals()[e.meter.Feature]
	done := e.meter.Start()
	return func(c *strategies.CaseRun) {
		done(c)
		after := e.meter.Gateway.Totals()[e.meter.Feature]
		c.Calls = min(c.Calls, after.Attempts-before.Attempts)
	}
}

// neverAnswered says why an evaluation measured nothing when the
// endpoint answered none of its calls (refused connections, silence), or
// returns "".
func neverAnswered(g *llm.Gateway, feature string) string {
	t := g.Totals()[feature]
	st := g.Status()
	if t.Calls == 0 || t.PromptTokens+t.CompletionTokens > 0 || st.State == llm.StateOK {
		return ""
	}
	return fmt.Sprintf("LLM endpoint %s never answered (%s): nothing was measured; check that it is running and that the base URL is right (kodyls doctor checks both)",
		st.Endpoint, st.LastError)
}

func (e evaluator) rca(ctx context.Context, dir, name string) (strategies.Summary, error) {
	s, err := strategies.ForRCA(name)
	if err != nil {
		return strategies.Summary{}, err
	}
	cases, err := rca.EvalCases()
	if err != nil {
		return strategies.Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return strategies.Summary{}, err
	}
	m := strategies.Measure(s)
	x := e.svc.Explainer(ctx, dir)
	x.Strategy = m
	var runs []strategies.CaseRun
	agentErrors := 0
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		seen := len(m.Runs())
		done := e.start()
		rep := rca.Eval(ctx, x, []rca.EvalCase{c})
		run := strategies.CaseRun{Name: c.Name, Language: c.Language}
		done(&run)
		for _, r := range m.Runs()[seen:] {
			run.Steps += r.Iterations
			if r.Err != nil {
				agentErrors++
			}
		}
		if len(rep.Results) == 1 {
			res := rep.Results[0]
			run.Pass, run.Property, run.Reason = res.Pass, res.Property, res.Reason
		}
		runs = append(runs, run)
	}
	sum := strategies.Summarize(name, e.step, runs)
	sum.Errors = agentErrors
	return sum, nil
}

func (e evaluator) fix(ctx context.Context, dir, name string) (strategies.Summary, error) {
	s, err := strategies.ForFix(name)
	if err != nil {
		return strategies.Summary{}, err
	}
	cases, err := fix.EvalCases()
	if err != nil {
		return strategies.Summary{}, err
	}
	newFixer := func(ws string) *fix.Fixer {
		f := e.svc.Fixer(ws)
		s.Configure(f)
		return f
	}
	var runs []strategies.CaseRun
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		done := e.start()
		rep := fix.Eval(ctx, dir, newFixer, []fix.EvalCase{c})
		run := strategies.CaseRun{Name: c.Name, Language: c.Language}
		done(&run)
		if len(rep.Results) == 1 {
			res := rep.Results[0]
			run.Pass, run.Property, run.Reason, run.Steps = res.Pass, res.Property, res.Reason, res.Steps
		}
		runs = append(runs, run)
	}
	return strategies.Summarize(name, e.step, runs), nil
}

func (e evaluator) review(ctx context.Context, dir, name string) (strategies.Summary, error) {
	s, err := strategies.ForReview(name)
	if err != nil {
		return strategies.Summary{}, err
	}
	var runs []strategies.CaseRun
	add := func(res filereview.EvalResult, done func(*strategies.CaseRun)) {
		run := strategies.CaseRun{Name: res.Name, Language: res.Language, Pass: res.Pass, Property: res.Property, Reason: res.Reason, Steps: res.Steps}
		done(&run)
		runs = append(runs, run)
	}
	switch s.Scope {
	case strategies.ScopePullRequest:
		cases, err := filereview.PullRequestEvalCases()
		if err != nil {
			return strategies.Summary{}, err
		}
		check := func(ctx context.Context, root string, inputs []filereview.Input) (map[string][]filereview.Finding, error) {
			f := e.svc.Folder(root)
			if _, errs := f.Reload(ctx); len(errs) > 0 {
				return nil, fmt.Errorf("the case's rule does not load: %v", errs[0])
			}
			return f.CheckPullRequest(ctx, inputs)
		}
		for _, c := range cases {
			if ctx.Err() != nil {
				break
			}
			done := e.start()
			rep := filereview.EvalPullRequest(ctx, dir, check, []filereview.PullRequestCase{c})
			if len(rep.Results) == 1 {
				add(rep.Results[0], done)
			}
		}
	default:
		cases, err := filereview.EvalCases()
		if err != nil {
			return strategies.Summary{}, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return strategies.Summary{}, err
		}
		review := e.svc.Folder(dir).Review
		for _, c := range cases {
			if ctx.Err() != nil {
				break
			}
			done := e.start()
			rep := filereview.Eval(ctx, review, []filereview.EvalCase{c})
			if len(rep.Results) == 1 {
				add(rep.Results[0], done)
			}
		}
	}
	return strategies.Summarize(name, e.step, runs), nil
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
