package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/langid"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
)

const reviewUsage = `Usage: kodyls review [--base REF] [--staged] [--workspace DIR] [--format text|json|sarif] [--offline] [--fail-on SEVERITY] [--verbose] [PATH...]

Reviews the working tree's changes against REF (default HEAD) with the same
pipeline as the editor: the local Kody Rules detectors, then the LLM review
(unless --offline or no endpoint is configured). PATHs limit the review to
those files or directories, named literally (no globs). The workspace, whose
Kody Rules apply and to which paths are relative, is DIR, by default the git
root of the current directory; an editor opened on a folder below the root
reviews as --workspace with that folder does. Submodules and repositories
nested in the work tree are not reviewed from outside: run kodyls review
inside them. Exit status: 0, or 1 when a finding is at or above --fail-on
(critical, high, medium, low), 2 on a usage or setup error (a PATH inside
another repository too), 130 or 143 when interrupted (SIGINT, SIGTERM: the
report covers the files reviewed until then and says so). Problems are told
on stderr in a line each (an endpoint that does not answer in one);
--verbose adds the log's warnings.
`

func reviewCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger, cli cliLog) int {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	base := fs.String("base", "HEAD", "the git revision to compare with")
	staged := fs.Bool("staged", false, "review the staged changes (the index) instead of the working tree")
	format := fs.String("format", "text", "text, json or sarif")
	offline := fs.Bool("offline", false, "run only the local detectors, no LLM")
	failOn := fs.String("fail-on", "", "exit 1 when a finding is at or above this severity")
	verbose := fs.Bool("verbose", false, "print the log's warnings on stderr too")
	wsDir := fs.String("workspace", "", "the workspace to review: its Kody Rules apply and paths are relative to it (default: the git root of the current directory)")
	paths, code, ok := parseCommand(fs, args, reviewUsage, stdout, stderr)
	if !ok {
		return code
	}
	// The review tells of every problem itself, once; the log would repeat
	// the endpoint's failure per stage and file.
	cli.quiet(*verbose)
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stderr, "kodyls review: --format %q: use text, json or sarif\n", *format)
		return 2
	}
	if *failOn != "" && report.Rank(*failOn) == 0 {
		fmt.Fprintf(stderr, "kodyls review: --fail-on %q: use critical, high, medium or low\n", *failOn)
		return 2
	}
	cwd, _ := os.Getwd()
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	from := cwd
	if *wsDir != "" {
		var err error
		if from, err = reviewWorkspaceDir(*wsDir, cwd); err != nil {
			fmt.Fprintf(stderr, "kodyls review: %v\n", err)
			return 2
		}
	}
	top, inRepo, err := changes.RepoRoot(ctx, from)
	switch {
	case err != nil:
		// Git's own reason: a repository owned by another user (git's
		// "dubious ownership", with the safe.directory to add), no git.
		fmt.Fprintf(stderr, "kodyls review: cannot read the git repository of %s: %v\n", from, err)
		return 2
	case !inRepo:
		fmt.Fprintf(stderr, "kodyls review: %s is not inside a git repository: run it from your project\n", from)
		return 2
	}
	// The workspace: DIR, else the repository's top level.
	root := top
	if *wsDir != "" {
		root = from
	}
	list, err := changeList(ctx, root, top, *base, *staged, paths, cwd)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls review: %v\n", err)
		return 2
	}

	rep := &report.Report{Version: currentVersion(), Base: *base}
	if *wsDir == "" {
		if note := ownWorkspaceNote(top, cwd); note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	// Submodules and repositories nested in the work tree have changes of
	// their own, against their own commits: they are reviewed from inside.
	var files []changes.ChangedFile
	for _, c := range list {
		switch {
		case c.Submodule():
			rep.Notes = append(rep.Notes, fmt.Sprintf("submodule %s: not reviewed here; run kodyls review inside it", c.Path))
		case c.NestedRepo():
			rep.Notes = append(rep.Notes, fmt.Sprintf("nested repository %s: not reviewed here; run kodyls review inside it", c.Path))
		default:
			files = append(files, c)
		}
	}
	res := contract.Resolve(os.Getenv, nil, nil)
	for _, p := range res.Problems {
		rep.Notes = append(rep.Notes, "configuration: "+p)
	}
	svc := openServices(ctx, workspace.Config{Settings: res.Settings, Getenv: os.Getenv, Log: logger, Offline: *offline})
	defer svc.Close()
	if svc.StoreErr != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%v: no review cache", svc.StoreErr))
	}
	rep.Offline = !svc.ModelConfigured()
	if !rep.Offline {
		if _, err := svc.Gateway(); err != nil {
			fmt.Fprintf(stderr, "kodyls review: %v\n", err)
			return 2
		}
	}
	folder := svc.Folder(root)
	// Progress is reported from here on: the split below may wait on the
	// model as long as any review stage.
	prog := newReviewProgress(stderr, len(files))
	defer prog.stop()
	ctx = llm.WithProgress(ctx, prog.stage)
	// With a model, assistants' rule files are split by it first (once
	// per content), so that the review checks the rules they hold.
	loaded, ruleErrs := folder.Reload(ctx)
	if pending := folder.PendingSplitFiles(); len(pending) > 0 {
		prog.file(0, "splitting "+strings.Join(pending, ", "))
		if folder.SplitRules(ctx) {
			loaded, ruleErrs = folder.Reload(ctx)
		}
		if g, _ := svc.Gateway(); g != nil {
			prog.endpoint(g.Status())
		}
	}
	ruleTitles := map[string]string{}
	for _, r := range loaded {
		ruleTitles[r.UUID] = r.Title
	}
	for _, le := range ruleErrs {
		rep.Notes = append(rep.Notes, "broken Kody Rule: "+le.Error())
	}
	for _, w := range folder.Engine.Warnings() {
		if w.Skipped {
			rep.Notes = append(rep.Notes, "Kody Rule file "+w.Error())
		}
	}
	if rep.Offline {
		unchecked := 0
		for _, r := range loaded {
			if r.Enabled && r.Detector == nil {
				unchecked++
			}
		}
		if unchecked > 0 {
			why := res.WhyNoModel()
			if *offline || why == "" {
				why = "--offline"
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d Kody Rule(s) without a detector not checked offline: they need a model (%s); `kodyls rules list` shows them", unchecked, why))
		}
	}
	_, problems := folder.Reviewer()
	rep.Notes = append(rep.Notes, problems...)

	var results []filereview.Result
	texts := map[string]string{} // the reviewed text of each file, for columns
	bases := map[string]string{} // and its baseline, for the change set
	for i, c := range files {
		if ctx.Err() != nil {
			break
		}
		rel := c.Path
		prog.file(i+1, rel)
		if why := symlinkSkip(root, top, c, *staged); why != "" {
			rep.Files = append(rep.Files, report.File{Path: rel, Skipped: why})
			continue
		}
		current, baseline, err := fileVersions(ctx, root, c, *base, *staged)
		if err != nil {
			rep.Files = append(rep.Files, report.File{Path: rel, Skipped: err.Error()})
			continue
		}
		// The file is checked through the same snapshot as an editor's
		// buffer, so both find the same things.
		snap := folder.FileSnapshot(rel, current, baseline, res.Settings)
		if snap.Skip.Skip() {
			rep.Files = append(rep.Files, report.File{Path: rel, Skipped: string(snap.Skip)})
			continue
		}
		for _, v := range snap.CheckRules() {
			rep.Findings = append(rep.Findings, ruleFinding(rel, current, v))
		}
		fr, err := folder.Review(ctx, snap.ReviewInput())
		if err != nil && !errors.Is(err, filereview.ErrOffline) {
			fr.Degraded = append(fr.Degraded, "review: "+err.Error())
		}
		var st llm.Status
		var setup *llm.StatusError
		if g, _ := svc.Gateway(); g != nil {
			st = g.Status()
			prog.endpoint(st)
			setup, _ = g.SetupFailure()
			prog.setup(setup)
		}
		fr.Degraded = prog.skipped(fr.Degraded, st, setup)
		file := report.File{Path: rel, Skipped: string(fr.Skipped), Hunks: fr.Hunks, CachedHunks: fr.CachedHunks, Degraded: fr.Degraded}
		rep.Files = append(rep.Files, file)
		results = append(results, fr)
		texts[rel], bases[rel] = current, workspace.ReviewBase(baseline)
	}
	if !rep.Offline && ctx.Err() == nil {
		// The pull-request rules judge the change set as a whole, once.
		var inputs []filereview.Input
		for _, fr := range results {
			inputs = append(inputs, filereview.Input{Path: fr.Path, Language: langid.Of(fr.Path), Base: bases[fr.Path], Current: texts[fr.Path]})
		}
		prog.file(0, "pull-request Kody Rules")
		byFile, err := folder.CheckPullRequest(ctx, inputs)
		if err != nil && !prog.setupSaid(err.Error()) {
			rep.Notes = append(rep.Notes, "pull-request Kody Rules not checked: "+err.Error())
		}
		for i := range results {
			results[i].Findings = append(results[i].Findings, byFile[results[i].Path]...)
		}
	}
	// kodus-config.yml's maxSuggestions, when it caps the whole change
	// (limitationType pr): the most severe findings of every file.
	results = folder.CapChange(results)
	if !rep.Offline && ctx.Err() == nil {
		results = folder.Cluster(ctx, results)
	}
	for _, fr := range results {
		for _, f := range fr.Findings {
			rep.Findings = append(rep.Findings, reviewFinding(fr.Path, texts[fr.Path], f, ruleTitles))
		}
	}
	if prog.skippedFiles > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the model stages of %d file(s) were skipped: %s", prog.skippedFiles, prog.downMsg))
	}
	// A set-up error (a wrong model, key or URL) that every model call
	// came to is not a review that passed: it is told once, and the
	// command fails as for any set-up error.
	setupFailed := false
	if g, _ := svc.Gateway(); g != nil && !rep.Offline {
		se, every := g.SetupFailure()
		prog.setup(se)
		if se != nil {
			// Short: stderr has the whole error, with what to do.
			rep.Notes = append(rep.Notes, fmt.Sprintf("the model stages of %d file(s) failed: LLM endpoint %s answered HTTP %d for model %q", prog.setupFiles, se.Endpoint, se.StatusCode, se.Model))
		}
		setupFailed = every
	}
	rep.Sort()
	if interruptedBy(ctx) != nil {
		markInterrupted(rep, len(rep.Files), len(files))
	}
	switch {
	case *format == "json":
		err = rep.WriteJSON(stdout)
	case *format == "sarif":
		err = rep.WriteSARIF(stdout)
	default:
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kodyls review: write the report: %v\n", err)
		return 2
	}
	if ctx.Err() != nil || setupFailed {
		return 2
	}
	if *failOn != "" && rep.Fails(*failOn) {
		return 1
	}
	return 0
}

// changeList lists the change set of the workspace root (in the
// repository whose top level is top) against base (or staged), plus
// untracked files for a working-tree review, limited to paths (relative to
// cwd, or absolute), which are taken literally. A path that is in another
// repository (a submodule's file, a repository nested in the work tree) is
// an error that says where to run the review.
func changeList(ctx context.Context, root, top, base string, staged bool, paths []string, cwd string) ([]changes.ChangedFile, error) {
	var specs []string
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(cwd, p)
		}
		// The directory through its real path, as root is; the name itself
		// may be a symbolic link, which is the change reviewed.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			where := "repository"
			if root != top {
				where = "workspace"
			}
			return nil, fmt.Errorf("%s is outside the %s %s", p, where, root)
		}
		spec := filepath.ToSlash(rel)
		if other := otherRepo(ctx, abs, top); other != "" {
			return nil, fmt.Errorf("%s is in the repository %s (a submodule or a repository of its own), not in %s: run kodyls review inside it", p, other, top)
		}
		// A path that is neither on disk nor known to git is a typo, not
		// a file without changes; a deleted tracked file is known.
		if _, err := os.Lstat(abs); errors.Is(err, os.ErrNotExist) {
			if _, gerr := gitOutput(ctx, root, append([]string{"ls-files", "--cached", "--others", "--error-unmatch", "--"}, changes.LiteralPathspecs([]string{spec})...)...); gerr != nil {
				return nil, fmt.Errorf("%s: no such file or directory", p)
			}
		}
		specs = append(specs, spec)
	}
	files, err := changes.ListChanges(ctx, root, base, staged, specs)
	switch {
	case errors.Is(err, changes.ErrNotACommit) && strings.HasPrefix(base, "-"):
		return nil, fmt.Errorf("--base %q is not a git revision", base)
	case errors.Is(err, changes.ErrNotACommit):
		return nil, fmt.Errorf("--base %q is not a commit in %s", base, root)
	}
	return files, err
}

// otherRepo returns the top level of the repository that holds abs (or its
// nearest existing parent) when it is not top, and "" when it is top's.
func otherRepo(ctx context.Context, abs, top string) string {
	dir := abs
	for {
		if st, err := os.Stat(dir); err == nil {
			if !st.IsDir() {
				dir = filepath.Dir(dir)
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	other, ok, err := changes.RepoRoot(ctx, dir)
	if err != nil || !ok || other == top {
		return ""
	}
	return other
}

// reviewWorkspaceDir is the absolute, symlink-free directory of
// --workspace DIR.
func reviewWorkspaceDir(dir, cwd string) (string, error) {
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, dir)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("--workspace %q is not a directory", dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// ownWorkspaceNote says, when the current directory is a folder below the
// repository's top level that holds Kody Rules or a kodus-config.yml of
// its own, that they are not the ones the review applies, and how to
// review that folder as an editor opened on it does.
func ownWorkspaceNote(top, cwd string) string {
	rel, err := filepath.Rel(top, cwd)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	for _, name := range []string{".kody", "kodus-config.yml"} {
		if _, err := os.Stat(filepath.Join(cwd, name)); err == nil {
			return fmt.Sprintf("%s/ holds a %s of its own, which this review of the whole repository %s does not apply: `kodyls review --workspace .` reviews %s/ as an editor opened on that folder does", filepath.ToSlash(rel), name, top, filepath.ToSlash(rel))
		}
	}
	return ""
}

// symlinkSkip says why a changed entry that is a symbolic link is not
// reviewed, and "" for any other file. A link to a file of the repository
// would repeat its target's findings (its baseline is the target's); one
// that leads out of the repository is not read.
func symlinkSkip(root, top string, c changes.ChangedFile, staged bool) string {
	abs := filepath.Join(root, filepath.FromSlash(c.Path))
	st, err := os.Lstat(abs)
	isLink := err == nil && st.Mode()&os.ModeSymlink != 0
	switch {
	case staged && c.Mode != "120000":
		return "" // a file in the index, whatever is on disk now
	case staged && !isLink:
		return "a symbolic link" // in the index, and no longer one on disk
	case !isLink:
		return ""
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "a symbolic link to a file that does not exist"
	}
	rel, err := filepath.Rel(top, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "a symbolic link leading outside the repository"
	}
	if r, err := filepath.Rel(root, target); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		rel = r
	}
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		return "a symbolic link to the directory " + filepath.ToSlash(rel)
	}
	return "a symbolic link to " + filepath.ToSlash(rel) + ", reviewed as that file"
}

// fileVersions returns the text to review and its baseline: the staged
// or the working tree's text, as the developer sees it (the repository's
// smudge filters applied), and the file's content at base, or its origin's
// for a renamed file.
func fileVersions(ctx context.Context, root string, c changes.ChangedFile, base string, staged bool) (current string, baseline changes.Baseline, err error) {
	abs := filepath.Join(root, filepath.FromSlash(c.Path))
	from := ""
	if c.From != "" {
		from = filepath.Join(root, filepath.FromSlash(c.From))
	}
	b, err := changes.LoadRenamed(ctx, abs, base, from)
	if err != nil {
		return "", baseline, fmt.Errorf("no baseline: %v", err)
	}
	if staged {
		var ok bool
		current, ok, err = changes.IndexText(ctx, b.RepoRoot, b.RelPath)
		if err == nil && !ok {
			err = fmt.Errorf("%s is not in the index", c.Path)
		}
	} else {
		var data []byte
		data, err = readConfined(root, c.Path)
		current = string(data)
	}
	if err != nil {
		return "", baseline, fmt.Errorf("cannot read: %v", err)
	}
	return current, b, nil
}

// readConfined reads a file of the repository; symlinks cannot lead out.
func readConfined(root, rel string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(filepath.FromSlash(rel))
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// ruleFinding reports a detector violation found by the same check the
// editor runs.
func ruleFinding(rel, text string, v workspace.RuleFinding) report.Finding {
	start := lineStart(text, v.Line)
	f := report.Finding{
		ID:        v.ID,
		Source:    report.SourceRule,
		File:      rel,
		StartLine: v.Line + 1, EndLine: v.Line + 1,
		StartColumn: colAt(text, start+v.Start), EndColumn: colAt(text, start+v.End),
		Severity: string(v.Rule.Severity), Label: "kody_rules",
		Summary: v.Rule.Title, Message: v.Rule.Lead(),
		RuleID: v.Rule.UUID, RuleTitle: v.Rule.Title,
	}
	if v.HasFix {
		// The detector's replacement of the matched text.
		f.ExistingCode, f.ImprovedCode = v.Match, v.Fix
	}
	return f
}

// lineStart is the byte offset of a 0-based line.
func lineStart(text string, line int) int {
	off := 0
	for ; line > 0; line-- {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}

// reviewFinding reports a finding of the model review; a Kody Rule
// violation the model found carries its rule.
func reviewFinding(rel, text string, f filereview.Finding, ruleTitles map[string]string) report.Finding {
	sp := anchor.Lines(text, f.Span)
	out := report.Finding{
		ID: f.ID, Source: report.SourceReview, File: rel,
		StartLine: sp.StartLine + 1, EndLine: sp.EndLine + 1,
		StartColumn: colAt(text, sp.Start), EndColumn: colAt(text, sp.End),
		Severity: f.Severity, Label: f.Label, Summary: f.OneSentenceSummary, Message: f.SuggestionContent,
		ExistingCode: f.ExistingCode, ImprovedCode: f.ImprovedCode, DuplicateOf: f.DuplicateOf,
		RuleID: f.RuleID, RuleTitle: ruleTitles[f.RuleID],
	}
	if out.Severity == "" {
		out.Severity = "medium"
	}
	for _, d := range f.Duplicates {
		out.Duplicates = append(out.Duplicates, report.Location{File: d.File, StartLine: d.LinesStart, EndLine: d.LinesEnd})
	}
	return out
}

// colAt is the 1-based UTF-16 column of a byte offset.
func colAt(text string, off int) int {
	off = min(max(off, 0), len(text))
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return utf16Col(text[start:], off-start)
}

func utf16Col(line string, byteOff int) int {
	byteOff = min(max(byteOff, 0), len(line))
	return len(utf16.Encode([]rune(line[:byteOff]))) + 1
}

// reviewProgress tells the user on stderr where a long review is: nothing
// for a review that takes less than a second, then a line per file and per
// model stage; and, once, that the endpoint is down and the model stages
// of the remaining files are skipped.
type reviewProgress struct {
	mu       sync.Mutex // stages of a file run concurrently
	w        io.Writer
	total    int
	start    time.Time
	n        int
	path     string
	stageNow string
	said     bool // a progress line was printed
	late     *time.Timer
	downSaid bool
	downMsg  string
	// skippedFiles counts the files whose model stages were refused
	// because the endpoint was down; they get one note, not a line each.
	skippedFiles int
	// setupMsg is the set-up error (HTTP 401, 403 or 404) told once;
	// setupFiles counts the files whose stages failed with it.
	setupMsg   string
	setupFiles int
}

// skipped drops the entries of a file's degraded stages that the
// endpoint line or the set-up line already tells of: the stages the
// breaker refused, the failure that opened it, and the stages the
// endpoint refused for a wrong model, key or URL. The file is counted
// once.
func (p *reviewProgress) skipped(degraded []string, st llm.Status, setup *llm.StatusError) []string {
	var kept []string
	dropped, refused := false, false
	for _, d := range degraded {
		breaker := st.State != llm.StateOK && st.Failure != "" && strings.Contains(d, st.Failure)
		if breaker || strings.Contains(d, llm.ErrUnavailable.Error()) {
			dropped = true
			continue
		}
		if setup != nil && strings.Contains(d, setup.Error()) {
			refused = true
			continue
		}
		kept = append(kept, d)
	}
	p.mu.Lock()
	if dropped {
		p.skippedFiles++
	}
	if refused {
		p.setupFiles++
	}
	p.mu.Unlock()
	return kept
}

// setup tells, once, of an answer that says kodyls is set up wrong.
func (p *reviewProgress) setup(se *llm.StatusError) {
	if se == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.setupMsg != "" {
		return
	}
	p.setupMsg = se.Error()
	fmt.Fprintf(p.w, "kodyls review: %s\n", p.setupMsg)
}

// setupSaid reports whether msg is about the set-up error already told.
func (p *reviewProgress) setupSaid(msg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.setupMsg != "" && strings.Contains(msg, p.setupMsg)
}

func newReviewProgress(w io.Writer, total int) *reviewProgress {
	p := &reviewProgress{w: w, total: total, start: time.Now()}
	// A review still in its first file and stage after progressAfter (a
	// slow or hung endpoint) says where it is then, not only when the
	// next file or stage starts.
	p.late = time.AfterFunc(progressAfter, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.said && p.path != "" {
			p.sayLocked()
		}
	})
	return p
}

// stop ends the late progress line's timer.
func (p *reviewProgress) stop() { p.late.Stop() }

// progressAfter is how long a review runs before it reports progress.
const progressAfter = time.Second

func (p *reviewProgress) file(n int, path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n, p.path, p.stageNow = n, path, ""
	p.sayLocked()
}

func (p *reviewProgress) stage(feature, schema string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stageNow = cmp.Or(schema, feature)
	p.sayLocked()
}

func (p *reviewProgress) sayLocked() {
	if time.Since(p.start) < progressAfter {
		return
	}
	where := p.path
	if p.n > 0 {
		where = fmt.Sprintf("file %d of %d: %s", p.n, p.total, p.path)
	}
	if p.stageNow != "" {
		where += " (" + p.stageNow + ")"
	}
	fmt.Fprintf(p.w, "kodyls review: %s\n", where)
	p.said = true
}

func (p *reviewProgress) endpoint(st llm.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.downSaid || st.State != llm.StateDown {
		return
	}
	// Not st.Message: it promises a retry after the cooldown, which a
	// command that exits does not make.
	p.downSaid = true
	p.downMsg = fmt.Sprintf("LLM endpoint %s is not answering (%s)", st.Endpoint, st.LastError)
	fmt.Fprintf(p.w, "kodyls review: %s; the model stages of the remaining files are skipped (Kody Rules detectors still run)\n", p.downMsg)
}
