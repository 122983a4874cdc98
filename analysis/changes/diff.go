package changes

import (
	"slices"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Edit replaces the lines A0:A1 of the old text with B0:B1 of the new one
// (0-based, half-open). An empty old range is an insertion and an empty new
// range a deletion.
type Edit struct{ A0, A1, B0, B1 int }

// DiffLines returns an edit script turning the lines a into b, in
// increasing order, with edits that touch merged. It is the line diff
// behind Changed, which keeps only the new side of its edits, and
// analysis/patch builds its hunks from it, so that the added lines of a
// patch are the lines Changed reports: the local Kody Rules checks and the
// review then agree on what the developer touched.
//
// Lines are compared as they are; SplitLines gives lines without their
// terminators, so that converted line endings are no change.
func DiffLines(a, b []string) []Edit {
	var s script
	s.diff(a, b, 0, 0, 0)
	return s
}

// anchorThreshold is the number of changed lines above which diff suspects
// go-udiff's bounded search and tries anchoring (see diff). Below it the
// LCS is exact, as go-udiff gives up only past about fifty separate
// insertions and deletions.
const anchorThreshold = 32

// maxAnchorDepth bounds the recursion of diff through anchored gaps.
const maxAnchorDepth = 8

// script collects edits in increasing order, merging those that touch.
type script []Edit

func (s *script) add(a0, a1, b0, b1 int) {
	if a0 == a1 && b0 == b1 {
		return
	}
	if n := len(*s); n > 0 && (*s)[n-1].A1 == a0 && (*s)[n-1].B1 == b0 {
		(*s)[n-1].A1, (*s)[n-1].B1 = a1, b1
		return
	}
	*s = append(*s, Edit{a0, a1, b0, b1})
}

// added counts the new-side lines of the script, the measure on which diff
// compares two candidate scripts. For a given pair of texts the deletions
// always exceed the additions by len(a)-len(b), so fewer added lines means
// a shorter script.
func (s script) added() int {
	n := 0
	for _, e := range s {
		n += e.B1 - e.B0
	}
	return n
}

// diff appends to s the edits turning a into b, whose lines are numbered
// from offA and offB: the lines not in a longest common subsequence of the
// two.
//
// go-udiff bounds its LCS search, so many scattered edits (a rename across
// a file, say) come back as one huge replaced block, which would make every
// line in it "changed". When the result is large, diff therefore also
// tries a patience-style split: lines that occur exactly once in each text
// and keep their relative order pin what did not change, and each gap
// between them is diffed on its own. The smaller of the two answers wins;
// both are valid, so the result is never worse than go-udiff's alone.
func (s *script) diff(a, b []string, offA, offB, depth int) {
	// Common lines at the ends are skipped first. In Changed they may
	// differ only in their terminators, which its byte comparison could
	// not see.
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	a, b = a[prefix:len(a)-suffix], b[prefix:len(b)-suffix]
	offA += prefix
	offB += prefix

	switch {
	case len(a) == 0 || len(b) == 0:
		s.add(offA, offA+len(a), offB, offB+len(b))
		return
	case len(a) == 1:
		// A one-line side has an obvious LCS, and the gaps between anchors
		// are mostly like this; go-udiff would allocate its search tables
		// for each of them.
		if k := slices.Index(b, a[0]); k >= 0 {
			s.add(offA, offA, offB, offB+k)
			s.add(offA+1, offA+1, offB+k+1, offB+len(b))
		} else {
			s.add(offA, offA+1, offB, offB+len(b))
		}
		return
	case len(b) == 1:
		if k := slices.Index(a, b[0]); k >= 0 {
			s.add(offA, offA+k, offB, offB)
			s.add(offA+k+1, offA+len(a), offB+1, offB+1)
		} else {
			s.add(offA, offA+len(a), offB, offB+1)
		}
		return
	}

	diffs := lcs.DiffLines(a, b)
	changed := 0
	for _, d := range diffs {
		changed += d.ReplEnd - d.ReplStart
	}
	if changed > anchorThreshold && depth < maxAnchorDepth {
		var alt script
		if alt.anchored(a, b, offA, offB, depth) && alt.added() < changed {
			for _, e := range alt {
				s.add(e.A0, e.A1, e.B0, e.B1)
			}
			return
		}
	}
	for _, d := range diffs {
		s.add(offA+d.Start, offA+d.End, offB+d.ReplStart, offB+d.ReplEnd)
	}
}

// anchored diffs a and b around their unique common lines, as described at
// diff, and reports false when there is no such line to anchor on.
func (s *script) anchored(a, b []string, offA, offB, depth int) bool {
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
		s.diff(a[pa:an.ia], b[pb:an.ib], offA+pa, offB+pb, depth+1)
		pa, pb = an.ia+1, an.ib+1
	}
	s.diff(a[pa:], b[pb:], offA+pa, offB+pb, depth+1)
	return true
}
