package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/langid"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
)

const rulesUsage = `Usage:
  kodyls rules list [--json] [--workspace DIR]
  kodyls rules check [--json] [--workspace DIR]
  kodyls rules test RULE [FILE...] [--json] [--workspace DIR]

Tools for the authors of a workspace's Kody Rules.

  list   every rule with its source, file, scope, path globs, severity,
         whether it is enabled, how it is checked (a local detector or the
         model) and the tokens its text costs in a model prompt; then the
         tokens of the active rule set. Broken rule files are listed too.
         With a model configured, other assistants' files (AGENTS.md,
         CLAUDE.md, .cursorrules…) are split into rules by the model,
         once per content; such rules show "(model split)" after their
         source ("split": true in --json).
  check  validate every rule file and print file:line:col: message for each
         problem; exit 1 when a rule file is broken (usable in CI).
  test   run one rule over whole FILEs (default: the files changed in the
         working tree) and print file:line:col: title: match; exit 1 when
         it finds violations. A rule with a detector runs it locally; a
         rule without one is judged by the model, one call per file, or,
         for a pull_request rule, one call over the files together (the
         named FILEs whole, else the changes against HEAD), as reviews
         judge it; with no model configured it says so and exits 0. RULE
         is a uuid, a unique prefix of one, or a part of a title.

The workspace is DIR, else the git root of the current directory, else the
current directory. Exit status: 0, 1 as said above, 2 on a usage error.
`

// defaultTokenModel is the model whose tokenizer counts rule tokens when the
// settings name none.
const defaultTokenModel = "gpt-4o"

func rulesCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "kodyls rules: missing subcommand\n\n"+rulesUsage)
		return 2
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list":
		return rulesList(ctx, rest, stdout, stderr, logger)
	case "check":
		return rulesCheck(ctx, rest, stdout, stderr, logger)
	case "test":
		return rulesTest(ctx, rest, stdout, stderr, logger)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, rulesUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "kodyls rules: unknown subcommand %q\n\n%s", sub, rulesUsage)
		return 2
	}
}

// rulesFlags are the flags every rules subcommand takes.
type rulesFlags struct {
	fs        *flag.FlagSet
	json      *bool
	workspace *string
}

func newRulesFlags(name string, stderr io.Writer) rulesFlags {
	fs := flag.NewFlagSet("rules "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, rulesUsage); fs.PrintDefaults() }
	return rulesFlags{
		fs:        fs,
		json:      fs.Bool("json", false, "print the result as JSON"),
		workspace: fs.String("workspace", "", "the workspace whose rules to read (default: the git root of the current directory, else the current directory)"),
	}
}

// rulesWorkspace is a workspace opened through the composition root with
// its rules loaded.
type rulesWorkspace struct {
	res    contract.Resolved
	svc    *workspace.Services
	folder *workspace.Folder
	rules  []*rules.Rule
	errs   []*rules.LoadError
}

// openRules resolves the workspace root and loads its rules. Without
// withModel the model is never called and nothing is stored: the command
// only reads rule files. With it, and a model configured, the assistants'
// files are split by the model first (once per content: the split is kept
// in the local store).
func openRules(ctx context.Context, cmd string, stderr io.Writer, dir string, logger *slog.Logger, withModel bool) (*rulesWorkspace, error) {
	root, err := rulesRoot(ctx, dir)
	if err != nil {
		return nil, err
	}
	res := resolveSettings("rules "+cmd, stderr)
	settings := res.Settings
	withModel = withModel && settings.LLMConfigured()
	svc := openServices(ctx, workspace.Config{
		Settings: settings,
		Getenv:   os.Getenv, Log: logger, NoStore: !withModel, Offline: !withModel,
	})
	folder := svc.Folder(root)
	rs, errs := folder.ReloadAndSplit(ctx)
	return &rulesWorkspace{res: res, svc: svc, folder: folder, rules: rs, errs: errs}, nil
}

// rulesRoot is the absolute, symlink-free workspace root: dir, else the git
// root of the current directory, else the current directory.
func rulesRoot(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no current directory: %w; pass --workspace DIR", err)
		}
		dir = cwd
		if top, err := gitOutput(ctx, cwd, "rev-parse", "--show-toplevel"); err == nil {
			dir = strings.TrimSpace(top)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %q is not a directory: pass --workspace DIR", dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// ruleJSON is one rule as `kodyls rules list --json` prints it.
type ruleJSON struct {
	UUID     string   `json:"uuid"`
	Title    string   `json:"title"`
	Source   string   `json:"source"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Scope    string   `json:"scope"`
	Paths    []string `json:"paths"`
	Severity string   `json:"severity"`
	Enabled  bool     `json:"enabled"`
	Check    string   `json:"check"`
	Tokens   int      `json:"tokens"`
	// Split is set for a rule the model split out of an assistant's file.
	Split bool `json:"split"`
}

// problemJSON is a problem of a rule file. Line and Column are 1-based, 0
// when unknown.
type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
	// Warning is set for a problem that does not stop the rule from
	// loading; only `kodyls rules check` reports those.
	Warning bool `json:"warning,omitempty"`
}

func toProblemsJSON(errs []*rules.LoadError) []problemJSON {
	out := make([]problemJSON, 0, len(errs))
	for _, le := range errs {
		out = append(out, problemJSON{File: le.File, Line: le.Line, Column: le.Column, Message: le.Msg, Warning: le.Warning})
	}
	return out
}

// problemLine formats a problem as file:line:col: message, with
// "warning: " before the message of a warning.
func problemLine(le *rules.LoadError) string {
	if !le.Warning {
		return le.Error()
	}
	w := *le
	w.Msg = "warning: " + le.Msg
	return w.Error()
}

// The ways a rule is checked.
const (
	checkDetector = "detector"
	checkModel    = "model"
)

func checkKind(r *rules.Rule) string {
	if r.Detector != nil {
		return checkDetector
	}
	return checkModel
}

// ruleModelText is the part of a prompt that carries r: its title, its
// instructions and the code of its examples, as filereview.RuleRefs hands
// them to the prompts.
func ruleModelText(r *rules.Rule) string {
	var b strings.Builder
	for _, ref := range filereview.RuleRefs([]*rules.Rule{r}) {
		b.WriteString(ref.Title)
		b.WriteString("\n\n")
		b.WriteString(ref.Instructions)
		for _, e := range ref.Examples {
			b.WriteString("\n\n")
			b.WriteString(e.Code)
		}
	}
	return b.String()
}

// tokenModel is the model that checks rules, whose tokenizer counts their
// tokens.
func tokenModel(s contract.Settings) string {
	if m := strings.TrimSpace(s.LLM.Models[string(llm.TaskRules)]); m != "" {
		return m
	}
	if m := strings.TrimSpace(s.LLM.Model); m != "" {
		return m
	}
	return defaultTokenModel
}

func rulesList(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	f := newRulesFlags("list", stderr)
	pos, code, ok := parseCommand(f.fs, args, rulesUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls rules list: unexpected argument %q\n", pos[0])
		return 2
	}
	ws, err := openRules(ctx, "list", stderr, *f.workspace, logger, true)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls rules list: %v\n", err)
		return 2
	}
	defer ws.svc.Close()

	model := tokenModel(ws.svc.Settings())
	// The active rule set is what a file check may send to the model.
	active := filereview.ModelRules(ws.rules, "", "")
	out := make([]ruleJSON, 0, len(ws.rules))
	total := 0
	for _, r := range ws.rules {
		paths := r.Paths
		if paths == nil {
			paths = []string{}
		}
		rj := ruleJSON{
			UUID: r.UUID, Title: r.Title, Source: r.Source, File: r.File, Line: r.Line,
			Scope: string(r.Scope), Paths: paths, Severity: string(r.Severity), Enabled: r.Enabled,
			Check: checkKind(r), Tokens: llm.CountTokens(model, ruleModelText(r)), Split: r.Split,
		}
		if slices.Contains(active, r) {
			total += rj.Tokens
		}
		out = append(out, rj)
	}

	// The rule files left unread because kodus-config ignorePaths ignores
	// them: their rules are missing from the list, and this is why.
	var skipped []*rules.LoadError
	for _, w := range ws.folder.Engine.Warnings() {
		if w.Skipped {
			skipped = append(skipped, w)
		}
	}
	if *f.json {
		writeRulesJSON(stdout, struct {
			Rules       []ruleJSON    `json:"rules"`
			TotalTokens int           `json:"totalTokens"`
			Model       string        `json:"model"`
			Broken      []problemJSON `json:"broken"`
			Skipped     []problemJSON `json:"skipped"`
		}{out, total, model, toProblemsJSON(ws.errs), toProblemsJSON(skipped)})
		return 0
	}
	if len(out) == 0 {
		fmt.Fprintf(stdout, "No Kody Rules in %s; rule files go in %s.\n", ws.folder.Root, strings.Join(ws.folder.Engine.Registry().WatchPaths(), ", "))
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "UUID\tTITLE\tSOURCE\tFILE\tSCOPE\tPATHS\tSEVERITY\tENABLED\tCHECK\tTOKENS")
		for _, r := range out {
			file := r.File
			if r.Line > 0 {
				file = fmt.Sprintf("%s:%d", file, r.Line)
			}
			paths := strings.Join(r.Paths, ",")
			if paths == "" {
				paths = "(all files)"
			}
			enabled := "yes"
			if !r.Enabled {
				enabled = "no"
			}
			source := r.Source
			if r.Split {
				source += " (model split)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n",
				r.UUID, r.Title, source, file, r.Scope, paths, r.Severity, enabled, r.Check, r.Tokens)
		}
		_ = tw.Flush()
		fmt.Fprintf(stdout, "\n%d rule(s); the active rule set sent to the model (%d enabled file-scope rule(s) without a detector) is %d tokens for %s\n",
			len(out), len(active), total, model)
	}
	for _, le := range ws.errs {
		fmt.Fprintf(stderr, "broken rule file: %s\n", le.Error())
	}
	for _, le := range skipped {
		fmt.Fprintf(stderr, "skipped rule file: %s\n", le.Error())
	}
	return 0
}

func rulesCheck(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	f := newRulesFlags("check", stderr)
	pos, code, ok := parseCommand(f.fs, args, rulesUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls rules check: unexpected argument %q\n", pos[0])
		return 2
	}
	ws, err := openRules(ctx, "check", stderr, *f.workspace, logger, false)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls rules check: %v\n", err)
		return 2
	}
	defer ws.svc.Close()

	// The registry's report keeps the warnings apart: they are printed
	// but, as the file still loads, do not fail the check.
	rep := ws.folder.Engine.Registry().LoadReport(ctx, ws.folder.Root)
	if ctx.Err() != nil {
		return 2
	}
	problems := slices.Concat(rep.Errors, rep.Warnings)
	slices.SortStableFunc(problems, func(a, b *rules.LoadError) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	if *f.json {
		writeRulesJSON(stdout, struct {
			Rules    int           `json:"rules"`
			Problems []problemJSON `json:"problems"`
		}{len(rep.Rules), toProblemsJSON(problems)})
	} else {
		// Problems go to stdout one per line, in the form editors and CI
		// logs turn into links; the summary goes to stderr.
		for _, le := range problems {
			fmt.Fprintln(stdout, problemLine(le))
		}
		fmt.Fprintf(stderr, "kodyls rules check: %d rule(s) loaded, %d error(s), %d warning(s)\n", len(rep.Rules), len(rep.Errors), len(rep.Warnings))
	}
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}

// violationJSON is one detector match; Line and the columns are 1-based,
// columns in UTF-16 code units as editors count them, EndColumn exclusive.
type violationJSON struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndColumn int    `json:"endColumn"`
	Match     string `json:"match"`
	Message   string `json:"message,omitempty"` // the model's explanation
}

func rulesTest(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) int {
	f := newRulesFlags("test", stderr)
	pos, code, ok := parseCommand(f.fs, args, rulesUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) == 0 || strings.TrimSpace(pos[0]) == "" {
		fmt.Fprintln(stderr, "kodyls rules test: give a RULE (a uuid, a uuid prefix or a part of a title); kodyls rules list shows them")
		return 2
	}
	query, names := pos[0], pos[1:]
	ws, err := openRules(ctx, "test", stderr, *f.workspace, logger, true)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls rules test: %v\n", err)
		return 2
	}
	defer ws.svc.Close()
	root := ws.folder.Root

	matches := findRules(ws.rules, query)
	switch len(matches) {
	case 0:
		fmt.Fprintf(stderr, "kodyls rules test: no rule matches %q; kodyls rules list shows them\n", query)
		for _, le := range ws.errs {
			fmt.Fprintf(stderr, "broken rule file: %s\n", le.Error())
		}
		return 2
	case 1:
	default:
		fmt.Fprintf(stderr, "kodyls rules test: %q matches %d rules; give more of the uuid:\n", query, len(matches))
		tw := tabwriter.NewWriter(stderr, 0, 4, 2, ' ', 0)
		for _, r := range matches {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.UUID, r.Title, r.File)
		}
		_ = tw.Flush()
		return 2
	}
	r := matches[0]
	ruleInfo := struct {
		UUID  string `json:"uuid"`
		Title string `json:"title"`
		File  string `json:"file"`
	}{r.UUID, r.Title, r.File}

	check := checkDetector
	if r.Detector == nil {
		check = checkModel
	}
	if r.Detector == nil && !ws.svc.ModelConfigured() {
		msg := fmt.Sprintf("%q has no local detector: only the model checks it, and no model can be used: %s", r.Title, ws.res.WhyNoModel())
		if *f.json {
			writeRulesJSON(stdout, struct {
				Rule       any             `json:"rule"`
				Check      string          `json:"check"`
				Message    string          `json:"message"`
				Files      []string        `json:"files"`
				Violations []violationJSON `json:"violations"`
			}{ruleInfo, checkModel, msg, []string{}, []violationJSON{}})
		} else {
			fmt.Fprintln(stdout, msg+".")
		}
		return 0
	}

	// The detector is tested as it is written, even when the rule is
	// switched off or looks at pull requests, which reviews would not
	// run it for.
	tested := *r
	if !tested.Enabled {
		fmt.Fprintln(stderr, "note: the rule is disabled; testing its detector anyway")
		tested.Enabled = true
	}
	// A pull-request rule without a detector is judged once over the files
	// together, as reviews judge it over the change set.
	prRule := tested.Scope == rules.ScopePullRequest && tested.Detector == nil
	if tested.Scope != rules.ScopeFile && !prRule {
		fmt.Fprintf(stderr, "note: the rule has scope %q, so reviews do not run its detector on files; testing it anyway\n", tested.Scope)
		tested.Scope = rules.ScopeFile
	}

	cwd, _ := os.Getwd()
	explicit := len(names) > 0
	var files []string
	if explicit {
		for _, name := range names {
			rel, err := relToRoot(root, cwd, name)
			if err != nil {
				fmt.Fprintf(stderr, "kodyls rules test: %v\n", err)
				return 2
			}
			files = append(files, rel)
		}
	} else {
		files, err = changedSinceHEAD(ctx, root)
		if err != nil {
			fmt.Fprintf(stderr, "kodyls rules test: cannot list the changed files: %v; give the FILEs to test\n", err)
			return 2
		}
	}

	failed := false
	checked := []string{}
	violations := []violationJSON{}
	if prRule {
		checked, violations, failed = testPullRequestRule(ctx, ws.folder, &tested, files, explicit, stderr)
		files = nil
	}
	for _, rel := range files {
		if ctx.Err() != nil {
			return 2
		}
		// A file named explicitly is not read either when it is on the
		// privacy list, as `kodyls review FILE` refuses it.
		if explicit {
			if why := ws.folder.Private(rel); why.Skip() {
				fmt.Fprintf(stderr, "%s: not checked: %s\n", rel, why)
				continue
			}
		}
		if !tested.AppliesTo(rel) {
			if explicit {
				fmt.Fprintf(stderr, "%s: not checked: outside the rule's paths %s\n", rel, strings.Join(tested.Paths, ", "))
			}
			continue
		}
		// Reviews name a file's language from its name (langid), so the
		// test does too.
		if !tested.AppliesToLanguage(langid.Of(rel)) {
			if explicit {
				fmt.Fprintf(stderr, "%s: not checked: outside the rule's languages %s\n", rel, strings.Join(tested.Languages, ", "))
			}
			continue
		}
		data, err := readConfined(root, rel)
		if err != nil {
			fmt.Fprintf(stderr, "kodyls rules test: %s: %v\n", rel, err)
			failed = true
			continue
		}
		text := string(data)
		// Changed files go through the same gate as a review (lock,
		// generated, binary files…); a file named explicitly is tested
		// whatever it is, unless it is private (above).
		if !explicit && ws.folder.Gate(rel, text).Skip() {
			continue
		}
		if tested.Detector != nil {
			checked = append(checked, rel)
			violations = append(violations, detectInFile(&tested, rel, text)...)
			continue
		}
		// The model judges the whole file against this rule alone.
		found, err := ws.folder.CheckRule(ctx, &tested, filereview.Input{Path: rel, Language: langid.Of(rel), Current: text})
		if err != nil {
			fmt.Fprintf(stderr, "kodyls rules test: %s: %v\n", rel, err)
			failed = true
			continue
		}
		checked = append(checked, rel)
		for _, v := range found {
			violations = append(violations, violationJSON{
				File: rel, Line: v.Span.StartLine + 1, Column: colAt(text, v.Span.Start), EndColumn: colAt(text, v.Span.End),
				Match: v.ExistingCode, Message: v.SuggestionContent,
			})
		}
	}

	if *f.json {
		writeRulesJSON(stdout, struct {
			Rule       any             `json:"rule"`
			Check      string          `json:"check"`
			Files      []string        `json:"files"`
			Violations []violationJSON `json:"violations"`
		}{ruleInfo, check, checked, violations})
	} else {
		for _, v := range violations {
			writeViolation(stdout, r.Title, v)
		}
		fmt.Fprintf(stderr, "%d violation(s) of %q in %d file(s) checked\n", len(violations), r.Title, len(checked))
	}
	switch {
	case failed:
		return 2
	case len(violations) > 0:
		return 1
	}
	return 0
}

// writeViolation prints v in the compiler style editors and terminals
// link: a detector's match after the rule's title; for the model, the
// first line of the code it points at, then its explanation indented
// below, as `kodyls review` prints a finding.
func writeViolation(w io.Writer, title string, v violationJSON) {
	if v.Message == "" {
		fmt.Fprintf(w, "%s:%d:%d: %s: %s\n", v.File, v.Line, v.Column, title, v.Match)
		return
	}
	head := fmt.Sprintf("%s:%d:%d: %s", v.File, v.Line, v.Column, title)
	if code := strings.TrimSpace(v.Match); code != "" {
		first, _, more := strings.Cut(code, "\n")
		head += ": " + strings.TrimSpace(first)
		if more {
			head += " …"
		}
	}
	fmt.Fprintln(w, head)
	for _, line := range strings.Split(strings.TrimSpace(v.Message), "\n") {
		fmt.Fprintln(w, strings.TrimRight("    "+line, " \t\r"))
	}
}

// findRules returns the rules query names: the one whose uuid it is, else
// the one whose title it is (ignoring case), else those whose uuid starts
// with it or whose title contains it (ignoring case).
func findRules(rs []*rules.Rule, query string) []*rules.Rule {
	q := strings.TrimSpace(query)
	lq := strings.ToLower(q)
	var exactTitle, partial []*rules.Rule
	for _, r := range rs {
		if r.UUID == q {
			return []*rules.Rule{r}
		}
		title := strings.ToLower(r.Title)
		switch {
		case title == lq:
			exactTitle = append(exactTitle, r)
		case strings.HasPrefix(r.UUID, q), strings.Contains(title, lq):
			partial = append(partial, r)
		}
	}
	if len(exactTitle) > 0 {
		return exactTitle
	}
	return partial
}

// changedSinceHEAD lists the files of the workspace at root changed
// since the last commit, untracked ones included; the error says why they
// cannot be listed (no git, no repository, git's own reason).
func changedSinceHEAD(ctx context.Context, root string) ([]string, error) {
	top, inRepo, err := changes.RepoRoot(ctx, root)
	switch {
	case errors.Is(err, changes.ErrGitNotFound):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("git cannot read the repository of %s: %w", root, err)
	case !inRepo:
		return nil, fmt.Errorf("%s is not inside a git repository", root)
	}
	files, err := changes.ChangedFiles(ctx, root, "HEAD", false, nil)
	if errors.Is(err, changes.ErrNotACommit) {
		return nil, fmt.Errorf("HEAD is not a commit in %s", top)
	}
	return files, err
}

// relToRoot turns a FILE argument (relative to cwd, or absolute) into a
// workspace-relative slash path.
func relToRoot(root, cwd, name string) (string, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, name)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the workspace %s; pass --workspace DIR", name, root)
	}
	return filepath.ToSlash(rel), nil
}

// detectInFile runs r's detector over the whole text and places each match
// with 1-based lines and UTF-16 columns, as `kodyls review` and editors do.
func detectInFile(r *rules.Rule, rel, text string) []violationJSON {
	vs := rules.Detect([]*rules.Rule{r}, rel, text, nil)
	if len(vs) == 0 {
		return nil
	}
	// Detect splits lines as changes.Lines does ("\n", "\r\n" or "\r"), so
	// the columns are counted on the same lines.
	lines := map[int]string{}
	for _, v := range vs {
		lines[v.Line] = ""
	}
	last := slices.MaxFunc(vs, func(a, b rules.Violation) int { return a.Line - b.Line }).Line
	for n, line := range changes.Lines(text) {
		if _, ok := lines[n]; ok {
			lines[n] = line
		}
		if n >= last {
			break
		}
	}
	out := make([]violationJSON, 0, len(vs))
	for _, v := range vs {
		line := lines[v.Line]
		out = append(out, violationJSON{
			File: rel, Line: v.Line + 1,
			Column: utf16Col(line, v.Start), EndColumn: utf16Col(line, v.End),
			Match: v.Match,
		})
	}
	return out
}

func writeRulesJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// testPullRequestRule judges a pull-request rule once over files: named
// ones whole, else the change set against HEAD with its diffs, as
// reviews judge it. It returns the files judged, the violations, and
// whether a file could not be read or the check failed.
// outsideRule says why a pull-request rule does not judge the file rel
// ("" when it does): its paths or its languages leave it out, as in a
// review (which names a file's language from its name).
func outsideRule(r *rules.Rule, rel string) string {
	lang := langid.Of(rel)
	switch {
	case filereview.Reaches(r, rel, lang):
		return ""
	case r.AppliesToLanguage(lang):
		return "outside the rule's paths " + strings.Join(r.Paths, ", ")
	}
	return "outside the rule's languages " + strings.Join(r.Languages, ", ")
}

func testPullRequestRule(ctx context.Context, folder *workspace.Folder, rule *rules.Rule, files []string, explicit bool, stderr io.Writer) ([]string, []violationJSON, bool) {
	var inputs []filereview.Input
	failed := false
	if explicit {
		for _, rel := range files {
			if why := folder.Private(rel); why.Skip() {
				fmt.Fprintf(stderr, "%s: not checked: %s\n", rel, why)
				continue
			}
			data, err := readConfined(folder.Root, rel)
			if err != nil {
				fmt.Fprintf(stderr, "kodyls rules test: %s: %v\n", rel, err)
				failed = true
				continue
			}
			inputs = append(inputs, filereview.Input{Path: rel, Language: langid.Of(rel), Current: string(data)})
		}
	} else {
		var err error
		if inputs, err = folder.ChangeSet(ctx, "HEAD", nil); err != nil {
			fmt.Fprintf(stderr, "kodyls rules test: %v\n", err)
			return []string{}, []violationJSON{}, true
		}
	}
	// The whole change set is the rule's evidence; the files it judges are
	// those its paths and languages reach, as in a review.
	checked := []string{}
	text := map[string]string{}
	for _, in := range inputs {
		text[in.Path] = in.Current
		if why := outsideRule(rule, in.Path); why != "" {
			if explicit {
				fmt.Fprintf(stderr, "%s: not checked: %s\n", in.Path, why)
			}
			continue
		}
		checked = append(checked, in.Path)
	}
	violations := []violationJSON{}
	if len(checked) == 0 {
		return checked, violations, failed
	}
	byFile, err := folder.CheckPullRequestRule(ctx, rule, inputs)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls rules test: %v\n", err)
		return checked, violations, true
	}
	for _, rel := range checked {
		for _, v := range byFile[rel] {
			violations = append(violations, violationJSON{
				File: rel, Line: v.Span.StartLine + 1, Column: colAt(text[rel], v.Span.Start), EndColumn: colAt(text[rel], v.Span.End),
				Match: v.ExistingCode, Message: v.SuggestionContent,
			})
		}
	}
	return checked, violations, failed
}
