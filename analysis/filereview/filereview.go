// Package filereview reviews one file's change against its baseline, end to
// end, for the editor and the CLI alike: the file gate, the Kodus patch, a
// cache per hunk, the review pipeline on the hunks not reviewed before, and
// the anchoring of every finding in the text it was computed for.
//
// The cache is what keeps a second review cheap: each hunk's findings are
// stored under the hunk's content hash (plus the file, the model, the rules,
// the prompt versions and the review configuration), with their lines
// relative to the hunk, so a hunk that did not change, or merely moved
// because lines were typed above it, costs no LLM call, also after a
// restart. They are stored before the severity threshold and the cap of
// kodus-config.yml, which apply to the whole file's findings at every
// review, cached or not: a review from the cache shows what a review of
// the same text without it shows.
package filereview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/patch"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/prompts"
)

// Cache keeps reviewed hunks. The sqlite store implements it.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// CacheTTL is how long a reviewed hunk is remembered.
const CacheTTL = 30 * 24 * time.Hour

// Reviewer reviews files. The zero value is not usable; fill the fields.
type Reviewer struct {
	// Pipeline runs the LLM stages; nil reviews nothing (offline).
	Pipeline *review.Pipeline
	// Gate decides which files are not reviewed; nil reviews every file.
	Gate *gate.Gate
	// Cache keeps reviewed hunks; nil disables it.
	Cache Cache
	// Model, RulesKey, PromptsKey and ConfigKey are part of the cache key:
	// a different model, rule set, prompt version or review configuration
	// (see ConfigKey) reviews again.
	Model, RulesKey, PromptsKey, ConfigKey string
	// Rules are the workspace's Kody Rules. Those that apply to a file and
	// are checked by the model (see ModelRules) go with its review: the
	// analysis is told not to contradict them, and the pipeline's Kody
	// Rules check reports their violations. Rules with a local detector
	// never reach the model.
	Rules []*rules.Rule
	// Control is the workspace's suggestionControl: its severity
	// threshold and maxSuggestions apply to each file's findings, cached
	// or fresh (see Review); CapChange applies maxSuggestions to a whole
	// change. The zero value filters nothing.
	Control kodusconfig.SuggestionControl
	// Context is the number of unchanged lines around a change
	// (patch.DefaultContext when 0).
	Context int
	Log     *slog.Logger
}

// Input is one file to review.
type Input struct {
	Path     string // workspace-relative, slash-separated
	Language string
	Base     string // the baseline text ("" for an untracked file)
	Current  string // the buffer text the review is computed for
	// Dismissed reports the findings the user dismissed: Review drops
	// them before the severity threshold and the cap, so that the cap
	// counts the findings shown. Nil dismisses none.
	Dismissed func(Finding) bool
}

// Finding is a suggestion anchored in Input.Current.
type Finding struct {
	review.Suggestion
	Span   anchor.Span
	Method anchor.Method
}

// DismissGroup is what "dismiss all like this" dismisses along with f in
// its file: the violations of the same Kody Rule for a rule's violation
// (another rule's stay), the findings of the same label otherwise.
func (f Finding) DismissGroup() string {
	if f.RuleID != "" {
		return review.LabelKodyRules + ":" + f.RuleID
	}
	return f.Label
}

// Result is the review of one file.
type Result struct {
	Path string
	// Skipped says why the file was not reviewed ("" when it was).
	Skipped gate.Reason
	// Findings are ordered by position.
	Findings    []Finding
	Hunks       int // hunks with added lines
	CachedHunks int // hunks answered from the cache
	Degraded    []string
	Discarded   []review.Discard
	// Unanchored are suggestions that could not be placed in the text and
	// were dropped rather than shown on a wrong line.
	Unanchored int
}

// cachedHunk is what the cache keeps per hunk: its suggestions before the
// severity threshold and the cap (each with FromRules, which the filters
// need), with line numbers relative to the hunk's first new-side line.
type cachedHunk struct {
	Suggestions []cachedSuggestion `json:"suggestions"`
}

// cachedSuggestion is a suggestion as the cache keeps it: its reported
// lines are offsets from the hunk's first new-side line (0 on that line,
// negative above it) and nil when the model gave none, so that every line
// the model gave is restored, wherever the hunk has moved, and no line is
// invented for a suggestion that had none.
type cachedSuggestion struct {
	Suggestion review.Suggestion `json:"suggestion"`
	Start      *int              `json:"start,omitempty"`
	End        *int              `json:"end,omitempty"`
}

// ErrOffline is returned when uncached hunks need the model and there is
// none; the result still carries what the cache had.
var ErrOffline = errors.New("no LLM configured: only cached findings are shown")

// Review reviews in.Current against in.Base.
func (r *Reviewer) Review(ctx context.Context, in Input) (Result, error) {
	res := Result{Path: in.Path}
	if r.Gate != nil {
		if reason := r.Gate.Check(in.Path, []byte(in.Current)); reason.Skip() {
			res.Skipped = reason
			return res, nil
		}
		if reason := r.unsendable(in.Path); reason.Skip() && r.Pipeline != nil {
			res.Skipped = reason
			return res, nil
		}
	}
	ctxLines := r.Context
	if ctxLines == 0 {
		ctxLines = patch.DefaultContext
	}
	fp := patch.Diff(in.Path, in.Base, in.Current, ctxLines)
	res.Hunks = len(fp.Hunks)
	if len(fp.Hunks) == 0 {
		return res, nil
	}

	var suggestions []review.Suggestion
	var todo []int // indexes in fp.Hunks of the hunks to review
	keys := make([]string, len(fp.Hunks))
	for i, h := range fp.Hunks {
		keys[i] = r.hunkKey(in.Path, h)
		if cached, ok := r.cached(ctx, keys[i]); ok {
			res.CachedHunks++
			suggestions = append(suggestions, fromCache(cached, h.NewStart)...)
			continue
		}
		todo = append(todo, i)
	}

	var err error
	if len(todo) > 0 {
		if r.Pipeline == nil {
			err = ErrOffline
		} else {
			fresh, ferr := r.reviewHunks(ctx, in, fp, todo, keys, &res)
			if ferr != nil {
				return res, ferr
			}
			suggestions = append(suggestions, fresh...)
		}
	}

	var n int
	res.Findings, n = anchorAll(in.Current, fp.Hunks, suggestions)
	res.Unanchored += n
	res.Findings = places(res.Findings)
	if in.Dismissed != nil {
		res.Findings = slices.DeleteFunc(res.Findings, in.Dismissed)
	}
	// The filters rank the findings of every hunk of the file together,
	// those from the cache included, in the order of the file.
	var dropped []review.Discard
	res.Findings, dropped = r.filter(res.Findings)
	res.Discarded = append(res.Discarded, dropped...)
	return res, err
}

// anchorAll anchors suggestions in text and returns the findings with the
// number of suggestions that could not be placed. A finding placed by its
// line numbers alone (anchor.MethodLines) must lie inside one of hunks,
// the code the model was shown; and when the code it quotes was not found,
// it keeps no improved code: a fix would replace whatever those lines hold
// with it.
func anchorAll(text string, hunks []patch.Hunk, ss []review.Suggestion) ([]Finding, int) {
	doc := anchor.NewDoc(text)
	var out []Finding
	unanchored := 0
	for _, s := range ss {
		span, method, ok := doc.Locate(s.ExistingCode, s.RelevantLinesStart, s.RelevantLinesEnd)
		if ok && method == anchor.MethodLines && !inOneHunk(hunks, span.StartLine+1, span.EndLine+1) {
			ok = false
		}
		if !ok {
			unanchored++
			continue
		}
		if method == anchor.MethodLines && strings.TrimSpace(s.ExistingCode) != "" {
			s.ImprovedCode = ""
		}
		s.RelevantLinesStart, s.RelevantLinesEnd = span.StartLine+1, span.EndLine+1
		out = append(out, Finding{Suggestion: s, Span: span, Method: method})
	}
	return out, unanchored
}

// inOneHunk reports whether the 1-based lines from..to lie inside one hunk
// (its context lines included).
func inOneHunk(hunks []patch.Hunk, from, to int) bool {
	for _, h := range hunks {
		if h.Contains(from) && h.Contains(to) {
			return true
		}
	}
	return false
}

// filter applies the severity threshold and maxSuggestions of r.Control
// to one file's findings (see review.Filter), in the order given.
func (r *Reviewer) filter(fs []Finding) ([]Finding, []review.Discard) {
	ss := make([]review.Suggestion, len(fs))
	for i, f := range fs {
		ss[i] = f.Suggestion
	}
	keep, dropped := review.FilterKeeps(r.Control, ss)
	if len(dropped) == 0 {
		return fs, nil
	}
	kept := make([]Finding, 0, len(fs))
	for i, f := range fs {
		if keep[i] {
			kept = append(kept, f)
		}
	}
	return kept, dropped
}

// CapChange applies maxSuggestions to a whole change when it caps the
// change (limitationType pr, the default): of the findings of every
// result, the most severe are kept, ties in the order of the files' paths
// and then of the places in each file; Kody Rules' findings are not
// counted unless applyFiltersToKodyRules is set. A finding capped away
// leaves its result's Findings for its Discarded. With limitationType
// file, or no cap, results come back unchanged.
func (r *Reviewer) CapChange(results []Result) []Result {
	if r.Control.LimitationType == kodusconfig.LimitFile || r.Control.MaxSuggestions <= 0 {
		return results
	}
	type ref struct{ res, idx int }
	var refs []ref
	for i, res := range results {
		for j := range res.Findings {
			refs = append(refs, ref{i, j})
		}
	}
	sort.SliceStable(refs, func(a, b int) bool {
		ra, rb := results[refs[a].res], results[refs[b].res]
		if ra.Path != rb.Path {
			return ra.Path < rb.Path
		}
		return ra.Findings[refs[a].idx].Span.Start < rb.Findings[refs[b].idx].Span.Start
	})
	ss := make([]review.Suggestion, len(refs))
	for k, at := range refs {
		ss[k] = results[at.res].Findings[at.idx].Suggestion
	}
	keep := review.CapKeeps(r.Control, ss)
	if keep == nil {
		return results
	}
	drop := map[ref]bool{}
	for k, at := range refs {
		if !keep[k] {
			drop[at] = true
		}
	}
	reason := fmt.Sprintf("over the limit of %d suggestions per change (suggestionControl.maxSuggestions); more severe ones are shown", r.Control.MaxSuggestions)
	for i := range results {
		kept := make([]Finding, 0, len(results[i].Findings))
		for j, f := range results[i].Findings {
			if drop[ref{i, j}] {
				results[i].Discarded = append(results[i].Discarded, review.Discard{Suggestion: f.Suggestion, Stage: review.StageCap, Reason: reason})
				continue
			}
			kept = append(kept, f)
		}
		results[i].Findings = kept
	}
	return results
}

// places sorts findings by position and gives each place of a suggestion
// id its own id: the first place keeps it, the n-th in file order gets
// review.OccurrenceID(id, n). The numbering runs over every finding of
// the file, cached hunks' included, so that a place keeps its id from one
// review to the next. A copy anchored at the same span as an earlier one
// is dropped.
func places(fs []Finding) []Finding {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Span.Start < fs[j].Span.Start })
	type place struct{ start, end int }
	seen := map[string][]place{}
	out := fs[:0]
	for _, f := range fs {
		id, at := f.ID, place{f.Span.Start, f.Span.End}
		if slices.Contains(seen[id], at) {
			continue
		}
		seen[id] = append(seen[id], at)
		if n := len(seen[id]); n > 1 && id != "" {
			f.ID = review.OccurrenceID(id, n)
		}
		out = append(out, f)
	}
	return out
}

// reviewHunks runs the pipeline on the hunks not in the cache and stores
// each hunk's share of the findings.
func (r *Reviewer) reviewHunks(ctx context.Context, in Input, fp patch.FilePatch, todo []int, keys []string, res *Result) ([]review.Suggestion, error) {
	hunks := make([]patch.Hunk, len(todo))
	for i, hi := range todo {
		hunks[i] = fp.Hunks[hi]
	}
	out, err := r.Pipeline.ReviewUnfiltered(ctx, review.FileInput{
		Path:     in.Path,
		Language: in.Language,
		Content:  in.Current,
		Patch:    fp.RenderHunks(hunks),
		Rules:    RuleRefs(ModelRules(r.Rules, in.Path, in.Language)),
	})
	if err != nil {
		return nil, err
	}
	res.Degraded = append(res.Degraded, out.Degraded...)
	res.Discarded = append(res.Discarded, out.Discarded...)

	// Attach each suggestion to the reviewed hunk it is about: where its
	// code is found, else where the model said it is, else the nearest.
	doc := anchor.NewDoc(in.Current)
	perHunk := make(map[int][]review.Suggestion)
	for _, s := range out.Suggestions {
		line := s.RelevantLinesStart
		if span, _, ok := doc.Locate(s.ExistingCode, s.RelevantLinesStart, s.RelevantLinesEnd); ok {
			line = span.StartLine + 1
		}
		i := nearestHunk(hunks, line)
		perHunk[i] = append(perHunk[i], s)
	}
	// A degraded run (a stage failed) is shown but not cached, so the next
	// review asks again rather than remembering a partial answer.
	if r.Cache != nil && len(out.Degraded) == 0 {
		for i, h := range hunks {
			entry, _ := json.Marshal(cachedHunk{Suggestions: toCache(perHunk[i], h.NewStart)})
			if perr := r.Cache.Put(ctx, keys[todo[i]], entry, CacheTTL); perr != nil {
				r.log().Warn("cannot cache a reviewed hunk", "path", in.Path, "error", perr)
			}
		}
	}
	return out.Suggestions, nil
}

func (r *Reviewer) cached(ctx context.Context, key string) ([]cachedSuggestion, bool) {
	if r.Cache == nil {
		return nil, false
	}
	raw, ok, err := r.Cache.Get(ctx, key)
	if err != nil || !ok {
		return nil, false
	}
	var c cachedHunk
	if json.Unmarshal(raw, &c) != nil {
		return nil, false
	}
	return c.Suggestions, true
}

// hunkKey identifies what a hunk's review depends on.
func (r *Reviewer) hunkKey(path string, h patch.Hunk) string {
	d := sha256.New()
	for _, part := range []string{"kodyls/filereview v3", path, h.Hash(), r.Model, r.RulesKey, r.PromptsKey, r.ConfigKey} {
		fmt.Fprintf(d, "%d:%s;", len(part), part)
	}
	return "review:" + hex.EncodeToString(d.Sum(nil))
}

func (r *Reviewer) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// toCache makes suggestions' reported lines relative to first, the
// first new-side line of their hunk.
func toCache(ss []review.Suggestion, first int) []cachedSuggestion {
	out := make([]cachedSuggestion, len(ss))
	rel := func(line int) *int {
		if line < 1 {
			return nil
		}
		off := line - first
		return &off
	}
	for i, s := range ss {
		out[i] = cachedSuggestion{Start: rel(s.RelevantLinesStart), End: rel(s.RelevantLinesEnd)}
		s.RelevantLinesStart, s.RelevantLinesEnd = 0, 0
		out[i].Suggestion = s
	}
	return out
}

// fromCache places cached suggestions' lines back at their hunk, whose
// first new-side line is now first.
func fromCache(cs []cachedSuggestion, first int) []review.Suggestion {
	out := make([]review.Suggestion, len(cs))
	for i, c := range cs {
		s := c.Suggestion
		s.RelevantLinesStart, s.RelevantLinesEnd = 0, 0
		if c.Start != nil {
			s.RelevantLinesStart = first + *c.Start
		}
		if c.End != nil {
			s.RelevantLinesEnd = first + *c.End
		}
		out[i] = s
	}
	return out
}

// nearestHunk returns the index in hs of the hunk containing line, or the
// closest one.
func nearestHunk(hs []patch.Hunk, line int) int {
	best, bestDist := 0, -1
	for i, h := range hs {
		if h.Contains(line) {
			return i
		}
		d := h.NewStart - line
		if d < 0 {
			d = line - (h.NewStart + h.NewLines - 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = i, d
		}
	}
	return best
}

// PromptsKey summarises the review prompts, for the cache key: their
// versions and the hash of their text, so that a new prompt version, or a
// workspace override (.kody/prompts) edited without one, reviews again.
func PromptsKey(set *prompts.Set) string {
	var parts []string
	for _, p := range set.List() {
		if strings.HasPrefix(p.Name, "review_") || strings.HasPrefix(p.Name, "kodyrules_") {
			parts = append(parts, fmt.Sprintf("%s@%d#%s", p.Name, p.Version, set.Digest(p.Name)))
		}
	}
	return strings.Join(parts, ",")
}

// ConfigKey summarises what of a workspace's kodus-config.yml shapes a
// hunk's findings, for the cache key: the categories turned on or off
// (reviewOptions, kody_rules among them) and the texts the file merges
// into the prompts (v2PromptOverrides). Changing any of them reviews the
// hunks again: with kody_rules off the rule check never runs, so there is
// nothing to filter back in when it is turned on.
//
// suggestionControl is not part of it: the findings are cached before the
// severity threshold and the cap, which Review applies to the whole
// file's findings at every review (the cap ranks the findings of every
// hunk of a file together, which one hunk's entry cannot do), so changing
// them costs no model call.
func ConfigKey(cfg kodusconfig.Config, set *prompts.Set) string {
	opts := make([]string, 0, len(cfg.ReviewOptions))
	for k, on := range cfg.ReviewOptions {
		opts = append(opts, fmt.Sprintf("%s=%t", k, on))
	}
	sort.Strings(opts)
	var overrides prompts.Overrides
	if set != nil {
		overrides = set.Overrides()
	}
	// encoding/json writes map keys sorted, so equal settings hash equal.
	b, _ := json.Marshal(struct {
		Options   []string
		Overrides prompts.Overrides
	}{opts, overrides})
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])[:16]
}

// RulesKey summarises the rules the model checks for the cache key:
// everything that changes what a rule says (its text, the files it
// references, its examples) or where it applies (its globs, languages and
// severity). Editing any of it reviews the hunks again; a narrowed rule must
// not keep a finding from the cache.
func RulesKey(rs []*rules.Rule) string {
	d := sha256.New()
	for i, ref := range RuleRefs(rs) {
		fmt.Fprintf(d, "%s\x00%s\x00%s\x00%s\x00", ref.UUID, ref.Title, ref.Severity, ref.Instructions)
		for _, e := range ref.Examples {
			fmt.Fprintf(d, "%t\x00%s\x00%s\x00", e.Good, e.Language, e.Code)
		}
		fmt.Fprintf(d, "%q\x00%q\x01", rs[i].Paths, rs[i].Languages)
	}
	return hex.EncodeToString(d.Sum(nil))[:16]
}

// Cluster links findings that repeat across files: one primary keeps the
// others as Duplicates, the rest point at it with DuplicateOf. It degrades
// to the results unchanged when the model is unavailable or fails.
func (r *Reviewer) Cluster(ctx context.Context, results []Result) []Result {
	if r.Pipeline == nil || len(results) < 1 {
		return results
	}
	in := make([]review.FileResult, len(results))
	for i, res := range results {
		in[i] = review.FileResult{Path: res.Path}
		for _, f := range res.Findings {
			in[i].Suggestions = append(in[i].Suggestions, f.Suggestion)
		}
	}
	out := r.Pipeline.Cluster(ctx, in)
	linked := map[string]review.Suggestion{}
	for _, fr := range out {
		for _, s := range fr.Suggestions {
			linked[s.ID] = s
		}
	}
	for i := range results {
		for j, f := range results[i].Findings {
			if s, ok := linked[f.ID]; ok {
				results[i].Findings[j].Duplicates = s.Duplicates
				results[i].Findings[j].DuplicateOf = s.DuplicateOf
			}
		}
		if i < len(out) {
			for _, d := range out[i].Degraded {
				if strings.HasPrefix(d, review.StageCluster) {
					results[i].Degraded = append(results[i].Degraded, d)
				}
			}
		}
	}
	return results
}

// PullRequestRules are the rules the model checks over a whole change set:
// enabled, pull-request scope, no local detector, and reaching at least one
// of the changed files (see Reaches).
func PullRequestRules(rs []*rules.Rule, files []review.ChangedFile) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range rs {
		if r.Detector != nil || !r.Enabled || r.Scope != rules.ScopePullRequest {
			continue
		}
		for _, f := range files {
			if Reaches(r, f.Path, f.Language) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Reaches reports whether a pull-request rule is about the file at path in
// the given language: its globs (none: every path) match the path and its
// languages (none: every language) include the language. A pull-request
// rule sees the whole change set, but it is checked only when it reaches
// a changed file, and only its violations on the files it reaches count.
func Reaches(r *rules.Rule, path, language string) bool {
	fileScope := *r
	fileScope.Enabled, fileScope.Scope = true, rules.ScopeFile // AppliesTo checks enabled file rules' globs
	return fileScope.AppliesTo(path) && r.AppliesToLanguage(language)
}

// CheckPullRequest runs the pull-request scope rules once over the changes
// of every input (files the gate skips are left out) and anchors each
// violation in its file's text. It makes no call without such rules or
// without a model; identical change sets are answered by the gateway's
// response cache.
func (r *Reviewer) CheckPullRequest(ctx context.Context, inputs []Input) (map[string][]Finding, error) {
	return r.checkPullRequest(ctx, inputs, r.Rules)
}

// CheckPullRequestRule judges one pull-request rule, whatever its state,
// over inputs as CheckPullRequest does: a rule author testing the rule.
func (r *Reviewer) CheckPullRequestRule(ctx context.Context, rule *rules.Rule, inputs []Input) (map[string][]Finding, error) {
	if r.Pipeline == nil {
		return nil, ErrOffline
	}
	tested := *rule
	tested.Enabled, tested.Scope = true, rules.ScopePullRequest
	return r.checkPullRequest(ctx, inputs, []*rules.Rule{&tested})
}

func (r *Reviewer) checkPullRequest(ctx context.Context, inputs []Input, all []*rules.Rule) (map[string][]Finding, error) {
	if r.Pipeline == nil {
		return nil, nil
	}
	var files []review.ChangedFile
	texts, langs := map[string]string{}, map[string]string{}
	hunks := map[string][]patch.Hunk{}
	for _, in := range inputs {
		if r.Gate != nil && (r.Gate.Check(in.Path, []byte(in.Current)).Skip() || r.unsendable(in.Path).Skip()) {
			continue
		}
		ctxLines := r.Context
		if ctxLines == 0 {
			ctxLines = patch.DefaultContext
		}
		fp := patch.Diff(in.Path, in.Base, in.Current, ctxLines)
		if len(fp.Hunks) == 0 {
			continue
		}
		files = append(files, review.ChangedFile{Path: in.Path, Language: in.Language, Patch: fp.RenderHunks(fp.Hunks)})
		texts[in.Path] = in.Current
		langs[in.Path] = in.Language
		hunks[in.Path] = fp.Hunks
	}
	rs := PullRequestRules(all, files)
	if len(files) == 0 || len(rs) == 0 {
		return nil, nil
	}
	ss, err := r.Pipeline.CheckPullRequest(ctx, files, RuleRefs(rs))
	if err != nil {
		return nil, err
	}
	byID := map[string][]*rules.Rule{}
	for _, rule := range rs {
		byID[rule.UUID] = append(byID[rule.UUID], rule)
	}
	out := map[string][]Finding{}
	for _, s := range ss {
		// The model sees every changed file; a violation on one the rule's
		// globs or languages leave out is not the rule's.
		if !slices.ContainsFunc(byID[s.RuleID], func(rule *rules.Rule) bool { return Reaches(rule, s.RelevantFile, langs[s.RelevantFile]) }) {
			continue
		}
		s.FromRules = true
		fs, _ := anchorAll(texts[s.RelevantFile], hunks[s.RelevantFile], []review.Suggestion{s})
		out[s.RelevantFile] = append(out[s.RelevantFile], fs...)
	}
	for path, fs := range out {
		out[path] = places(fs)
	}
	return out, nil
}

// unsendable says why the file at path must not reach the model: it is
// private (gate.Gate.Private), or the workspace's ignorePaths could not
// all be read (a kodus-config.yml that does not parse), so any file may
// be one the user meant to keep out. r.Gate is not nil.
func (r *Reviewer) unsendable(path string) gate.Reason {
	if why := r.Gate.Private(path); why.Skip() {
		return why
	}
	if why := r.Gate.Incomplete(); why != "" {
		return gate.Reason("not sent to the model until kodus-config.yml is fixed: its ignorePaths may lack a path to ignore (" + why + ")")
	}
	return ""
}

// CheckRule judges one rule with the model on the change from in.Base to
// in.Current (the whole file when Base is empty) and anchors what it finds:
// what `kodyls rules test` runs for a rule without a detector. It returns
// ErrOffline without a model, and an error for a file on the privacy list
// (gate.Gate.Private), which it never sends.
func (r *Reviewer) CheckRule(ctx context.Context, rule *rules.Rule, in Input) ([]Finding, error) {
	if r.Pipeline == nil {
		return nil, ErrOffline
	}
	// A rule author names the file, but a private one is never sent.
	if r.Gate != nil {
		if why := r.unsendable(in.Path); why.Skip() {
			return nil, fmt.Errorf("%s is not sent to the model: %s", in.Path, why)
		}
	}
	ctxLines := r.Context
	if ctxLines == 0 {
		ctxLines = patch.DefaultContext
	}
	fp := patch.Diff(in.Path, in.Base, in.Current, ctxLines)
	if len(fp.Hunks) == 0 {
		return nil, nil
	}
	ss, err := r.Pipeline.CheckKodyRules(ctx, review.FileInput{
		Path: in.Path, Language: in.Language, Content: in.Current,
		Patch: fp.RenderHunks(fp.Hunks), Rules: RuleRefs([]*rules.Rule{rule}),
	})
	if err != nil {
		return nil, err
	}
	out, _ := anchorAll(in.Current, fp.Hunks, ss)
	return places(out), nil
}
