package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/strategies"
	"github.com/kodustech/kodyls/analysis/workspace"
)

const explainUsage = `Usage: kodyls explain [--json] [--offline] [--workspace DIR] [--strategy NAME] [--verbose] [FILE|-]

Explains the primary error of compiler or test output (read from FILE, or
stdin with "-" or no argument): the parsed errors, similar past errors from
the local history, and a root cause with fix steps and a confidence. With an
LLM configured (and without --offline) an agent reads the code to find the
cause; otherwise the answer comes from history or built-in guidance, and says
so. --strategy picks how the agent works (routed, the default: react,
escalating to plan-execute; react; plan-execute; rewoo); --verbose prints the agent's steps to stderr as they happen.
Relative paths in the output are read as relative to the current directory
(to the workspace when the current directory is outside it), so run it
where the tool ran. Exit status: 0, 1 when no error is recognised, 2 on a
usage error.
`

func explainCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	offline := fs.Bool("offline", false, "do not use the LLM")
	strategy := fs.String("strategy", "", "the agent strategy: "+strings.Join(strategies.RCANames(), ", ")+" (default "+strategies.DefaultRCA+")")
	verbose := fs.Bool("verbose", false, "print the agent's steps (plan, tool calls, results) to stderr")
	wsFlag := fs.String("workspace", "", "the workspace the output refers to (default: the git root of the current directory, else the current directory)")
	pos, code, ok := parseCommand(fs, args, explainUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		fmt.Fprintln(stderr, "kodyls explain: give at most one FILE (or - for stdin)")
		return 2
	}
	var chosen agent.Strategy[rca.ModelAnswer]
	if *strategy != "" {
		s, err := strategies.ForRCA(*strategy)
		if err != nil {
			fmt.Fprintf(stderr, "kodyls explain: %v\n", err)
			return 2
		}
		chosen = s
	}
	data, ws, at, err := compilerOutput(ctx, stdin, firstArg(pos), *wsFlag)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls explain: %v\n", err)
		return 2
	}

	res := resolveSettings("explain", stderr)
	svc := openServices(ctx, workspace.Config{Settings: res.Settings, Getenv: os.Getenv, Log: logger, Offline: *offline})
	defer svc.Close()
	if svc.StoreErr != nil {
		logger.Warn("nothing is remembered", "error", svc.StoreErr)
	}
	if _, err := svc.Gateway(); err != nil {
		fmt.Fprintf(stderr, "kodyls explain: %v\n", err)
		return 2
	}
	x := svc.Explainer(ctx, ws)
	x.Dir = at
	x.NoModel = res.WhyNoModel()
	if chosen != nil {
		x.Strategy = chosen
	}
	var emit func(agent.Event)
	if *verbose {
		emit = func(e agent.Event) { writeEvent(stderr, e) }
	}
	rep, err := x.Explain(ctx, string(data), *offline, emit)
	if errors.Is(err, rca.ErrNoError) {
		if *asJSON {
			writeExplainJSON(stdout, rep)
		}
		fmt.Fprintf(stderr, "kodyls explain: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "kodyls explain: %v\n", err)
		return 2
	}
	if *asJSON {
		writeExplainJSON(stdout, rep)
		return 0
	}
	writeExplainText(stdout, rep)
	return 0
}

func writeExplainJSON(w io.Writer, rep *rca.Report) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

func writeExplainText(w io.Writer, rep *rca.Report) {
	e := rep.Errors[rep.Primary]
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
		if e.Column > 0 {
			loc = fmt.Sprintf("%s:%d", loc, e.Column)
		}
	}
	code := ""
	if e.Code != "" {
		code = " [" + e.Code + "]"
	}
	fmt.Fprintf(w, "%s error%s at %s: %s\n", e.Tool, code, loc, e.Message)
	if n := len(rep.Errors); n > 1 {
		fmt.Fprintf(w, "(the first of %d errors in the output)\n", n)
	}
	a := rep.RCA
	fmt.Fprintf(w, "\nRoot cause (%s, confidence %.0f%%):\n  %s\n", a.Source, a.Confidence*100, a.RootCause)
	if len(a.FixGuidelines) > 0 {
		fmt.Fprintln(w, "\nFix:")
		for i, s := range a.FixGuidelines {
			fmt.Fprintf(w, "  %d. %s\n", i+1, s)
		}
	}
	if len(rep.Similar) > 0 {
		fmt.Fprintln(w, "\nSimilar past errors:")
		for _, s := range rep.Similar {
			kind := "similar"
			if s.Exact {
				kind = "same"
			}
			line := fmt.Sprintf("  - %s (%s, seen %d×)", s.Message, kind, s.Count)
			if s.RootCause != "" {
				line += ": " + s.RootCause
			}
			fmt.Fprintln(w, line)
		}
	}
	switch {
	case a.Iterations > 0 && len(a.ToolsUsed) > 0:
		fmt.Fprintf(w, "\n%d agent steps; tools used: %s\n", a.Iterations, strings.Join(a.ToolsUsed, ", "))
	case a.Iterations > 0:
		fmt.Fprintf(w, "\n%d agent steps; no tool used\n", a.Iterations)
	}
	if a.Path != "" {
		fmt.Fprintf(w, "Agent path: %s\n", a.Path)
	}
	if rep.Docs != "" {
		lines := strings.Split(strings.TrimSpace(rep.Docs), "\n")
		if len(lines) > 15 {
			lines = append(lines[:15], "…")
		}
		fmt.Fprintf(w, "\nToolchain documentation:\n  %s\n", strings.Join(lines, "\n  "))
	}
	if rep.Note != "" {
		fmt.Fprintf(w, "\nNote: %s\n", rep.Note)
	}
}

// writeEvent prints one agent event as one line: the node, the kind, the
// tool and its arguments, and what the event says, each shortened, so that
// --verbose follows a run without dumping tool output or whole plans.
func writeEvent(w io.Writer, e agent.Event) {
	line := "agent: "
	if e.Node != "" {
		line += e.Node + " "
	}
	line += e.Kind
	if e.Tool != "" {
		line += " " + e.Tool
	}
	if e.Input != "" && e.Kind == agent.EventAction {
		line += " " + clip(e.Input, 80)
	}
	if text := clip(e.Text, 160); text != "" {
		line += ": " + text
	}
	fmt.Fprintln(w, line)
}

// clip joins s onto one line and shortens it to at most n bytes, cutting
// at a rune boundary.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …"
}

// compilerOutput reads the output `explain` and `fix` work on, from the
// file name (stdin for "" or "-"), at most 8 MB, and resolves the
// workspace it refers to: dir, else the git root of the current
// directory, else the current directory; absolute and symlink-free. at is
// the directory the output's relative paths are relative to: the current
// directory when it lies in the workspace, else the workspace.
func compilerOutput(ctx context.Context, stdin io.Reader, name, dir string) (data []byte, ws, at string, err error) {
	in := stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, "", "", err
		}
		defer f.Close()
		in = f
	}
	data, err = io.ReadAll(io.LimitReader(in, 8<<20))
	if err != nil {
		return nil, "", "", fmt.Errorf("read the output: %w", err)
	}
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, "", "", fmt.Errorf("--workspace %s: not a directory", dir)
		}
	}
	cwd, _ := os.Getwd()
	ws = dir
	if ws == "" {
		ws = cwd
		if top, err := gitOutput(ctx, cwd, "rev-parse", "--show-toplevel"); err == nil {
			ws = strings.TrimSpace(top)
		}
	}
	ws = realPath(ws)
	at = ws
	if cwd != "" {
		if here := realPath(cwd); insideDir(ws, here) {
			at = here
		}
	}
	return data, ws, at, nil
}

// realPath is p absolute and with its symbolic links resolved, as far as
// that can be done.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

// insideDir reports whether p is dir or lies under it.
func insideDir(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
