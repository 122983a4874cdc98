package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
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
where the tool ran. The output is read to its end; of one longer than 8 MiB
the first and the last 4 MiB are kept (said on stderr). Exit status: 0, 1
when no error is recognised, 2 on a usage error, 130 or 143 when
interrupted (SIGINT, SIGTERM).
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
	data, ws, at, err := compilerOutput(ctx, stdin, stderr, "explain", firstArg(pos), *wsFlag)
	if ctx.Err() != nil {
		return 2 // told as interrupted
	}
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
	if ctx.Err() != nil {
		// Interrupted: an answer cut short is not printed as one.
		return 2
	}
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
// file name (stdin for "" or "-"), to its end (see readOutput), and
// resolves the workspace it refers to: dir, else the git root of the
// current directory, else the current directory; absolute and
// symlink-free. at is the directory the output's relative paths are
// relative to: the current directory when it lies in the workspace, else
// the workspace. What the user should know about the reading (a
// terminal waiting for input, an output cut) is told on stderr.
func compilerOutput(ctx context.Context, stdin io.Reader, stderr io.Writer, cmd, name, dir string) (data []byte, ws, at string, err error) {
	in := stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, "", "", err
		}
		defer f.Close()
		in = f
	} else if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		// Started without a file or a pipe, kodyls would otherwise look hung.
		fmt.Fprintf(stderr, "kodyls %s: reading compiler output from stdin; end with %s\n", cmd, endOfInputKey())
	}
	data, omitted, err := readOutput(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", "", ctx.Err()
		}
		return nil, "", "", fmt.Errorf("read the output: %w", err)
	}
	if omitted > 0 {
		fmt.Fprintf(stderr, "kodyls %s: the output is longer than %d MiB: its first and last %d MiB are kept, the %s between them left out\n",
			cmd, 2*outputHalf>>20, outputHalf>>20, byteSize(omitted))
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

// outputHalf is how much of the start and of the end of a long output
// explain and fix keep: a tool's failure is often printed last, after
// pages of progress or of other errors.
const outputHalf = 4 << 20

// readOutput reads r to its end, so that the tool writing into a pipe is
// never cut off (SIGPIPE), and returns it whole when it is at most
// 2×outputHalf long; a longer output is returned as its first and last
// outputHalf bytes, each cut at a line boundary, with a line between them
// that says how much was left out, which omitted counts. A cancelled ctx
// ends the wait at once.
func readOutput(ctx context.Context, r io.Reader) (data []byte, omitted int64, err error) {
	type result struct {
		data    []byte
		omitted int64
		err     error
	}
	done := make(chan result, 1)
	go func() {
		d, o, e := keepEnds(r, outputHalf)
		done <- result{d, o, e}
	}()
	select {
	case res := <-done:
		return res.data, res.omitted, res.err
	case <-ctx.Done():
		// The read goes on in the background until the process exits.
		return nil, 0, ctx.Err()
	}
}

// keepEnds is readOutput without the context, keeping half bytes at each
// end.
func keepEnds(r io.Reader, half int) (data []byte, omitted int64, err error) {
	head, err := io.ReadAll(io.LimitReader(r, int64(half)))
	if err != nil || len(head) < half {
		return head, 0, err
	}
	// The tail keeps a byte more than it returns: the one before it,
	// which tells whether its first line is whole.
	var tail []byte
	var total int64
	buf := make([]byte, 64<<10)
	for {
		n, rerr := r.Read(buf)
		tail = append(tail, buf[:n]...)
		total += int64(n)
		if len(tail) > 2*half {
			tail = append(tail[:0], tail[len(tail)-half-1:]...)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, 0, rerr
		}
	}
	if total <= int64(half) {
		return append(head, tail...), 0, nil
	}
	tail = tail[len(tail)-half-1:]
	// Whole lines only on either side of the gap (but the end of a line
	// longer than the tail).
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	} else {
		tail = tail[1:]
	}
	omitted = int64(half) + total - int64(len(head)) - int64(len(tail))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		head = append(head, '\n')
	}
	head = fmt.Appendf(head, "[kodyls: %s of output left out here]\n", byteSize(omitted))
	return append(head, tail...), omitted, nil
}

// byteSize is n bytes for people: "512 bytes", "3.2 MiB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// isTerminal reports whether f is a terminal (a character device other
// than the null device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

// endOfInputKey is how a terminal's user ends the input.
func endOfInputKey() string {
	if runtime.GOOS == "windows" {
		return "Ctrl-Z and Enter"
	}
	return "Ctrl-D"
}
