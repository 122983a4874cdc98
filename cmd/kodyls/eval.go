package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
)

const evalUsage = `Usage: kodyls eval rca [--json]

Runs the canonical error cases (real outputs of go, tsc, rustc, gcc, python,
javac and node) through the RCA agent with the configured LLM endpoint and
prints the pass rate by language. Nothing is cached or remembered. Exit
status: 0, 2 on a usage or setup error (no endpoint configured).
`

func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	if len(args) == 0 || args[0] != "rca" {
		fmt.Fprint(stderr, evalUsage)
		return 2
	}
	fs := flag.NewFlagSet("eval rca", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg := contract.Resolve(os.Getenv, nil, nil).Settings
	if !cfg.LLMConfigured() {
		fmt.Fprintln(stderr, "kodyls eval rca: no LLM endpoint configured; set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL")
		return 2
	}
	// No store: an evaluation must measure the model, not the cache.
	svc := workspace.Open(ctx, workspace.Config{Settings: cfg, Getenv: os.Getenv, Log: logger, NoStore: true})
	defer svc.Close()
	if _, err := svc.Gateway(); err != nil {
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
	rep := rca.Eval(ctx, svc.Explainer(ctx, ws), cases)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return 0
	}
	rep.WriteText(stdout)
	return 0
}
