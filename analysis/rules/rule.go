// Package rules models a Kody Rule, loads a workspace's rules through a
// Registry of rule sources and runs the rules' local regex detectors over
// text.
//
// The sources are the ones a Kodus team already keeps, read unchanged: the
// Kody Markdown files (.kody/rules/**/*.md), the Kodus YAML rules
// (.kody-rules/review/*.yml and .kody-rules/memories/*.yml), and the
// instruction files of other coding assistants (.cursorrules,
// .cursor/rules/**/*.mdc, .github/copilot-instructions.md,
// .github/instructions/**/*.instructions.md, CLAUDE.md, AGENTS.md,
// .windsurfrules), split into one rule per section or bullet.
//
// A Kody Markdown file is YAML front matter between a first line "---" and
// a closing "---" line, followed by a Markdown body with "## Instructions"
// and "## Examples" sections. Broken files are reported as *LoadError
// values that carry the line and column to fix, so that an editor can show
// them as diagnostics on the rule file itself; problems that do not stop a
// rule from loading (an unknown key, a reference that cannot be resolved)
// are LoadErrors with Warning set.
package rules

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kodustech/kodyls/analysis/langid"
)

// Severity says how serious a violation of a rule is.
type Severity string

// The severities a rule may declare, from the most to the least serious.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
)

// ParseSeverity returns the severity named by s, ignoring case and
// surrounding spaces, and false when s names none.
func ParseSeverity(s string) (Severity, bool) {
	switch sev := Severity(strings.ToLower(strings.TrimSpace(s))); sev {
	case SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow:
		return sev, true
	}
	return "", false
}

// Scope says what a rule looks at: a single file, or a whole pull request.
type Scope string

// The scopes a rule may declare.
const (
	ScopeFile        Scope = "file"
	ScopePullRequest Scope = "pull_request"
)

// ParseScope returns the scope named by s, ignoring case and surrounding
// spaces and accepting the spellings rule files use ("pull-request", the
// Kodus platform's, as well as "pull_request"), and false when s names
// none.
func ParseScope(s string) (Scope, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "file":
		return ScopeFile, true
	case "pull_request", "pull-request", "pullrequest", "pull request", "pr":
		return ScopePullRequest, true
	}
	return "", false
}

// Example is one example of a rule's Markdown body. Kind is "bad" or "good"
// when the example sits under a "### Bad example" or "### Good example"
// heading and "" otherwise. Code is the content of one code fence and
// Language its info string; Text is the prose around it in the same
// sub-section.
type Example struct {
	Kind     string
	Language string
	Code     string
	Text     string
}

// Reference is a workspace file, or a range of its lines, that a rule's
// text points at with "@file:path#L10-L50", "@file:path" or
// "[[file:path]]". The referenced lines are attached so that a reviewer
// sees them with the rule.
type Reference struct {
	// Raw is the reference as written in the rule, such as
	// "@file:docs/style.md#L2-L4".
	Raw string
	// Path is the workspace-relative, slash-separated path of the file.
	Path string
	// RealPath is where Path leads through symbolic links, as
	// Rule.RealFile; "" when Path is no link.
	RealPath string
	// StartLine and EndLine are the 1-based, inclusive lines of Text:
	// the range asked for, or the whole file, cut at the limits.
	StartLine, EndLine int
	// Text holds the lines, each ending in "\n".
	Text string
	// Truncated is set when the range asked for was longer than
	// MaxReferenceLines or MaxReferenceBytes allow, or went past the
	// part of the file kodyls reads; the rule file gets a warning.
	Truncated bool
	// cutAtScan is set when Truncated comes from the end of the part of
	// the file kodyls reads (maxReferenceScan), not from the limits.
	cutAtScan bool
}

// Rule is one Kody Rule as read from a rule file.
type Rule struct {
	// UUID identifies the rule. When the file declares none, it is derived
	// from the file's path ("path:" followed by File, and "#" with the slug
	// of the title for a rule of a YAML list) so that it stays stable
	// across reloads; a rule imported from an assistant's file has
	// "<source>:<file>#<slug of the title>".
	UUID     string
	Title    string
	Severity Severity
	// Paths are doublestar globs relative to the workspace root; a pattern
	// starting with "!" excludes. Empty means every file.
	Paths     []string
	Scope     Scope
	Enabled   bool
	Languages []string
	// SeverityMin is the "severity_min" key of a Kody Markdown or YAML rule,
	// kept as written; when the rule declares no severity it is the
	// severity as well.
	SeverityMin Severity
	// Buckets are the rule's "buckets", kept for the Kodus platform.
	Buckets []string
	// Inheritance is the "inheritance" value of a Kodus YAML rule (which
	// repositories and directories inherit it), kept as decoded.
	Inheritance any
	// Extra holds the keys of the rule's front matter or YAML mapping that
	// this version does not use, as decoded, so that nothing the author
	// wrote is lost. It is nil when there are none.
	Extra map[string]any

	// Instructions is the text of the "## Instructions" section, or the
	// whole body without its examples when that heading is missing.
	Instructions string
	Examples     []Example
	// Body is the Markdown after the front matter, trimmed.
	Body string
	// BodyLine is the 1-based line of the file on which the body starts.
	BodyLine int

	// File is the workspace-relative, slash-separated path of the rule file.
	File string
	// RealFile is where File leads through symbolic links, workspace-relative
	// and slash-separated (".kody/rules/alpha.md" linked to
	// "shared/alpha.md"), so that a watcher sees the file that changes;
	// "" when File is no link. Registry.LoadReport sets it.
	RealFile string
	// Line is the 1-based line of File on which the rule starts: 1 for a
	// rule that is a whole file, the heading or bullet of a rule split out
	// of an assistant's instruction file, the mapping of a rule in a list
	// of YAML rules.
	Line int
	// References are the workspace files the rule's text points at, with
	// the lines it points at; Registry.Load resolves them.
	References []Reference
	// Source is the Name of the Source the rule was read from, such as
	// "kody-md"; Registry.Load sets it.
	Source string

	// Detector finds violations locally; nil when the rule has none and can
	// only be checked by a reviewer.
	Detector *Detector

	// Split is set for a rule a model split out of an assistant's
	// instruction file (Assistant.ApplySplit) rather than the file's
	// sections or bullets.
	Split bool

	// uuidLine is the line of the uuid key, kept to point at it when two
	// files declare the same uuid.
	uuidLine, uuidColumn int
	// textLine is the 1-based line of File on which Body starts, used to
	// point warnings about references at the right line; 0 when unknown.
	textLine int
}

// AppliesTo reports whether the rule checks the file at relPath (relative to
// the workspace root): the rule must be enabled, have file scope, and its
// path globs must match. A file matches when no positive pattern is given or
// one of them matches, and no "!" pattern matches.
func (r *Rule) AppliesTo(relPath string) bool {
	if r == nil || !r.Enabled || r.Scope != ScopeFile {
		return false
	}
	return matchPaths(r.Paths, normalizeRelPath(relPath))
}

// AppliesToLanguage reports whether the rule is meant for documents of the
// given language identifier (as an editor names it, such as "go"; other
// names of a language count, as "sh" for "shellscript", see langid.Same).
// A rule that lists no languages applies to all of them.
func (r *Rule) AppliesToLanguage(languageID string) bool {
	if r == nil {
		return false
	}
	if len(r.Languages) == 0 {
		return true
	}
	for _, l := range r.Languages {
		if langid.Same(l, languageID) {
			return true
		}
	}
	return false
}

// matchPaths applies include and "!" exclude patterns to a clean,
// slash-separated relative path. The patterns were validated when the rule
// was parsed, so a match error cannot happen for rules from Parse; a pattern
// that is invalid anyway simply does not match.
func matchPaths(patterns []string, rel string) bool {
	included, hasPositive := false, false
	for _, p := range patterns {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			if m, err := doublestar.Match(neg, rel); err == nil && m {
				return false
			}
			continue
		}
		hasPositive = true
		if !included {
			if m, err := doublestar.Match(p, rel); err == nil && m {
				included = true
			}
		}
	}
	return included || !hasPositive
}

// normalizeRelPath turns an OS-specific or "./"-prefixed relative path into
// the clean slash-separated form the globs are written against.
func normalizeRelPath(p string) string {
	p = path.Clean(filepath.ToSlash(p))
	return strings.TrimPrefix(p, "./")
}

// normalizePattern strips what a rule author may reasonably write but the
// glob matcher would not understand: a leading "./" or "/", since patterns
// are always relative to the workspace root.
func normalizePattern(p string) string {
	neg := strings.HasPrefix(p, "!")
	if neg {
		p = p[1:]
	}
	p = strings.TrimSpace(p)
	for {
		switch {
		case strings.HasPrefix(p, "./"):
			p = p[2:]
			continue
		case strings.HasPrefix(p, "/"):
			p = p[1:]
			continue
		}
		break
	}
	if neg {
		return "!" + p
	}
	return p
}

// LoadError is a rule file that could not be loaded. Line and Column are
// 1-based positions inside the file where known (0 when the problem concerns
// the file as a whole, such as its size); Msg says what to fix.
//
// Column counts bytes of the line's UTF-8 text (as gcc-style tools do),
// the text kodyls read: a UTF-16 file's decoded text, with no byte order
// mark and no carriage returns. A character such as "ü" counts 2, "😀" 4.
// An editor turns it into its own position encoding from the line's text.
//
// A LoadError with Warning set is a problem that did not stop anything from
// loading, such as an unknown front-matter key or a reference that cannot
// be resolved: the file is not broken. Registry.Load leaves warnings out;
// Registry.LoadReport returns them apart from the errors.
//
// Skipped marks the warning of a rule file that was not read at all
// because it is on the workspace's ignore list (kodus-config ignorePaths)
// or leads there.
type LoadError struct {
	File string
	// RealFile is where File leads through symbolic links, as
	// Rule.RealFile: the file to watch for the fix. "" when File is no
	// link.
	RealFile     string
	Line, Column int
	Msg          string
	Warning      bool
	Skipped      bool
}

// Error formats the problem as "file:line:col: msg", the form editors and
// terminals turn into links. The position is left out when it is unknown.
func (e *LoadError) Error() string {
	switch {
	case e.Line <= 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Column <= 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Lead is the first paragraph of the rule's instructions on one line: what
// a diagnostic or a report shows under the title.
func (r *Rule) Lead() string {
	s := strings.TrimSpace(r.Instructions)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}
