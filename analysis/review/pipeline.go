package review

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	pathpkg "path"
	"slices"
	"strings"
	"sync"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/prompts"
)

// run is the state of one ReviewFile call.
type run struct {
	p   *Pipeline
	in  FileInput
	res FileResult
	// lines is the number of lines of the buffer, 0 when no content was
	// given.
	lines int
}

func (r *run) degrade(stage string, err error, consequence string) {
	msg := fmt.Sprintf("%s: %v", stage, err)
	if consequence != "" {
		msg += "; " + consequence
	}
	r.res.Degraded = append(r.res.Degraded, msg)
	level := slog.LevelWarn
	if errors.Is(err, llm.ErrUnavailable) {
		// The gateway already said, once, that the endpoint is down; a
		// warning per stage and file would bury that line.
		level = slog.LevelDebug
	}
	r.p.log.Log(context.Background(), level, "review stage degraded", "file", r.in.Path, "stage", stage, "err", err, "consequence", consequence)
}

func (r *run) discard(s Suggestion, stage, reason string) {
	r.res.Discarded = append(r.res.Discarded, Discard{Suggestion: s, Stage: stage, Reason: reason})
	r.p.log.Debug("review suggestion discarded", "file", r.in.Path, "id", s.ID, "stage", stage, "reason", reason)
}

// ReviewFile reviews one file's change. Stage failures are reported in
// FileResult.Degraded, not as errors; an error is returned only when ctx
// ends (the result would be for a buffer nobody waits for any more) or when
// there is no gateway to call. The severity threshold applies, and
// maxSuggestions when it caps each file.
func (p *Pipeline) ReviewFile(ctx context.Context, in FileInput) (FileResult, error) {
	res, err := p.ReviewUnfiltered(ctx, in)
	if err != nil {
		return res, err
	}
	sc := p.cfg.SuggestionControl
	if sc.LimitationType != kodusconfig.LimitFile {
		sc.MaxSuggestions = 0
	}
	var dropped []Discard
	res.Suggestions, dropped = Filter(sc, res.Suggestions)
	for _, d := range dropped {
		p.log.Debug("review suggestion discarded", "file", in.Path, "id", d.Suggestion.ID, "stage", d.Stage, "reason", d.Reason)
	}
	res.Discarded = append(res.Discarded, dropped...)
	return res, nil
}

// ReviewUnfiltered is ReviewFile without the severity threshold and the
// cap: for a caller that reviews a file's hunks apart (some from a cache)
// and applies Filter over the whole file's findings.
func (p *Pipeline) ReviewUnfiltered(ctx context.Context, in FileInput) (FileResult, error) {
	if err := ctx.Err(); err != nil {
		return FileResult{}, errorf(in.Path, "%w", err)
	}
	if p.g == nil {
		return FileResult{}, errorf(in.Path, "%w: no LLM gateway", llm.ErrNotConfigured)
	}
	r := &run{p: p, in: in, res: FileResult{Path: in.Path}}
	if in.Content != "" {
		r.lines = strings.Count(in.Content, "\n")
		if !strings.HasSuffix(in.Content, "\n") {
			r.lines++
		}
	}

	mode, err := p.selectMode(ctx, r)
	if err != nil {
		return FileResult{}, errorf(in.Path, "%w", err)
	}
	r.res.Mode = mode

	suggestions, err := p.analyze(ctx, r)
	if err != nil {
		return FileResult{}, errorf(in.Path, "%w", err)
	}
	suggestions = r.filterOptions(suggestions)
	suggestions = r.dropImplementedLocally(suggestions)

	// The refinement stages only read the analysis' suggestions and write
	// their own answer, so they run at once and are merged afterwards in a
	// fixed order: the result does not depend on which answered first.
	var (
		wg   sync.WaitGroup
		sev  stageOut[map[string]string]
		safe stageOut[map[string]verdict]
		impl stageOut[map[string]bool]
		rule stageOut[[]Suggestion]
	)
	wg.Go(func() {
		sev = guard(StageSeverity, func() stageOut[map[string]string] { return p.severity(ctx, r, suggestions) })
	})
	wg.Go(func() {
		safe = guard(StageSafeguard, func() stageOut[map[string]verdict] { return p.safeguard(ctx, r, suggestions) })
	})
	wg.Go(func() {
		impl = guard(StageImplemented, func() stageOut[map[string]bool] { return p.implemented(ctx, r, suggestions) })
	})
	wg.Go(func() {
		rule = guard(StageRules, func() stageOut[[]Suggestion] { return p.checkRules(ctx, r, suggestions) })
	})
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return FileResult{}, errorf(in.Path, "%w", err)
	}

	for _, o := range []struct {
		stage, consequence string
		err                error
		notes              []string
	}{
		{StageSeverity, "the analysis' severities are kept (medium where it gave none)", sev.err, sev.notes},
		{StageSafeguard, "every suggestion is kept as the analysis wrote it", safe.err, safe.notes},
		{StageImplemented, "no suggestion is removed as already implemented", impl.err, impl.notes},
		{StageRules, "Kody Rules are not checked", rule.err, rule.notes},
	} {
		if o.err != nil {
			r.degrade(o.stage, o.err, o.consequence)
		}
		for _, n := range o.notes {
			r.res.Degraded = append(r.res.Degraded, o.stage+": "+n)
		}
	}

	merged := r.merge(suggestions, sev.val, safe.val, impl.val, rule)
	merged = r.filterOptions(merged)
	r.res.Suggestions = merged
	return r.res, nil
}

// stageOut is what a concurrent stage hands back: its answer, or the
// error that made it skip (the answer is then nil and its input stands),
// and notes on partial answers.
type stageOut[T any] struct {
	val   T
	err   error
	notes []string
	ran   bool
}

// guard turns a panic in a stage, above all in a RulesHook written
// elsewhere, into that stage's failure, so that one broken stage costs its
// refinement and not the editor's process.
func guard[T any](stage string, f func() stageOut[T]) (out stageOut[T]) {
	defer func() {
		if v := recover(); v != nil {
			out = stageOut[T]{err: fmt.Errorf("%s stage panicked: %v", stage, v)}
		}
	}()
	return f()
}

// ask sends one structured request. It returns the value, the reason the
// stage failed (nil when the value is the model's), and the context's
// error when the caller stopped waiting.
func ask[T any](ctx context.Context, p *Pipeline, task llm.TaskClass, schema string, allowed map[string][]any, msgs ...prompts.Rendered) (T, error, error) {
	var zero T
	req := llm.StructuredRequest{
		ChatRequest: llm.ChatRequest{Feature: feature, Task: task},
		SchemaName:  schema,
		Allowed:     allowed,
	}
	names := make([]string, len(msgs))
	for i, m := range msgs {
		role := "user"
		if i < len(msgs)-1 {
			role = "system"
		}
		req.Messages = append(req.Messages, llm.Message{Role: role, Content: m.Text})
		names[i] = fmt.Sprintf("%s@%d", m.Name, m.Version)
	}
	// The cache key carries the prompt's name and version. With a system
	// prompt the name lists both prompts, so that a new version of either
	// one is a new key; the version is the user prompt's.
	last := msgs[len(msgs)-1]
	req.PromptName, req.PromptVersion = last.Name, last.Version
	if len(msgs) > 1 {
		req.PromptName = strings.Join(names[:len(names)-1], "+") + "+" + last.Name
	}
	v, res, err := llm.Structured(ctx, p.g, req, func(error) T { return zero })
	if err != nil {
		if ctx.Err() != nil {
			return zero, nil, err
		}
		return zero, err, nil
	}
	if res.Source == llm.SourceFallback {
		return zero, res.Err, nil
	}
	if len(res.Dropped) > 0 {
		p.log.Warn("review: invalid items dropped from a model reply", "schema", schema, "dropped", res.Dropped)
	}
	return v, nil, nil
}

// modeReply is the answer of review_mode_select.
type modeReply struct {
	ReviewMode string `json:"reviewMode"`
}

// selectMode asks whether the analysis needs the whole file. Heavy is the
// answer to every doubt, failures included: a bug missed for lack of
// context costs more than a longer prompt.
func (p *Pipeline) selectMode(ctx context.Context, r *run) (string, error) {
	if strings.TrimSpace(r.in.Content) == "" {
		// Without the buffer there is nothing to add to the diff.
		return ModeLight, nil
	}
	msg, err := p.prompts.Render("review_mode_select", prompts.ReviewModeData{Language: r.in.Language, FileName: r.in.Path, Patch: r.in.Patch})
	if err != nil {
		r.degrade(StageMode, err, "heavy mode used")
		return ModeHeavy, nil
	}
	reply, failed, err := ask[modeReply](ctx, p, llm.TaskCheap, SchemaMode,
		map[string][]any{"reviewMode": {"light_mode", "heavy_mode"}}, msg)
	if err != nil {
		return "", err
	}
	if failed != nil {
		r.degrade(StageMode, failed, "heavy mode used")
		return ModeHeavy, nil
	}
	if reply.ReviewMode == "light_mode" {
		return ModeLight, nil
	}
	return ModeHeavy, nil
}

// analyzeReply is the answer of review_analyze_user.
type analyzeReply struct {
	CodeSuggestions []analyzedSuggestion `json:"codeSuggestions"`
}

// analyzedSuggestion is one suggestion as the analysis returns it. The
// file and language are optional because the pipeline knows them better;
// the severity is optional (and not restricted to the levels) because the
// severity stage fills in what is missing or invalid: a suggestion is not
// lost over a misspelt level.
type analyzedSuggestion struct {
	RelevantFile       string `json:"relevantFile,omitempty"`
	Language           string `json:"language,omitempty"`
	SuggestionContent  string `json:"suggestionContent"`
	ExistingCode       string `json:"existingCode"`
	ImprovedCode       string `json:"improvedCode"`
	OneSentenceSummary string `json:"oneSentenceSummary"`
	RelevantLinesStart int    `json:"relevantLinesStart"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd"`
	Label              string `json:"label"`
	Severity           string `json:"severity,omitempty"`
}

// contextShare is the part of the model's context window the analysis
// prompt may fill; the rest is left for the reply.
const contextShare = 0.75

// analyze asks for the suggestions. Its failure is the one that leaves
// nothing to show, since no stage comes before it.
func (p *Pipeline) analyze(ctx context.Context, r *run) ([]Suggestion, error) {
	sys, err := p.prompts.Render("review_analyze_system", prompts.ReviewSystemData{ResponseLanguage: p.lang})
	if err != nil {
		r.degrade(StageAnalyze, err, "no suggestions")
		return nil, nil
	}
	data := prompts.ReviewAnalyzeData{
		Language:    r.in.Language,
		FileName:    r.in.Path,
		Patch:       r.in.Patch,
		FileContent: r.in.Content,
		Heavy:       r.res.Mode == ModeHeavy,
		Rules:       r.in.Rules,
	}
	user, err := p.prompts.Render("review_analyze_user", data)
	if err != nil {
		r.degrade(StageAnalyze, err, "no suggestions")
		return nil, nil
	}
	if data.Heavy {
		model := p.g.Model(llm.TaskReview)
		limit := int(float64(p.g.ContextWindow(model)) * contextShare)
		if n := llm.CountTokens(model, sys.Text) + llm.CountTokens(model, user.Text); n > limit {
			// A prompt the endpoint refuses would lose every finding;
			// the diff alone still finds most of them.
			data.Heavy = false
			if light, lerr := p.prompts.Render("review_analyze_user", data); lerr == nil {
				user = light
				r.res.Mode = ModeLight
				r.degrade(StageMode, fmt.Errorf("the whole file needs about %d tokens, more than %d of the model's context window", n, limit), "light mode used")
			}
		}
	}
	reply, failed, err := ask[analyzeReply](ctx, p, llm.TaskReview, SchemaAnalyze, nil, sys, user)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		r.degrade(StageAnalyze, failed, "no suggestions")
		return nil, nil
	}
	all := make([]Suggestion, 0, len(reply.CodeSuggestions))
	var doc *anchor.Doc
	for _, a := range reply.CodeSuggestions {
		s := Suggestion{
			RelevantFile:       r.in.Path, // one file is reviewed: a finding is shown in it
			Language:           cmpOr(strings.TrimSpace(a.Language), r.in.Language),
			SuggestionContent:  strings.TrimSpace(a.SuggestionContent),
			ExistingCode:       a.ExistingCode,
			ImprovedCode:       a.ImprovedCode,
			OneSentenceSummary: strings.TrimSpace(a.OneSentenceSummary),
			RelevantLinesStart: a.RelevantLinesStart,
			RelevantLinesEnd:   a.RelevantLinesEnd,
			Label:              normalizeLabel(a.Label),
			Severity:           validSeverity(a.Severity),
		}
		s.ID = suggestionID(s.RelevantFile, s.ExistingCode, s.OneSentenceSummary)
		if !sameFile(a.RelevantFile, r.in.Path) {
			// A finding the model says is about another file is kept
			// only when the code it quotes is in this one: placed by its
			// line numbers alone, it would land on unrelated code.
			if doc == nil {
				doc = anchor.NewDoc(r.in.Content)
			}
			if !doc.Has(a.ExistingCode) {
				r.discard(s, StageAnalyze, fmt.Sprintf("it is about %s, not %s, and its existing code is not in %s", strings.TrimSpace(a.RelevantFile), r.in.Path, r.in.Path))
				continue
			}
		}
		if raw := rawLabel(a.Label); !p.cfg.Enabled(raw) {
			// A category turned off under the name the model gave
			// (error_handling), which the label shown is mapped from.
			r.discard(s, StageOptions, fmt.Sprintf("the %s category is turned off in reviewOptions", raw))
			continue
		}
		all = append(all, s)
	}
	// The same suggestion on other lines is another place of it (the
	// reviewer numbers the places once they are anchored); on the same
	// lines it is a repeat.
	out := make([]Suggestion, 0, len(all))
	seen := map[string]bool{}
	for _, s := range all {
		if reason := r.fixLines(&s); reason != "" {
			r.discard(s, StageAnalyze, reason)
			continue
		}
		if seen[placeKey(s)] {
			r.discard(s, StageAnalyze, "the analysis reported the same suggestion twice")
			continue
		}
		seen[placeKey(s)] = true
		out = append(out, s)
	}
	return out, nil
}

// placeKey is a suggestion at its lines: a repeat has the same.
func placeKey(s Suggestion) string {
	return fmt.Sprintf("%s@%d", s.ID, s.RelevantLinesStart)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fixLines checks a suggestion's line range against the buffer. A range
// outside the file is looked up by the existing code; a suggestion that
// cannot be placed on any line is dropped, since the editor could only
// show it in the wrong place. It returns why the suggestion is dropped, or
// "".
func (r *run) fixLines(s *Suggestion) string {
	if r.lines == 0 {
		return ""
	}
	if s.RelevantLinesStart < 1 || s.RelevantLinesStart > r.lines {
		at := findCode(r.in.Content, s.ExistingCode)
		if at == 0 {
			return fmt.Sprintf("lines %d-%d are outside the file and its existing code is not in the buffer", s.RelevantLinesStart, s.RelevantLinesEnd)
		}
		span := max(len(codeLines(s.ExistingCode)), 1)
		s.RelevantLinesStart, s.RelevantLinesEnd = at, at+span-1
	}
	switch {
	case s.RelevantLinesEnd < 1:
		s.RelevantLinesEnd = s.RelevantLinesStart
	case s.RelevantLinesEnd < s.RelevantLinesStart:
		// A reversed range (12..10) names lines 10 to 12.
		s.RelevantLinesStart, s.RelevantLinesEnd = s.RelevantLinesEnd, s.RelevantLinesStart
	}
	s.RelevantLinesEnd = min(s.RelevantLinesEnd, r.lines)
	return ""
}

// sameFile reports whether the file a model names (relevantFile) is the
// reviewed file at path: named the same way once cleaned ("./main.go",
// "main.go", a Windows separator), by a trailing part of its path (the
// base name), or by an absolute path that ends with it. An empty name is
// the reviewed file.
func sameFile(named, path string) bool {
	named = strings.TrimSpace(strings.ReplaceAll(named, "\\", "/"))
	if named == "" {
		return true
	}
	abs := strings.HasPrefix(named, "/") || len(named) > 2 && named[1] == ':' && named[2] == '/'
	named = strings.TrimPrefix(pathpkg.Clean("/"+named), "/")
	path = strings.TrimPrefix(pathpkg.Clean("/"+strings.ReplaceAll(path, "\\", "/")), "/")
	switch {
	case named == path:
		return true
	case strings.HasSuffix(path, "/"+named):
		return true // a trailing part: main.go for cmd/tool/main.go
	case abs && strings.HasSuffix(named, "/"+path):
		return true // the file's absolute path
	}
	return false
}

// filterOptions drops the suggestions of categories turned off in
// reviewOptions.
func (r *run) filterOptions(ss []Suggestion) []Suggestion {
	return slices.DeleteFunc(ss, func(s Suggestion) bool {
		if r.p.cfg.Enabled(s.Label) {
			return false
		}
		r.discard(s, StageOptions, fmt.Sprintf("the %s category is turned off in reviewOptions", s.Label))
		return true
	})
}

// dropImplementedLocally removes the suggestions whose improved code the
// buffer already holds at their place. This needs no model, so it runs
// before the model stages and saves their tokens.
func (r *run) dropImplementedLocally(ss []Suggestion) []Suggestion {
	return slices.DeleteFunc(ss, func(s Suggestion) bool {
		if !alreadyImplemented(r.in.Content, s) {
			return false
		}
		r.discard(s, StageImplemented, "the buffer already contains the improved code")
		return true
	})
}

// severityReply is the answer of review_severity.
type severityReply struct {
	CodeSuggestions []struct {
		Index    int    `json:"index"`
		Severity string `json:"severity"`
		Reason   string `json:"reason,omitempty"`
	} `json:"codeSuggestions"`
}

// severity assigns a level to the suggestions that have none or an invalid
// one. It returns the levels by suggestion ID.
func (p *Pipeline) severity(ctx context.Context, r *run, ss []Suggestion) stageOut[map[string]string] {
	var need []Suggestion
	for _, s := range ss {
		if s.Severity == "" {
			need = append(need, s)
		}
	}
	if len(need) == 0 {
		return stageOut[map[string]string]{}
	}
	msg, err := p.prompts.Render("review_severity", prompts.SeverityData{Suggestions: toPrompts(need)})
	if err != nil {
		return stageOut[map[string]string]{err: err}
	}
	reply, failed, err := ask[severityReply](ctx, p, llm.TaskCheap, SchemaSeverity, map[string][]any{
		"codeSuggestions.index":    indexes(len(need)),
		"codeSuggestions.severity": anyStrings(prompts.SeverityLevels()),
	}, msg)
	if err != nil || failed != nil {
		return stageOut[map[string]string]{err: cmpErr(failed, err)}
	}
	out := stageOut[map[string]string]{val: map[string]string{}, ran: true}
	for _, it := range reply.CodeSuggestions {
		if it.Index < 1 || it.Index > len(need) {
			continue
		}
		id := need[it.Index-1].ID
		if _, dup := out.val[id]; dup {
			continue // the first answer for a suggestion counts
		}
		if lv := validSeverity(it.Severity); lv != "" {
			out.val[id] = lv
		}
	}
	return out
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// verdict is the safeguard's decision on one suggestion.
type verdict struct {
	action string
	reason string
	update safeguardItem
}

// safeguardItem is one entry of review_safeguard's answer. The update
// fields are optional: the prompt asks for them only with "update".
type safeguardItem struct {
	Index              int    `json:"index"`
	Action             string `json:"action"`
	Reason             string `json:"reason,omitempty"`
	SuggestionContent  string `json:"suggestionContent,omitempty"`
	ExistingCode       string `json:"existingCode,omitempty"`
	ImprovedCode       string `json:"improvedCode,omitempty"`
	OneSentenceSummary string `json:"oneSentenceSummary,omitempty"`
	RelevantLinesStart int    `json:"relevantLinesStart,omitempty"`
	RelevantLinesEnd   int    `json:"relevantLinesEnd,omitempty"`
}

type safeguardReply struct {
	CodeSuggestions []safeguardItem `json:"codeSuggestions"`
}

// Safeguard actions.
const (
	actionKeep    = "no_changes"
	actionUpdate  = "update"
	actionDiscard = "discard"
)

// safeguard asks for the last check of every suggestion. The prompt asks
// for one entry per suggestion; one the model left out got no verdict, so
// it is kept ("when in doubt, discard" is the model's rule for the
// suggestions it judges, not ours for the ones it skipped), and the
// omission is noted.
func (p *Pipeline) safeguard(ctx context.Context, r *run, ss []Suggestion) stageOut[map[string]verdict] {
	if len(ss) == 0 {
		return stageOut[map[string]verdict]{}
	}
	data := prompts.SafeguardData{
		Language:         r.in.Language,
		FileName:         r.in.Path,
		Patch:            r.in.Patch,
		Suggestions:      toPrompts(ss),
		ResponseLanguage: p.lang,
	}
	if r.res.Mode == ModeHeavy {
		// The safeguard judges with the context the analysis had: the
		// whole file in heavy mode, the diff alone in light mode.
		data.FileContent = r.in.Content
	}
	msg, err := p.prompts.Render("review_safeguard", data)
	if err != nil {
		return stageOut[map[string]verdict]{err: err}
	}
	reply, failed, err := ask[safeguardReply](ctx, p, llm.TaskReview, SchemaSafeguard, map[string][]any{
		"codeSuggestions.index":  indexes(len(ss)),
		"codeSuggestions.action": {actionKeep, actionUpdate, actionDiscard},
	}, msg)
	if err != nil || failed != nil {
		return stageOut[map[string]verdict]{err: cmpErr(failed, err)}
	}
	out := stageOut[map[string]verdict]{val: map[string]verdict{}, ran: true}
	for _, it := range reply.CodeSuggestions {
		if it.Index < 1 || it.Index > len(ss) {
			continue
		}
		id := ss[it.Index-1].ID
		if _, dup := out.val[id]; dup {
			continue // the first verdict on a suggestion counts
		}
		out.val[id] = verdict{action: it.Action, reason: strings.TrimSpace(it.Reason), update: it}
	}
	var missing []string
	for i, s := range ss {
		if _, ok := out.val[s.ID]; !ok {
			missing = append(missing, fmt.Sprint(i+1))
		}
	}
	if len(missing) > 0 {
		out.notes = append(out.notes, fmt.Sprintf("no verdict on suggestion %s of %d; kept unchanged", strings.Join(missing, ", "), len(ss)))
	}
	return out
}

// implementedReply is the answer of review_validate_implemented.
type implementedReply struct {
	CodeSuggestions []struct {
		Index                int    `json:"index"`
		ImplementationStatus string `json:"implementationStatus"`
	} `json:"codeSuggestions"`
}

// implemented asks which suggestions the change already carries out. It
// returns the IDs of those fully implemented; a partly implemented
// suggestion still has something to say and stays.
func (p *Pipeline) implemented(ctx context.Context, r *run, ss []Suggestion) stageOut[map[string]bool] {
	if len(ss) == 0 {
		return stageOut[map[string]bool]{}
	}
	msg, err := p.prompts.Render("review_validate_implemented", prompts.ValidateImplementedData{
		Language:    r.in.Language,
		FileName:    r.in.Path,
		Patch:       r.in.Patch,
		Suggestions: toPrompts(ss),
	})
	if err != nil {
		return stageOut[map[string]bool]{err: err}
	}
	reply, failed, err := ask[implementedReply](ctx, p, llm.TaskCheap, SchemaImplemented, map[string][]any{
		"codeSuggestions.index":                indexes(len(ss)),
		"codeSuggestions.implementationStatus": {"implemented", "partially_implemented", "not_implemented"},
	}, msg)
	if err != nil || failed != nil {
		return stageOut[map[string]bool]{err: cmpErr(failed, err)}
	}
	out := stageOut[map[string]bool]{val: map[string]bool{}, ran: true}
	for _, it := range reply.CodeSuggestions {
		if it.Index < 1 || it.Index > len(ss) {
			continue
		}
		id := ss[it.Index-1].ID
		if _, dup := out.val[id]; !dup {
			out.val[id] = it.ImplementationStatus == "implemented"
		}
	}
	return out
}

// checkRules runs the RulesHook on a copy of the suggestions, so that the
// hook cannot change what the other stages are reading.
func (p *Pipeline) checkRules(ctx context.Context, r *run, ss []Suggestion) stageOut[[]Suggestion] {
	if p.rules == nil || !p.cfg.Enabled(LabelKodyRules) {
		return stageOut[[]Suggestion]{}
	}
	got, err := p.rules.Check(ctx, r.in, slices.Clone(ss))
	if err != nil {
		return stageOut[[]Suggestion]{err: err}
	}
	return stageOut[[]Suggestion]{val: got, ran: true}
}

// merge applies the answers of the concurrent stages to the analysis'
// suggestions, in the analysis' order. A stage that did not run (failed,
// or had nothing to do) leaves its part unchanged.
func (r *run) merge(ss []Suggestion, sev map[string]string, safe map[string]verdict, impl map[string]bool, rules stageOut[[]Suggestion]) []Suggestion {
	keptByRules := map[string]bool{}
	for _, s := range rules.val {
		keptByRules[s.ID] = true
	}
	out := make([]Suggestion, 0, len(ss)+len(rules.val))
	for _, s := range ss {
		v, judged := safe[s.ID]
		switch {
		case judged && v.action == actionDiscard:
			r.discard(s, StageSafeguard, cmpOr(v.reason, "discarded by the safeguard"))
			continue
		case impl[s.ID]:
			r.discard(s, StageImplemented, "the change already carries it out")
			continue
		case rules.ran && !keptByRules[s.ID]:
			r.discard(s, StageRules, "removed by the Kody Rules check: it contradicts a team rule")
			continue
		}
		if judged && v.action == actionUpdate {
			r.applyUpdate(&s, v.update)
		}
		if s.Severity == "" {
			// A finding whose level nobody could tell is shown as
			// medium: neither promoted nor hidden by the default filter.
			s.Severity = cmpOr(sev[s.ID], "medium")
		}
		out = append(out, s)
	}

	seen := map[string]bool{}
	for _, s := range ss {
		seen[placeKey(s)] = true
	}
	for _, s := range rules.val {
		if seen[placeKey(s)] && s.ID != "" {
			continue // a standard suggestion the hook kept
		}
		s.RelevantFile = cmpOr(s.RelevantFile, r.in.Path)
		s.Language = cmpOr(s.Language, r.in.Language)
		s.Label = cmpOr(normalizeLabel(s.Label), LabelKodyRules)
		s.Severity = cmpOr(validSeverity(s.Severity), "medium")
		if s.ID == "" {
			s.ID = suggestionID(s.RelevantFile, s.ExistingCode, s.OneSentenceSummary)
		}
		if reason := r.fixLines(&s); reason != "" {
			r.discard(s, StageRules, reason)
			continue
		}
		if seen[placeKey(s)] {
			continue
		}
		seen[placeKey(s)] = true
		s.FromRules = true
		out = append(out, s)
	}
	return out
}

// applyUpdate replaces the fields the safeguard corrected. Empty fields and
// line numbers outside the file are ignored: the update refines the
// suggestion, it cannot blank it out.
func (r *run) applyUpdate(s *Suggestion, u safeguardItem) {
	set := func(dst *string, v string) {
		if strings.TrimSpace(v) != "" {
			*dst = v
		}
	}
	set(&s.SuggestionContent, strings.TrimSpace(u.SuggestionContent))
	set(&s.ExistingCode, u.ExistingCode)
	set(&s.ImprovedCode, u.ImprovedCode)
	set(&s.OneSentenceSummary, strings.TrimSpace(u.OneSentenceSummary))
	if u.RelevantLinesStart >= 1 && (r.lines == 0 || u.RelevantLinesStart <= r.lines) {
		s.RelevantLinesStart, s.RelevantLinesEnd = u.RelevantLinesStart, u.RelevantLinesEnd
		switch {
		case s.RelevantLinesEnd < 1:
			s.RelevantLinesEnd = s.RelevantLinesStart
		case s.RelevantLinesEnd < s.RelevantLinesStart:
			s.RelevantLinesStart, s.RelevantLinesEnd = s.RelevantLinesEnd, s.RelevantLinesStart
		}
		if r.lines > 0 {
			s.RelevantLinesEnd = min(s.RelevantLinesEnd, r.lines)
		}
	}
}
