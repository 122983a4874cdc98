package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Limits on a model's split of an assistant's file: anything beyond them
// is dropped, so that a confused or manipulated answer cannot flood the
// rule set.
const (
	// MaxSplitRules is the most rules kept from one file.
	MaxSplitRules = 50
	// MaxSplitTextLen is the longest rule text kept, in characters.
	MaxSplitTextLen = 2000
	// maxSplitTitleLen is the longest title accepted before it is cut to
	// maxTitleLen; a longer one is not a title.
	maxSplitTitleLen = 200
	// maxSplitLines is the most lines one rule may cite.
	maxSplitLines = 100
	// MinGrounding is the share of a rule text's words (of three letters
	// or more) that must appear in the lines it cites: a model may
	// condense the file's words, not write its own rules.
	MinGrounding = 0.6
	// minTitleGrounding is the share of a title's words that must appear
	// in the file for the model's title to be kept; a title that is not
	// is replaced by the first sentence of the rule.
	minTitleGrounding = 0.5
)

// SplitRule is one rule a model found in an assistant's instruction file:
// a rule a reviewer can check against a code change, with the 1-based,
// inclusive lines of the file it comes from and, when the file scopes it
// to some paths, workspace-relative globs.
type SplitRule struct {
	Title     string   `json:"title"`
	Text      string   `json:"text"`
	StartLine int      `json:"startLine"`
	EndLine   int      `json:"endLine"`
	Globs     []string `json:"globs,omitempty"`
}

// AssistantSource returns the source of assistants' files called name
// (Assistant.Name), such as "agents".
func AssistantSource(name string) (*Assistant, bool) {
	for _, a := range AssistantSources() {
		if a.name == name {
			return a, true
		}
	}
	return nil, false
}

// ApplySplit turns a model's split of one of the source's files into
// rules. det are the rules the file gave without a model (Parse, with
// Source and the scope of the file's directory set by Load): they give
// the severity, scope, paths and references the refined rules inherit,
// and they stay when the split is unusable.
//
// Every rule of the split is checked: its lines lie in the file's body,
// its title and text are not empty and not too long, and its text is
// grounded in its lines (MinGrounding). A rule that fails is left out and
// the reason returned in dropped. When no rule of a non-empty split
// passes, or det do not come from one file with one scope, det are
// returned unchanged and ok is false. An empty split is an answer: the
// file holds nothing a reviewer can check in code, and it gives no rules.
func (a *Assistant) ApplySplit(content []byte, det []*Rule, split []SplitRule) (out []*Rule, dropped []string, ok bool) {
	if len(det) == 0 {
		return det, nil, false
	}
	base := det[0]
	for _, r := range det[1:] {
		if r.File != base.File || !slices.Equal(r.Paths, base.Paths) || r.Scope != base.Scope || r.Severity != base.Severity || r.Enabled != base.Enabled {
			return det, []string{"the file's rules differ in scope; kept as split without a model"}, false
		}
	}
	lines := strings.Split(string(normalizeText(content)), "\n")
	blankMarkerLines(lines)
	first := a.bodyStart(lines) + 1
	var refs []Reference
	for _, r := range det {
		for _, ref := range r.References {
			if !slices.ContainsFunc(refs, func(x Reference) bool { return x.Raw == ref.Raw }) {
				refs = append(refs, ref)
			}
		}
	}

	// A title may name the rule with words from anywhere in the file,
	// such as a front matter's description.
	fileVocab := wordSet(strings.Join(lines, "\n"))
	slugs := map[string]int{}
	seen := map[string]bool{}
	for i, s := range split {
		why := func(format string, args ...any) {
			dropped = append(dropped, fmt.Sprintf("rule %d (%q, lines %d-%d): ", i+1, cutTitle(s.Title), s.StartLine, s.EndLine)+fmt.Sprintf(format, args...))
		}
		title := strings.Join(strings.Fields(s.Title), " ")
		text := strings.TrimSpace(s.Text)
		switch {
		case len(out) >= MaxSplitRules:
			why("more than %d rules in one file", MaxSplitRules)
			continue
		case title == "" || text == "":
			why("empty title or text")
			continue
		case utf8.RuneCountInString(title) > maxSplitTitleLen:
			why("title longer than %d characters", maxSplitTitleLen)
			continue
		case utf8.RuneCountInString(text) > MaxSplitTextLen:
			why("text longer than %d characters", MaxSplitTextLen)
			continue
		case s.StartLine < first || s.EndLine < s.StartLine || s.EndLine > len(lines):
			why("lines outside the file's rules (%d-%d)", first, len(lines))
			continue
		case s.EndLine-s.StartLine+1 > maxSplitLines:
			why("cites more than %d lines", maxSplitLines)
			continue
		}
		cited := strings.Join(lines[s.StartLine-1:s.EndLine], "\n")
		vocab := wordSet(cited)
		if g, n := grounding(text, vocab); n == 0 || g < MinGrounding {
			why("only %.0f%% of its words are in its lines (at least %.0f%% must be)", 100*g, 100*MinGrounding)
			continue
		}
		if seen[text] {
			why("repeats an earlier rule")
			continue
		}
		seen[text] = true
		if g, n := grounding(title, fileVocab); n > 0 && g < minTitleGrounding {
			title = firstSentence(text)
		}
		title = cutTitle(title)

		r := *base
		r.Paths = a.narrow(base, s.Globs)
		r.Extra = maps.Clone(base.Extra)
		r.Languages = slices.Clone(base.Languages)
		r.Examples, r.Detector = nil, nil
		r.Title = title
		r.Line, r.BodyLine, r.textLine = s.StartLine, s.StartLine, s.StartLine
		r.Body = strings.TrimSpace(cited)
		r.Instructions = text
		r.References = nil
		for _, ref := range refs {
			if strings.Contains(cited, ref.Raw) {
				r.References = append(r.References, ref)
			}
		}
		r.Split = true
		r.UUID = a.name + ":" + base.File + "#" + uniqueSlug(slugs, title)
		out = append(out, &r)
	}
	if len(out) == 0 && len(split) > 0 {
		return det, dropped, false
	}
	if out == nil {
		out = []*Rule{}
	}
	return out, dropped, true
}

// bodyStart is the 0-based index of the first line after the file's front
// matter, 0 when it has none.
func (a *Assistant) bodyStart(lines []string) int {
	if a.fm == noFrontMatter || len(lines) == 0 || !isDelimiter([]byte(lines[0])) {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if isDelimiter([]byte(lines[i])) {
			return i + 1
		}
	}
	return 0
}

// narrow returns the paths of a split rule: the model's globs where they
// lie within the file's own scope (base.Paths), with the file's
// exclusions; the file's paths when none does. A model may narrow a rule
// to the paths the file names, never widen it.
func (a *Assistant) narrow(base *Rule, globs []string) []string {
	var positives, negatives []string
	for _, p := range base.Paths {
		if strings.HasPrefix(p, "!") {
			negatives = append(negatives, p)
		} else {
			positives = append(positives, p)
		}
	}
	var kept []string
	for _, g := range globs {
		g = normalizePattern(g)
		if g == "" || strings.HasPrefix(g, "!") || !doublestar.ValidatePattern(g) || slices.Contains(kept, g) {
			continue
		}
		if len(positives) == 0 || slices.ContainsFunc(positives, func(p string) bool { return globWithin(g, p) }) {
			kept = append(kept, g)
		}
	}
	if len(kept) == 0 {
		return slices.Clone(base.Paths)
	}
	return append(kept, negatives...)
}

// globWithin reports whether every path g matches is matched by p, as far
// as the patterns' text shows: p is "**", g itself, or "dir/**" with g
// under dir.
func globWithin(g, p string) bool {
	if p == "**" || p == g {
		return true
	}
	dir, ok := strings.CutSuffix(p, "/**")
	return ok && strings.HasPrefix(g, dir+"/")
}

// grounding returns the share of text's words of three letters or more
// that vocab holds, and how many such words text has.
func grounding(text string, vocab map[string]bool) (float64, int) {
	n, found := 0, 0
	for _, w := range words(text) {
		n++
		if vocab[w] {
			found++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(found) / float64(n), n
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range words(s) {
		set[w] = true
	}
	return set
}

// words are the words of s of three letters or more, lower-case, with a
// plural "s" taken off so that "functions" matches "function".
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		letters := 0
		for _, r := range f {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters < 3 {
			continue
		}
		if len(f) > 3 && strings.HasSuffix(f, "s") && !strings.HasSuffix(f, "ss") {
			f = f[:len(f)-1]
		}
		out = append(out, f)
	}
	return out
}
