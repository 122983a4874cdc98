package rca

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/react"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/agents/router"
	"github.com/kodustech/kodyls/agents/tools"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

// Sources of an answer.
const (
	SourceModel   = "model"   // the agent reasoned with the model
	SourceHistory = "history" // a stored explanation of the same error
	SourceOffline = "offline" // built-in guidance, no model
)

// HistoryLimit is how many distinct errors the history keeps, over all
// workspaces; the least recently seen beyond it are pruned when a process
// that records errors (the server, `kodyls explain`) first opens it.
// Commands that only read the history never prune it.
const HistoryLimit = 10000

// CacheAge is how long a stored explanation answers the same error in the
// same code without asking the model again.
const CacheAge = 24 * time.Hour

// Answer is the explanation, in the shape of the `explain --json` contract.
type Answer struct {
	RootCause     string   `json:"rootCause"`
	FixGuidelines []string `json:"fixGuidelines"`
	Confidence    float64  `json:"confidence"`
	Iterations    int      `json:"iterations"`
	ToolsUsed     []string `json:"toolsUsed"`
	Source        string   `json:"source"`
	// Path says which agent strategies answered ("react", or "react →
	// plan-execute (3 failed tool calls)" when the fast path escalated).
	Path string `json:"path,omitempty"`
}

// ModelAnswer is what the model hands back through the agent's final
// answer; the strategy's answer type.
type ModelAnswer struct {
	RootCause     string   `json:"rootCause" jsonschema:"the root cause of the error, in one or two sentences"`
	FixGuidelines []string `json:"fixGuidelines" jsonschema:"concrete steps that fix the error"`
	Confidence    float64  `json:"confidence" jsonschema:"how sure you are, from 0 to 1"`
}

// Check implements agent.Checker: a root cause is required, empty fix
// steps are dropped and the confidence is read as a fraction from 0 to 1
// (see NormalizeConfidence).
func (a *ModelAnswer) Check() error {
	a.RootCause = strings.TrimSpace(a.RootCause)
	if a.RootCause == "" {
		return errors.New("rootCause is missing or empty")
	}
	fixes := []string{} // never null in the JSON the editor receives
	for _, f := range a.FixGuidelines {
		if f = strings.TrimSpace(f); f != "" {
			fixes = append(fixes, f)
		}
	}
	a.FixGuidelines = fixes
	a.Confidence = NormalizeConfidence(a.Confidence)
	return nil
}

// NormalizeConfidence reads a model's confidence as a fraction from 0 to
// 1. Models often give a percentage (85 for 0.85, 30 for 0.3): a value
// above 1 and up to 100 is one. Anything else out of range (negative,
// above 100, not a number) says nothing and counts as 0, unknown, which
// keeps a useful answer while its confidence stays honest: a router
// escalates it as unsure.
func NormalizeConfidence(c float64) float64 {
	switch {
	case math.IsNaN(c) || c < 0 || c > 100:
		return 0
	case c > 1:
		return c / 100
	}
	return c
}

// String is the root cause, what the agent's done event reports.
func (a ModelAnswer) String() string { return a.RootCause }

// ConfidenceScore implements router.Confident: an unsure answer of the
// fast path is escalated to the planner.
func (a ModelAnswer) ConfidenceScore() float64 { return a.Confidence }

// agentPrompts word the ReAct loop for root-cause analysis.
var agentPrompts = react.Prompts{
	FinalAnswer: "Give the final answer: the root cause of the error, how to fix it, and your confidence. Call it as soon as you know; it ends the investigation.",
	Continue:    "Continue the investigation with a tool call, or call final_answer if you know the root cause.",
	Stop:        "Call final_answer now with your best root cause and fix guidelines from what you found so far; lower your confidence if unsure.",
	Repair:      `Call final_answer again with {"rootCause": non-empty string, "fixGuidelines": array of strings, "confidence": number from 0 to 1}.`,
}

// DefaultStrategy is the strategy an Explainer uses when it is given none:
// ReAct with prompts worded for root-cause analysis.
func DefaultStrategy() agent.Strategy[ModelAnswer] {
	return react.Strategy[ModelAnswer]{Prompts: agentPrompts}
}

// RoutedStrategy is ReAct worded for root-cause analysis that escalates,
// at most once, to escalate when the investigation turns out harder than
// it looked: too many steps, failing tool calls, a loop guard, or an
// answer of low confidence (see package router).
func RoutedStrategy(escalate agent.Strategy[ModelAnswer]) agent.Strategy[ModelAnswer] {
	return router.Strategy[ModelAnswer]{Fast: DefaultStrategy(), Planner: escalate}
}

// Similar is a past error like this one.
type Similar struct {
	Fingerprint   string   `json:"fingerprint"`
	Tool          string   `json:"tool"`
	Code          string   `json:"code,omitempty"`
	Message       string   `json:"message"`
	File          string   `json:"file,omitempty"`
	Count         int      `json:"count"`
	Score         float64  `json:"score"`
	Exact         bool     `json:"exact"`
	RootCause     string   `json:"rootCause,omitempty"`
	FixGuidelines []string `json:"fixGuidelines,omitempty"`
	Confidence    float64  `json:"confidence,omitempty"` // of the explanation given then
}

// Report is the outcome of one explanation.
type Report struct {
	Errors  []errparse.Error `json:"errors"`
	Primary int              `json:"primary"`
	Similar []Similar        `json:"similar"`
	RCA     *Answer          `json:"rca"`
	// Note says how the answer was obtained when no model was used.
	Note string `json:"note,omitempty"`
	// Docs is the toolchain's own documentation of the error code, when
	// no model was used and the toolchain is installed (rustc --explain).
	Docs string `json:"docs,omitempty"`
}

// Explainer explains errors of one workspace.
type Explainer struct {
	Workspace string
	// Dir is the absolute directory the tool whose output Explain parses
	// ran in: its relative paths are relative to it. "" is Workspace.
	Dir     string
	Gateway *llm.Gateway  // nil: no model
	History index.History // nil: nothing remembered
	Prompts *prompts.Set
	Ignore  func(rel string) bool // files never read into a prompt
	// Overlay is the text of files open in the editor, by path relative
	// to Workspace (slash-separated): the code around the error, the
	// agent's read_file and the history's "same error in the same code"
	// read it rather than the disk, whose lines are not the ones the
	// editor's diagnostic counts while changes are unsaved. The privacy
	// list applies to these paths as to the others. nil: the disk.
	Overlay map[string]string
	// NoModel says why Gateway is nil and what to do (an unusable base URL,
	// a missing model), for the note of an answer given without a model;
	// "": no model is configured.
	NoModel string
	// Strategy is how the agent works towards an answer; nil: ReAct
	// (DefaultStrategy).
	Strategy agent.Strategy[ModelAnswer]
	Agent    agent.Budget // zero fields: the agent package's defaults
	// Checkpoints keeps the agent's progress after every step, so that an
	// explanation interrupted by a crash resumes where it stopped when the
	// same error in the same code is explained again; nil: none.
	Checkpoints agent.Checkpointer
	Log         *slog.Logger
}

// ErrNoError is returned when the output holds no error kodyls recognises.
var ErrNoError = errors.New("no error found in the output: pass the compiler or test output (stdout and stderr)")

// Explain parses output and explains its primary error. offline forbids
// the model even when one is configured.
func (x *Explainer) Explain(ctx context.Context, output string, offline bool, emit func(agent.Event)) (*Report, error) {
	errs := errparse.Parse(output, errparse.Options{Workspace: x.Workspace, Dir: x.Dir})
	p := errparse.Primary(errs)
	if p < 0 {
		return &Report{Errors: []errparse.Error{}, Primary: -1, Similar: []Similar{}}, ErrNoError
	}
	return x.explain(ctx, errs, p, output, offline, emit)
}

// ExplainError explains one error already known, such as an editor
// diagnostic: raw is the text shown to the model as the tool's output.
func (x *Explainer) ExplainError(ctx context.Context, e errparse.Error, raw string, offline bool, emit func(agent.Event)) (*Report, error) {
	if e.Fingerprint == "" {
		e.Fingerprint = errparse.Fingerprint(e)
	}
	return x.explain(ctx, []errparse.Error{e}, 0, raw, offline, emit)
}

func (x *Explainer) explain(ctx context.Context, errs []errparse.Error, primary int, output string, offline bool, emit func(agent.Event)) (*Report, error) {
	rep := &Report{Errors: errs, Primary: primary, Similar: []Similar{}}
	e := errs[primary]
	rec := record(x.Workspace, e, output)
	msgHash := rec.MessageHash
	hash, known := x.contentHash(e)
	var errID int64
	if x.History != nil {
		id, err := x.History.Record(ctx, rec)
		if err != nil {
			x.log().Warn("cannot record the error in history", "error", err)
		}
		errID = id
		// Code kodyls cannot read may have changed since: no stored
		// answer is reused for it.
		if known {
			if ex, ok, err := x.History.Cached(ctx, x.Workspace, e.Fingerprint, hash, msgHash, CacheAge); err == nil && ok {
				rep.RCA = &Answer{RootCause: ex.RootCause, FixGuidelines: ex.Steps, Confidence: ex.Confidence, Source: SourceHistory, ToolsUsed: []string{}}
				rep.Note = fmt.Sprintf("answered from history: the same error in the same code was explained %s ago", time.Since(ex.CreatedAt).Round(time.Minute))
				rep.Similar = x.similar(ctx, rec)
				return rep, nil
			}
		}
		rep.Similar = x.similar(ctx, rec)
	}

	if offline || x.Gateway == nil {
		rep.RCA, rep.Note = x.offline(e, rep.Similar, offline)
		rep.Docs = localDocs(ctx, e)
		return rep, nil
	}
	resumed := 0
	if !known {
		hash = "" // nor is an interrupted run resumed
	}
	ans, err := x.agent(ctx, e, output, hash, rep.Similar, func(ev agent.Event) {
		if ev.Kind == graph.EventResumed {
			resumed = max(ev.Iteration, 1)
		}
		if emit != nil {
			emit(ev)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		// The model failed: still answer, and say so.
		x.log().Warn("the model could not explain the error", "error", err)
		rep.RCA, _ = x.offline(e, rep.Similar, false)
		then := "try again later"
		if llm.IsSetupError(err) {
			// Waiting will not help: the endpoint refused the set-up.
			then = "fix the settings as said, then ask again"
		}
		rep.Note = fmt.Sprintf("the configured model could not answer (%s); this is %s; %s", shortCause(err), offlineSource(rep.RCA), then)
		return rep, nil
	}
	rep.RCA = ans
	if resumed > 0 {
		rep.Note = fmt.Sprintf("resumed from step %d of an interrupted explanation: the model calls made before the interruption were not repeated", resumed)
	}
	if x.History != nil && errID != 0 {
		ex := index.Explanation{RootCause: ans.RootCause, Steps: ans.FixGuidelines, Confidence: ans.Confidence, Source: SourceModel,
			Model: x.Gateway.Model(llm.TaskAgent), ContentHash: hash, Message: rec.Message, MessageHash: msgHash}
		if err := x.History.Explain(ctx, errID, ex); err != nil {
			x.log().Warn("cannot store the explanation", "error", err)
		}
	}
	return rep, nil
}

// record is error e as the history keeps it, with the secrets of its text
// redacted: the history is a file on disk that outlives the session, and
// `kodyls history search` prints it. The fingerprint, made from the text
// as it was, is not changed by it: a URI's password is part of the <url>
// the fingerprint abstracts anyway.
func record(workspace string, e errparse.Error, output string) index.ErrorRecord {
	red := redact.Default()
	rec := index.ErrorRecord{
		Workspace: workspace, Fingerprint: e.Fingerprint, Tool: e.Tool, Language: e.Language, Code: e.Code,
		Message: red.String(e.Message), Template: red.String(errparse.Template(e)), File: e.File,
		Raw: red.String(excerpt(output, 4000)),
	}
	rec.MessageHash = messageHash(rec.Message, e.Line)
	return rec
}

// messageHash identifies one error, not merely its kind: its message (as
// stored, without the timestamps that change from run to run, see
// errparse.MessageKey) and its line. An explanation is served from the
// history for the same error only: "No module named 'numpy'" shares the
// fingerprint of "No module named 'requests'", not its answer.
func messageHash(message string, line int) string {
	d := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", line, errparse.MessageKey(message))))
	return hex.EncodeToString(d[:])[:16]
}

// givenFor is the message of the error h's latest explanation answered:
// the error's row holds the latest occurrence's, which may be another
// error of its kind. An explanation stored before kodyls kept it may have
// answered any of them: its kind (the template) stands for it.
func givenFor(h index.HistoryEntry) string {
	switch {
	case h.Latest == nil:
		return h.Message
	case h.Latest.Message != "":
		return h.Latest.Message
	case h.Template != "":
		return h.Template
	}
	return h.Message
}

// cutShort reports whether a run stopped for want of time or of an
// endpoint, not for what the model answered: such a run is continued from
// its checkpoint the next time.
func cutShort(err error) bool {
	var status *llm.StatusError
	if errors.As(err, &status) {
		// A busy or failing server; a request it rejects (400, 401, 404)
		// fails the same way the next time.
		return status.StatusCode == 429 || status.StatusCode >= 500
	}
	var netErr net.Error
	return errors.Is(err, agent.ErrStepTimeout) || errors.Is(err, agent.ErrTimeout) ||
		errors.Is(err, llm.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// offlineSource says in words where an offline answer came from.
func offlineSource(a *Answer) string {
	switch {
	case a.Source == SourceHistory:
		return "the explanation given when the same error was seen before"
	case a.Confidence >= 0.4:
		return "built-in guidance for this kind of error"
	}
	return "what the error message says, with no guidance for it"
}

// shortCause says what went wrong in err without the layers that passed
// it on ("router: react: agent: graph plan-execute: node answer: …"): the
// gateway's own message when the endpoint failed (it says what to do),
// else the message without those layers; at most 300 bytes.
func shortCause(err error) string {
	msg := ""
	for e := err; e != nil; e = errors.Unwrap(e) {
		if m := e.Error(); strings.HasPrefix(m, "llm ") || strings.Contains(m, " from llm endpoint ") {
			msg = m
			break
		}
	}
	if msg == "" {
		msg = layerPrefix.ReplaceAllString(err.Error(), "")
	}
	msg, _, _ = strings.Cut(msg, "\n")
	if len(msg) > 300 {
		msg = msg[:297] + "..."
	}
	return msg
}

// layerPrefix matches the labels the agent layers put before an error.
var layerPrefix = regexp.MustCompile(`^(?:(?:router|react|rewoo|agent|plan-execute|planexec|graph [\w-]+|node [\w-]+): )+`)

// noModel is what the note of an answer given without a model says
// after what the answer is: the model was not asked, or why there is
// none and what to do.
func (x *Explainer) noModel(asked bool, what string) string {
	if asked {
		return "no model was used (offline): " + what
	}
	why := x.NoModel
	if why == "" {
		why = "no model is configured: set llm.baseUrl and llm.model in the editor's kodyls settings, or KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL"
	}
	return "no model was used: " + what + "; for an analysis of your code, " + why
}

// offline answers without a model: a past explanation of the same error,
// else built-in guidance, else what the parse alone says. asked says the
// caller wanted no model (offline mode).
func (x *Explainer) offline(e errparse.Error, similar []Similar, asked bool) (*Answer, string) {
	for _, s := range similar {
		if s.Exact && s.RootCause != "" {
			return &Answer{RootCause: s.RootCause, FixGuidelines: s.FixGuidelines, Confidence: 0.6, Source: SourceHistory, ToolsUsed: []string{}},
				x.noModel(asked, "this is the explanation given when the same error was seen before")
		}
	}
	if g, ok := Lookup(e); ok {
		return &Answer{RootCause: g.RootCause, FixGuidelines: g.Steps, Confidence: 0.4, Source: SourceOffline, ToolsUsed: []string{}},
			x.noModel(asked, "built-in guidance for this kind of error")
	}
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return &Answer{
		RootCause:     fmt.Sprintf("%s reports %q at %s; kodyls has no built-in guidance for this error.", e.Tool, e.Message, where),
		FixGuidelines: []string{"Read the code at the reported location and the lines around it.", "Search the message in the tool's documentation."},
		Confidence:    0.1, Source: SourceOffline, ToolsUsed: []string{},
	}, x.noModel(asked, "kodyls has no guidance for this error")
}

func (x *Explainer) similar(ctx context.Context, rec index.ErrorRecord) []Similar {
	out := []Similar{}
	entries, err := x.History.Similar(ctx, x.Workspace, rec, 5)
	if err != nil {
		x.log().Warn("cannot search similar errors", "error", err)
		return out
	}
	for _, h := range entries {
		if h.Fingerprint == rec.Fingerprint && h.Count <= 1 && h.Latest == nil {
			continue // the error just recorded, seen for the first time
		}
		// The same error only when the explanation was given for this
		// very error (message and line); another of its kind, or one
		// explained before kodyls told them apart, is a similar error.
		same := h.Exact && h.Fingerprint == rec.Fingerprint
		if h.Latest != nil {
			same = same && h.Latest.MessageHash == rec.MessageHash
		} else {
			same = same && errparse.MessageKey(h.Message) == errparse.MessageKey(rec.Message)
		}
		s := Similar{Fingerprint: h.Fingerprint, Tool: h.Tool, Code: h.Code, Message: givenFor(h), File: h.File, Count: h.Count, Score: h.Score, Exact: same}
		if h.Latest != nil {
			s.RootCause, s.FixGuidelines, s.Confidence = h.Latest.RootCause, h.Latest.Steps, h.Latest.Confidence
		}
		out = append(out, s)
	}
	return out
}

// agent runs the agent's strategy with the workspace tools.
func (x *Explainer) agent(ctx context.Context, e errparse.Error, output, hash string, similar []Similar, emit func(agent.Event)) (*Answer, error) {
	ws := x.files()
	ts := []agent.Tool{ws.ReadFile(), ws.SearchWorkspace(), ws.ListFiles(), ws.FindReferences(), x.similarErrorsTool(e), tools.LocalDocs()}
	refs := make([]prompts.ToolRef, len(ts))
	for i, t := range ts {
		refs[i] = prompts.ToolRef{Name: t.Name, Description: t.Description}
	}
	budget := x.Agent.WithDefaults()
	sys, err := x.Prompts.Render("rca_system", prompts.RCASystemData{Tools: refs, MaxIterations: budget.MaxIterations})
	if err != nil {
		return nil, err
	}
	data := prompts.RCAUserData{
		Error: prompts.ParsedError{Tool: e.Tool, Language: e.Language, File: e.File, Line: e.Line, Column: e.Column, Severity: e.Severity, Code: e.Code, Message: e.Message, Raw: excerpt(output, 4000)},
		Code:  x.codeContext(e),
	}
	for _, s := range similar {
		if s.RootCause != "" {
			data.Similar = append(data.Similar, prompts.PastError{Message: s.Message, File: s.File, RootCause: s.RootCause, FixGuidelines: s.FixGuidelines, Confidence: s.Confidence})
		}
	}
	user, err := x.Prompts.Render("rca_user", data)
	if err != nil {
		return nil, err
	}
	strategy := x.Strategy
	if strategy == nil {
		strategy = DefaultStrategy()
	}
	task := agent.Task{Gateway: x.Gateway, System: sys.Text, User: user.Text, Feature: "rca", Class: llm.TaskAgent, Budget: budget, Log: x.log()}
	if x.Checkpoints != nil && hash != "" {
		task.Thread, task.Checkpoints = x.thread(e, hash), x.Checkpoints
	}
	res, err := strategy.Run(ctx, task, ts, emit)
	if err != nil {
		if ctx.Err() == nil && task.Checkpoints != nil && !cutShort(err) {
			// A run the model failed (garbage, a refusal, a loop), unlike
			// one cut short, starts over the next time: its steps are not
			// worth continuing.
			if derr := task.Checkpoints.Delete(context.WithoutCancel(ctx), task.Thread); derr != nil {
				x.log().Warn("cannot drop the failed run's checkpoint", "error", derr)
			}
		}
		return nil, err
	}
	used := res.ToolsUsed
	if used == nil {
		used = []string{}
	}
	return &Answer{RootCause: res.Answer.RootCause, FixGuidelines: res.Answer.FixGuidelines, Confidence: res.Answer.Confidence, Iterations: res.Iterations, ToolsUsed: used, Source: SourceModel, Path: res.Path}, nil
}

// thread names the agent run of one error in one state of the code: the
// same error explained again before the code changed continues an
// interrupted run, and a change of the code, or another error of the
// same kind, starts a new one.
func (x *Explainer) thread(e errparse.Error, contentHash string) string {
	d := sha256.New()
	fmt.Fprintf(d, "%s\x00%s\x00%s\x00%s", x.Workspace, e.Fingerprint, contentHash, messageHash(e.Message, e.Line))
	return "rca/" + hex.EncodeToString(d.Sum(nil))[:24]
}

// codeContext reads the lines around the error, when the file lies in the
// workspace and is not on the ignore list.
func (x *Explainer) codeContext(e errparse.Error) prompts.CodeContext {
	return CodeContext(x.files(), e)
}

// files is the workspace as the agent and the prompt read it: the disk,
// with the editor's open buffers over it.
func (x *Explainer) files() tools.Workspace {
	return tools.Workspace{Root: x.Workspace, Ignore: x.Ignore, Overlay: x.Overlay}
}

// CodeContext returns the lines around the error (the first 60 lines
// when it names no line), read with the checks of the agents' read_file:
// nothing outside ws, nothing on its privacy list as named or where its
// links lead. Only the file's name when it cannot be read.
func CodeContext(ws tools.Workspace, e errparse.Error) prompts.CodeContext {
	cc := prompts.CodeContext{File: e.File, Language: e.Language}
	if e.File == "" || ws.Root == "" {
		return cc
	}
	data, err := ws.Contents(e.File)
	if err != nil {
		return cc
	}
	lines := strings.Split(string(data), "\n")
	from, to := max(e.Line-15, 1), min(e.Line+15, len(lines))
	if e.Line <= 0 {
		from, to = 1, min(60, len(lines))
	}
	if from > to {
		return cc // a line past the end: not this text's
	}
	cc.StartLine = from
	cc.Text = strings.Join(lines[from-1:to], "\n")
	return cc
}

func (x *Explainer) readWorkspaceFile(rel string) ([]byte, bool) {
	if rel == "" || x.Workspace == "" {
		return nil, false
	}
	data, err := x.files().Contents(rel)
	return data, err == nil
}

// contentHash covers the files the error involves, so a cached explanation
// is reused only while that code is unchanged. known is false when one of
// them cannot be read (outside the workspace, on the privacy list, gone,
// binary): whether it changed cannot be told, so nothing is reused.
func (x *Explainer) contentHash(e errparse.Error) (hash string, known bool) {
	d := sha256.New()
	files := []string{e.File}
	for _, f := range e.Frames {
		if f.InWorkspace {
			files = append(files, f.File)
		}
	}
	known = true
	for _, f := range files {
		if f == "" {
			continue
		}
		data, ok := x.readWorkspaceFile(f)
		if !ok {
			known = false
		}
		fmt.Fprintf(d, "%s\x00%d\x00", f, len(data))
		d.Write(data)
	}
	return hex.EncodeToString(d.Sum(nil))[:16], known
}

func (x *Explainer) log() *slog.Logger {
	if x.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return x.Log
}

// excerpt keeps the start of a long output.
func excerpt(s string, n int) string {
	head, cut := redact.Cut(s, n)
	if cut {
		return head + "\n…(truncated)"
	}
	return head // redacted when it fits only so
}

// Markdown renders a report for an editor's hover or panel.
func (r *Report) Markdown() string {
	var b strings.Builder
	e := r.Errors[r.Primary]
	fmt.Fprintf(&b, "**%s**", e.Message)
	if e.Code != "" {
		fmt.Fprintf(&b, " (`%s`)", e.Code)
	}
	b.WriteString("\n\n")
	if a := r.RCA; a != nil {
		fmt.Fprintf(&b, "### Root cause\n\n%s\n\n", a.RootCause)
		if len(a.FixGuidelines) > 0 {
			b.WriteString("### Fix\n\n")
			for i, s := range a.FixGuidelines {
				fmt.Fprintf(&b, "%d. %s\n", i+1, s)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "_Confidence %.0f%% · source: %s_", a.Confidence*100, a.Source)
		if a.Iterations > 0 {
			fmt.Fprintf(&b, " _· %d agent steps_", a.Iterations)
		}
		if a.Path != "" {
			fmt.Fprintf(&b, " _· path: %s_", a.Path)
		}
		b.WriteString("\n")
	}
	if len(r.Similar) > 0 {
		b.WriteString("\n### Seen before\n\n")
		for _, s := range r.Similar {
			fmt.Fprintf(&b, "- %s (%d×)", s.Message, s.Count)
			if s.RootCause != "" {
				fmt.Fprintf(&b, ": %s", s.RootCause)
			}
			b.WriteString("\n")
		}
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "\n> %s\n", r.Note)
	}
	return b.String()
}

// rustCode matches a rustc error code.
var rustCode = regexp.MustCompile(`^E[0-9]{4}$`)

// localDocs looks the error code up in the toolchain's documentation, for
// answers without a model. Only rustc documents its codes; "" otherwise.
func localDocs(ctx context.Context, e errparse.Error) string {
	if e.Language != "rust" || !rustCode.MatchString(e.Code) {
		return ""
	}
	args, _ := json.Marshal(map[string]string{"topic": e.Code})
	out, err := tools.LocalDocs().Run(ctx, args)
	if err != nil || strings.Contains(out, "not installed") {
		return ""
	}
	return excerpt(out, 2000)
}

// similarArgs are the arguments of the similar_errors tool.
type similarArgs struct {
	Query string `json:"query,omitempty" jsonschema:"words to search past errors and explanations for; empty for errors like the current one"`
}

// similarErrorsTool lets the agent consult the history: past errors like
// the current one (or matching a query) and how they were explained.
func (x *Explainer) similarErrorsTool(e errparse.Error) agent.Tool {
	return agent.Tool{
		Name:        "similar_errors",
		Description: "Past errors of this workspace like the current one (exact fingerprint first, then full-text matches), or matching a query, with the explanations given then.",
		Parameters:  similarArgs{},
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			if x.History == nil {
				return "no error history is available in this session", nil
			}
			var a similarArgs
			_ = json.Unmarshal(raw, &a)
			var entries []index.HistoryEntry
			var err error
			if strings.TrimSpace(a.Query) == "" {
				entries, err = x.History.Similar(ctx, x.Workspace, record(x.Workspace, e, ""), 5)
			} else {
				entries, err = x.History.Search(ctx, x.Workspace, a.Query, 5)
			}
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, h := range entries {
				fmt.Fprintf(&b, "- %s %s at %s (seen %d times, score %.2f)\n", h.Tool, h.Message, h.File, h.Count, h.Score)
				if h.Latest != nil {
					if m := givenFor(h); m != h.Message {
						// Given for another error of the kind.
						fmt.Fprintf(&b, "  explained then for: %s\n", m)
					}
					fmt.Fprintf(&b, "  root cause then: %s\n", h.Latest.RootCause)
				}
			}
			if b.Len() == 0 {
				return "no similar past errors", nil
			}
			return b.String(), nil
		},
	}
}

// IgnoreList is the privacy ignore list as the Explainer takes it: files
// that are never read into a prompt.
func IgnoreList() func(rel string) bool {
	ig, err := redact.NewIgnore(nil)
	if err != nil {
		return func(string) bool { return true } // refuse everything rather than leak
	}
	return ig.Match
}
