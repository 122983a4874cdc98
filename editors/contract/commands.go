package contract

import (
	"reflect"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Commands kodyls answers in workspace/executeCommand. A command that takes
// an argument reads it from arguments[0].
const (
	CommandRuleViolations    = "kodyls.ruleViolations"
	CommandReloadRules       = "kodyls.reloadRules"
	CommandShowRule          = "kodyls.showRule"
	CommandReviewFile        = "kodyls.reviewFile"
	CommandReviewWorkspace   = "kodyls.reviewWorkspace"
	CommandDismissSuggestion = "kodyls.dismissSuggestion"
	CommandExplainError      = "kodyls.explainError"
	CommandFixError          = "kodyls.fixError"
)

// Command describes one workspace/executeCommand command.
type Command struct {
	Name  string
	Title string // for a command palette
	// Description is what the command does, for users (Markdown): the
	// README's command list shows it with the argument and result shapes.
	Description string
	// Args is the type of arguments[0]; nil when the command takes none.
	Args reflect.Type
	// ArgsRequire lists alternatives when Args has no required field: the
	// argument must hold every key of at least one of them.
	ArgsRequire [][]string
	// Result is the type of the reply.
	Result reflect.Type
	// Progress reports whether the command reports $/progress when the
	// request carries a workDoneToken.
	Progress bool
}

// Commands lists every command kodyls advertises, in the README's order.
var Commands = []Command{
	{
		Name:        CommandRuleViolations,
		Title:       "Kody: Show Rule Violations",
		Description: "The Kody Rules violations of the open buffers, grouped by rule (a rule of each workspace folder apart, even when two folders have rules of one uuid), each with how it was found (`detector` or `model`); the rule files that failed to load; and, when no model is configured, the enabled rules only a model can check. The data of a violations panel, which `kodyls/ruleViolationsChanged` tells to refresh.",
		Result:      reflect.TypeFor[RuleViolations](),
	},
	{
		Name:        CommandReloadRules,
		Title:       "Kody: Reload Rules",
		Description: "Re-reads every workspace's Kody Rules and reports how many loaded and how many files are broken.",
		Result:      reflect.TypeFor[ReloadRulesResult](),
		Progress:    true,
	},
	{
		Name:        CommandShowRule,
		Title:       "Kody: Show Rule",
		Description: "The location of the file of the rule with this `uuid` (in the workspace folder of `uri` when given, since two folders may have rules of one uuid; else the first folder's), opened in the editor with `window/showDocument` when the client supports it. Each rule diagnostic offers it as a code action (\"Show Kody Rule: …\").",
		Args:        reflect.TypeFor[ShowRuleArgs](),
		Result:      reflect.TypeFor[protocol.Location](),
	},
	{
		Name:        CommandReviewFile,
		Title:       "Kody: Review This File",
		Description: "Runs the AI review of an open file now, whatever the `review.trigger` setting, and publishes its findings as diagnostics; the URI may also be passed as a bare string.",
		Args:        reflect.TypeFor[ReviewFileArgs](),
		Result:      reflect.TypeFor[ReviewSummary](),
		Progress:    true,
	},
	{
		Name:        CommandReviewWorkspace,
		Title:       "Kody: Review Open Files",
		Description: "Runs the AI review of every open file, as `kodyls.reviewFile` does, one summary per file; then the `pull_request` Kody Rules judge the whole change set of each workspace folder once (every file changed against the base, with the open buffers' unsaved text; a folder with no file open too); their violations in files that are not open are listed by `kodyls.ruleViolations`.",
		Result:      reflect.TypeFor[[]ReviewSummary](),
		Progress:    true,
	},
	{
		Name:        CommandDismissSuggestion,
		Title:       "Kody: Dismiss Suggestion",
		Description: "Dismisses the review suggestion whose diagnostic's `data.id` is `id`, remembered across sessions; `scope` `\"file\"` dismisses every suggestion with the same label in the file.",
		Args:        reflect.TypeFor[DismissArgs](),
		Result:      reflect.TypeFor[DismissResult](),
	},
	{
		Name:        CommandExplainError,
		Title:       "Kody: Explain This Error",
		Description: "Explains a diagnostic (`uri`, `range`, `message`, `code`, `source`) or raw error output (`text`) with the root-cause-analysis agent; with `offline` it answers from parsing, history and local docs only. `markdown` is ready to show; `rca` is the document `kodyls explain --json` prints; `$/progress` shows the agent's steps. Offered as \"Explain this error\" on every diagnostic, other servers' included.",
		Args:        reflect.TypeFor[ExplainArgs](),
		ArgsRequire: [][]string{{"uri", "message"}, {"text"}},
		Result:      reflect.TypeFor[ExplainResult](),
		Progress:    true,
	},
	{
		Name:        CommandFixError,
		Title:       "Kody: Fix This Error",
		Description: "Fixes a diagnostic (`uri`, `range`, `message`, `code`, `source`) in plan mode: the model investigates and proposes edits, which are checked by running `build.onSave` on a scratch copy of the workspace and adjusted while it fails. The edits reach the editor as a `workspace/applyEdit` whose edits need confirmation; an editor that cannot preview such edits (no `changeAnnotationSupport`) is first asked with `window/showMessageRequest`, which shows the diff; a discarded fix is not sent, and an editor that cannot ask gets the diff as a message and nothing applied. kodyls never writes the files. Offered as \"Fix this error\" on error diagnostics.",
		Args:        reflect.TypeFor[FixArgs](),
		ArgsRequire: [][]string{{"uri", "message"}},
		Result:      reflect.TypeFor[FixResult](),
		Progress:    true,
	},
}

// RuleViolations is the result of kodyls.ruleViolations.
type RuleViolations struct {
	Groups     []ViolationGroup `json:"groups"`
	RuleErrors []RuleError      `json:"ruleErrors"`
	// NotChecked lists, when no model is configured, the enabled rules
	// only a model can check (they have no detector).
	NotChecked []RuleInfo `json:"notChecked" jsonschema:"rules not checked offline: they have no detector and no model is configured"`
}

// ViolationGroup is one rule and its violations.
type ViolationGroup struct {
	Rule       RuleInfo        `json:"rule"`
	Violations []ViolationInfo `json:"violations"`
}

// RuleInfo identifies a rule.
type RuleInfo struct {
	UUID     string `json:"uuid"`
	Title    string `json:"title"`
	Severity string `json:"severity" jsonschema:"critical, high, medium or low"`
	File     string `json:"file" jsonschema:"the rule's file, relative to its workspace folder"`
	// URI is the rule's file, absolute: with several workspace folders,
	// File alone does not say which folder it is in.
	URI uri.URI `json:"uri" jsonschema:"the rule's file"`
}

// ViolationInfo is one violation. Line is 0-based like LSP positions.
type ViolationInfo struct {
	URI     uri.URI        `json:"uri"`
	Range   protocol.Range `json:"range"`
	Match   string         `json:"match" jsonschema:"the text the detector matched, or the code the model pointed at"`
	Version int32          `json:"version" jsonschema:"the buffer version the violation was found in; 0 for a file that is not open (a pull-request rule violation found by the workspace review)"`
	// CheckedBy is CheckedByDetector or CheckedByModel.
	CheckedBy string `json:"checkedBy" jsonschema:"detector (the rule's regex, on every keystroke) or model (the review on save)"`
	// ID is the diagnostic's data.id.
	ID string `json:"id" jsonschema:"the diagnostic's data.id"`
	// Message is the model's explanation, for violations it found.
	Message string `json:"message,omitempty" jsonschema:"the model's explanation of the violation"`
	// Fixable is set when the diagnostic's code actions include "Apply
	// Kody fix": the model's improved code, or the detector's replacement.
	Fixable bool `json:"fixable,omitempty" jsonschema:"the diagnostic has an \"Apply Kody fix\" quick fix (the model's improved code or the detector's replace)"`
}

// How a violation was found.
const (
	CheckedByDetector = "detector"
	CheckedByModel    = "model"
)

// RuleError is a rule file that failed to load. Line is 1-based.
type RuleError struct {
	File string `json:"file" jsonschema:"relative to its workspace folder"`
	// URI is the file, absolute: with several workspace folders, File
	// alone does not say which folder it is in.
	URI     uri.URI `json:"uri" jsonschema:"the rule file"`
	Line    int     `json:"line" jsonschema:"1-based; 0 when the error has no line"`
	Message string  `json:"message"`
}

// ReloadRulesResult is the result of kodyls.reloadRules.
type ReloadRulesResult struct {
	Rules  int `json:"rules" jsonschema:"rules loaded, over every workspace"`
	Broken int `json:"broken" jsonschema:"rule files that failed to load"`
}

// ShowRuleArgs is the argument of kodyls.showRule.
type ShowRuleArgs struct {
	UUID string `json:"uuid" jsonschema:"the rule's uuid"`
	// URI picks the workspace folder whose rule is meant when several
	// have a rule of this uuid: the folder of this file. Without it, the
	// first folder's.
	URI uri.URI `json:"uri,omitempty" jsonschema:"a file of the workspace folder whose rule is meant (the diagnostic's document, or the rule file), when several folders have a rule of this uuid; without it, the first folder's"`
}

// ReviewFileArgs is the argument of kodyls.reviewFile. The server also
// accepts the URI as a bare string.
type ReviewFileArgs struct {
	URI uri.URI `json:"uri" jsonschema:"an open document"`
}

// ReviewSummary is the result of kodyls.reviewFile, and one element of
// the result of kodyls.reviewWorkspace.
type ReviewSummary struct {
	URI         uri.URI  `json:"uri"`
	Version     int32    `json:"version" jsonschema:"the buffer version that was reviewed"`
	Findings    int      `json:"findings" jsonschema:"findings published"`
	Hunks       int      `json:"hunks" jsonschema:"changed hunks reviewed"`
	CachedHunks int      `json:"cachedHunks" jsonschema:"hunks answered from the cache, with no LLM call"`
	Skipped     string   `json:"skipped,omitempty" jsonschema:"why the file was not reviewed, when it was not"`
	Degraded    []string `json:"degraded,omitempty" jsonschema:"review stages that failed and were skipped"`
	Offline     bool     `json:"offline,omitempty" jsonschema:"no model is configured: only local checks ran"`
}

// Dismissal scopes of kodyls.dismissSuggestion.
const (
	DismissScopeFinding = ""     // this suggestion only
	DismissScopeFile    = "file" // every suggestion with its label in the file
)

// DismissArgs is the argument of kodyls.dismissSuggestion.
type DismissArgs struct {
	ID    string  `json:"id" jsonschema:"the suggestion id, the diagnostic's data.id"`
	URI   uri.URI `json:"uri"`
	Scope string  `json:"scope,omitempty" jsonschema:"empty for this suggestion only, 'file' for every suggestion with its label in the file"` // "" (this finding) or "file" (all with its label in the file)
}

// DismissResult is the result of kodyls.dismissSuggestion.
type DismissResult struct {
	Dismissed int `json:"dismissed" jsonschema:"suggestions removed"`
}

// ExplainArgs is the argument of kodyls.explainError: either a diagnostic
// (URI and Message, with Range, Code and Source when known) or raw error
// output in Text.
type ExplainArgs struct {
	URI     uri.URI         `json:"uri,omitempty"`
	Range   *protocol.Range `json:"range,omitempty"`
	Message string          `json:"message,omitempty"`
	Code    string          `json:"code,omitempty"`
	Source  string          `json:"source,omitempty" jsonschema:"the diagnostic's source, e.g. another server's name"`
	Text    string          `json:"text,omitempty" jsonschema:"raw error output, e.g. a build log or a stack trace"`
	Offline bool            `json:"offline,omitempty" jsonschema:"answer without the model, from parsing, history and local docs"`
}

// ExplainResult is the result of kodyls.explainError. RCA holds the
// document `kodyls explain --json` prints ({errors, primary, similar, rca,
// note, docs}); the contract does not import the agent that produces it, so
// that every package can import the contract.
type ExplainResult struct {
	Markdown string `json:"markdown" jsonschema:"the explanation, ready to show"`
	RCA      any    `json:"rca" jsonschema:"the kodyls explain --json document"`
}

// FixArgs is the argument of kodyls.fixError: a diagnostic.
type FixArgs struct {
	URI     uri.URI         `json:"uri"`
	Range   *protocol.Range `json:"range,omitempty"`
	Message string          `json:"message"`
	Code    string          `json:"code,omitempty"`
	Source  string          `json:"source,omitempty" jsonschema:"the diagnostic's source, e.g. build or another server's name"`
}

// FixResult is the result of kodyls.fixError.
type FixResult struct {
	// Applied is whether the editor applied the workspace edit.
	Applied bool `json:"applied" jsonschema:"the editor accepted and applied the edits"`
	// Verified is true when the build passed with the edits applied.
	Verified bool `json:"verified" jsonschema:"build.onSave passed on a scratch copy with the edits"`
	// Verification is passed, failed, notRun (build.onSave did not run
	// with the final edits) or skipped (no build.onSave).
	Verification string   `json:"verification" jsonschema:"passed, failed, notRun when build.onSave is set but did not run with the final edits (none, or one edits the build's own files; the markdown says why), or skipped when build.onSave is not set"`
	Rounds       int      `json:"rounds" jsonschema:"plan versions tried"`
	Files        []string `json:"files" jsonschema:"the files the edits change, relative to the workspace"`
	Diff         string   `json:"diff" jsonschema:"the edits as a unified diff"`
	Markdown     string   `json:"markdown" jsonschema:"a summary ready to show: verification, plan versions and diff"`
	Note         string   `json:"note,omitempty"`
	// Edits are the fix's edits, for an editor that did not apply the
	// workspace edit (declined or could not preview it) to offer them
	// again once the user accepts.
	Edits []FixEdit `json:"edits" jsonschema:"the edits: replace oldText, which occurs once in file, by newText"`
}

// FixEdit is one search/replace edit of a fix.
type FixEdit struct {
	File    string `json:"file" jsonschema:"the file, relative to the workspace"`
	OldText string `json:"oldText" jsonschema:"the text replaced; it occurs exactly once in the file"`
	NewText string `json:"newText" jsonschema:"the replacement"`
}
