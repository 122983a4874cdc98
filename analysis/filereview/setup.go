package filereview

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/prompts"
)

// Workspace is what a reviewer of one workspace is built from.
type Workspace struct {
	Root    string
	Gateway *llm.Gateway // nil: offline, only cached findings
	Cache   Cache
	Rules   []*rules.Rule
	Log     *slog.Logger
}

// ForWorkspace builds the reviewer of a workspace: its kodus-config.yml
// (ignore paths, review options, suggestion control), its prompt overrides
// and its Kody Rules. Problems in those files are returned, never fatal.
func ForWorkspace(w Workspace) (*Reviewer, []string) {
	var problems []string
	cfg := kodusconfig.Load(w.Root)
	for _, p := range cfg.Problems {
		problems = append(problems, p.String())
	}
	// A bad pattern is left out with a problem; the others all apply.
	g, gp := gate.ForConfig(cfg)
	problems = append(problems, gp...)
	set, pp := prompts.LoadWorkspace(w.Root)
	for _, p := range pp {
		// Both readers parse kodus-config.yml: report its problems once.
		if !slices.Contains(problems, p.String()) {
			problems = append(problems, p.String())
		}
	}
	active := ModelRules(w.Rules, "", "")
	r := &Reviewer{
		Gate:       g,
		Cache:      w.Cache,
		RulesKey:   RulesKey(active),
		PromptsKey: PromptsKey(set),
		ConfigKey:  ConfigKey(cfg, set),
		Control:    cfg.SuggestionControl,
		Rules:      w.Rules,
		Log:        w.Log,
	}
	if w.Gateway != nil {
		r.Model = w.Gateway.Model(llm.TaskReview)
		if len(active) > 0 {
			// The rules are checked by the rules model: another one
			// checks again.
			r.RulesKey += "@" + w.Gateway.Model(llm.TaskRules)
		}
		// The evidence the review reads is no file the user named: while
		// the ignore list is incomplete, none is read.
		o := review.Options{Prompts: set, Config: cfg, Logger: w.Log, KodyRules: true, Workspace: w.Root, Ignore: g.Refuses}
		r.Pipeline = review.New(w.Gateway, o)
	}
	return r, problems
}

// ModelRules are the rules the model checks for the file at path: enabled,
// file scope, matching the file's path and language, with no local
// detector (those run on every keystroke and never reach the model). An
// empty path selects every such rule regardless of globs and language.
func ModelRules(rs []*rules.Rule, path, language string) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range rs {
		if r.Detector != nil || !r.Enabled || r.Scope != rules.ScopeFile {
			continue
		}
		if path != "" && (!r.AppliesTo(path) || !r.AppliesToLanguage(language)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// RuleRefs turns rules into what the prompts show, in order. The files a
// rule references (resolved inside the workspace when it was loaded) follow
// its instructions, so the check sees what the rule points at.
func RuleRefs(rs []*rules.Rule) []prompts.RuleRef {
	var out []prompts.RuleRef
	for _, r := range rs {
		ref := prompts.RuleRef{UUID: r.UUID, Title: r.Title, Severity: string(r.Severity), Instructions: withReferences(r)}
		for _, e := range r.Examples {
			if e.Kind == "" {
				continue // prose without a good/bad verdict is in the instructions already
			}
			ref.Examples = append(ref.Examples, prompts.RuleExample{Good: e.Kind == "good", Language: e.Language, Code: e.Code})
		}
		out = append(out, ref)
	}
	return out
}

// withReferences is a rule's instructions followed by the text of the files
// it references.
func withReferences(r *rules.Rule) string {
	var b strings.Builder
	b.WriteString(r.Instructions)
	for _, ref := range r.References {
		if ref.Text == "" {
			continue
		}
		fmt.Fprintf(&b, "\n\nReferenced %s (lines %d-%d):\n```\n%s```", ref.Path, ref.StartLine, ref.EndLine, ref.Text)
	}
	return b.String()
}
