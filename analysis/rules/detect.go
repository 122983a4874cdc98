package rules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kodustech/kodyls/analysis/changes"
)

// DetectorRegex is the only detector type so far: a regular expression
// matched against each line.
const DetectorRegex = "regex"

// Detector finds violations of a rule without a reviewer. Type is
// DetectorRegex; Pattern is a Go (RE2) regular expression and Flags a set of
// single-letter flags, of which only "i" (case-insensitive) exists.
type Detector struct {
	Type    string
	Pattern string
	Flags   string
	// Replace, when HasFix, is what a match is replaced with by the
	// violation's quick fix: a template in which $1, ${1} or ${name} stand
	// for the pattern's groups and $$ for a dollar sign (Go's
	// regexp.Expand). An empty Replace deletes the match.
	Replace string
	HasFix  bool

	re *regexp.Regexp
	// pf skips the lines re cannot match; nil when it cannot tell.
	pf *prefilter
}

// NewDetector validates and compiles a detector, so that rules built in code
// behave exactly like rules read from files.
func NewDetector(typ, pattern, flags string) (*Detector, error) {
	typ, err := checkDetectorType(typ)
	if err != nil {
		return nil, err
	}
	if err := checkFlags(flags); err != nil {
		return nil, err
	}
	re, err := compilePattern(pattern, flags)
	if err != nil {
		return nil, err
	}
	return &Detector{Type: typ, Pattern: pattern, Flags: flags, re: re, pf: newPrefilter(re)}, nil
}

// Regexp returns the compiled pattern, flags applied; nil for a Detector that
// was not made by NewDetector or Parse.
func (d *Detector) Regexp() *regexp.Regexp {
	if d == nil {
		return nil
	}
	return d.re
}

// matcher returns the compiled pattern and its prefilter, compiling a
// hand-built Detector on the fly. The result is not stored back so that
// concurrent Detect calls never write to a shared Rule.
func (d *Detector) matcher() (*regexp.Regexp, *prefilter) {
	if d == nil {
		return nil, nil
	}
	if d.re != nil {
		return d.re, d.pf
	}
	if _, err := checkDetectorType(d.Type); err != nil {
		return nil, nil
	}
	if checkFlags(d.Flags) != nil {
		return nil, nil
	}
	re, err := compilePattern(d.Pattern, d.Flags)
	if err != nil {
		return nil, nil
	}
	return re, newPrefilter(re)
}

func checkDetectorType(typ string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(typ))
	switch t {
	case DetectorRegex:
		return t, nil
	case "":
		return "", errors.New(`detector has no "type"; set type: regex`)
	}
	return "", fmt.Errorf("unknown detector type %q: only %q is supported", typ, DetectorRegex)
}

func checkFlags(flags string) error {
	for _, f := range flags {
		if f != 'i' {
			return fmt.Errorf("unknown detector flag %q in %q: only \"i\" (case-insensitive) is supported", f, flags)
		}
	}
	return nil
}

// compilePattern compiles a detector pattern with its flags. Rule authors
// often come from PCRE or JavaScript, so when the pattern fails and uses
// constructs RE2 lacks, the error says so instead of leaving them to decode
// "invalid or unsupported Perl syntax".
func compilePattern(pattern, flags string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, errors.New("detector pattern is empty")
	}
	expr := pattern
	if strings.ContainsRune(flags, 'i') {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		if hint := re2Hint(pattern); hint != "" {
			return nil, fmt.Errorf("invalid detector pattern: %w; %s", err, hint)
		}
		return nil, fmt.Errorf("invalid detector pattern: %w", err)
	}
	return re, nil
}

// re2Hint names the PCRE-only constructs found in a pattern that failed to
// compile.
func re2Hint(pattern string) string {
	var found []string
	for _, c := range []struct{ syntax, name string }{
		{"(?=", "lookahead"},
		{"(?!", "negative lookahead"},
		{"(?<=", "lookbehind"},
		{"(?<!", "negative lookbehind"},
		{"(?>", "atomic groups"},
		{`\k<`, "named backreferences"},
	} {
		if strings.Contains(pattern, c.syntax) {
			found = append(found, c.name+" "+c.syntax)
		}
	}
	if hasBackreference(pattern) {
		found = append(found, `backreferences \1`)
	}
	if len(found) == 0 {
		return ""
	}
	return "Go regular expressions are RE2 and do not support " + strings.Join(found, ", ") +
		"; rewrite the pattern without them"
}

// hasBackreference reports whether the pattern contains \1 to \9 outside of
// an escaped backslash.
func hasBackreference(pattern string) bool {
	for i := 0; i+1 < len(pattern); i++ {
		if pattern[i] != '\\' {
			continue
		}
		if c := pattern[i+1]; c >= '1' && c <= '9' {
			return true
		}
		i++ // skip the escaped character, so that `\\1` is not taken for one
	}
	return false
}

// Violation is one match of a rule's detector. Line is 0-based; Start and
// End are byte offsets within the line (End exclusive); Match is the matched
// text. When the detector has a replacement, HasFix is set and Fix is the
// text that replaces Match.
type Violation struct {
	Rule       *Rule
	Line       int
	Start, End int
	Match      string
	Fix        string
	HasFix     bool
}

// checkReplace rejects a replacement that names a group the pattern does
// not have: regexp.Expand would silently put nothing in its place.
func checkReplace(re *regexp.Regexp, replace string) error {
	names := re.SubexpNames()
	for i := 0; i < len(replace); i++ {
		if replace[i] != '$' || i+1 == len(replace) {
			continue
		}
		if replace[i+1] == '$' {
			i++
			continue
		}
		name, rest := "", replace[i+1:]
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return fmt.Errorf("detector replace %q: ${ without a closing }", replace)
			}
			name = rest[1:end]
		} else {
			j := 0
			for j < len(rest) && (rest[j] == '_' || rest[j] >= '0' && rest[j] <= '9' || rest[j] >= 'a' && rest[j] <= 'z' || rest[j] >= 'A' && rest[j] <= 'Z') {
				j++
			}
			name = rest[:j]
		}
		if name == "" {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil {
			if n > re.NumSubexp() {
				return fmt.Errorf("detector replace %q uses $%s but the pattern has %d group(s)", replace, name, re.NumSubexp())
			}
			continue
		}
		if !slices.Contains(names, name) {
			return fmt.Errorf("detector replace %q uses ${%s} but the pattern has no group (?P<%s>...); write ${1} for a numbered group followed by a letter", replace, name, name)
		}
	}
	return nil
}

// Detect runs the regex detectors of the rules that apply to relPath over
// the lines of text for which include(line) is true; a nil include means
// every line. Lines end at "\n", "\r\n" or "\r", as in the Language Server
// Protocol, so line numbers agree with an editor's. Every non-empty match on
// a line is reported; empty matches are not, because a pattern such as `x*`
// would otherwise flag every position of every line. The result is sorted by
// line, start and rule file.
//
// A detector matches one line at a time and sees nothing else, so a line's
// violations depend on its text and the rules alone: DetectCache keeps them
// from one version of a document to the next.
func Detect(rules []*Rule, relPath, text string, include func(line int) bool) []Violation {
	act := activeRules(rules, relPath)
	if len(act) == 0 {
		return nil
	}
	var out []Violation
	var sc lineScratch
	forEachLine(text, func(n int, line string) {
		if include != nil && !include(n) {
			return
		}
		out = act.appendLine(out, n, line, &sc)
	})
	return out
}

// active is a rule whose detector runs, with its compiled pattern.
type active struct {
	rule *Rule
	re   *regexp.Regexp
	pf   *prefilter
	fix  bool
}

type activeSet []active

// activeRules are the rules among rules that apply to relPath and have a
// detector that compiles, in order.
func activeRules(rules []*Rule, relPath string) activeSet {
	var act activeSet
	for _, r := range rules {
		if r == nil || r.Detector == nil || !r.AppliesTo(relPath) {
			continue
		}
		if re, pf := r.Detector.matcher(); re != nil {
			act = append(act, active{rule: r, re: re, pf: pf, fix: r.Detector.HasFix})
		}
	}
	return act
}

// appendLine appends the violations of the active rules on line n, whose
// text is line, sorted by start and rule file.
func (act activeSet) appendLine(out []Violation, n int, line string, sc *lineScratch) []Violation {
	first := len(out)
	sc.reset(line)
	for _, a := range act {
		if !a.pf.mayMatch(sc) {
			continue
		}
		var ms [][]int
		if a.fix {
			ms = a.re.FindAllStringSubmatchIndex(line, -1)
		} else {
			ms = a.re.FindAllStringIndex(line, -1) // no groups needed: cheaper
		}
		for _, m := range ms {
			if m[0] == m[1] {
				continue
			}
			v := Violation{Rule: a.rule, Line: n, Start: m[0], End: m[1], Match: line[m[0]:m[1]], HasFix: a.fix}
			if a.fix {
				v.Fix = string(a.re.ExpandString(nil, a.rule.Detector.Replace, line, m))
			}
			out = append(out, v)
		}
	}
	// Lines are visited in order, so sorting each line's matches is
	// enough to sort the whole result.
	if len(out)-first > 1 {
		slices.SortFunc(out[first:], compareViolations)
	}
	return out
}

func compareViolations(a, b Violation) int {
	switch {
	case a.Line != b.Line:
		return a.Line - b.Line
	case a.Start != b.Start:
		return a.Start - b.Start
	case a.Rule.File != b.Rule.File:
		return strings.Compare(a.Rule.File, b.Rule.File)
	case a.End != b.End:
		return a.End - b.End
	}
	return strings.Compare(a.Rule.UUID, b.Rule.UUID)
}

// forEachLine calls fn with the 0-based index and content of every line of
// text, without its terminator, as changes.Lines yields them: a terminator
// at the very end does not start another line. An empty text, though, is
// one empty line, as an editor shows it.
func forEachLine(text string, fn func(n int, line string)) {
	if text == "" {
		fn(0, "")
		return
	}
	for n, line := range changes.Lines(text) {
		fn(n, line)
	}
}
