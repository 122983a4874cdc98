package filereview

import (
	"fmt"
	"log/slog"

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
	g, err := gate.New(gate.Options{IgnorePaths: cfg.IgnorePaths})
	if err != nil {
		problems = append(problems, fmt.Sprintf("kodus-config ignorePaths: %v (using the default ignore list)", err))
		g, _ = gate.New(gate.Options{})
	}
	set, pp := prompts.LoadWorkspace(w.Root)
	for _, p := range pp {
		problems = append(problems, p.String())
	}
	refs := RuleRefs(w.Rules)
	r := &Reviewer{
		Gate:       g,
		Cache:      w.Cache,
		RulesKey:   RulesKey(refs),
		PromptsKey: PromptsKey(set),
		Rules:      refs,
		Log:        w.Log,
	}
	if w.Gateway != nil {
		r.Model = w.Gateway.Model(llm.TaskReview)
		r.Pipeline = review.New(w.Gateway, review.Options{Prompts: set, Config: cfg, Logger: w.Log})
	}
	return r, problems
}

// RuleRefs turns the enabled file-scope rules into what the prompts show.
func RuleRefs(rs []*rules.Rule) []prompts.RuleRef {
	var out []prompts.RuleRef
	for _, r := range rs {
		if !r.Enabled || r.Scope != rules.ScopeFile {
			continue
		}
		ref := prompts.RuleRef{UUID: r.UUID, Title: r.Title, Severity: string(r.Severity), Instructions: r.Instructions}
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
