package prompts

// This file holds the data each prompt renders. A prompt's template may use
// only the fields of its type; Example gives a filled-in value of each, and
// the golden files in testdata/golden show what it renders to.
//
// Suggestions and rules appear in prompts under their 1-based position in
// the slice, never under their ID or UUID: models asked to echo a UUID drop
// or change digits, while a small number comes back intact. Callers map the
// numbers in the reply back to their own IDs.

// ReviewModeData is the data of review_mode_select, which decides whether the
// analysis needs the whole file (heavy) or only the diff (light).
type ReviewModeData struct {
	// Language is the programming language, e.g. "go" or "typescript".
	Language string
	// FileName is the workspace-relative path, slash-separated.
	FileName string
	// Patch is the file's change in the Kodus patch format: "## file: 'x'",
	// "@@ … @@" hunk headers, "__new hunk__" with new-file line numbers and
	// "+" on changed lines, then "__old hunk__" with "-" on removed lines.
	Patch string
}

// ReviewSystemData is the data of review_analyze_system. It holds nothing
// about the file under review so that the system prompt is the same for
// every file of a workspace, which lets servers reuse its cached prefix.
type ReviewSystemData struct {
	// ResponseLanguage is the natural language for explanations, e.g.
	// "en-US" (the default when empty) or "pt-BR"; code is never translated.
	ResponseLanguage string
	// Overrides carries the category descriptions and severity flags. Left
	// zero, Render fills it with the Set's overrides (kodus-config merged
	// with the defaults).
	Overrides Overrides
}

// ReviewAnalyzeData is the data of review_analyze_user, the request for
// codeSuggestions on one file.
type ReviewAnalyzeData struct {
	Language string
	FileName string
	// Patch is the change in the Kodus patch format (see ReviewModeData).
	Patch string
	// FileContent is the whole file after the change; it is rendered, with
	// line numbers, only when Heavy is set.
	FileContent string
	// Heavy is true when review_mode_select chose heavy_mode.
	Heavy bool
	// Rules are the Kody Rules that apply to the file. The analysis must not
	// contradict them; their violations are found by kodyrules_check.
	Rules []RuleRef
	// Overrides supplies the labels and generation.main; zero means the
	// Set's own (see ReviewSystemData.Overrides).
	Overrides Overrides
}

// SeverityData is the data of review_severity, which reassesses the
// severity of suggestions against the severity flags.
type SeverityData struct {
	Suggestions []Suggestion
	// Overrides supplies the severity flags; zero means the Set's own.
	Overrides Overrides
}

// SafeguardData is the data of review_safeguard, the last check of each
// suggestion: keep it (no_changes), correct it (update) or drop it
// (discard).
type SafeguardData struct {
	Language    string
	FileName    string
	Patch       string
	FileContent string // the whole file after the change, numbered
	Suggestions []Suggestion
	// ResponseLanguage is the language of reasons and updated text.
	ResponseLanguage string
}

// ValidateImplementedData is the data of review_validate_implemented, which
// asks whether earlier suggestions have since been carried out.
type ValidateImplementedData struct {
	Language string
	FileName string
	// Patch is the author's change made after the suggestions were given,
	// in the Kodus patch format.
	Patch       string
	Suggestions []Suggestion
}

// ClusterData is the data of review_cluster, which groups suggestions that
// report the same problem in several places (usually several files) so that
// one comment can cover them all.
type ClusterData struct {
	Suggestions      []Suggestion
	ResponseLanguage string
}

// KodyRulesData is the data of kodyrules_check, which finds violations of
// the workspace's Kody Rules in one file's change and proposes fixes.
type KodyRulesData struct {
	Language    string
	FileName    string
	Patch       string
	FileContent string // optional: the whole file, numbered, for context
	Rules       []RuleRef
	// ResponseLanguage is the language of reasons and suggestion text.
	ResponseLanguage string
}

// PullRequestRulesData is the data of kodyrules_pr_check, which judges a
// whole change set against the pull-request-scope Kody Rules.
type PullRequestRulesData struct {
	// Files are the changed files, workspace-relative.
	Files []string
	// Patch is the Kodus-format patch of every changed file.
	Patch string
	Rules []RuleRef
	// ResponseLanguage is the language of reasons and suggestion text.
	ResponseLanguage string
	// Evidence is what was gathered across the workspace before the
	// check (tests, callers, related files); empty when nothing was.
	Evidence []EvidenceRef
}

// GuardianData is the data of kodyrules_guardian, which removes standard
// suggestions whose advice would break one of the Kody Rules.
type GuardianData struct {
	Rules       []RuleRef
	Suggestions []Suggestion
}

// RCASystemData is the data of rca_system, the RCA agent's system prompt.
type RCASystemData struct {
	// Tools are the tools offered through native tool calling, besides
	// final_answer, which the prompt always describes.
	Tools []ToolRef
	// MaxIterations is the step budget the agent loop enforces.
	MaxIterations    int
	ResponseLanguage string
}

// RCAUserData is the data of rca_user, the error to explain.
type RCAUserData struct {
	Error ParsedError
	// Code is the source around the error line; Text empty when the file
	// could not be read (or lies outside the workspace).
	Code CodeContext
	// Similar are past errors of the workspace with similar fingerprints,
	// best first.
	Similar []PastError
}

// RCAFinalData is the data of rca_final, sent when the loop guards stop the
// agent (iteration limit, repeated action, time out) and tools are turned
// off: the model must answer from the evidence it has.
type RCAFinalData struct {
	// Reason says why the investigation stopped, e.g. "the step limit (10)
	// was reached".
	Reason string
}

// JSONRepairData is the data of json_repair, sent as a user message right
// after a reply that did not validate against its schema. Its fields are
// those of the LLM gateway's repair data (agents/llm.RepairPrompt), so the
// gateway can pass its own value to Render.
type JSONRepairData struct {
	SchemaName string
	// Schema is the JSON Schema the reply must match, as JSON text.
	Schema string
	// Reply is the rejected reply. The builtin does not repeat it, since it
	// is the message just before; an override may.
	Reply string
	// Error is the validation error, e.g. `codeSuggestions[0].relevantLinesStart: expected integer, got string`.
	Error string
	// Truncated is set when the reply was cut off at the token limit: the
	// fix is then a shorter answer, not a corrected one.
	Truncated bool
}

// JSONFallbackData is the data of json_object_fallback: instructions carrying
// the JSON Schema, appended to the system prompt when the server does not
// support response_format json_schema. Its fields are those of the gateway's
// agents/llm.FallbackPrompt.
type JSONFallbackData struct {
	SchemaName string // optional
	Schema     string // JSON text
}

// DoctorPingData is the data of doctor_ping, the structured-output check of
// kodyls doctor. It has no fields.
type DoctorPingData struct{}

// Suggestion is a code review suggestion as the review prompts show it. Its
// JSON names are those of the Kodus codeSuggestions shape.
type Suggestion struct {
	// ID is the caller's identifier. Prompts never show it (see above).
	ID                 string `json:"id,omitempty"`
	RelevantFile       string `json:"relevantFile"`
	Language           string `json:"language"`
	SuggestionContent  string `json:"suggestionContent"`
	ExistingCode       string `json:"existingCode"`
	ImprovedCode       string `json:"improvedCode"`
	OneSentenceSummary string `json:"oneSentenceSummary"`
	RelevantLinesStart int    `json:"relevantLinesStart"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd"`
	Label              string `json:"label"`
	Severity           string `json:"severity"`
}

// RuleRef is a Kody Rule as prompts show it. It is a copy of the fields the
// prompts need so that this package depends on no rule loader.
type RuleRef struct {
	// UUID identifies the rule for the caller; prompts never show it and
	// refer to the rule by its 1-based position instead.
	UUID         string
	Title        string
	Severity     string // critical | high | medium | low
	Instructions string
	Examples     []RuleExample
}

// RuleExample is one example of a rule: a good (compliant) or bad snippet.
type RuleExample struct {
	Good     bool
	Language string
	Code     string
}

// ToolRef names a tool of the RCA agent for its system prompt.
type ToolRef struct {
	Name        string
	Description string
}

// ParsedError is the primary error the RCA agent explains, as the error
// parsers produced it. Line and Column are 1-based, 0 when unknown.
type ParsedError struct {
	Tool     string // e.g. "go build", "tsc", "rustc"
	Language string
	File     string
	Line     int
	Column   int
	Severity string
	Code     string // e.g. "TS2339", "E0502"; empty when the tool has none
	Message  string
	// Raw is the relevant excerpt of the tool's output (the message with
	// its stack trace or notes), already redacted.
	Raw string
}

// CodeContext is a window of a source file.
type CodeContext struct {
	File      string
	Language  string
	StartLine int // line number of the first line of Text
	Text      string
}

// PastError is a similar error from the workspace's history with the
// explanation found then.
type PastError struct {
	Message       string
	File          string
	RootCause     string
	FixGuidelines []string
	Confidence    float64
}

// FixSystemData is the data of fix_system, the system prompt of "Fix this
// error" (plan generation and reflection).
type FixSystemData struct {
	// Tools are the read-only workspace tools a step may call, besides
	// propose_edits, which the prompt always describes.
	Tools []ToolRef
	// Build is the command that verifies the fix; empty when none is
	// configured.
	Build            string
	ResponseLanguage string
}

// FixPlanData is the data of fix_plan, the error to fix.
type FixPlanData struct {
	Error ParsedError
	// Code is the source around the error line; Text empty when the file
	// could not be read.
	Code CodeContext
}

// FixReflectData is the data of fix_reflect, sent after a plan version ran.
type FixReflectData struct {
	Error ParsedError
	// Version is the plan version that ran.
	Version int
	// Plan is that version with each step's status and result.
	Plan string
	// BuildOutput is the verifying build's output when it ran and failed.
	BuildOutput string
	// Round counts the reflections, MaxRounds is their budget.
	Round, MaxRounds int
}

// PlanTool is a tool a planning strategy may put in its plan, with the
// JSON Schema of its arguments.
type PlanTool struct {
	Name        string
	Description string
	Parameters  string // JSON Schema, compact
}

// PlanStepResult is one step of a plan-and-execute plan with what came of
// it, for the replan and answer prompts.
type PlanStepResult struct {
	ID          string
	Description string
	Tool        string
	Args        string // JSON
	Status      string // pending, done, failed or skipped
	Result      string // the tool's output or error; empty while pending
}

// PlanExecutePlanData is the data of plan_execute_plan, which asks for the
// plan of a plan-and-execute run after the task's own messages.
type PlanExecutePlanData struct {
	Tools    []PlanTool
	MaxSteps int
}

// PlanExecuteReplanData is the data of plan_execute_replan, sent after a
// step failed: the steps so far with their results, and the failed one.
type PlanExecuteReplanData struct {
	Tools    []PlanTool
	Steps    []PlanStepResult
	Failed   PlanStepResult
	MaxSteps int
}

// PlanExecuteAnswerData is the data of plan_execute_answer, which asks for
// the final answer from the steps' results.
type PlanExecuteAnswerData struct {
	Steps []PlanStepResult
	// Note says why the plan stopped early, when it did.
	Note string
}

// EvidenceRef is one piece of ReWoo evidence: the call that produced it
// and its text.
type EvidenceRef struct {
	ID     string // "E1"
	Tool   string
	Args   string // JSON, with the #E references as planned
	Reason string
	Text   string
	Failed bool
}

// ReWooPlanData is the data of rewoo_plan, which asks for every tool call
// of a ReWoo run up front, after the task's own messages.
type ReWooPlanData struct {
	Tools    []PlanTool
	MaxSteps int
}

// ReWooSolveData is the data of rewoo_solve, which asks for the answer
// from the evidence gathered.
type ReWooSolveData struct {
	Evidence []EvidenceRef
}

// PullRequestEvidenceData is the data of kodyrules_pr_evidence: the task
// of gathering, across the workspace, what the pull-request rules need
// beyond the diff (tests, callers, related files).
type PullRequestEvidenceData struct {
	Files []string
	Patch string
	Rules []RuleRef
}

// RuleSplitData is the data of kodyrules_split, which splits another
// coding assistant's instruction file (AGENTS.md, CLAUDE.md,
// .cursorrules…) into the rules a reviewer can check in code.
type RuleSplitData struct {
	// FileName is the file's workspace-relative path.
	FileName string
	// Content is the file's whole text; the prompt numbers its lines.
	Content string
	// Globs are the paths the file's front matter limits it to, if any.
	Globs []string
}
