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
	"sort"
	"strings"
	"time"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/index"
)

const historyUsage = `Usage:
  kodyls history search QUERY [--json] [--limit N]
  kodyls history stats [--json]
  kodyls history forget (--workspace DIR | --all)

Searches, summarises or deletes the local history of build errors that
kodyls explain and the language server remember. forget needs an explicit
--workspace or --all, so the whole history is never wiped by accident;
--workspace DIR forgets the errors of DIR's git repository (where kodyls
explain records them) and of DIR itself.
Exit status: 0, 1 when the history cannot be read or written, 2 on a usage
error.
`

func historyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "kodyls history: missing subcommand\n\n"+historyUsage)
		return 2
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "search":
		return historySearch(ctx, rest, stdout, stderr)
	case "stats":
		return historyStats(ctx, rest, stdout, stderr)
	case "forget":
		return historyForget(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, historyUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "kodyls history: unknown subcommand %q\n\n%s", sub, historyUsage)
		return 2
	}
}

// parseHistoryArgs parses flags that may come before or after the
// positional arguments ("search QUERY --json" as well as "search --json
// QUERY"); the flag package alone stops at the first positional one.
func parseHistoryArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		// What follows "--" is positional, whatever it looks like.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		args = rest
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newHistoryFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("history "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, historyUsage); fs.PrintDefaults() }
	return fs
}

// openHistory opens the history through the composition root. The
// returned close function must be called; the index is optional for stats
// and forget.
func openHistory(ctx context.Context, cmd string, stderr io.Writer, needIndex bool) (index.History, func(), error) {
	// slog's default logger writes where the log package does: stderr or
	// --log-file. Warnings such as a rebuilt search index reach the user.
	res := resolveSettings("history "+cmd, stderr)
	svc := openServices(ctx, workspace.Config{Settings: res.Settings, Getenv: os.Getenv, Log: slog.Default()})
	h, err := svc.OpenHistory(ctx, needIndex)
	if err != nil {
		svc.Close()
		return nil, nil, err
	}
	return h, svc.Close, nil
}

func historySearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newHistoryFlags("search", stderr)
	asJSON := fs.Bool("json", false, "print the matches as a JSON array")
	limit := fs.Int("limit", 10, "show at most this many matches")
	pos, code, ok := parseCommand(fs, args, historyUsage, stdout, stderr)
	if !ok {
		return code
	}
	q := strings.TrimSpace(strings.Join(pos, " "))
	if q == "" {
		fmt.Fprintln(stderr, "kodyls history search: give a QUERY, e.g. kodyls history search \"declared and not used\"")
		return 2
	}
	if *limit <= 0 {
		fmt.Fprintln(stderr, "kodyls history search: --limit must be positive")
		return 2
	}
	h, closeFn, err := openHistory(ctx, "search", stderr, true)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls history search: %v\n", err)
		return 1
	}
	defer closeFn()
	entries, err := h.Search(ctx, "", q, *limit)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls history search: %v\n", err)
		return 1
	}
	if *asJSON {
		out := make([]historyEntryJSON, len(entries))
		for i, e := range entries {
			out[i] = toEntryJSON(e)
		}
		writeHistoryJSON(stdout, out)
		return 0
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "No remembered error matches %q.\n", q)
		return 0
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeEntryText(stdout, e)
	}
	return 0
}

// historyEntryJSON is the JSON form of one remembered error. It is its own
// type so the output keeps stable, camelCase names whatever index does.
type historyEntryJSON struct {
	ID          int64                   `json:"id"`
	Workspace   string                  `json:"workspace"`
	Tool        string                  `json:"tool"`
	Language    string                  `json:"language,omitempty"`
	Code        string                  `json:"code,omitempty"`
	Message     string                  `json:"message"`
	File        string                  `json:"file,omitempty"`
	Fingerprint string                  `json:"fingerprint"`
	Count       int                     `json:"count"`
	FirstSeen   time.Time               `json:"firstSeen"`
	LastSeen    time.Time               `json:"lastSeen"`
	Score       float64                 `json:"score"`
	Latest      *historyExplanationJSON `json:"latest,omitempty"`
}

type historyExplanationJSON struct {
	// GivenFor is the message of the error the explanation answered,
	// which may be another error of the kind than the latest one.
	GivenFor   string    `json:"givenFor,omitempty"`
	RootCause  string    `json:"rootCause"`
	Steps      []string  `json:"steps"`
	Confidence float64   `json:"confidence"`
	Source     string    `json:"source"`
	Model      string    `json:"model,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	Feedback   int       `json:"feedback"`
}

func toEntryJSON(e index.HistoryEntry) historyEntryJSON {
	out := historyEntryJSON{
		ID: e.ErrorID, Workspace: e.Workspace, Tool: e.Tool, Language: e.Language, Code: e.Code,
		Message: e.Message, File: e.File, Fingerprint: e.Fingerprint, Count: e.Count,
		FirstSeen: e.FirstSeen.UTC(), LastSeen: e.LastSeen.UTC(), Score: e.Score,
	}
	if x := e.Latest; x != nil {
		steps := x.Steps
		if steps == nil {
			steps = []string{}
		}
		out.Latest = &historyExplanationJSON{
			GivenFor: x.Message, RootCause: x.RootCause, Steps: steps, Confidence: x.Confidence, Source: x.Source,
			Model: x.Model, CreatedAt: x.CreatedAt.UTC(), Feedback: x.Feedback,
		}
	}
	return out
}

func writeEntryText(w io.Writer, e index.HistoryEntry) {
	code := ""
	if e.Code != "" {
		code = " [" + e.Code + "]"
	}
	fmt.Fprintf(w, "%s error%s: %s\n", e.Tool, code, e.Message)
	if e.File != "" {
		fmt.Fprintf(w, "  file:       %s\n", e.File)
	}
	fmt.Fprintf(w, "  workspace:  %s\n", e.Workspace)
	fmt.Fprintf(w, "  seen:       %d time(s), last %s\n", e.Count, e.LastSeen.Local().Format("2006-01-02 15:04"))
	if x := e.Latest; x != nil && x.RootCause != "" {
		fmt.Fprintf(w, "  root cause: %s (%s, confidence %.0f%%)\n", x.RootCause, x.Source, x.Confidence*100)
		if x.Message != "" && x.Message != e.Message {
			// An error is a kind of error: the explanation may answer
			// another one of the kind than the latest.
			fmt.Fprintf(w, "  given for:  %s\n", x.Message)
		}
	} else {
		fmt.Fprintln(w, "  root cause: not explained yet")
	}
}

func historyStats(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newHistoryFlags("stats", stderr)
	asJSON := fs.Bool("json", false, "print the statistics as a JSON object")
	pos, code, ok := parseCommand(fs, args, historyUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls history stats: unexpected argument %q\n", pos[0])
		return 2
	}
	// Counting needs only the store, so a busy index does not block it.
	h, closeFn, err := openHistory(ctx, "stats", stderr, false)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls history stats: %v\n", err)
		return 1
	}
	defer closeFn()
	s, err := h.Stats(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls history stats: %v\n", err)
		return 1
	}
	if *asJSON {
		writeHistoryJSON(stdout, struct {
			Errors       int            `json:"errors"`
			Occurrences  int            `json:"occurrences"`
			Explanations int            `json:"explanations"`
			ByTool       map[string]int `json:"byTool"`
			BySource     map[string]int `json:"bySource"`
		}{s.Errors, s.Occurrences, s.Explanations, s.ByTool, s.BySource})
		return 0
	}
	fmt.Fprintf(stdout, "errors:       %d distinct, %d occurrences\n", s.Errors, s.Occurrences)
	fmt.Fprintf(stdout, "explanations: %d\n", s.Explanations)
	writeHistoryCounts(stdout, "by tool:", s.ByTool)
	writeHistoryCounts(stdout, "by source:", s.BySource)
	return 0
}

// writeHistoryCounts prints a map sorted by key, so the output is stable.
func writeHistoryCounts(w io.Writer, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, title)
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(unknown)"
		}
		fmt.Fprintf(w, "  %-12s %d\n", name, m[k])
	}
}

func historyForget(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newHistoryFlags("forget", stderr)
	ws := fs.String("workspace", "", "forget the errors of this workspace directory")
	all := fs.Bool("all", false, "forget the errors of every workspace")
	pos, code, ok := parseCommand(fs, args, historyUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls history forget: unexpected argument %q (use --workspace DIR)\n", pos[0])
		return 2
	}
	// History.Forget("") deletes everything, so an empty workspace
	// must only ever reach it through an explicit --all.
	if (*ws == "") == !*all {
		fmt.Fprintln(stderr, "kodyls history forget: give exactly one of --workspace DIR or --all")
		return 2
	}
	// The workspace of DIR as explain records it: the root of its git
	// repository, so that "--workspace ." forgets from a subdirectory
	// too; and DIR itself, which an editor may have opened as a workspace
	// folder of its own.
	var targets []string
	if !*all {
		dir, err := historyWorkspace(*ws)
		if err != nil {
			fmt.Fprintf(stderr, "kodyls history forget: %v\n", err)
			return 2
		}
		targets = []string{dir}
		if top, ok, err := changes.RepoRoot(ctx, dir); err == nil && ok && top != dir {
			targets = []string{top, dir}
		}
	}
	h, closeFn, err := openHistory(ctx, "forget", stderr, false)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls history forget: %v\n", err)
		return 1
	}
	defer closeFn()
	if *all {
		n, err := h.Forget(ctx, "")
		if err != nil {
			fmt.Fprintf(stderr, "kodyls history forget: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Forgot %d error(s) in every workspace.\n", n)
		return 0
	}
	total := 0
	for _, t := range targets {
		n, err := h.Forget(ctx, t)
		if err != nil {
			fmt.Fprintf(stderr, "kodyls history forget: %v\n", err)
			return 1
		}
		total += n
	}
	if len(targets) > 1 {
		fmt.Fprintf(stdout, "Forgot %d error(s) in %s (the repository of %s).\n", total, targets[0], targets[1])
	} else {
		fmt.Fprintf(stdout, "Forgot %d error(s) in %s.\n", total, targets[0])
	}
	return 0
}

// historyWorkspace turns DIR into the absolute, symlink-free path explain
// records workspaces under, so that "." or a symlinked path still matches.
// A directory that no longer exists is accepted as given (made absolute):
// its history may well outlive it.
func historyWorkspace(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return abs, nil
	}
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	return real, nil
}

func writeHistoryJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
