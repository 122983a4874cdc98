// Package review is the file-level review pipeline: it turns one file's
// change into code review suggestions, the way stage 9 of the Kodus code
// review pipeline does, and groups suggestions that repeat across files.
//
// ReviewFile runs, for one file:
//
//  1. mode selection (light: the diff alone; heavy: the whole file too),
//     answered by a cheap model, heavy whenever in doubt;
//  2. analysis, which produces the suggestions;
//  3. then, concurrently, because none needs another's answer: severity
//     for suggestions without a valid one, the safeguard (keep, correct or
//     discard each suggestion), the check for suggestions the buffer
//     already carries out, and the Kody Rules hook;
//  4. a deterministic merge of those answers, then the severity threshold
//     and the per-file cap of kodus-config.yml (ReviewUnfiltered stops
//     before them, for a caller that applies Filter over findings of
//     hunks reviewed apart).
//
// Every stage that calls the model asks for a JSON Schema (structured
// outputs) through the LLM gateway, which validates, salvages, repairs and
// falls back. A stage that fails or answers garbage leaves the findings as
// the previous stage had them and says so in FileResult.Degraded: a
// broken model answer can cost a refinement, never a finding. The
// analysis is the exception, since there is nothing before it.
//
// Prompts refer to suggestions by their 1-based position, never by ID, and
// the reply's positions are restricted to the valid range (Allowed), because
// models asked to echo long identifiers change them.
package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/prompts"
)

// Review modes.
const (
	ModeLight = "light"
	ModeHeavy = "heavy"
)

// Stage names, used in Discard.Stage and as the prefix ("severity: …") of
// the entries of FileResult.Degraded.
const (
	StageMode        = "mode"
	StageAnalyze     = "analyze"
	StageOptions     = "options" // a category turned off in reviewOptions
	StageSeverity    = "severity"
	StageSafeguard   = "safeguard"
	StageImplemented = "implemented"
	StageRules       = "rules"
	StageThreshold   = "threshold"
	StageCap         = "cap"
	StageCluster     = "cluster"
)

// LabelKodyRules is the label of suggestions that report a Kody Rule
// violation, as in Kodus. The RulesHook's own suggestions get it when they
// carry no label.
const LabelKodyRules = "kody_rules"

// Schema names of the structured replies, one per stage. The gateway sends
// them as the response format's name, which is what a fake endpoint in
// tests matches on.
const (
	SchemaMode        = "review_mode"
	SchemaAnalyze     = "review_suggestions"
	SchemaSeverity    = "review_severity"
	SchemaSafeguard   = "review_safeguard"
	SchemaImplemented = "review_implemented"
	SchemaCluster     = "review_clusters"
)

// feature is the gateway's accounting key for every call of the pipeline.
const feature = "review"

// Suggestion is one review finding.
type Suggestion struct {
	// ID is stable across reviews of the same code: a hash of the file,
	// the existing code and the summary as the analysis reported them, so
	// that a dismissal survives the next review. Later stages that reword
	// a suggestion keep its ID.
	ID                 string
	RelevantFile       string
	Language           string
	SuggestionContent  string
	ExistingCode       string
	ImprovedCode       string
	OneSentenceSummary string
	// RelevantLinesStart and RelevantLinesEnd are 1-based new-file lines.
	RelevantLinesStart int
	RelevantLinesEnd   int
	// Label is a category of prompts.CategoryLabels, or LabelKodyRules.
	Label string
	// Severity is critical, high, medium or low.
	Severity string
	// Duplicates is set by Cluster on a cluster's primary: the other
	// suggestions it stands for.
	Duplicates []DuplicateRef
	// DuplicateOf is set by Cluster on the other members of a cluster: the
	// primary's ID.
	DuplicateOf string
	// RuleID is the UUID of the Kody Rule a rule suggestion reports a
	// violation of; "" for the analysis' own suggestions.
	RuleID string `json:",omitempty"`
	// FromRules is set on the suggestions the Kody Rules check (the
	// RulesHook) reported, RuleID or not: the severity threshold and the
	// cap spare them unless suggestionControl.applyFiltersToKodyRules is
	// set (see Spared).
	FromRules bool `json:",omitempty"`
}

// DuplicateRef points at a suggestion that repeats a cluster's primary.
type DuplicateRef struct {
	ID         string
	File       string
	LinesStart int
	LinesEnd   int
}

// FileInput is one file to review.
type FileInput struct {
	// Path is workspace-relative and slash-separated.
	Path     string
	Language string
	// Content is the buffer text the review is computed for.
	Content string
	// Patch is the Kodus-format patch of the hunks to review, as package
	// analysis/patch renders it.
	Patch string
	// Rules are the Kody Rules that apply to the file. The analysis is told
	// their titles so that it proposes nothing that contradicts them; their
	// violations are the RulesHook's business. Rules are shown by position,
	// never by UUID.
	Rules []prompts.RuleRef
}

// FileResult is the review of one file.
type FileResult struct {
	Path string
	// Mode is ModeLight or ModeHeavy: how the analysis saw the file.
	Mode        string
	Suggestions []Suggestion
	// Discarded are the suggestions removed after the analysis, each with
	// the stage that removed it and why.
	Discarded []Discard
	// Degraded lists the stages that failed and were skipped, as "stage:
	// error"; their input went on unchanged.
	Degraded []string
}

// Discard is a suggestion removed by a stage.
type Discard struct {
	Suggestion Suggestion
	Stage      string
	Reason     string
}

// Options configures a Pipeline.
type Options struct {
	// Prompts renders the prompts; nil means prompts.Builtin().
	Prompts *prompts.Set
	// Config is the workspace's kodus-config.yml; its zero value means
	// kodusconfig.Default().
	Config kodusconfig.Config
	// Rules checks the Kody Rules. Nil with KodyRules set uses the
	// pipeline's own check (kodyrules_check and kodyrules_guardian); nil
	// without it skips them.
	Rules RulesHook
	// KodyRules turns on the model check of the Kody Rules given in
	// FileInput.Rules when Rules is nil.
	KodyRules bool
	// Logger receives the stages' warnings; nil discards them.
	Logger *slog.Logger
	// Language is the natural language of the suggestions' text, e.g.
	// "en-US" (the default) or "pt-BR".
	Language string
	// Workspace is the root the pull-request rules check gathers evidence
	// under (tests, callers, related files) before judging; empty: the
	// check sees the diff alone. Ignore lists the files never read into a
	// prompt (slash-separated, relative to Workspace).
	Workspace string
	Ignore    func(rel string) bool
}

// RulesHook is where the LLM checks of Kody Rules plug into the pipeline.
// Check receives the standard suggestions of the file and returns those it
// keeps (a guardian may drop the ones that contradict a rule) followed by
// the rule suggestions it found. Suggestions are matched by ID: one whose
// ID the input did not have is a rule suggestion. Check runs concurrently
// with the other refinement stages; its error skips it (the standard
// suggestions stay) and is reported in FileResult.Degraded.
type RulesHook interface {
	Check(ctx context.Context, in FileInput, suggestions []Suggestion) ([]Suggestion, error)
}

// Pipeline reviews files. It is safe for concurrent use: each call keeps
// its state on its own stack.
type Pipeline struct {
	g       *llm.Gateway
	prompts *prompts.Set
	cfg     kodusconfig.Config
	rules   RulesHook
	log     *slog.Logger
	lang    string
	ws      string
	ignore  func(rel string) bool
}

// New returns a pipeline that calls the model through g.
func New(g *llm.Gateway, o Options) *Pipeline {
	p := &Pipeline{g: g, prompts: o.Prompts, cfg: o.Config, rules: o.Rules, log: o.Logger, lang: o.Language, ws: o.Workspace, ignore: o.Ignore}
	if p.rules == nil && o.KodyRules {
		p.rules = kodyRules{p}
	}
	if p.prompts == nil {
		p.prompts = prompts.Builtin()
	}
	if p.cfg.ReviewOptions == nil && p.cfg.SuggestionControl == (kodusconfig.SuggestionControl{}) {
		p.cfg = kodusconfig.Default()
	}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if p.lang == "" {
		p.lang = "en-US"
	}
	return p
}

// suggestionID hashes what identifies a finding to the user: where it is,
// the code it is about and what it says. White space is collapsed so that a
// re-indented block or a model's different line wrapping keeps the ID.
func suggestionID(file, existingCode, summary string) string {
	h := sha256.New()
	for _, s := range []string{file, collapse(existingCode), collapse(summary)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "kody-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// OccurrenceID is the id of the n-th place (n ≥ 2, in file order) where
// the suggestion id recurs: the same code can break the same rule, or hold
// the same defect, twice in a file, and each place is a finding to show
// and to dismiss. The first place keeps id.
func OccurrenceID(id string, n int) string {
	h := sha256.Sum256([]byte(id + "#" + strconv.Itoa(n)))
	return "kody-" + hex.EncodeToString(h[:])[:16]
}

// collapse replaces every run of white space with one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// toPrompt is the suggestion as the prompts show it. The ID is left out:
// prompts refer to suggestions by position.
func toPrompt(s Suggestion) prompts.Suggestion {
	return prompts.Suggestion{
		RelevantFile:       s.RelevantFile,
		Language:           s.Language,
		SuggestionContent:  s.SuggestionContent,
		ExistingCode:       s.ExistingCode,
		ImprovedCode:       s.ImprovedCode,
		OneSentenceSummary: s.OneSentenceSummary,
		RelevantLinesStart: s.RelevantLinesStart,
		RelevantLinesEnd:   s.RelevantLinesEnd,
		Label:              s.Label,
		Severity:           s.Severity,
	}
}

func toPrompts(ss []Suggestion) []prompts.Suggestion {
	out := make([]prompts.Suggestion, len(ss))
	for i, s := range ss {
		out[i] = toPrompt(s)
	}
	return out
}

// indexes returns 1..n as allowed values of an index property.
func indexes(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// validSeverity normalises a severity level, "" when it is none.
func validSeverity(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if kodusconfig.SeverityRank(s) == 0 {
		return ""
	}
	return s
}

// labelAliases are labels models (and older Kodus categories) use for the
// current categories.
var labelAliases = map[string]string{
	"bugs":                         "bug",
	"potential_issues":             "bug",
	"potential_issue":              "bug",
	"error_handling":               "bug",
	"performance_and_optimization": "performance",
	"perf":                         "performance",
	"vulnerability":                "security",
}

// normalizeLabel maps a model's label onto the category list; a label it
// does not know is kept (lower-cased) rather than guessed at.
func normalizeLabel(l string) string {
	l = rawLabel(l)
	if a, ok := labelAliases[l]; ok {
		return a
	}
	return l
}

// rawLabel is a model's label lower-cased, with blanks and hyphens as
// underscores, before any alias applies: the name reviewOptions may turn
// off (error_handling) even where the label shown is the category that
// covers it (bug).
func rawLabel(l string) string {
	l = strings.ToLower(strings.TrimSpace(l))
	return strings.ReplaceAll(strings.ReplaceAll(l, " ", "_"), "-", "_")
}

// errorf builds a stage error with the context of the file.
func errorf(path, format string, args ...any) error {
	return fmt.Errorf("review %s: "+format, append([]any{path}, args...)...)
}
