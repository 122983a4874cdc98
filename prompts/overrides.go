package prompts

import (
	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"

	"fmt"
	"maps"
	"slices"
	"strings"

	_ "embed"

	"go.yaml.in/yaml/v3"
)

// categoryLabels are the review categories, in the order prompts list them.
// They are the categories of Kodus' v2PromptOverrides, so an existing
// kodus-config.yml applies unchanged.
var categoryLabels = []string{"bug", "performance", "security"}

// severityLevels are the severities, most severe first.
var severityLevels = []string{"critical", "high", "medium", "low"}

// CategoryLabels returns the labels a review suggestion may carry, in the
// order the prompts list them: bug, performance, security.
func CategoryLabels() []string { return slices.Clone(categoryLabels) }

// SeverityLevels returns the severity levels, most severe first: critical,
// high, medium, low.
func SeverityLevels() []string { return slices.Clone(severityLevels) }

// Overrides is the prompt text a workspace may set in kodus-config.yml under
// v2PromptOverrides. Set.Overrides returns it merged with kodyls' defaults;
// the Entries methods fall back to the defaults for anything missing, so a
// partly filled value still renders every category and severity.
type Overrides struct {
	// Categories maps a label of CategoryLabels() to the description of what
	// the category covers (categories.descriptions in kodus-config).
	Categories map[string]string
	// SeverityFlags maps a level of SeverityLevels() to the flags that put a
	// suggestion at that level (severity.flags in kodus-config).
	SeverityFlags map[string]string
	// GenerationMain is extra instructions appended to the review request
	// (generation.main in kodus-config); empty for none.
	GenerationMain string
}

// Entry is one category or severity level with its text.
type Entry struct {
	Name string
	Text string
}

//go:embed kodus_defaults.yml
var defaultsYAML []byte

// defaults are kodyls' own texts, parsed from kodus_defaults.yml at init.
// That file has the shape of a kodus-config.yml so that users can copy a
// block from it as a starting point for their own.
var defaults, defaultsErr = func() (Overrides, error) {
	o, probs := parseKodusConfig("kodus_defaults.yml", defaultsYAML)
	if len(probs) > 0 {
		return o, fmt.Errorf("%s", probs[0])
	}
	return o, nil
}()

// DefaultOverrides returns kodyls' default texts, as used where a workspace
// sets nothing.
func DefaultOverrides() Overrides { return defaults.clone() }

// CategoryEntries lists the categories in CategoryLabels() order, with the
// default description where o has none.
func (o Overrides) CategoryEntries() []Entry {
	return entries(categoryLabels, o.Categories, defaults.Categories)
}

// SeverityEntries lists the severity levels, most severe first, with the
// default flags where o has none.
func (o Overrides) SeverityEntries() []Entry {
	return entries(severityLevels, o.SeverityFlags, defaults.SeverityFlags)
}

// Labels returns CategoryLabels(), for templates: {{.Overrides.Labels}}.
func (o Overrides) Labels() []string { return CategoryLabels() }

// Levels returns SeverityLevels(), for templates: {{.Overrides.Levels}}.
func (o Overrides) Levels() []string { return SeverityLevels() }

func entries(keys []string, set, def map[string]string) []Entry {
	out := make([]Entry, 0, len(keys))
	for _, k := range keys {
		text := strings.TrimSpace(set[k])
		if text == "" {
			text = def[k]
		}
		out = append(out, Entry{Name: k, Text: text})
	}
	return out
}

// merged returns o with every missing text taken from the defaults.
func (o Overrides) merged() Overrides {
	m := Overrides{Categories: map[string]string{}, SeverityFlags: map[string]string{}, GenerationMain: strings.TrimSpace(o.GenerationMain)}
	for _, e := range o.CategoryEntries() {
		m.Categories[e.Name] = e.Text
	}
	for _, e := range o.SeverityEntries() {
		m.SeverityFlags[e.Name] = e.Text
	}
	if m.GenerationMain == "" {
		m.GenerationMain = defaults.GenerationMain
	}
	return m
}

func (o Overrides) clone() Overrides {
	return Overrides{Categories: maps.Clone(o.Categories), SeverityFlags: maps.Clone(o.SeverityFlags), GenerationMain: o.GenerationMain}
}

// parseKodusConfig reads v2PromptOverrides from the text of a
// kodus-config.yml. Everything else in the file belongs to other parts of
// kodyls and is ignored here. Problems locate the offending line; a value
// with a problem is left out and its default applies.
func parseKodusConfig(file string, data []byte) (Overrides, []Problem) {
	var o Overrides
	var probs []Problem
	bad := func(n *yaml.Node, warn bool, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...), Warning: warn})
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlpos.ErrorLine(err, data)
		return o, []Problem{{File: file, Line: line, Msg: "invalid YAML: " + msg}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return o, nil // an empty file
	}
	root := doc.Content[0]
	if yamlpos.IsNull(root) {
		return o, nil
	}
	if root.Kind != yaml.MappingNode {
		bad(root, false, "expected a mapping at the top of the file, found %s", yamlpos.KindName(root))
		return o, probs
	}
	// Only v2PromptOverrides is ours: the rest of the file is checked by
	// the parts of kodyls that use it, and reported there.
	var v2 *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value == "v2PromptOverrides" {
			if v2 != nil {
				bad(k, false, "v2PromptOverrides is set twice; keep one")
				continue
			}
			v2 = yamlpos.Deref(root.Content[i+1])
		}
	}
	if yamlpos.IsNull(v2) {
		return o, probs
	}
	sections := mapping(v2, bad, []string{"categories", "severity", "generation"})
	if c := sections["categories"]; c != nil {
		if d := mapping(c, bad, []string{"descriptions"})["descriptions"]; d != nil {
			o.Categories = texts(d, bad, categoryLabels)
		}
	}
	if s := sections["severity"]; s != nil {
		if f := mapping(s, bad, []string{"flags"})["flags"]; f != nil {
			o.SeverityFlags = texts(f, bad, severityLevels)
		}
	}
	if g := sections["generation"]; g != nil {
		if m := mapping(g, bad, []string{"main"})["main"]; m != nil {
			o.GenerationMain, _ = text(m, bad)
		}
	}
	return o, probs
}

type badFunc func(n *yaml.Node, warn bool, format string, args ...any)

// mapping returns the entries of a YAML mapping by key. When known is not
// nil, other keys are reported as warnings: they are most often typos, and
// a typo silently ignored would leave the user wondering why their text
// does not show. Duplicate keys are errors; the first one wins.
func mapping(n *yaml.Node, bad badFunc, known []string) map[string]*yaml.Node {
	n = yamlpos.Deref(n)
	out := map[string]*yaml.Node{}
	if yamlpos.IsNull(n) {
		return out
	}
	if n.Kind != yaml.MappingNode {
		bad(n, false, "expected a mapping, found %s", yamlpos.KindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlpos.Deref(n.Content[i+1])
		if _, dup := out[k.Value]; dup {
			bad(k, false, "%s is set twice; keep one", k.Value)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			bad(k, true, "unknown key %s is ignored (known: %s)", k.Value, strings.Join(known, ", "))
			continue
		}
		out[k.Value] = v
	}
	return out
}

// texts reads a mapping of known names to strings.
func texts(n *yaml.Node, bad badFunc, known []string) map[string]string {
	out := map[string]string{}
	for k, v := range mapping(n, bad, known) {
		if s, ok := text(v, bad); ok && s != "" {
			out[k] = s
		}
	}
	return out
}

// text reads a string value; null is no value. Numbers and booleans are
// refused rather than converted: a description reading "true" is a mistake.
func text(n *yaml.Node, bad badFunc) (string, bool) {
	n = yamlpos.Deref(n)
	if yamlpos.IsNull(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		bad(n, false, "expected text, found %s; quote it if it is meant as text", yamlpos.KindName(n))
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}
