package rules

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestPrefilterLiterals(t *testing.T) {
	tests := []struct {
		pattern, flags string
		exact, folded  []string // nil, nil: no prefilter
	}{
		{`\bbadIdent\(`, "", []string{"badIdent("}, nil},
		{`(log|fmt)\.Printf?\("debug`, "", []string{`("debug`}, nil},
		{`(log|fmt)\.Printf?\(`, "", []string{".Print"}, nil},
		{`TODO|FIXME`, "", []string{"TODO", "FIXME"}, nil},
		{`todo`, "i", nil, []string{"todo"}},
		{`(?i)TODO|FIXME`, "", nil, []string{"todo", "fixme"}},
		{`(?i:TODO)|FIXME`, "", []string{"FIXME"}, []string{"todo"}},
		{`\bany\b`, "", []string{"any"}, nil},
		{`(ab)+c?`, "", []string{"ab"}, nil},
		{`x{2,}`, "", []string{"x"}, nil},
		// Nothing every match must contain.
		{`x*`, "", nil, nil},
		{`a|b?`, "", nil, nil},
		{`[ab]c?`, "", nil, nil},
		{`x{0,3}`, "", nil, nil},
		{`^$`, "", nil, nil},
		// Case folding outside ASCII, and U+FFFD, which matches invalid
		// bytes.
		{`é`, "i", nil, nil},
		{`\x{FFFD}`, "", nil, nil},
	}
	for _, tt := range tests {
		d, err := NewDetector("regex", tt.pattern, tt.flags)
		if err != nil {
			t.Fatal(err)
		}
		pf := d.pf
		if tt.exact == nil && tt.folded == nil {
			if pf != nil {
				t.Errorf("%q: prefilter %q %q, want none", tt.pattern, pf.exact, pf.folded)
			}
			continue
		}
		if pf == nil {
			t.Errorf("%q: no prefilter, want %q %q", tt.pattern, tt.exact, tt.folded)
			continue
		}
		var folded []string
		for _, f := range pf.folded {
			folded = append(folded, string(f))
		}
		if !slices.Equal(pf.exact, tt.exact) || !slices.Equal(folded, tt.folded) {
			t.Errorf("%q: prefilter %q %q, want %q %q", tt.pattern, pf.exact, folded, tt.exact, tt.folded)
		}
	}
}

// Lines where case folding leaves ASCII, and invalid UTF-8, still run the
// pattern.
func TestPrefilterUnicode(t *testing.T) {
	tests := []struct{ pattern, flags, line string }{
		{`k`, "i", "\u212a"},          // the Kelvin sign folds to k
		{`(?i)s`, "", "ſ"},            // the long s folds to s
		{`(?i)ſ`, "", "S"},            // and back
		{`a\x{FFFD}`, "", "a\xff"},    // an invalid byte reads as U+FFFD
		{`TODO`, "i", "tOdO"},         // ASCII folding
		{`(?i)straße`, "", "STRASSE"}, // no match, but the line is checked
	}
	for _, tt := range tests {
		d, err := NewDetector("regex", tt.pattern, tt.flags)
		if err != nil {
			t.Fatal(err)
		}
		r := &Rule{File: "r.md", Enabled: true, Scope: ScopeFile, Detector: d}
		got := Detect([]*Rule{r}, "a", tt.line, nil)
		if want := d.re.MatchString(tt.line); (len(got) > 0) != want {
			t.Errorf("%q on %q: %d violations, the pattern matches: %v", tt.pattern, tt.line, len(got), want)
		}
	}
}

// randomPattern builds a random regular expression of the shapes the
// prefilter reasons about.
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "k", "K", "s", "S", "é", "ſ", "\u212a", `\(`, `\.`, ".", "[ab]", "[^a]", `\b`, "^", "$", `\x{FFFD}`, `\pL`, "ab", "Sk"}
	if depth == 0 || r.IntN(3) == 0 {
		return atoms[r.IntN(len(atoms))]
	}
	sub := func() string { return randomPattern(r, depth-1) }
	switch r.IntN(8) {
	case 0, 1:
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(sub())
		}
		return b.String()
	case 2:
		return "(" + sub() + "|" + sub() + ")"
	case 3:
		return "(?:" + sub() + ")" + []string{"?", "*", "+", "{0,2}", "{1,3}", "{2}", "+?"}[r.IntN(7)]
	case 4:
		return "(?i:" + sub() + ")"
	case 5:
		return "(?P<g>" + sub() + ")"
	case 6:
		return sub() + "|" + sub()
	default:
		return sub() + sub()
	}
}

func randomLine(r *rand.Rand) string {
	pieces := []string{"a", "b", "k", "K", "s", "S", "é", "É", "ſ", "\u212a", "(", ".", "x", " ", "\xff", "\ufffd", "ab", "Sk", "AB"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// A line the prefilter skips is one the pattern does not match, for random
// patterns and lines.
func TestPrefilterNeverSkipsAMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	skipped := 0
	for range 3000 {
		flags := ""
		if r.IntN(4) == 0 {
			flags = "i"
		}
		pattern := randomPattern(r, 3)
		re, err := compilePattern(pattern, flags)
		if err != nil {
			continue
		}
		pf := newPrefilter(re)
		var sc lineScratch
		for range 40 {
			line := randomLine(r)
			sc.reset(line)
			if !pf.mayMatch(&sc) {
				skipped++
				if re.MatchString(line) {
					t.Fatalf("pattern %q (flags %q) matches %q, which its prefilter %q %q skips", pattern, flags, line, pf.exact, pf.folded)
				}
			}
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d lines were skipped: the test does not exercise the prefilter", skipped)
	}
}
