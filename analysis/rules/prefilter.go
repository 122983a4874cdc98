package rules

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A prefilter holds literals of which every match of a pattern contains at
// least one, so that a line holding none of them is skipped without running
// the pattern. Most detectors name a word or a call (`\bpanic\(`,
// `(log|fmt)\.Printf?\(`) that few lines contain, and a substring search is
// far cheaper than the regexp engine, which finds no literal prefix to look
// for in such patterns.
//
// It is conservative: a pattern for which no such literals can be proven
// has no prefilter (nil), and its every line is matched.
type prefilter struct {
	// exact are searched for as they are.
	exact []string
	// folded are ASCII literals in lower case that the pattern matches
	// case-insensitively. They are searched for in the line turned to
	// ASCII lower case, which is exact for a line of ASCII alone; a line
	// with other bytes is always matched, because Unicode case folding
	// maps some of them onto ASCII letters (K, the Kelvin sign, folds to k;
	// ſ to s).
	folded [][]byte
}

// maxPrefilterLiterals bounds the literals of an alternation; past it the
// searches cost more than they save.
const maxPrefilterLiterals = 16

// newPrefilter returns the prefilter of a compiled pattern, or nil when
// none can be proven.
func newPrefilter(re *regexp.Regexp) *prefilter {
	if re == nil {
		return nil
	}
	// re.String() is the expression it was compiled from, flags included;
	// regexp.Compile parses with syntax.Perl.
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := requiredLiterals(tree)
	if !ok {
		return nil
	}
	pf := &prefilter{}
	for _, l := range lits {
		if l.fold {
			pf.folded = append(pf.folded, []byte(l.s))
		} else {
			pf.exact = append(pf.exact, l.s)
		}
	}
	return pf
}

// literal is one of the literals of a prefilter.
type literal struct {
	s    string
	fold bool // matched case-insensitively; s is ASCII in lower case
}

// requiredLiterals returns literals such that every match of re contains
// at least one of them, and false when it cannot tell.
func requiredLiterals(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalOf(re)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		// Every match contains a match of every part: any part's literals
		// will do, and the best are the longest.
		var best []literal
		found := false
		for _, sub := range re.Sub {
			lits, ok := requiredLiterals(sub)
			if ok && (!found || betterLiterals(lits, best)) {
				best, found = lits, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		// A match is a match of one branch: every branch needs literals.
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := requiredLiterals(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		if len(all) > maxPrefilterLiterals {
			return nil, false
		}
		return all, true
	}
	// Character classes, any character, empty-width assertions, optional
	// and starred parts: nothing every match must contain.
	return nil, false
}

// literalOf is the literal a literal node matches.
func literalOf(re *syntax.Regexp) ([]literal, bool) {
	s := string(re.Rune)
	if s == "" || strings.ContainsRune(s, utf8.RuneError) {
		// U+FFFD in a pattern matches every invalid UTF-8 byte of a line,
		// which a substring search would not find.
		return nil, false
	}
	if re.Flags&syntax.FoldCase == 0 {
		return []literal{{s: s}}, true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return nil, false // other scripts' case folding is not ASCII's
		}
	}
	return []literal{{s: strings.ToLower(s), fold: true}}, true
}

// betterLiterals reports whether the literals a are a better prefilter
// than b: their shortest is longer, or as long and they are fewer, or
// exact rather than case-insensitive.
func betterLiterals(a, b []literal) bool {
	la, lb := shortest(a), shortest(b)
	if la != lb {
		return la > lb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return folds(a) < folds(b)
}

func shortest(lits []literal) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

func folds(lits []literal) int {
	n := 0
	for _, l := range lits {
		if l.fold {
			n++
		}
	}
	return n
}

// lineScratch is what the prefilters of one line share: whether it is
// ASCII, and its lower-case form, computed when a prefilter first needs
// them.
type lineScratch struct {
	line     string
	computed bool
	ascii    bool
	lower    []byte
}

func (sc *lineScratch) reset(line string) {
	sc.line, sc.computed = line, false
}

// lowerASCII returns the line in ASCII lower case, and false when the line
// holds a byte that is not ASCII.
func (sc *lineScratch) lowerASCII() ([]byte, bool) {
	if !sc.computed {
		sc.computed, sc.ascii = true, true
		sc.lower = sc.lower[:0]
		for i := 0; i < len(sc.line); i++ {
			c := sc.line[i]
			if c >= utf8.RuneSelf {
				sc.ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			sc.lower = append(sc.lower, c)
		}
	}
	return sc.lower, sc.ascii
}

// mayMatch reports whether the pattern can match in the scratch's line: a
// nil prefilter always can.
func (pf *prefilter) mayMatch(sc *lineScratch) bool {
	if pf == nil {
		return true
	}
	for _, l := range pf.exact {
		if strings.Contains(sc.line, l) {
			return true
		}
	}
	if len(pf.folded) == 0 {
		return false
	}
	lower, ascii := sc.lowerASCII()
	if !ascii {
		return true
	}
	for _, l := range pf.folded {
		if bytes.Contains(lower, l) {
			return true
		}
	}
	return false
}
