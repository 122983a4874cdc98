// Package kodusconfig reads the kodus-config.yml (or .yaml) that Kodus users
// keep at the root of a repository: the paths never to review
// (ignorePaths), the review categories that are turned on (reviewOptions)
// and how many and which suggestions to show (suggestionControl).
//
// The file is the one the Kodus platform already reads, so a team's
// existing configuration applies in the editor unchanged. Loading never
// fails: a missing file gives the defaults, and a bad value is reported as
// a Problem with its line while the default stays in force, so one typo
// does not turn the whole review off. The prompt texts of the same file
// (v2PromptOverrides) belong to package prompts and other keys to other
// parts of kodyls; they are left alone here.
package kodusconfig

import (
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileNames are the names Kodus accepts for its configuration file, in the
// order they are looked for; the first one found is used.
var FileNames = []string{"kodus-config.yml", "kodus-config.yaml"}

// maxFileSize bounds the file read. A configuration file larger than this
// is a mistake (a file copied to the wrong place) that should be reported,
// not parsed.
const maxFileSize = 1 << 20

// Grouping modes of suggestionControl.groupingMode. "full" shows repeated
// suggestions as one comment listing every place (clustering on);
// "minimal" and "smart" keep them apart.
const (
	GroupingFull    = "full"
	GroupingMinimal = "minimal"
	GroupingSmart   = "smart"
)

// Limitation types of suggestionControl.limitationType: whether
// maxSuggestions caps each file or the whole change (pull request, or in
// the editor the whole workspace review).
const (
	LimitFile = "file"
	LimitPR   = "pr"
)

// Severity levels, most severe first, as severityLevelFilter takes them.
var severityLevels = []string{"critical", "high", "medium", "low"}

// reviewOptionKeys are the reviewOptions Kodus knows. The first group are
// the current categories; the second the older ones, still found in many
// existing files. Any other key is most likely a typo and is reported.
var reviewOptionKeys = []string{
	"bug", "performance", "security", "cross_file", "business_logic", "kody_rules", "breaking_changes",
	"code_style", "refactoring", "error_handling", "maintainability", "potential_issues",
	"documentation_and_comments", "performance_and_optimization",
}

// legacyOptions maps an older reviewOptions key to the current category
// that covers it. An older file that turns performance_and_optimization off
// means to turn performance suggestions off, so the older key sets the
// current one unless the file sets the current one itself.
var legacyOptions = map[string]string{
	"performance_and_optimization": "performance",
	"potential_issues":             "bug",
}

// Config is what kodyls uses of a workspace's kodus-config.yml.
type Config struct {
	// IgnorePaths are doublestar globs, relative to the workspace root, of
	// files that are never reviewed.
	IgnorePaths []string
	// ReviewOptions says which categories are reviewed, keyed by the
	// category label (bug, performance, security, kody_rules…). Every known
	// category is present and true unless the file turns it off; use
	// Enabled rather than indexing, since unknown labels count as on.
	ReviewOptions map[string]bool
	// SuggestionControl limits what is shown.
	SuggestionControl SuggestionControl
	// File is the workspace-relative name of the file read, "" when there
	// is none.
	File string
	// Problems are the bad values found, each with its line; the default
	// replaced each of them.
	Problems []Problem
}

// SuggestionControl is the suggestionControl section.
type SuggestionControl struct {
	// GroupingMode is GroupingFull (the default), GroupingMinimal or
	// GroupingSmart.
	GroupingMode string
	// LimitationType is LimitPR (the default) or LimitFile.
	LimitationType string
	// MaxSuggestions caps the suggestions shown per file or per change,
	// see LimitationType; 0 (the default) means no cap.
	MaxSuggestions int
	// SeverityLevelFilter is the least severe level shown: low (the
	// default, everything), medium, high or critical.
	SeverityLevelFilter string
	// ApplyFiltersToKodyRules applies the severity filter and the cap to
	// Kody Rules suggestions too; by default the team's own rules are
	// always shown.
	ApplyFiltersToKodyRules bool
}

// Problem is a bad value in the configuration file.
type Problem struct {
	// File is workspace-relative and slash-separated.
	File string
	// Line is 1-based; 0 when the problem concerns the file as a whole.
	Line int
	Msg  string
	// IgnoreLost says that the problem may have left out a path the file
	// means to ignore: the file cannot be read or parsed, ignorePaths is
	// not a list or is set twice, a pattern is not a valid glob. See
	// Config.IgnoreLost.
	IgnoreLost bool
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// Default returns the configuration used when a workspace has no file:
// nothing ignored, every category on, no cap, every severity shown, repeated
// suggestions grouped.
//
// The severity filter and the cap are off by default, unlike on the Kodus
// platform, because in the editor a finding is a hint on the line being
// written rather than a pull-request comment that costs a reviewer's
// attention; a team that wants fewer sets them in the file.
func Default() Config {
	opts := make(map[string]bool, len(reviewOptionKeys))
	for _, k := range reviewOptionKeys {
		opts[k] = true
	}
	return Config{
		ReviewOptions: opts,
		SuggestionControl: SuggestionControl{
			GroupingMode:        GroupingFull,
			LimitationType:      LimitPR,
			SeverityLevelFilter: "low",
		},
	}
}

// Enabled reports whether suggestions labelled label are wanted. Labels
// the configuration does not know are on: a category kodyls adds later
// must not vanish because an older file does not mention it.
func (c Config) Enabled(label string) bool {
	on, ok := c.ReviewOptions[strings.ToLower(strings.TrimSpace(label))]
	return !ok || on
}

// Ignored reports whether the file at rel (workspace-relative) matches one
// of the ignorePaths, as the review and every other reader of workspace
// files match them (agents/redact): a pattern without a slash also matches
// the file's base name anywhere in the tree ("*.lock", "yarn.lock"), which
// is how such patterns are read in .gitignore files and how users expect
// them to work.
func (c Config) Ignored(rel string) bool {
	ig, _ := redact.CompileIgnore(c.IgnorePaths)
	_, extra := ig.Which(rel)
	return extra
}

// IgnoreLost returns the problems that may have left out a path the file
// means to ignore (see Problem.IgnoreLost). The IgnorePaths that were read
// apply all the same; a reader that must not read a private file it was
// not asked for (a rule's reference, a file a model asks for) refuses
// every file while there are any.
func (c Config) IgnoreLost() []Problem {
	var out []Problem
	for _, p := range c.Problems {
		if p.IgnoreLost {
			out = append(out, p)
		}
	}
	return out
}

// SeverityRank orders severity levels: critical 4, high 3, medium 2, low 1,
// anything else 0.
func SeverityRank(level string) int {
	i := slices.Index(severityLevels, strings.ToLower(strings.TrimSpace(level)))
	if i < 0 {
		return 0
	}
	return len(severityLevels) - i
}

// Load reads kodus-config.yml (or .yaml) at the workspace root. It never
// fails: a missing file gives Default, and every problem is reported in
// Config.Problems with the default kept in its place. The file is read
// through an os.Root, so a symbolic link cannot make kodyls read a file
// outside the workspace. An empty root gives Default.
func Load(root string) Config {
	if root == "" {
		return Default()
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		c := Default()
		c.Problems = append(c.Problems, Problem{File: root, Msg: fmt.Sprintf("cannot open the workspace: %v", err), IgnoreLost: true})
		return c
	}
	defer r.Close()
	return LoadFS(r.FS())
}

// LoadFS reads the configuration as Load does from fsys, the workspace
// root; open fsys through os.Root so that no link leads outside it.
func LoadFS(fsys fs.FS) Config {
	c := Default()
	for _, name := range FileNames {
		data, err := readFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if c.File != "" {
			c.Problems = append(c.Problems, Problem{File: name, Msg: "ignored: " + c.File + " is used; delete one of the two"})
			continue
		}
		c.File = name
		if err != nil {
			c.Problems = append(c.Problems, Problem{File: name, Msg: err.Error(), IgnoreLost: true})
			continue
		}
		parsed, probs := Parse(name, data)
		parsed.File = name
		parsed.Problems = append(c.Problems, probs...)
		c = parsed
	}
	return c
}

// readFile reads a regular file of at most maxFileSize bytes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d KiB; is this really the configuration file?", maxFileSize>>10)
	}
	return data, nil
}

// Parse reads the configuration from the text of a kodus-config.yml named
// file (used in problems). It returns Default with the file's valid values
// applied, and the problems found.
func Parse(file string, data []byte) (Config, []Problem) {
	c := Default()
	var probs []Problem
	bad := func(n *yaml.Node, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	// lost reports a problem that may leave out a path to ignore.
	lost := func(n *yaml.Node, format string, args ...any) {
		bad(n, format, args...)
		probs[len(probs)-1].IgnoreLost = true
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlpos.ErrorLine(err, data)
		return c, []Problem{{File: file, Line: line, Msg: "invalid YAML: " + msg, IgnoreLost: true}}
	}
	if len(doc.Content) == 0 {
		return c, nil // an empty file
	}
	top := yamlpos.Deref(doc.Content[0])
	if yamlpos.IsNull(top) {
		return c, nil
	}
	if top.Kind != yaml.MappingNode {
		lost(top, "expected a mapping at the top of the file, found %s", yamlpos.KindName(top))
		return c, probs
	}
	// Only the keys read here are checked; the others belong to other
	// parts of kodyls (v2PromptOverrides) or to the Kodus platform only
	// (automatedReviewActive, summary, …), and are no mistake.
	sections := mapping(top, func(n *yaml.Node, format string, args ...any) {
		if n.Value == "ignorePaths" {
			lost(n, format, args...) // set twice: the second list is not read
			return
		}
		bad(n, format, args...)
	}, nil)
	if n, ok := sections["ignorePaths"]; ok {
		c.IgnorePaths = ignorePaths(n, bad, lost)
	}
	if n, ok := sections["reviewOptions"]; ok {
		reviewOptions(n, bad, c.ReviewOptions)
	}
	if n, ok := sections["suggestionControl"]; ok {
		suggestionControl(n, bad, &c.SuggestionControl)
	}
	// Sections are read in a fixed order and keys in sorted order, so the
	// problems are sorted to read top to bottom, as the file does.
	slices.SortStableFunc(probs, func(a, b Problem) int { return a.Line - b.Line })
	return c, probs
}

type badFunc func(n *yaml.Node, format string, args ...any)

// ignorePaths reads the list of patterns. A pattern the privacy list
// (agents/redact) cannot use is reported and left out, every other one
// kept; lost reports those whose absence may leave a path unignored.
func ignorePaths(n *yaml.Node, bad, lost badFunc) []string {
	if yamlpos.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		lost(n, "ignorePaths: expected a list of glob patterns, found %s", yamlpos.KindName(n))
		return nil
	}
	var out []string
	for _, item := range n.Content {
		item = yamlpos.Deref(item)
		if item.Kind != yaml.ScalarNode || yamlpos.IsNull(item) {
			lost(item, "ignorePaths: expected a glob pattern, found %s", yamlpos.KindName(item))
			continue
		}
		p := strings.TrimPrefix(strings.TrimSpace(item.Value), "./")
		if p == "" {
			bad(item, "ignorePaths: empty pattern is ignored")
			continue
		}
		switch err := redact.CheckIgnorePattern(p); {
		case errors.Is(err, redact.ErrIgnoreNegation):
			// Leaving it out ignores more, never less.
			bad(item, "ignorePaths: %q: negation with \"!\" is not supported, so the pattern is left out; what the other patterns ignore stays ignored", p)
			continue
		case errors.Is(err, redact.ErrIgnoreRoot):
			lost(item, "ignorePaths: %q names the workspace root, which would ignore every file; the pattern is left out", p)
			continue
		case err != nil:
			lost(item, "ignorePaths: %q is not a valid glob pattern (check its brackets and braces)", p)
			continue
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func reviewOptions(n *yaml.Node, bad badFunc, opts map[string]bool) {
	set := map[string]bool{}
	entries := mapping(n, bad, reviewOptionKeys)
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		v := entries[k]
		b, ok := boolean(v)
		if !ok {
			bad(v, "reviewOptions.%s: expected true or false, found %s; %s stays on", k, yamlpos.KindName(v), k)
			continue
		}
		opts[k] = b
		set[k] = true
	}
	for old, cur := range legacyOptions {
		if set[old] && !set[cur] {
			opts[cur] = opts[old]
		}
	}
}

var suggestionControlKeys = []string{"groupingMode", "limitationType", "maxSuggestions", "severityLevelFilter", "applyFiltersToKodyRules", "severityLimits"}

func suggestionControl(n *yaml.Node, bad badFunc, sc *SuggestionControl) {
	entries := mapping(n, bad, suggestionControlKeys)
	if v, ok := entries["groupingMode"]; ok {
		if s, ok := choice(v, bad, "suggestionControl.groupingMode", []string{GroupingFull, GroupingMinimal, GroupingSmart}, sc.GroupingMode); ok {
			sc.GroupingMode = s
		}
	}
	if v, ok := entries["limitationType"]; ok {
		if s, ok := choice(v, bad, "suggestionControl.limitationType", []string{LimitFile, LimitPR}, sc.LimitationType); ok {
			sc.LimitationType = s
		}
	}
	if v, ok := entries["maxSuggestions"]; ok && !yamlpos.IsNull(v) {
		i, err := strconv.Atoi(strings.TrimSpace(v.Value))
		switch {
		case v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil:
			bad(v, "suggestionControl.maxSuggestions: expected a whole number, found %s; no cap is used", yamlpos.KindName(v))
		case i < 0:
			bad(v, "suggestionControl.maxSuggestions: %d is negative; use 0 for no cap", i)
		default:
			sc.MaxSuggestions = i
		}
	}
	if v, ok := entries["severityLevelFilter"]; ok {
		if s, ok := choice(v, bad, "suggestionControl.severityLevelFilter", []string{"low", "medium", "high", "critical"}, sc.SeverityLevelFilter); ok {
			sc.SeverityLevelFilter = s
		}
	}
	if v, ok := entries["applyFiltersToKodyRules"]; ok && !yamlpos.IsNull(v) {
		if b, ok := boolean(v); ok {
			sc.ApplyFiltersToKodyRules = b
		} else {
			bad(v, "suggestionControl.applyFiltersToKodyRules: expected true or false, found %s", yamlpos.KindName(v))
		}
	}
	// severityLimits (a cap per level) is accepted so that Kodus files
	// load without complaint, but kodyls applies maxSuggestions only.
}

// choice reads one of the allowed values, case-insensitively. null keeps
// the default without a problem.
func choice(n *yaml.Node, bad badFunc, key string, allowed []string, def string) (string, bool) {
	if yamlpos.IsNull(n) {
		return "", false
	}
	s := strings.ToLower(strings.TrimSpace(n.Value))
	if n.Kind != yaml.ScalarNode || !slices.Contains(allowed, s) {
		shown := n.Value
		if n.Kind != yaml.ScalarNode {
			shown = yamlpos.KindName(n)
		}
		bad(n, "%s: %q is not one of %s; %s is used", key, shown, strings.Join(allowed, ", "), def)
		return "", false
	}
	return s, true
}

// boolean reads a YAML boolean. Quoted text such as "false" is refused
// rather than converted: it is truthy to the Kodus platform's reader, so
// accepting it here would make the editor and the platform disagree.
func boolean(n *yaml.Node) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, false
	}
	return b, true
}

// mapping returns the entries of a YAML mapping by key. When known is not
// nil, other keys are reported: they are most often typos, and a typo
// silently ignored leaves the user wondering why the setting has no effect.
// Duplicate keys are reported and the first one wins.
func mapping(n *yaml.Node, bad badFunc, known []string) map[string]*yaml.Node {
	n = yamlpos.Deref(n)
	out := map[string]*yaml.Node{}
	if yamlpos.IsNull(n) {
		return out
	}
	if n.Kind != yaml.MappingNode {
		bad(n, "expected a mapping, found %s", yamlpos.KindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlpos.Deref(n.Content[i+1])
		if _, dup := out[k.Value]; dup {
			bad(k, "%s is set twice; the first one is used", k.Value)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			bad(k, "unknown key %s is ignored (known: %s)", k.Value, strings.Join(known, ", "))
			continue
		}
		out[k.Value] = v
	}
	return out
}
