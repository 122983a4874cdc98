package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
)

const doctorUsage = `Usage: kodyls doctor [--workspace DIR]

Prints how kodyls resolved its configuration for the workspace (the
environment, KODYLS_SETTINGS, kodus-config.yml, the Kody Rules, the local
store and the LLM endpoint, which it checks, and the repository, baseRef
and build.onSave, which it checks too). Exit status: 0, 1 when
something is wrong (each problem is listed with what to do), 2 on a usage
error.
`

// doctor prints how kodyls resolved its configuration for a workspace and
// exits 1 when something needs fixing, saying what to do.
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	wsFlag := fs.String("workspace", "", "workspace to check (default: the git root of the current directory, else the current directory)")
	pos, code, ok := parseCommand(fs, args, doctorUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls doctor: unexpected argument %q; give the workspace with --workspace DIR\n", pos[0])
		return 2
	}
	// The workspace every other command uses: the git root of the
	// current directory, else the current directory.
	ws, err := rulesRoot(ctx, *wsFlag)
	if err != nil {
		// Reported below as a problem of the workspace, with the rest.
		if ws = *wsFlag; ws == "" {
			ws, _ = os.Getwd()
		}
	}
	var problems []string
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }

	row("kodyls", "%s", currentVersion())

	abs, err := filepath.Abs(ws)
	wsOK := false
	if st, serr := os.Stat(abs); err != nil || serr != nil || !st.IsDir() {
		row("workspace", "%s (not a directory)", ws)
		problems = append(problems, fmt.Sprintf("workspace %q is not a directory: pass --workspace DIR", ws))
	} else {
		wsOK = true
		row("workspace", "%s", abs)
	}

	gitPath, gerr := exec.LookPath("git")
	repoTop, hasHead := "", false // the repository, when git can read it
	if gerr != nil {
		row("git", "not found")
		problems = append(problems, "git is not on PATH: kodyls compares buffers with the last commit; install git")
	} else {
		out, _ := exec.CommandContext(ctx, gitPath, "--version").Output()
		row("git", "%s (%s)", gitPath, strings.TrimSpace(string(out)))
		top, inRepo, terr := "", false, error(nil)
		if wsOK {
			top, inRepo, terr = changes.RepoRoot(ctx, abs)
		}
		switch {
		case terr != nil:
			// Git's own reason, such as a repository owned by another
			// user ("dubious ownership") with the safe.directory to add.
			row("repository", "unreadable: %v", terr)
			problems = append(problems, fmt.Sprintf("git cannot read the repository of %s: %v; until it can, the editor compares files with their content when opened", abs, terr))
		case !inRepo:
			row("repository", "none (files are compared with their content when opened)")
		default:
			repoTop = top
			head, herr := exec.CommandContext(ctx, gitPath, "-C", abs, "rev-parse", "--short", "HEAD").Output()
			h := strings.TrimSpace(string(head))
			hasHead = herr == nil
			if herr != nil {
				h = "no commits yet (every file counts as changed)"
			}
			row("repository", "%s (HEAD %s)", top, h)
		}
	}

	res := contract.Resolve(os.Getenv, nil, nil)
	svc := openServices(ctx, workspace.Config{Settings: res.Settings, Getenv: os.Getenv, Log: slog.New(slog.DiscardHandler)})
	defer svc.Close()
	st := svc.Store
	dir, source, derr := index.DataDir(os.Getenv)
	if derr != nil {
		row("data dir", "unresolved")
		// The error says what to do.
		problems = append(problems, fmt.Sprintf("no data directory: %v", derr))
	} else {
		row("data dir", "%s (from %s)", dir, source)
		if st == nil {
			row("store", "error")
			problems = append(problems, svc.StoreErr.Error())
		} else {
			v, _ := st.SchemaVersion(ctx)
			wss, _ := st.Workspaces(ctx)
			// Damage away from the pages read at open shows only when a
			// query reaches it: every page is checked here.
			if err := st.QuickCheck(ctx); err != nil {
				row("store", "%s (schema v%d): damaged", st.Path(), v)
				problems = append(problems, err.Error())
			} else {
				row("store", "%s (schema v%d, %d workspaces seen)", st.Path(), v, len(wss))
			}
			if n := st.Notice(); n != nil {
				row("", "note: %v", n)
			}
			// The index as every lookup sees it, through the history of the
			// composition root: a deleted or damaged index is rebuilt
			// first, and a search reads it.
			if h, err := svc.OpenHistory(ctx, true); err != nil {
				row("error index", "error")
				problems = append(problems, fmt.Sprintf("error index: %v", err))
			} else if x, err := h.Index(ctx); err != nil {
				row("error index", "%s (error)", x.Path)
				problems = append(problems, fmt.Sprintf("error index: %v; if this persists, delete %s and kodyls will rebuild it from the history database", err, x.Path))
			} else {
				row("error index", "%s (%d documents, %d queued)", x.Path, x.Documents, x.Queued)
				if x.Repaired != "" {
					row("", "it was damaged (%s) and has been rebuilt from the history database", x.Repaired)
				}
			}
		}
	}

	folder := svc.Folder(abs)
	rs, errs := folder.Reload(ctx)
	reg := folder.Engine.Registry()
	used := map[string]bool{}
	for _, r := range rs {
		used[r.Source] = true
	}
	var from, searched []string
	for _, src := range reg.Sources() {
		where := fmt.Sprintf("%s (%s)", src.Name(), strings.Join(src.WatchPaths(), ", "))
		searched = append(searched, where)
		if used[src.Name()] {
			from = append(from, where)
		}
	}
	if len(from) == 0 {
		row("kody rules", "%d loaded, %d broken", len(rs), len(errs))
	} else {
		row("kody rules", "%d loaded from %s, %d broken", len(rs), strings.Join(from, "; "), len(errs))
	}
	row("", "searched %s", strings.Join(searched, "; "))
	for _, r := range rs {
		det := "checked by the model"
		if !svc.ModelConfigured() {
			det = "not checked offline: no detector, no model configured"
		}
		if r.Detector != nil {
			det = "regex detector"
		}
		state := ""
		if !r.Enabled {
			state = ", disabled"
		}
		row("", "%s  %s [%s, %s%s] from %s", r.File, r.Title, r.Severity, det, state, r.Source)
	}
	for _, w := range folder.Engine.Warnings() {
		row("", "warning: %s", w.Error())
	}
	for _, le := range errs {
		row("", "BROKEN %s", le.Error())
		problems = append(problems, "rule file "+le.Error())
	}

	if wsOK {
		// kodus-config.yml (and the prompt overrides) as a review reads
		// them: a bad value is replaced by its default, which is a problem
		// to fix.
		_, cfgProblems := folder.Reviewer()
		if kc := kodusconfig.Load(abs); kc.File != "" {
			row("kodus config", "%s, %d problem(s)", kc.File, len(cfgProblems))
		} else if len(cfgProblems) > 0 {
			// The review's other set-up problems (prompt overrides).
			row("kodus config", "none (the defaults apply); %d problem(s) in the review set-up", len(cfgProblems))
		} else {
			row("kodus config", "none (the defaults apply)")
		}
		for _, p := range cfgProblems {
			row("", "BAD %s", p)
			problems = append(problems, p)
		}
	}

	cfg := res.Settings.Redacted()
	switch why := res.WhyNoModel(); {
	case cfg.LLM.BaseURL != "":
		problems = append(problems, checkLLM(ctx, res, row)...)
	case res.RejectedBaseURL() != "":
		// Set, and dropped by the validation: the problem says why.
		row("llm", "not usable: %s", why)
	default:
		row("llm", "not configured: local rules, error parsing and history work offline; set KODYLS_LLM_BASE_URL (e.g. http://localhost:11434/v1) to enable AI review")
	}
	for _, n := range res.Notes {
		row("", "note: %s", n)
	}
	if st != nil {
		if totals, err := st.UsageTotals(ctx, time.Time{}); err == nil {
			for _, t := range totals {
				// In ms: a Duration rounded to ms prints a fast local
				// endpoint's latency as "0s".
				lat := ""
				if t.Calls > 0 {
					lat = fmt.Sprintf(", avg %d ms", t.AvgLatency.Milliseconds())
				}
				row("llm usage", "%s: %d calls (+%d from cache, %d failed), %d prompt + %d completion tokens%s",
					t.Feature, t.Calls, t.CachedCalls, t.Failures, t.PromptTokens, t.CompletionTokens, lat)
			}
		}
	}
	row("settings", "review.trigger=%s rules.scope=%s baseRef=%s", cfg.Review.Trigger, cfg.Rules.Scope, cfg.BaseRef)
	if set := changedSettings(res, cfg); len(set) > 0 {
		row("", "also set: %s", strings.Join(set, " "))
	}
	if repoTop != "" && hasHead {
		problems = append(problems, checkBaseRef(ctx, gitPath, repoTop, cfg.BaseRef, res.Origin["baseRef"], row)...)
	}
	problems = append(problems, checkBuildCommand(abs, cfg.Build.OnSave, res.Origin["build.onSave"], row)...)
	levels := make([]string, 0, len(cfg.Severity))
	for k, v := range cfg.Severity {
		levels = append(levels, k+"→"+v)
	}
	sort.Strings(levels)
	row("severity", "%s", strings.Join(levels, " "))
	row("", "editor settings (initializationOptions, workspace/configuration \"kodyls\") override these per session")
	problems = append(problems, res.Problems...)
	_ = tw.Flush()

	if len(problems) > 0 {
		fmt.Fprintf(stdout, "\n%d problem(s):\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(stdout, "  - %s\n", p)
		}
		return 1
	}
	fmt.Fprintln(stdout, "\nno problems found")
	return 0
}

// checkLLM probes the configured endpoint and reports what to fix.
func checkLLM(ctx context.Context, res contract.Resolved, row func(k, format string, a ...any)) []string {
	cfg := res.Settings
	shown := cfg.Redacted()
	key := "no API key (fine for local endpoints)"
	if cfg.LLM.APIKey != "" {
		key = "API key from " + res.Origin["llm.apiKey"]
	}
	model := cfg.LLM.Model
	if model == "" {
		model = "(none set)"
	}
	row("llm", "%s model %s, %s (endpoint from %s)", shown.LLM.BaseURL, model, key, res.Origin["llm.baseUrl"])
	// The probe sends no user text and must not count as usage or be
	// answered from the cache: no store.
	probe := workspace.Open(ctx, workspace.Config{Settings: cfg, NoStore: true, Probe: true, Log: slog.New(slog.DiscardHandler)})
	defer probe.Close()
	g, err := probe.Gateway()
	if err != nil {
		return []string{err.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rep := g.Check(cctx, "")
	if rep.Reachable {
		lat := ""
		if rep.Latency > 0 {
			lat = fmt.Sprintf(", round trip %v", rep.Latency.Round(time.Millisecond))
		}
		if len(rep.Models) > 0 {
			row("", "reachable%s; %d models served", lat, len(rep.Models))
		} else {
			row("", "reachable%s", lat)
		}
		if rep.Model == "" && len(rep.Models) > 0 {
			shown, more := rep.Models, ""
			if len(shown) > 12 {
				shown, more = shown[:12], fmt.Sprintf(" and %d more", len(rep.Models)-12)
			}
			row("", "no model set; the endpoint serves %s%s", strings.Join(shown, ", "), more)
		}
		switch {
		case rep.StructuredOK && rep.JSONSchemaSupported:
			row("", "structured output: json_schema accepted")
		case rep.StructuredOK:
			row("", "structured output: json_schema not supported, json_object fallback works")
		}
	}
	for _, n := range rep.Notes {
		row("", "note: %s", n)
	}
	problems := oneModelProblem(rep.Problems, cfg.LLM.Model)
	// A model of one task class the endpoint does not serve fails that
	// stage at every call while the others work: checked like llm.model.
	if rep.Reachable && len(rep.Models) > 0 {
		tasks := slices.Sorted(maps.Keys(cfg.LLM.Models))
		for _, task := range tasks {
			if m := cfg.LLM.Models[task]; m != "" && !slices.Contains(rep.Models, m) {
				problems = append(problems, fmt.Sprintf("llm.models.%s names model %q, which %s does not serve (it serves %s): set llm.models.%s to one of them",
					task, m, shown.LLM.BaseURL, strings.Join(rep.Models[:min(len(rep.Models), 12)], ", "), task))
			}
		}
	}
	return problems
}

// oneModelProblem keeps one of the problems that say the model is not
// served, which the model list and the test request may both find: the
// one with the endpoint's own answer (its 404) when there is one.
func oneModelProblem(problems []string, model string) []string {
	prefix := fmt.Sprintf("model %q is not served by ", model)
	keep := -1
	for i, p := range problems {
		if strings.HasPrefix(p, prefix) && (keep < 0 || strings.Contains(p, "(404")) {
			keep = i
		}
	}
	var out []string
	for i, p := range problems {
		if i == keep || !strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// checkBaseRef verifies that baseRef names a commit of the repository, as
// the editor needs to compare buffers with it.
func checkBaseRef(ctx context.Context, gitPath, top, ref, origin string, row func(k, format string, a ...any)) []string {
	cmd := exec.CommandContext(ctx, gitPath, "-C", top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANGUAGE=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		why := "names no commit"
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			why = "cannot be read (git: " + strings.ReplaceAll(msg, "\n", " ") + ")"
		}
		row("baseRef", "%s (from %s): %s in %s", ref, origin, why, top)
		return []string{fmt.Sprintf("baseRef %q (from %s) %s in %s: the editor compares with HEAD instead; set baseRef to a branch, tag or commit of the repository (`git branch -a` lists the branches)", ref, origin, why, top)}
	}
	rev := strings.TrimSpace(out.String())
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if origin == contract.OriginDefault {
		origin = "the default"
	}
	row("baseRef", "%s (commit %s, from %s)", ref, rev, origin)
	return nil
}

// checkBuildCommand shows build.onSave and checks that the program it
// starts exists: a build on save that cannot run fails on every save.
func checkBuildCommand(workspaceDir, command, origin string, row func(k, format string, a ...any)) []string {
	if strings.TrimSpace(command) == "" {
		row("build.onSave", "none (no build on save)")
		return nil
	}
	word := commandWord(command)
	if word == "" {
		row("build.onSave", "%s (from %s; starts with shell syntax, not checked)", command, origin)
		return nil
	}
	look := word
	if strings.Contains(word, "/") && !filepath.IsAbs(word) {
		look = filepath.Join(workspaceDir, word) // sh runs it in the workspace
	}
	path, err := exec.LookPath(look)
	if err != nil {
		row("build.onSave", "%s (from %s): %s not found", command, origin, word)
		where := "on PATH"
		if strings.Contains(word, "/") {
			where = "in the workspace"
		}
		return []string{fmt.Sprintf("build.onSave %q (from %s): %s is not %s, so the build on save fails; set build.onSave to a command that exists, e.g. \"go build ./...\"", command, origin, word, where)}
	}
	row("build.onSave", "%s (from %s; %s is %s)", command, origin, word, path)
	return nil
}

// commandWord is the program a shell command line starts, after any
// variable assignments; "" when it starts with a shell built-in, a keyword
// or syntax that only running the shell would resolve.
func commandWord(command string) string {
	for _, w := range strings.Fields(command) {
		if i := strings.IndexAny(w, ";&|<>()"); i >= 0 {
			if i == 0 {
				return ""
			}
			w = w[:i]
		}
		if eq := strings.IndexByte(w, '='); eq > 0 && isShellName(w[:eq]) {
			continue // NAME=value before the command
		}
		if strings.ContainsAny(w, "$`\\*?[{~!") {
			return ""
		}
		w = strings.Trim(w, `"'`)
		switch w {
		case "", ".", ":", "cd", "source", "eval", "exec", "export", "set", "unset", "test", "true", "false",
			"echo", "printf", "if", "for", "while", "until", "case", "time", "command", "builtin", "type", "ulimit", "umask", "wait", "trap":
			return ""
		}
		return w
	}
	return ""
}

func isShellName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// changedSettings lists the settings the doctor's other rows do not show
// whose value is not the default, each with the layer that set it
// ("llm.timeoutMs=20000 (env KODYLS_SETTINGS)"), so that a value set in
// the environment can be seen taking effect. cfg is redacted.
func changedSettings(res contract.Resolved, cfg contract.Settings) []string {
	shown := map[string]bool{
		"llm.baseUrl": true, "llm.apiKey": true, "llm.model": true,
		"review.trigger": true, "rules.scope": true, "baseRef": true,
		"build.onSave": true, "severity": true,
	}
	def := contract.Defaults()
	var out []string
	for _, st := range contract.SettingsTable {
		if shown[st.Key] {
			continue
		}
		v := st.Get(cfg)
		if reflect.DeepEqual(v, st.Get(def)) {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s (%s)", st.Key, b, res.Origin[st.Key]))
	}
	return out
}
