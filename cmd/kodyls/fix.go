package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/analysis/workspace"
)

const fixUsage = `Usage: kodyls fix [--apply] [--build CMD] [--rounds N] [--timeout D] [--max-time D] [--json] [--verbose] [--workspace DIR] [FILE|-]

Fixes the primary error of compiler output (read from FILE, or stdin with
"-" or no argument) in plan mode: the model plans an investigation with
read-only workspace tools and proposes search/replace edits; each edit must
stay inside the workspace, avoid the privacy ignore list and match the file
exactly once, and make the code read no file outside the workspace or on the
privacy list by path (#include, #embed, include_str!, imports). The build
command (--build, else the build.onSave setting) then runs on a scratch copy
of the workspace, without the files on the privacy list, with the edits
applied; its diagnostics about files outside that copy are withheld from
the model. While it fails, the plan is adjusted and tried again, up to
--rounds times. Only the build command ever runs. A plan version has at
most 20 steps (a longer plan is replaced by a basic one), the steps of all
rounds run at most 20 tool calls, and the whole fix stops after --max-time
(10m). The plan versions, the diff and the verification are printed; the files are written only with --apply, and only when the
build passed or no build command is configured. Relative paths in the
output are read as relative to the current directory (to the workspace
when the current directory is outside it), and --build runs in the scratch
copy's counterpart of the current directory; build.onSave runs at its
root, as in the editor.

Edits to files that define the build (Makefile, package.json, build.rs,
*.gradle, CMakeLists.txt, .cargo/, go.mod's go and toolchain lines,
tsconfig plugins, the scripts the build command runs and the files it reads
its definition from: sh build.sh, make -f ci.mk, tsc -p tsconfig.build.json,
...) and to kodyls's own configuration (kodus-config.yml, .kody/,
.kody-rules/, the assistants' rule files kodyls imports: CLAUDE.md,
AGENTS.md, .cursorrules, ...) are refused: the build never runs with them,
they are never applied, and they are shown for you to make yourself.
Sources the build command compiles (gcc -fsyntax-only main.c, javac
Main.java) can be fixed. An edit inside a .git directory (a nested
repository's, or one a symlink leads to, too) is rejected.

Needs a model (KODYLS_LLM_BASE_URL, KODYLS_LLM_MODEL).

Exit status:
  0  a fix was found (verified by the build, or unverified when no build
     command is configured); written with --apply
  1  no error recognised in the output
  2  usage or configuration error (e.g. no model configured)
  3  no fix: no valid edit was proposed, or the build still fails after the
     last round; or --apply could not write the fix (the reason on
     stderr); nothing was written
  4  --apply wrote the fix only in part: a file could not be replaced
     after others were; stderr names the files written and the rest, and
     the diff is printed
  130, 143  interrupted (SIGINT, SIGTERM); nothing was written

The output is read to its end; of one longer than 8 MiB the first and the
last 4 MiB are kept (said on stderr).
`

func fixCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	fs := flag.NewFlagSet("fix", flag.ContinueOnError)
	apply := fs.Bool("apply", false, "write the edits to the workspace")
	build := fs.String("build", "", "the command that verifies the fix (default: the build.onSave setting)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	verbose := fs.Bool("verbose", false, "print the agent's steps (nodes, tool calls, plan versions) to stderr as they happen")
	wsFlag := fs.String("workspace", "", "the workspace the output refers to (default: the git root of the current directory, else the current directory)")
	rounds := fs.Int("rounds", fix.DefaultRounds, "plan versions to try")
	timeout := fs.Duration("timeout", 0, "time limit of one verifying build (default: build.timeoutMs, else 2m)")
	maxTime := fs.Duration("max-time", fix.DefaultTimeout, "time limit of the whole fix, every round included")
	pos, code, ok := parseCommand(fs, args, fixUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		fmt.Fprintln(stderr, "kodyls fix: give at most one FILE (or - for stdin)")
		return 2
	}
	switch {
	case *rounds < 1:
		fmt.Fprintf(stderr, "kodyls fix: --rounds %d: give at least 1\n", *rounds)
		return 2
	case *maxTime <= 0:
		fmt.Fprintf(stderr, "kodyls fix: --max-time %s: give a positive duration, e.g. 10m\n", *maxTime)
		return 2
	case *timeout < 0:
		fmt.Fprintf(stderr, "kodyls fix: --timeout %s: give a positive duration, e.g. 2m (0: build.timeoutMs)\n", *timeout)
		return 2
	}
	data, ws, at, err := compilerOutput(ctx, stdin, stderr, "fix", firstArg(pos), *wsFlag)
	if ctx.Err() != nil {
		return 2 // told as interrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "kodyls fix: %v\n", err)
		return 2
	}

	cfg := resolveSettings("fix", stderr)
	settings := cfg.Settings
	// The store keeps the fix's checkpoints: a fix cut short resumes.
	svc := openServices(ctx, workspace.Config{Settings: settings, Getenv: os.Getenv, Log: logger})
	defer svc.Close()
	if _, err := svc.Gateway(); err != nil {
		fmt.Fprintf(stderr, "kodyls fix: %v\n", err)
		return 2
	}
	errs := errparse.Parse(string(data), errparse.Options{Workspace: ws, Dir: at})
	p := errparse.Primary(errs)
	if p < 0 {
		fmt.Fprintf(stderr, "kodyls fix: %v\n", rca.ErrNoError)
		return 1
	}
	req := fix.Request{Error: errs[p], Output: string(data), Build: cmp.Or(*build, settings.Build.OnSave), BuildTimeout: *timeout}
	if *build != "" {
		// --build runs where kodyls fix runs, as it would in the shell;
		// build.onSave at the workspace root, as in the editor.
		if rel, err := filepath.Rel(ws, at); err == nil && rel != "." {
			req.Dir = filepath.ToSlash(rel)
		}
	}
	if req.BuildTimeout == 0 && settings.Build.TimeoutMS > 0 {
		req.BuildTimeout = time.Duration(settings.Build.TimeoutMS) * time.Millisecond
	}
	fx := svc.Fixer(ws)
	fx.NoModel = cfg.WhyNoModel()
	fx.Rounds = *rounds
	fx.Timeout = *maxTime
	var emit func(agent.Event)
	if *verbose {
		emit = func(e agent.Event) { writeEvent(stderr, e) }
	}
	res, err := fx.Fix(ctx, req, emit)
	if ctx.Err() != nil {
		// Interrupted: nothing is written, and a fix cut short is not
		// printed as a result (the checkpoints let the next run resume).
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "kodyls fix: %v\n", err)
		return 2
	}
	found := res.Found()
	var applied, unwritten []string
	partial := false
	if *apply && found {
		if applied, err = fix.Apply(ws, fx.Ignore, res.Edits); err != nil {
			if len(applied) == 0 {
				fmt.Fprintf(stderr, "kodyls fix: nothing written: %v\n", err)
				return 3
			}
			// Some files were replaced before one could not be: the
			// workspace holds part of the fix, which the user must know
			// file by file.
			partial, unwritten = true, notWritten(res.Edits, applied)
			fmt.Fprintf(stderr, "kodyls fix: the fix was written only in part: %v; written: %s; not written: %s; the diff shows the whole fix\n",
				err, strings.Join(applied, ", "), strings.Join(unwritten, ", "))
		}
	}
	if *asJSON {
		writeFixJSON(stdout, errs[p], res, applied, unwritten)
	} else {
		writeFixText(stdout, errs[p], res, *apply, applied, unwritten)
	}
	if partial {
		return 4
	}
	if !found {
		// A model, key or URL the endpoint refused on every call is a
		// set-up to fix, as for a missing model: told once, exit 2.
		if g, _ := svc.Gateway(); g != nil {
			if se, every := g.SetupFailure(); every {
				fmt.Fprintf(stderr, "kodyls fix: %v\n", se)
				return 2
			}
		}
		return 3
	}
	return 0
}

// notWritten is the files of edits that are not among written.
func notWritten(edits []fix.Edit, written []string) []string {
	var out []string
	for _, e := range edits {
		f := path.Clean(filepath.ToSlash(e.File))
		if !slices.Contains(written, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

func writeFixJSON(w io.Writer, e errparse.Error, res *fix.Result, applied, unwritten []string) {
	if applied == nil {
		applied = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(struct {
		Error errparse.Error `json:"error"`
		*fix.Result
		Applied []string `json:"applied"`
		// NotWritten: the files of a fix written only in part that were
		// not written.
		NotWritten []string `json:"notWritten,omitempty"`
	}{e, res, applied, unwritten})
}

func writeFixText(w io.Writer, e errparse.Error, res *fix.Result, apply bool, applied, unwritten []string) {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	fmt.Fprintf(w, "Fixing %s error at %s: %s\n", e.Tool, loc, e.Message)
	for _, p := range res.Plans {
		fmt.Fprintf(w, "\n%s\n", p)
	}
	if res.Diff != "" {
		fmt.Fprintf(w, "\n%s", res.Diff)
		if !strings.HasSuffix(res.Diff, "\n") {
			fmt.Fprintln(w)
		}
	}
	if len(res.Refused) > 0 {
		fmt.Fprintf(w, "\nRefused, because %s (never applied, never built):\n", refusedWhy(res.Refused))
		for _, r := range res.Refused {
			fmt.Fprintf(w, "  %s: %s\n", r.File, r.Reason)
		}
		if res.RefusedDiff != "" {
			fmt.Fprintf(w, "\n%s", res.RefusedDiff)
			if !strings.HasSuffix(res.RefusedDiff, "\n") {
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w)
	switch res.Verification {
	case fix.VerifyNotRun:
		fmt.Fprintf(w, "Verification: not run: %s\n", res.WhyNotRun())
	case fix.VerifyPassed:
		fmt.Fprintf(w, "Verification: passed: %s succeeds with the edits (%d round(s))\n", res.Build, res.Rounds)
	case fix.VerifyFailed:
		fmt.Fprintf(w, "Verification: failed: %s still fails after %d round(s)\n", res.Build, res.Rounds)
		if out := strings.TrimSpace(res.BuildOutput); out != "" {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(out, "\n", "\n  "))
		}
	default:
		fmt.Fprintln(w, "Verification: skipped")
	}
	if res.Note != "" {
		fmt.Fprintf(w, "Note: %s\n", res.Note)
	}
	switch {
	case len(applied) > 0 && len(unwritten) > 0:
		fmt.Fprintf(w, "Written only in part: applied to %s; NOT written: %s\n", strings.Join(applied, ", "), strings.Join(unwritten, ", "))
	case len(applied) > 0:
		fmt.Fprintf(w, "Applied to: %s\n", strings.Join(applied, ", "))
	case apply:
		fmt.Fprintln(w, "Nothing was written.")
	case res.Found():
		// Only a fix found is written by --apply.
		fmt.Fprintln(w, "Run again with --apply to write the files.")
	}
}

// refusedWhy says why the refused edits were refused: they change what
// the build runs, kodyls's own configuration, or both.
func refusedWhy(refused []fix.RefusedEdit) string {
	build, own := false, false
	for _, r := range refused {
		if r.OwnConfiguration() {
			own = true
		} else {
			build = true
		}
	}
	switch {
	case own && build:
		return "they change what the build runs or kodyls's own configuration"
	case own:
		return "they change kodyls's own configuration"
	}
	return "they change what the build runs"
}
