// Package fix is "Fix this error": plan mode (package planmode) applied to
// one build error. The plan investigates the code with the read-only
// workspace tools and proposes search/replace edits; every edit is
// validated (inside the workspace, not on the privacy list, its old text
// found exactly once); the edits are verified by running the configured
// build on a scratch copy of the workspace, and a failing build makes the
// reflection adjust the plan, up to a number of rounds. Nothing here
// writes the user's files: the caller applies the result (Apply, or the
// editor through a workspace edit).
package fix

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/planmode"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/agents/tools"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/prompts"
)

// Tool and step names of a fix plan.
const (
	ToolProposeEdits = "propose_edits"
	ToolVerifyBuild  = "verify_build"
	verifyStepID     = "verify"
)

// DefaultRounds is how many plan versions a fix may try.
const DefaultRounds = 3

// DefaultTimeout bounds a whole fix: every model call, tool call and
// verifying build of every round.
const DefaultTimeout = 10 * time.Minute

// ErrNoModel is returned when no model is configured.
var ErrNoModel = errors.New("Fix this error needs a model; configure KODYLS_LLM_BASE_URL (and KODYLS_LLM_MODEL), or the llm settings of your editor")

// noModelError is ErrNoModel saying why there is no model.
type noModelError struct{ why string }

func (e *noModelError) Error() string        { return "Fix this error needs a model: " + e.why }
func (e *noModelError) Is(target error) bool { return target == ErrNoModel }

// Verification outcomes.
const (
	VerifyPassed = "passed"
	VerifyFailed = "failed"
	// VerifyNotRun: a build is configured, but it did not run with the
	// final edits: there were none, one of them edits the build's own
	// definition, or another edit of the plan was rejected.
	VerifyNotRun  = "notRun"
	VerifySkipped = "skipped"
)

// Request is one error to fix.
type Request struct {
	Error errparse.Error
	// Output is the compiler output the error came from, shown to the
	// model.
	Output string
	// Build is the command that verifies a fix (run with sh in a scratch
	// copy of the workspace); empty: the fix is not verified.
	Build        string
	BuildTimeout time.Duration
	// Dir is the directory the build runs in, relative to the workspace
	// root (slash-separated; "" is the root): the output's relative paths
	// are relative to it. Error.File is relative to the root whatever
	// Dir is.
	Dir string
}

// Result is the outcome of a fix.
type Result struct {
	// Edits are the edits of the final plan version that were validated.
	Edits []Edit `json:"edits"`
	// Diff is Edits as a unified diff against the workspace.
	Diff string `json:"diff"`
	// Verified is true when the build passed with the edits applied.
	Verified bool `json:"verified"`
	// Verification is passed, failed, notRun (a build is configured but
	// did not run with the final edits: see WhyNotRun) or skipped (no
	// build command).
	Verification string `json:"verification"`
	Build        string `json:"build,omitempty"`
	// Rounds counts the plan versions that ran.
	Rounds int `json:"rounds"`
	// Status is the final plan version's status.
	Status planmode.PlanStatus `json:"status"`
	// Refused are the edits the model proposed to files that define the
	// build; they are never applied nor built, and RefusedDiff shows them
	// for the user to make, or not.
	Refused     []RefusedEdit `json:"refused"`
	RefusedDiff string        `json:"refusedDiff,omitempty"`
	// Plans holds every plan version, as each ended.
	Plans       []planmode.Plan       `json:"plans"`
	Reflections []planmode.Reflection `json:"reflections"`
	// Trail lists the plan-mode nodes run, in order.
	Trail []string `json:"trail"`
	// BuildOutput is the last verifying build's output.
	BuildOutput string `json:"buildOutput,omitempty"`
	Note        string `json:"note,omitempty"`
}

// Found reports whether the result is a fix to offer: valid edits of a
// plan that completed, verified by the build when one is configured. A
// plan that failed or ran out of time offers nothing, whatever edits it
// had validated on the way.
func (r *Result) Found() bool {
	return len(r.Edits) > 0 && r.Status == planmode.PlanCompleted && (r.Verified || r.Verification == VerifySkipped)
}

// WhyNotRun says why the build did not verify the result's edits, when
// Verification is VerifyNotRun; "" otherwise. The command line and the
// editor both tell it.
func (r *Result) WhyNotRun() string {
	if r.Verification != VerifyNotRun {
		return ""
	}
	switch {
	case len(r.Refused) > 0 && r.Refused[0].OwnConfiguration():
		return fmt.Sprintf("the fix edits %s, which is kodyls's own configuration", r.Refused[0].File)
	case len(r.Refused) > 0:
		return fmt.Sprintf("the fix edits %s, which defines the build", r.Refused[0].File)
	case len(r.Edits) == 0:
		return fmt.Sprintf("no edit to verify after %d round(s)", r.Rounds)
	default:
		return "the build did not run with the plan's last edits"
	}
}

// Fixer fixes errors in one workspace.
type Fixer struct {
	Workspace string
	Gateway   *llm.Gateway // nil: no model, Fix fails with ErrNoModel
	Prompts   *prompts.Set
	// NoModel says why Gateway is nil and what to do (an unusable base URL,
	// a missing model), for the error Fix returns; "": ErrNoModel's words.
	NoModel string
	// Ignore lists the files never read into a prompt nor edited; nil:
	// the default privacy list (rca.IgnoreList).
	Ignore func(rel string) bool
	// Rounds bounds the plan versions tried (default DefaultRounds).
	Rounds int
	// MaxToolCalls bounds the steps that run a tool, over every round
	// (default agent.DefaultMaxToolCalls); a plan version has at most
	// planmode.DefaultMaxSteps steps, the verifying build included.
	MaxToolCalls int
	// Timeout bounds the whole fix (default DefaultTimeout).
	Timeout time.Duration
	Log     *slog.Logger
	// Thread and Checkpoints make a fix resumable (see planmode).
	Thread      string
	Checkpoints agent.Checkpointer
}

func (f *Fixer) ignore() func(string) bool {
	if f.Ignore == nil {
		return rca.IgnoreList()
	}
	return f.Ignore
}

func (f *Fixer) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// Fix plans, validates and verifies a fix of req.Error. emit receives the
// plan events; it may be nil.
func (f *Fixer) Fix(ctx context.Context, req Request, emit func(agent.Event)) (*Result, error) {
	if f.Gateway == nil {
		if f.NoModel != "" {
			return nil, &noModelError{f.NoModel}
		}
		return nil, ErrNoModel
	}
	rounds := f.Rounds
	if rounds <= 0 {
		rounds = DefaultRounds
	}
	e := req.Error
	dir, err := buildDir(req.Dir)
	if err != nil {
		return nil, err
	}
	ws := tools.Workspace{Root: f.Workspace, Ignore: f.ignore()}
	read := []agent.Tool{ws.ReadFile(), ws.SearchWorkspace(), ws.ListFiles(), ws.FindReferences()}
	guard := newBuildGuard(f.Workspace, dir, req.Build)
	planTools := map[string]planmode.StepFunc{ToolProposeEdits: f.proposeStep(guard)}
	if req.Build != "" {
		planTools[ToolVerifyBuild] = f.verifyStep(req.Build, dir, req.BuildTimeout, guard)
	}
	x, err := planmode.NewExecutor(read, planTools, f.log())
	if err != nil {
		return nil, err
	}
	refs := make([]prompts.ToolRef, len(read))
	names := make([]string, 0, len(read)+1)
	for i, t := range read {
		refs[i] = prompts.ToolRef{Name: t.Name, Description: t.Description}
		names = append(names, t.Name)
	}
	names = append(names, ToolProposeEdits)
	sys, err := f.Prompts.Render("fix_system", prompts.FixSystemData{Tools: refs, Build: req.Build})
	if err != nil {
		return nil, err
	}
	perr := prompts.ParsedError{Tool: e.Tool, Language: e.Language, File: e.File, Line: e.Line, Column: e.Column, Severity: e.Severity, Code: e.Code, Message: e.Message, Raw: excerpt(req.Output, 4000)}
	user, err := f.Prompts.Render("fix_plan", prompts.FixPlanData{Error: perr, Code: f.codeContext(e)})
	if err != nil {
		return nil, err
	}
	gen := &planmode.ModelGenerator{
		Gateway: f.Gateway, Feature: "fix", System: sys.Text, User: user.Text, Tools: names,
		Fallback: func(error) planmode.Plan { return f.fallbackPlan(e) },
		// Room for the verifying step normalize adds.
		MaxSteps: planmode.DefaultMaxSteps - 1,
	}
	model := &planmode.ModelReflector{Gateway: f.Gateway, Feature: "fix", Prompt: func(s planmode.State) (string, string, error) {
		r, err := f.Prompts.Render("fix_reflect", prompts.FixReflectData{
			Error: perr, Version: s.Plan.Version, Plan: describePlan(s.Plan), BuildOutput: buildOutput(s.Plan),
			Round: s.Cycles + 1, MaxRounds: rounds,
		})
		return sys.Text, r.Text, err
	}}
	o := &planmode.Orchestrator{
		Name:        "fix",
		Generator:   gen,
		Executor:    x,
		Reflector:   reflector{model: model, build: req.Build != ""},
		Normalize:   func(p planmode.Plan) planmode.Plan { return normalize(p, req.Build) },
		MaxCycles:   rounds,
		MaxSteps:    planmode.DefaultMaxSteps,
		Budget:      agent.Budget{MaxToolCalls: f.MaxToolCalls, Timeout: cmp.Or(f.Timeout, DefaultTimeout)},
		Thread:      f.Thread,
		Checkpoints: f.Checkpoints,
		Log:         f.log(),
	}
	if o.Thread == "" && o.Checkpoints != nil {
		o.Thread = f.thread(req)
	}
	goal := fmt.Sprintf("fix %s", location(e))
	st, err := o.Run(ctx, goal, emit)
	if errors.Is(err, agent.ErrTimeout) {
		// The time limit ends the fix with what it got to; nothing it did
		// is trusted as verified.
		if n := len(st.Versions); n > 0 {
			st.Plan = st.Plan.Fail(err.Error())
			st.Versions = append(st.Versions[:n-1:n-1], st.Plan)
		}
		res := f.result(st, req, guard)
		res.Verified, res.Status = false, planmode.PlanFailed
		if res.Verification == VerifyPassed {
			res.Verification = VerifyFailed
		}
		res.Note = fmt.Sprintf("the fix did not finish within its time limit (%s); run it again to continue where it stopped", cmp.Or(f.Timeout, DefaultTimeout))
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	return f.result(st, req, guard), nil
}

// result reads the outcome off the final plan version.
func (f *Fixer) result(st planmode.State, req Request, guard *buildGuard) *Result {
	p := st.Plan
	res := &Result{
		Edits: []Edit{}, Status: p.Status, Plans: st.Versions, Reflections: st.Reflections, Trail: st.Trail,
		Build: req.Build, Rounds: len(st.Versions),
	}
	if res.Reflections == nil {
		res.Reflections = []planmode.Reflection{}
	}
	edits, err := planEdits(f.Workspace, f.ignore(), p, "")
	if err == nil && refusal(f.Workspace, f.ignore(), guard, edits) != nil {
		// The propose step refuses these; edits that got past it (a plan
		// resumed from another version's checkpoint) are no fix.
		err = errors.New("the plan edits kodyls's own configuration or the build's definition")
	}
	if err == nil {
		res.Edits = edits
		res.Diff, _ = Diff(f.Workspace, f.ignore(), edits)
	}
	if s, ok := p.Step(verifyStepID); ok {
		if s.Attempts > 0 {
			// A verify step that never ran leaves the plan versions' count.
			res.Rounds = s.Attempts
		}
		if buildRan(p) {
			res.BuildOutput = buildOutput(p)
		}
		if s.Status == planmode.StepDone {
			res.BuildOutput = strings.TrimPrefix(s.Result, "the build passed\n")
		}
	}
	switch {
	case req.Build == "":
		res.Verification = VerifySkipped
		res.Note = "no build command is configured (build.onSave, or --build), so the fix was not verified"
	case p.Status == planmode.PlanCompleted && stepDone(p, verifyStepID):
		res.Verification, res.Verified = VerifyPassed, true
	case buildRan(p):
		res.Verification = VerifyFailed
	default:
		res.Verification = VerifyNotRun
	}
	res.Refused = refusedEdits(f.Workspace, guard, st.Versions)
	if len(res.Refused) > 0 {
		res.RefusedDiff = refusedDiff(f.Workspace, res.Refused)
	}
	switch {
	case len(res.Refused) > 0 && (len(res.Edits) == 0 || !res.Verified) && res.Refused[0].OwnConfiguration():
		res.Note = fmt.Sprintf("the fix needs a change to %s: %s. That change was neither verified nor applied; review it and make it yourself if it is right", res.Refused[0].File, res.Refused[0].Reason)
	case len(res.Refused) > 0 && (len(res.Edits) == 0 || !res.Verified):
		res.Note = fmt.Sprintf("the fix needs a change to %s, which defines the build: %s. kodyls never runs the build with the model's edits to its own definition, so that change was neither verified nor applied; review it and make it yourself if it is right", res.Refused[0].File, res.Refused[0].Reason)
	case len(res.Edits) == 0:
		res.Note = strings.TrimSpace("no valid edit was proposed. " + p.Reason)
		if why := lastRejection(st.Versions); why != "" {
			res.Note += " The last edits proposed were rejected: " + why
		}
	case res.Verification == VerifyNotRun:
		res.Note = strings.TrimSpace("the build did not run with the last edits. " + p.Reason)
		if why := lastRejection(st.Versions); why != "" {
			res.Note += " The last edits proposed were rejected: " + why
		} else if v, ok := p.Step(verifyStepID); ok && v.Status == planmode.StepFailed {
			res.Note += " " + excerpt(strings.TrimPrefix(v.Result, "error: "), 1000)
		}
	case p.Status == planmode.PlanFailed && req.Build != "":
		res.Note = fmt.Sprintf("the build still fails with the last edits after %d rounds: %s", res.Rounds, p.Reason)
	case p.Status != planmode.PlanCompleted:
		res.Note = strings.TrimSpace(fmt.Sprintf("the plan did not complete (%s), so its edits are not offered as a fix: %s", p.Status, p.Reason))
	}
	if res.Refused == nil {
		res.Refused = []RefusedEdit{}
	}
	return res
}

// lastRejection is why the last failed propose_edits step of versions
// failed, or "".
func lastRejection(versions []planmode.Plan) string {
	for i := len(versions) - 1; i >= 0; i-- {
		steps := versions[i].Steps
		for j := len(steps) - 1; j >= 0; j-- {
			if s := steps[j]; s.Tool == ToolProposeEdits && s.Status == planmode.StepFailed {
				return excerpt(strings.TrimPrefix(s.Result, "error: "), 1000)
			}
		}
	}
	return ""
}

// errBuildNotRun begins the error of a verifying step that stopped
// before the build ran.
const errBuildNotRun = "the build was not run"

// buildRan reports whether p's verifying step ran the build: it passed,
// failed, timed out, or was running when the fix stopped. A step that was
// skipped or pending, or stopped before the build (no edit to verify, an
// edit to the build's definition, no scratch copy), did not.
func buildRan(p planmode.Plan) bool {
	s, ok := p.Step(verifyStepID)
	if !ok {
		return false
	}
	switch s.Status {
	case planmode.StepDone, planmode.StepRunning:
		return true
	case planmode.StepFailed:
		why := strings.TrimPrefix(s.Result, "error: ")
		return !strings.HasPrefix(why, errBuildNotRun) && !strings.HasPrefix(why, "nothing to verify")
	}
	return false
}

func stepDone(p planmode.Plan, id string) bool {
	s, ok := p.Step(id)
	return ok && s.Status == planmode.StepDone
}

// planEdits validates the edits of p's done propose_edits steps that come
// before the step upTo (all when upTo is ""), in plan order.
func planEdits(root string, ignore func(string) bool, p planmode.Plan, upTo string) ([]Edit, error) {
	var all []Edit
	for _, s := range p.Steps {
		if s.ID == upTo {
			break
		}
		if s.Tool != ToolProposeEdits || s.Status != planmode.StepDone {
			continue
		}
		es, err := decodeEdits(s.Input)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	if len(all) == 0 {
		return nil, errors.New("the plan has no validated edits")
	}
	return Check(root, ignore, all)
}

// proposeStep validates a propose_edits step's edits on top of those of
// the earlier edit steps, and refuses the step when it edits a file that
// defines the build. Nothing is written.
func (f *Fixer) proposeStep(guard *buildGuard) planmode.StepFunc {
	return func(ctx context.Context, p planmode.Plan, s planmode.Step) (string, error) {
		res, err := f.propose(ctx, p, s)
		if err != nil {
			return "", err
		}
		edits, _ := decodeEdits(s.Input)
		if err := refusal(f.Workspace, f.ignore(), guard, edits); err != nil {
			return "", err
		}
		return res, nil
	}
}

func (f *Fixer) propose(_ context.Context, p planmode.Plan, s planmode.Step) (string, error) {
	edits, err := decodeEdits(s.Input)
	if err != nil {
		return "", err
	}
	var before []Edit
	if prev, err := planEdits(f.Workspace, f.ignore(), p, s.ID); err == nil {
		before = prev
	}
	c := newChecker(f.Workspace, f.ignore())
	if _, err := c.applyAll(before); err != nil && len(before) > 0 {
		return "", err
	}
	ok, err := c.applyAll(edits)
	if err != nil {
		return "", err
	}
	files := map[string]bool{}
	var names []string
	for _, e := range ok {
		if !files[e.File] {
			files[e.File] = true
			names = append(names, e.File)
		}
	}
	return fmt.Sprintf("%d edit(s) validated in %s", len(ok), strings.Join(names, ", ")), nil
}

// buildDir checks Request.Dir: a directory inside the workspace, "" for
// the root.
func buildDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	clean := path.Clean(filepath.ToSlash(dir))
	if filepath.IsAbs(dir) || strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("the build directory %q is not inside the workspace", dir)
	}
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// verifyStep runs the configured build in dir of a scratch copy with the
// plan's edits. A failing build fails the step, its output as the result.
func (f *Fixer) verifyStep(command, dir string, timeout time.Duration, guard *buildGuard) planmode.StepFunc {
	return func(ctx context.Context, p planmode.Plan, s planmode.Step) (string, error) {
		edits, err := planEdits(f.Workspace, f.ignore(), p, s.ID)
		if err != nil {
			return "", fmt.Errorf("%s: nothing to verify: %w", errBuildNotRun, err)
		}
		// The propose step refuses these already; the build must not run
		// with one whatever path led here.
		if err := refusal(f.Workspace, f.ignore(), guard, edits); err != nil {
			return "", fmt.Errorf("%s: %w", errBuildNotRun, err)
		}
		run, err := f.verify(ctx, command, dir, timeout, edits)
		if err != nil && !run.ran {
			return "", fmt.Errorf("%s: %w", errBuildNotRun, err)
		}
		if err != nil {
			return "", err
		}
		if run.passed {
			return "the build passed\n" + excerpt(run.output, 4000), nil
		}
		return "", fmt.Errorf("the build still fails (exit status %d):\n%s", run.exit, excerpt(run.output, 4000))
	}
}

// buildOutput is the failing build's output recorded in p's verify step.
func buildOutput(p planmode.Plan) string {
	s, ok := p.Step(verifyStepID)
	if !ok || s.Status != planmode.StepFailed {
		return ""
	}
	out := strings.TrimPrefix(s.Result, "error: ")
	if i := strings.Index(out, ":\n"); i >= 0 && strings.HasPrefix(out, "the build still fails") {
		out = out[i+2:]
	}
	return out
}

// normalize makes every plan version end with the verify step when a
// build is configured: it depends on every edit step, and runs again when
// that set changed.
func normalize(p planmode.Plan, build string) planmode.Plan {
	var editIDs []string
	for _, s := range p.Steps {
		if s.Tool == ToolProposeEdits {
			editIDs = append(editIDs, s.ID)
		}
	}
	v, has := p.Step(verifyStepID)
	if build == "" || len(editIDs) == 0 {
		if has && v.Status == planmode.StepPending {
			v.Status, v.Result = planmode.StepSkipped, "skipped: nothing to verify"
			return p.WithStep(v)
		}
		return p
	}
	if !has {
		p.Steps = append(p.Steps[:len(p.Steps):len(p.Steps)], planmode.Step{
			ID: verifyStepID, Tool: ToolVerifyBuild, DependsOn: editIDs, Status: planmode.StepPending,
			Description: fmt.Sprintf("run %s on a scratch copy of the workspace with the edits applied", build),
		})
		return p
	}
	if strings.Join(v.DependsOn, ",") != strings.Join(editIDs, ",") || v.Tool != ToolVerifyBuild {
		v.Tool, v.DependsOn, v.Input = ToolVerifyBuild, editIDs, nil
		v.Status, v.Result = planmode.StepPending, ""
		return p.WithStep(v)
	}
	return p
}

// reflector completes a plan whose edits the build accepted, or whose
// edits validated when there is no build, without asking the model; the
// model reflects on everything else.
type reflector struct {
	model planmode.Reflector
	build bool
}

func (r reflector) Reflect(ctx context.Context, s planmode.State) (planmode.Reflection, error) {
	p := s.Plan
	if r.build && stepDone(p, verifyStepID) {
		return planmode.Reflection{Version: p.Version, Assessment: planmode.AssessComplete, Reasoning: "the build passes with the edits"}, nil
	}
	if !r.build && p.AllDone() && hasDoneEdits(p) {
		return planmode.Reflection{Version: p.Version, Assessment: planmode.AssessComplete, Reasoning: "the edits are valid; no build command verifies them"}, nil
	}
	ref, err := r.model.Reflect(ctx, s)
	if err == nil && r.build && ref.Assessment == planmode.AssessComplete && !stepDone(p, verifyStepID) {
		// The build decides: a fix it has not passed is not complete.
		if p.HasPending() {
			ref.Assessment = planmode.AssessOnTrack
			ref.Reasoning = "the build has not verified the edits yet: " + ref.Reasoning
		} else {
			ref.Assessment = planmode.AssessFailed
			ref.Reasoning = "the build does not pass with the edits: " + ref.Reasoning
		}
	}
	return ref, err
}

func hasDoneEdits(p planmode.Plan) bool {
	for _, s := range p.Steps {
		if s.Tool == ToolProposeEdits && s.Status == planmode.StepDone {
			return true
		}
	}
	return false
}

// fallbackPlan reads the code at the error when the model gave no usable
// plan; the reflection then adds the edit.
func (f *Fixer) fallbackPlan(e errparse.Error) planmode.Plan {
	args, _ := json.Marshal(tools.ReadFileArgs{Path: e.File, Line: e.Line})
	return planmode.Plan{Steps: []planmode.Step{{
		ID: "read", Tool: "read_file", Input: args, Description: "read the code around " + location(e),
	}}}
}

// describePlan renders a plan version with each step's input and result,
// for the reflection.
func describePlan(p planmode.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan v%d (%s)", p.Version, p.Status)
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "\n%d. [%s] %s: %s", i+1, s.Status, s.ID, s.Description)
		if s.Tool != "" {
			fmt.Fprintf(&b, "\n   tool: %s", s.Tool)
		}
		if len(s.Input) > 0 {
			fmt.Fprintf(&b, "\n   input: %s", excerpt(string(s.Input), 3000))
		}
		if s.Result != "" && s.ID != verifyStepID {
			fmt.Fprintf(&b, "\n   result: %s", strings.ReplaceAll(excerpt(s.Result, 2000), "\n", "\n   "))
		}
	}
	return b.String()
}

// codeContext reads the lines around the error when the file is in the
// workspace and not on the privacy list.
func (f *Fixer) codeContext(e errparse.Error) prompts.CodeContext {
	return rca.CodeContext(tools.Workspace{Root: f.Workspace, Ignore: f.ignore()}, e)
}

func location(e errparse.Error) string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	return loc + ": " + e.Message
}

func excerpt(s string, n int) string {
	head, cut := redact.Cut(s, n)
	if cut {
		return head + "\n…(truncated)"
	}
	return head // redacted when it fits only so
}

// thread names a fix for the checkpointer: the same error, in the same
// code, verified by the same command, resumes an interrupted fix; any
// change to the files the error points at starts a new one.
func (f *Fixer) thread(req Request) string {
	e := req.Error
	d := sha256.New()
	fmt.Fprintf(d, "%s\x00%s\x00%s\x00%s\x00%d\x00%s\x00", f.Workspace, e.Tool, e.Message, e.File, e.Line, req.Build)
	if req.Dir != "" {
		fmt.Fprintf(d, "dir\x00%s\x00", req.Dir)
	}
	files := []string{e.File}
	for _, fr := range e.Frames {
		if fr.InWorkspace {
			files = append(files, fr.File)
		}
	}
	for _, rel := range files {
		if rel == "" || filepath.IsAbs(rel) || f.ignore()(rel) {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(f.Workspace, filepath.FromSlash(rel)))
		fmt.Fprintf(d, "%s\x00%d\x00", rel, len(data))
		d.Write(data)
	}
	return "fix/" + hex.EncodeToString(d.Sum(nil))[:24]
}
