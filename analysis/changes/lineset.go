package changes

import (
	"slices"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// span is a half-open range [start, end) of 0-based line indexes.
type span struct{ start, end int }

// LineSet is a set of 0-based line indexes, or the set of all lines. The
// zero value is the empty set. It is kept as sorted, disjoint ranges, so
// that a typical edit costs a few words however long the file is, and Has
// is a binary search.
type LineSet struct {
	all   bool
	spans []span
}

// AllLines returns the set that holds every line, for files with nothing to
// compare against.
func AllLines() LineSet { return LineSet{all: true} }

// All reports whether the set holds every line.
func (s LineSet) All() bool { return s.all }

// Has reports whether line is in the set.
func (s LineSet) Has(line int) bool {
	if s.all {
		return line >= 0
	}
	i, _ := slices.BinarySearchFunc(s.spans, line, func(sp span, l int) int {
		switch {
		case sp.end <= l:
			return -1
		case sp.start > l:
			return 1
		}
		return 0
	})
	return i < len(s.spans) && s.spans[i].start <= line && line < s.spans[i].end
}

// Lines returns the lines of the set in increasing order. For the set of all
// lines, which has no end, it returns nil: check All first.
func (s LineSet) Lines() []int {
	if s.all {
		return nil
	}
	var out []int
	for _, sp := range s.spans {
		for l := sp.start; l < sp.end; l++ {
			out = append(out, l)
		}
	}
	return out
}

// Len returns the number of lines in the set, or -1 for the set of all
// lines.
func (s LineSet) Len() int {
	if s.all {
		return -1
	}
	n := 0
	for _, sp := range s.spans {
		n += sp.end - sp.start
	}
	return n
}

// Empty reports whether the set holds no line.
func (s LineSet) Empty() bool { return !s.all && len(s.spans) == 0 }

// add appends the range [start, end), which must not start before the last
// range, merging adjacent ranges.
func (s *LineSet) add(start, end int) {
	if start >= end {
		return
	}
	if n := len(s.spans); n > 0 && s.spans[n-1].end >= start {
		s.spans[n-1].end = max(s.spans[n-1].end, end)
		return
	}
	s.spans = append(s.spans, span{start, end})
}

// Changed returns the lines of current that are added or modified relative
// to base, as 0-based line indexes of current. Lines that were only deleted
// leave no trace; a modified line counts as changed.
//
// Lines end at "\n", "\r\n" or "\r", as in the Language Server Protocol, and
// are compared without their terminators: a file whose line endings were
// converted (by git's autocrlf or an editor) has not changed.
//
// Editing a large file usually changes a small block, so the common leading
// and trailing bytes are skipped first with string comparisons, which run
// at memory speed, and only the lines in between are split and diffed with
// go-udiff's line LCS (see diffLines for how its bounded search is kept
// from over-reporting). When the result is not minimal it errs on the side
// of more lines, which only widens what gets checked.
func Changed(base, current string) LineSet {
	var set LineSet
	if base == current {
		return set
	}

	// Skip the common head, backed up to the start of a line. A "\r" as
	// the last common byte might be half of a "\r\n" in one text and a
	// line end of its own in the other, so the line before it is kept in
	// the diff too.
	start := commonPrefixLen(base, current)
	for start > 0 {
		j := strings.LastIndexAny(current[:start], "\r\n")
		if j < 0 {
			start = 0
			break
		}
		if current[j] == '\r' && j == start-1 {
			start = j
			continue
		}
		start = j + 1
		break
	}
	firstLine := countLines(current[:start])
	base, current = base[start:], current[start:]

	// Skip the common tail, moved forward to just after a line terminator
	// inside it, so that the tail starts a line in both texts.
	tail := commonSuffixLen(base, current)
	if tail > 0 {
		common := current[len(current)-tail:]
		if k := strings.IndexAny(common, "\r\n"); k < 0 {
			tail = 0
		} else {
			if common[k] == '\r' && k+1 < len(common) && common[k+1] == '\n' {
				k++
			}
			tail -= k + 1
		}
	}
	bufA, bufB := linePool.Get().(*[]string), linePool.Get().(*[]string)
	defer putLines(bufA)
	defer putLines(bufB)
	*bufA = appendLines((*bufA)[:0], base[:len(base)-tail])
	*bufB = appendLines((*bufB)[:0], current[:len(current)-tail])
	a, b := *bufA, *bufB

	diffLines(a, b, firstLine, &set, 0)
	return set
}

// anchorThreshold is the number of changed lines above which diffLines
// suspects go-udiff's bounded search and tries anchoring (see diffLines).
// Below it the LCS is exact, as go-udiff gives up only past about fifty
// separate insertions and deletions.
const anchorThreshold = 32

// maxAnchorDepth bounds the recursion of diffLines through anchored gaps.
const maxAnchorDepth = 8

// diffLines adds to set the lines of b, numbered from offset, that are not
// in a longest common subsequence of a and b.
//
// go-udiff bounds its LCS search, so many scattered edits (a rename across
// a file, say) come back as one huge replaced block, which would make every
// line in it "changed". When the result is large, diffLines therefore also
// tries a patience-style split: lines that occur exactly once in each text
// and keep their relative order pin what did not change, and each gap
// between them is diffed on its own. The smaller of the two answers wins;
// both are valid, so the result is never worse than go-udiff's alone.
func diffLines(a, b []string, offset int, set *LineSet, depth int) {
	// Lines that differ only in their terminators are equal here, which
	// the byte comparison in Changed could not see.
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	a, b = a[prefix:len(a)-suffix], b[prefix:len(b)-suffix]
	offset += prefix

	switch {
	case len(b) == 0:
		return // only deletions (or nothing) remain
	case len(a) == 0:
		set.add(offset, offset+len(b))
		return
	case len(a) == 1:
		// A one-line side has an obvious LCS, and anchored gaps are
		// mostly like this; go-udiff would allocate its search tables for
		// each of them.
		k := slices.Index(b, a[0])
		if k < 0 {
			set.add(offset, offset+len(b))
		} else {
			set.add(offset, offset+k)
			set.add(offset+k+1, offset+len(b))
		}
		return
	case len(b) == 1:
		if !slices.Contains(a, b[0]) {
			set.add(offset, offset+1)
		}
		return
	}
	diffs := lcs.DiffLines(a, b)
	changed := 0
	for _, d := range diffs {
		changed += d.ReplEnd - d.ReplStart
	}
	if changed > anchorThreshold && depth < maxAnchorDepth {
		var alt LineSet
		if anchored(a, b, offset, &alt, depth) && alt.Len() < changed {
			for _, sp := range alt.spans {
				set.add(sp.start, sp.end)
			}
			return
		}
	}
	for _, d := range diffs {
		set.add(offset+d.ReplStart, offset+d.ReplEnd)
	}
}

// anchored diffs a and b around their unique common lines, as described at
// diffLines, and reports false when there is no such line to anchor on.
func anchored(a, b []string, offset int, set *LineSet, depth int) bool {
	// The counts live in a slice indexed through the map, rather than
	// behind one pointer per line, to keep allocations down.
	type count struct{ na, nb, ia int }
	index := make(map[string]int, len(a))
	counts := make([]count, 0, len(a))
	for i, l := range a {
		k, ok := index[l]
		if !ok {
			k = len(counts)
			index[l] = k
			counts = append(counts, count{})
		}
		counts[k].na++
		counts[k].ia = i
	}
	for _, l := range b {
		if k, ok := index[l]; ok {
			counts[k].nb++
		}
	}
	// Pairs of positions of unique common lines, in the order of b.
	type pair struct{ ia, ib int }
	var pairs []pair
	for ib, l := range b {
		if k, ok := index[l]; ok && counts[k].na == 1 && counts[k].nb == 1 {
			pairs = append(pairs, pair{counts[k].ia, ib})
		}
	}
	if len(pairs) == 0 {
		return false
	}

	// The longest run of pairs increasing in a as well (patience sorting)
	// are the anchors. tails[k] is the index in pairs of the smallest last
	// element of an increasing run of length k+1; prev links the runs.
	tails := make([]int, 0, len(pairs))
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k, _ := slices.BinarySearchFunc(tails, p.ia, func(t, ia int) int { return pairs[t].ia - ia })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	anchors := make([]pair, len(tails))
	for i, k := len(tails)-1, tails[len(tails)-1]; i >= 0; i, k = i-1, prev[k] {
		anchors[i] = pairs[k]
	}

	pa, pb := 0, 0
	for _, an := range anchors {
		diffLines(a[pa:an.ia], b[pb:an.ib], offset+pb, set, depth+1)
		pa, pb = an.ia+1, an.ib+1
	}
	diffLines(a[pa:], b[pb:], offset+pb, set, depth+1)
	return true
}

// commonPrefixLen returns the length of the longest common prefix of a and
// b. It compares ever smaller chunks with ==, which the runtime vectorises,
// instead of walking byte by byte.
func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for chunk := 4096; chunk >= 1; chunk /= 8 {
		for i+chunk <= n && a[i:i+chunk] == b[i:i+chunk] {
			i += chunk
		}
	}
	return i
}

// commonSuffixLen is commonPrefixLen for the ends of a and b.
func commonSuffixLen(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for chunk := 4096; chunk >= 1; chunk /= 8 {
		for i+chunk <= n && a[len(a)-i-chunk:len(a)-i] == b[len(b)-i-chunk:len(b)-i] {
			i += chunk
		}
	}
	return i
}

// countLines returns the number of line terminators in s, counting "\r\n"
// as one.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if strings.IndexByte(s, '\r') >= 0 {
		n += strings.Count(s, "\r") - strings.Count(s, "\r\n")
	}
	return n
}

// splitLines returns the lines of text without their terminators. A
// terminator at the very end does not start another line, so "a\n" and "a"
// are both one line; line indexes agree with an editor's for every line
// that has content.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return appendLines(make([]string, 0, countLines(text)+1), text)
}

// linePool recycles the line slices of Changed, which runs on every
// keystroke: reusing them spares the garbage collector two slices the size
// of the file each time.
var linePool = sync.Pool{New: func() any { return new([]string) }}

// putLines returns a slice to linePool, cleared so that the pool does not
// keep old buffer texts alive.
func putLines(p *[]string) {
	clear((*p)[:cap(*p)])
	*p = (*p)[:0]
	linePool.Put(p)
}

// appendLines appends the lines of text, as splitLines returns them, to
// lines.
func appendLines(lines []string, text string) []string {
	if strings.IndexByte(text, '\r') < 0 {
		// The common case needs one test per byte.
		from := 0
		for i := 0; i < len(text); i++ {
			if text[i] == '\n' {
				lines = append(lines, text[from:i])
				from = i + 1
			}
		}
		if from < len(text) {
			lines = append(lines, text[from:])
		}
		return lines
	}
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			if text != "" {
				lines = append(lines, text)
			}
			return lines
		}
		lines = append(lines, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
}
