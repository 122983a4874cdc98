package rules

import (
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// DetectCache makes Detect incremental for one document that changes a
// little at a time, as a buffer does while its user types: a detector
// matches one line at a time and sees nothing else, so the violations of a
// line whose text was checked before, against the same rules, are the ones
// found then, moved to the line's new number. Only the lines not seen
// before run the patterns; after a keystroke, the edited line.
//
// The cache holds the lines of the last checks and their violations: those
// of the latest check, and those of earlier ones until they outnumber the
// latest's by sweepSlack, so that its size follows the document's. It starts over when the rules change. The
// zero value is ready to use; it is safe for concurrent use, the checks
// running one at a time.
type DetectCache struct {
	mu sync.Mutex

	// rules and rel are the arguments of the last check, act its active
	// rules: the same slice and path need not be matched against the
	// rules' paths again.
	rules []*Rule
	rel   string
	act   activeSet
	// key names the detectors act was made of: lines are kept while a new
	// act has the same key.
	key []detectorKey

	lines map[string]*cachedLine
	gen   uint64
	// matched counts the lines the patterns ran over.
	matched int
}

// detectorKey is what a line's violations depend on for one active rule.
type detectorKey struct {
	rule                    *Rule
	det                     *Detector
	pattern, flags, replace string
	hasFix                  bool
	file, uuid              string // the order of violations at one start
}

// cachedLine are the violations of one line of text, Line and Match left
// out. gen is the last check that saw the line.
type cachedLine struct {
	vs  []Violation
	gen uint64
}

// sweepSlack is how many lines of earlier checks are kept beyond the
// latest check's before they are dropped.
const sweepSlack = 256

// Detect returns what Detect(rules, relPath, text, include) returns,
// running the patterns only over the lines whose text it has not seen with
// the same rules. rules and the Rules in it must not be modified once
// passed; pass another slice when the rules change. A nil cache runs
// Detect.
func (c *DetectCache) Detect(rules []*Rule, relPath, text string, include func(line int) bool) []Violation {
	if c == nil {
		return Detect(rules, relPath, text, include)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	act := c.activeFor(rules, relPath)
	if len(act) == 0 {
		return nil
	}
	if c.lines == nil {
		c.lines = map[string]*cachedLine{}
	}
	c.gen++
	seen := 0
	var out []Violation
	var sc lineScratch
	forEachLine(text, func(n int, line string) {
		if include != nil && !include(n) {
			return
		}
		e := c.lines[line]
		if e == nil {
			vs := act.appendLine(nil, 0, line, &sc)
			c.matched++
			for i := range vs {
				// Match is line's text: it is cut again from the line of
				// each check, so that the cache holds no old text.
				vs[i].Match = ""
			}
			// The key is a copy: a slice of text would keep the
			// whole of this version alive.
			e = &cachedLine{vs: vs}
			c.lines[strings.Clone(line)] = e
		}
		if e.gen != c.gen {
			e.gen = c.gen
			seen++
		}
		for _, v := range e.vs {
			v.Line, v.Match = n, line[v.Start:v.End]
			out = append(out, v)
		}
	})
	if len(c.lines) > 2*seen+sweepSlack {
		for k, e := range c.lines {
			if e.gen != c.gen {
				delete(c.lines, k)
			}
		}
	}
	return out
}

// activeFor returns the active rules of rules for relPath, and drops the
// cached lines when their detectors are not those of the last check.
func (c *DetectCache) activeFor(rules []*Rule, relPath string) activeSet {
	if c.act != nil && relPath == c.rel && sameSlice(rules, c.rules) {
		return c.act
	}
	act := activeRules(rules, relPath)
	key := make([]detectorKey, len(act))
	for i, a := range act {
		d := a.rule.Detector
		key[i] = detectorKey{rule: a.rule, det: d, pattern: d.Pattern, flags: d.Flags, replace: d.Replace, hasFix: d.HasFix, file: a.rule.File, uuid: a.rule.UUID}
	}
	if len(act) == 0 || !slices.Equal(key, c.key) {
		c.lines = nil
	}
	c.rules, c.rel, c.act, c.key = rules, relPath, act, key
	if len(act) == 0 {
		// Nothing to keep for the next check but the arguments.
		c.act = activeSet{}
	}
	return act
}

// sameSlice reports whether a and b are the same slice: the same elements
// at the same address.
func sameSlice(a, b []*Rule) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
