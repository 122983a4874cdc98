package review

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/agents/tools"
	"github.com/kodustech/kodyls/prompts"
)

// Schema names of the Kody Rules stages.
const (
	SchemaKodyRules = "kodyrules_violations"
	SchemaGuardian  = "kodyrules_guardian"
)

// ReplyReserveTokens is the most room a rule check keeps for the model's
// reply; a smaller window keeps a quarter of itself, as the gateway does
// when it trims a prompt.
const ReplyReserveTokens = 4096

// RuleBatchBudget is how many tokens of rules one check prompt may carry
// for a model with a context window of window tokens, when the prompt
// without rules (the instructions, the patch, the output format and any
// evidence) takes bare tokens: the analysis' share of the window, no more
// than the window less the reply's room, less the bare prompt. A rule set
// larger than the budget is checked in several calls, each numbering its
// own rules from 1; a budget of 0 (a patch that fills the window) still
// sends one rule per call.
func RuleBatchBudget(window, bare int) int {
	reply := min(ReplyReserveTokens, window/4)
	limit := min(int(float64(window)*contextShare), window-reply)
	return max(0, limit-bare-chatOverheadTokens)
}

// chatOverheadTokens covers what a chat request adds to its messages'
// text (roles, separators, the reply's priming).
const chatOverheadTokens = 16

// ruleBatches splits rules into the batches one check prompt can carry:
// bare is the prompt rendered without rules.
func (p *Pipeline) ruleBatches(rs []prompts.RuleRef, bare string) [][]prompts.RuleRef {
	model := p.g.Model(llm.TaskRules)
	return batchRules(rs, model, RuleBatchBudget(p.g.ContextWindow(model), llm.CountTokens(model, bare)))
}

// kodyRules is the pipeline's own RulesHook: the model judges the file's
// change against the rules that apply to it (kodyrules_check) and removes
// standard suggestions whose advice would break one (kodyrules_guardian).
// Rules are named by their 1-based position in the prompt, never by UUID.
type kodyRules struct{ p *Pipeline }

type ruleViolation struct {
	Rule               int    `json:"rule"`
	Reason             string `json:"reason"`
	SuggestionContent  string `json:"suggestionContent"`
	ExistingCode       string `json:"existingCode"`
	ImprovedCode       string `json:"improvedCode"`
	OneSentenceSummary string `json:"oneSentenceSummary"`
	RelevantLinesStart int    `json:"relevantLinesStart"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd"`
}

type ruleViolations struct {
	Violations []ruleViolation `json:"violations"`
}

type guardianDecision struct {
	Index        int    `json:"index"`
	ShouldRemove bool   `json:"shouldRemove"`
	Rule         int    `json:"rule"`
	Reason       string `json:"reason"`
}

type guardianDecisions struct {
	Decisions []guardianDecision `json:"decisions"`
}

func (k kodyRules) Check(ctx context.Context, in FileInput, ss []Suggestion) ([]Suggestion, error) {
	if len(in.Rules) == 0 {
		return ss, nil
	}
	kept, err := k.guard(ctx, in, ss)
	if err != nil {
		return nil, err
	}
	bare, err := k.p.prompts.Render("kodyrules_check", k.data(in, nil))
	if err != nil {
		return nil, err
	}
	var found []Suggestion
	for _, batch := range k.p.ruleBatches(in.Rules, bare.Text) {
		vs, err := k.check(ctx, in, batch)
		if err != nil {
			return nil, err
		}
		found = append(found, vs...)
	}
	return append(kept, found...), nil
}

// CheckKodyRules runs only the model check of in.Rules on in, without the
// review's other stages: a rule author testing one rule.
func (p *Pipeline) CheckKodyRules(ctx context.Context, in FileInput) ([]Suggestion, error) {
	return kodyRules{p}.Check(ctx, in, nil)
}

// check asks for the violations of one batch of rules.
func (k kodyRules) check(ctx context.Context, in FileInput, batch []prompts.RuleRef) ([]Suggestion, error) {
	msg, err := k.p.prompts.Render("kodyrules_check", k.data(in, batch))
	if err != nil {
		return nil, err
	}
	reply, failed, err := ask[ruleViolations](ctx, k.p, llm.TaskRules, SchemaKodyRules, nil, msg)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, fmt.Errorf("kodyrules_check: %w", failed)
	}
	var out []Suggestion
	for _, v := range reply.Violations {
		if v.Rule < 1 || v.Rule > len(batch) {
			k.p.log.Warn("kodyrules_check named a rule outside the list; dropped", "file", in.Path, "rule", v.Rule, "rules", len(batch))
			continue
		}
		out = append(out, ruleSuggestion(in.Path, in.Language, batch[v.Rule-1], v))
	}
	return out, nil
}

// data is the kodyrules_check prompt's data for in with the rules rs.
func (k kodyRules) data(in FileInput, rs []prompts.RuleRef) prompts.KodyRulesData {
	return prompts.KodyRulesData{Language: in.Language, FileName: in.Path, Patch: in.Patch, Rules: rs, ResponseLanguage: k.p.lang}
}

// ruleSuggestion turns a reported violation of rule r in the file at path
// into a rule suggestion: the rule's title and the model's explanation, the
// rule's severity and id.
func ruleSuggestion(path, language string, r prompts.RuleRef, v ruleViolation) Suggestion {
	content := strings.TrimSpace(v.Reason)
	if s := strings.TrimSpace(v.SuggestionContent); s != "" && s != content {
		content = strings.TrimSpace(content + "\n\n" + s)
	}
	summary := r.Title
	if s := strings.TrimSpace(v.OneSentenceSummary); s != "" {
		summary = r.Title + ": " + s
	}
	return Suggestion{
		ID:                 suggestionID(path, v.ExistingCode, r.UUID),
		RelevantFile:       path,
		Language:           language,
		SuggestionContent:  content,
		ExistingCode:       v.ExistingCode,
		ImprovedCode:       v.ImprovedCode,
		OneSentenceSummary: summary,
		RelevantLinesStart: v.RelevantLinesStart,
		RelevantLinesEnd:   v.RelevantLinesEnd,
		Label:              LabelKodyRules,
		Severity:           cmpOr(validSeverity(r.Severity), "medium"),
		RuleID:             r.UUID,
	}
}

// guard removes the standard suggestions that would break a rule. With no
// suggestions there is nothing to ask. A rule set larger than the window
// allows is judged in batches, as the check is: a suggestion goes if any
// batch's answer removes it under one of that batch's rules.
func (k kodyRules) guard(ctx context.Context, in FileInput, ss []Suggestion) ([]Suggestion, error) {
	if len(ss) == 0 {
		return ss, nil
	}
	data := prompts.GuardianData{}
	for _, s := range ss {
		data.Suggestions = append(data.Suggestions, prompts.Suggestion{
			RelevantFile: s.RelevantFile, Language: s.Language, OneSentenceSummary: s.OneSentenceSummary, ImprovedCode: s.ImprovedCode,
		})
	}
	bare, err := k.p.prompts.Render("kodyrules_guardian", data)
	if err != nil {
		return nil, err
	}
	drop := map[int]bool{}
	for _, batch := range k.p.ruleBatches(in.Rules, bare.Text) {
		data.Rules = batch
		msg, err := k.p.prompts.Render("kodyrules_guardian", data)
		if err != nil {
			return nil, err
		}
		reply, failed, err := ask[guardianDecisions](ctx, k.p, llm.TaskRules, SchemaGuardian, nil, msg)
		if err != nil {
			return nil, err
		}
		if failed != nil {
			// When in doubt, keep: a guardian that cannot answer removes
			// nothing.
			k.p.log.Warn("kodyrules_guardian failed; keeping every suggestion it was asked about", "file", in.Path, "rules", len(batch), "error", failed)
			continue
		}
		for _, d := range reply.Decisions {
			if d.ShouldRemove && d.Index >= 1 && d.Index <= len(ss) && d.Rule >= 1 && d.Rule <= len(batch) {
				drop[d.Index-1] = true
			}
		}
	}
	kept := make([]Suggestion, 0, len(ss))
	for i, s := range ss {
		if !drop[i] {
			kept = append(kept, s)
		}
	}
	return kept, nil
}

// batchRules splits rules into groups whose text stays under budget
// tokens; a rule larger than the budget goes alone.
func batchRules(rs []prompts.RuleRef, model string, budget int) [][]prompts.RuleRef {
	var out [][]prompts.RuleRef
	var cur []prompts.RuleRef
	used := 0
	for _, r := range rs {
		n := RuleTokens(model, r)
		if len(cur) > 0 && used+n > budget {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, r)
		used += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// RuleTokens is the size of a rule as the check prompt shows it: its
// heading, severity, instructions and labelled, fenced examples.
func RuleTokens(model string, r prompts.RuleRef) int {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Rule 10: %s\nSeverity: %s\n%s", r.Title, cmpOr(r.Severity, "medium"), strings.TrimSpace(r.Instructions))
	for _, e := range r.Examples {
		label := "Bad example (violates):"
		if e.Good {
			label = "Good example (complies):"
		}
		fmt.Fprintf(&b, "\n%s\n```%s\n%s\n```", label, e.Language, strings.TrimSpace(e.Code))
	}
	return llm.CountTokens(model, b.String())
}

// SchemaPullRequestRules is the schema name of the pull-request rules check.
const SchemaPullRequestRules = "kodyrules_pr_violations"

// ChangedFile is one file of a change set.
type ChangedFile struct {
	// Path is workspace-relative and slash-separated.
	Path     string
	Language string
	// Patch is the file's change in the Kodus patch format.
	Patch string
}

type prViolation struct {
	ruleViolation
	File string `json:"file"`
}

type prViolations struct {
	Violations []prViolation `json:"violations"`
}

// CheckPullRequest judges a whole change set against the pull-request
// scope rules (e.g. "a change to a handler comes with a test"), once for
// the set, batched like the file check. Each violation becomes a rule
// suggestion on the changed file it names; one naming a rule outside the
// list or a file outside the set is dropped.
//
// Such rules often depend on files the diff does not show, so when the
// pipeline knows its workspace the model first plans, ReWoo-style, the
// evidence to gather with the read-only workspace tools (the tests of a
// changed handler, the callers of a changed function), the calls run
// concurrently, and the judging call receives what they found. A model
// that gives no usable plan costs the evidence, not the check.
func (p *Pipeline) CheckPullRequest(ctx context.Context, files []ChangedFile, rules []prompts.RuleRef) ([]Suggestion, error) {
	if len(files) == 0 || len(rules) == 0 || !p.cfg.Enabled(LabelKodyRules) {
		return nil, nil
	}
	byPath := map[string]ChangedFile{}
	names := make([]string, len(files))
	var patch strings.Builder
	for i, f := range files {
		byPath[f.Path] = f
		names[i] = f.Path
		patch.WriteString(strings.TrimRight(f.Patch, "\n"))
		patch.WriteString("\n\n")
	}
	diff := strings.TrimRight(patch.String(), "\n")
	evidence, err := p.pullRequestEvidence(ctx, names, diff, rules)
	if err != nil {
		return nil, err
	}
	data := func(rs []prompts.RuleRef) prompts.PullRequestRulesData {
		return prompts.PullRequestRulesData{Files: names, Patch: diff, Rules: rs, ResponseLanguage: p.lang, Evidence: evidence}
	}
	bare, err := p.prompts.Render("kodyrules_pr_check", data(nil))
	if err != nil {
		return nil, err
	}
	var out []Suggestion
	for _, batch := range p.ruleBatches(rules, bare.Text) {
		msg, err := p.prompts.Render("kodyrules_pr_check", data(batch))
		if err != nil {
			return nil, err
		}
		reply, failed, err := ask[prViolations](ctx, p, llm.TaskRules, SchemaPullRequestRules, nil, msg)
		if err != nil {
			return nil, err
		}
		if failed != nil {
			return nil, fmt.Errorf("kodyrules_pr_check: %w", failed)
		}
		for _, v := range reply.Violations {
			f, ok := byPath[strings.TrimPrefix(v.File, "./")]
			if v.Rule < 1 || v.Rule > len(batch) || !ok {
				p.log.Warn("kodyrules_pr_check named a rule or file outside the lists; dropped", "rule", v.Rule, "file", v.File)
				continue
			}
			r := batch[v.Rule-1]
			out = append(out, ruleSuggestion(f.Path, f.Language, r, v.ruleViolation))
		}
	}
	return out, nil
}

// evidenceRef is a reference to a step's result in a plan's arguments.
var evidenceRef = regexp.MustCompile(`#E[0-9]+`)

// Bounds of the evidence gathered for the pull-request rules.
const (
	// PullRequestEvidenceSteps is the most tool calls the plan may make.
	PullRequestEvidenceSteps = 6
	// PullRequestEvidenceChars caps each piece of evidence in the check's
	// prompt.
	PullRequestEvidenceChars = 4000
	// pullRequestEvidenceTimeout bounds the whole gathering.
	pullRequestEvidenceTimeout = 90 * time.Second
)

// pullRequestEvidence gathers, across the workspace, what the rules need
// beyond the diff. It returns nothing, and no error, when the pipeline has
// no workspace or the model gives no usable plan: the check then runs on
// the diff alone. Only the end of ctx is an error. A rule set larger than
// the window allows is planned for in batches, as the check is, sharing
// the budget of tool calls (at least two per batch) and the time; their
// steps are told apart (#B1-E1, #B2-E1) and a step another batch already
// ran is not shown twice.
func (p *Pipeline) pullRequestEvidence(ctx context.Context, files []string, diff string, rules []prompts.RuleRef) ([]prompts.EvidenceRef, error) {
	if p.ws == "" {
		return nil, nil
	}
	deadline := time.Now().Add(pullRequestEvidenceTimeout)
	bare, err := p.prompts.Render("kodyrules_pr_evidence", prompts.PullRequestEvidenceData{Files: files, Patch: diff})
	if err != nil {
		return nil, err
	}
	batches := p.ruleBatches(rules, bare.Text)
	steps := max(2, PullRequestEvidenceSteps/len(batches))
	ws := tools.Workspace{Root: p.ws, Ignore: p.ignore}
	ts := []agent.Tool{ws.ListFiles(), ws.ReadFile(), ws.SearchWorkspace(), ws.FindReferences()}
	var out []prompts.EvidenceRef
	kept := map[string]string{} // the ID of each step kept, by tool and arguments
	for i, batch := range batches {
		left := time.Until(deadline)
		if left <= 0 {
			p.log.Warn("evidence for the pull-request rules ran out of time; the remaining rules are checked on the diff alone", "batches", len(batches)-i)
			break
		}
		msg, err := p.prompts.Render("kodyrules_pr_evidence", prompts.PullRequestEvidenceData{Files: files, Patch: diff, Rules: batch})
		if err != nil {
			return nil, err
		}
		task := agent.Task{
			Gateway: p.g, User: msg.Text, Feature: feature, Class: llm.TaskRules, Log: p.log,
			Budget: agent.Budget{MaxToolCalls: steps, Timeout: left},
		}
		gather := rewoo.Strategy[struct{}]{Prompts: p.prompts, MaxSteps: steps, CachePlan: true}
		got, err := gather.Gather(ctx, task, ts, func(e agent.Event) {
			if e.Kind == agent.EventPlanCreated || e.Kind == agent.EventStepDone || e.Kind == agent.EventGuard {
				p.log.Debug("pull-request rules evidence", "event", e.Kind, "tool", e.Tool, "text", e.Text)
			}
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.log.Warn("no evidence gathered for some pull-request rules; checking them on the diff alone", "rules", len(batch), "error", err)
			continue
		}
		// Each batch's plan numbers its steps from E1: with several
		// batches, E1 of batch 2 becomes B2-E1, and a step that repeats one
		// already kept is dropped, references to it naming the kept one.
		ids := map[string]string{}
		for _, e := range got {
			r := e.Ref()
			if len(batches) > 1 {
				ids[r.ID] = fmt.Sprintf("B%d-%s", i+1, r.ID)
				r.ID = ids[r.ID]
				r.Args = evidenceRef.ReplaceAllStringFunc(r.Args, func(ref string) string {
					if id, ok := ids[ref[1:]]; ok {
						return "#" + id
					}
					return ref
				})
			}
			key := r.Tool + "\x00" + r.Args
			if id, ok := kept[key]; ok {
				ids[e.ID] = id
				continue
			}
			kept[key] = r.ID
			// Redacted before the cut: a secret cut in two leaves a start
			// the gateway's redaction no longer recognises.
			if head, cut := redact.Cut(r.Text, PullRequestEvidenceChars); cut {
				r.Text = head + "\n…(truncated)"
			} else {
				r.Text = head
			}
			out = append(out, r)
		}
	}
	return out, nil
}
