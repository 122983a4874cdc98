package patch

import (
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// edit replaces the lines a[a0:a1] of the old text with b[b0:b1] of the new
// one (0-based, half-open). An empty old range is an insertion and an empty
// new range a deletion.
type edit struct{ a0, a1, b0, b1 int }

// script collects edits in increasing order, merging those that touch.
type script []edit

func (s *script) add(a0, a1, b0, b1 int) {
	if a0 == a1 && b0 == b1 {
		return
	}
	if n := len(*s); n > 0 && (*s)[n-1].a1 == a0 && (*s)[n-1].b1 == b0 {
		(*s)[n-1].a1, (*s)[n-1].b1 = a1, b1
		return
	}
	*s = append(*s, edit{a0, a1, b0, b1})
}

// added counts the new-side lines of the script, the measure on which
// diffRange compares two candidate scripts. For a given pair of texts the
// deletions always exceed the additions by len(a)-len(b), so fewer added
// lines means a shorter script.
func (s script) added() int {
	n := 0
	for _, e := range s {
		n += e.b1 - e.b0
	}
	return n
}

// anchorThreshold and maxAnchorDepth are those of analysis/changes, so that
// the added lines of a patch are exactly the lines that package reports as
// changed: the local Kody Rules checks and the review then agree on what the
// developer touched.
const (
	anchorThreshold = 32
	maxAnchorDepth  = 8
)

// diffLines returns an edit script turning a into b.
//
// It follows analysis/changes.Changed, which only reports the new side and
// therefore cannot be reused for a patch: common leading and trailing lines
// are skipped, the rest goes through go-udiff's line LCS, and when that
// yields a large change (its search is bounded, so scattered edits come back
// as one big replaced block) a patience-style split around lines unique to
// both sides is tried as well, keeping the smaller answer.
func diffLines(a, b []string) script {
	var s script
	diffRange(a, b, 0, 0, &s, 0)
	return s
}

func diffRange(a, b []string, offA, offB int, s *script, depth int) {
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
		// are mostly like this; go-udiff would allocate its tables for each.
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
		if anchored(a, b, offA, offB, &alt, depth) && alt.added() < changed {
			for _, e := range alt {
				s.add(e.a0, e.a1, e.b0, e.b1)
			}
			return
		}
	}
	for _, d := range diffs {
		s.add(offA+d.Start, offA+d.End, offB+d.ReplStart, offB+d.ReplEnd)
	}
}

// anchored diffs a and b around the lines that occur exactly once in each
// and keep their relative order (the longest such run, found by patience
// sorting), diffing each gap between anchors on its own. It reports false
// when there is no line to anchor on.
func anchored(a, b []string, offA, offB int, s *script, depth int) bool {
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

	// tails[k] is the index in pairs of the smallest last element of an
	// increasing run of length k+1; prev links the runs.
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
		diffRange(a[pa:an.ia], b[pb:an.ib], offA+pa, offB+pb, s, depth+1)
		pa, pb = an.ia+1, an.ib+1
	}
	diffRange(a[pa:], b[pb:], offA+pa, offB+pb, s, depth+1)
	return true
}

// splitLines returns the lines of text without their terminators. Lines end
// at "\n", "\r\n" or "\r", as in the Language Server Protocol and in
// analysis/changes, so a file whose line endings were converted has not
// changed, and no "\r" ever reaches a prompt. A terminator at the very end
// does not start another line: "a\n" and "a" are both the single line "a".
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	if strings.IndexByte(text, '\r') < 0 {
		for {
			i := strings.IndexByte(text, '\n')
			if i < 0 {
				if text != "" {
					lines = append(lines, text)
				}
				return lines
			}
			lines = append(lines, text[:i])
			text = text[i+1:]
		}
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
