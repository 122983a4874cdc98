package changes

import (
	"iter"
	"slices"
	"strings"
	"sync"
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
// A byte order mark is no change either (see MatchBOM): an editor that
// strips it from the buffer leaves the committed file's first line as it
// was.
//
// Editing a large file usually changes a small block, so the common leading
// and trailing bytes are skipped first with string comparisons, which run
// at memory speed, and only the lines in between are split and diffed by
// the line diff of DiffLines (see script.diff for how go-udiff's bounded
// search is kept from over-reporting). When the result is not minimal it
// errs on the side of more lines, which only widens what gets checked.
func Changed(base, current string) LineSet {
	var set LineSet
	// As MatchBOM, without copying base: the BOM is in the first line
	// of both texts, so dropping it moves no line.
	base, current = strings.TrimPrefix(base, bom), strings.TrimPrefix(current, bom)
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
	edits := scriptPool.Get().(*script)
	defer putScript(edits)
	edits.diff(*bufA, *bufB, firstLine, firstLine, 0)
	for _, e := range *edits {
		set.add(e.B0, e.B1)
	}
	return set
}

// bom is the UTF-8 byte order mark.
const bom = "\ufeff"

// MatchBOM returns base with a leading byte order mark dropped or added so
// that it starts with one exactly when current does. A BOM says how the
// file is encoded, not what it says: VS Code, Neovim and Helix strip it from
// the buffer (and write it back on save), other editors keep it as a
// character, and adding or removing one changes no line of code. Comparing
// through MatchBOM, a file whose only difference from its baseline is the
// BOM has not changed, in the editor as in `kodyls review`. The BOM sits in
// the first line, so no line number moves. An empty base (no baseline, or
// an empty file) is left empty.
func MatchBOM(base, current string) string {
	hasBase, hasCur := strings.HasPrefix(base, bom), strings.HasPrefix(current, bom)
	switch {
	case hasBase && !hasCur:
		return base[len(bom):]
	case !hasBase && hasCur && base != "":
		return bom + base
	}
	return base
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

// SplitLines returns the lines of text without their terminators, which
// are "\n", "\r\n" or "\r" as in Changed. A terminator at the very end does
// not start another line, so "a\n" and "a" are both one line; line indexes
// agree with an editor's for every line that has content.
func SplitLines(text string) []string {
	if text == "" {
		return nil
	}
	return appendLines(make([]string, 0, countLines(text)+1), text)
}

// linePool and scriptPool recycle the line slices and the edit script of
// Changed, which runs on every keystroke: reusing them spares the garbage
// collector two slices the size of the file each time.
var (
	linePool   = sync.Pool{New: func() any { return new([]string) }}
	scriptPool = sync.Pool{New: func() any { return new(script) }}
)

// putLines returns a slice to linePool, cleared so that the pool does not
// keep old buffer texts alive.
func putLines(p *[]string) {
	clear((*p)[:cap(*p)])
	*p = (*p)[:0]
	linePool.Put(p)
}

// putScript returns an edit script to scriptPool, emptied. Edits hold no
// pointers, so there is nothing to clear.
func putScript(s *script) {
	*s = (*s)[:0]
	scriptPool.Put(s)
}

// appendLines appends the lines of text, as SplitLines returns them, to
// lines.
func appendLines(lines []string, text string) []string {
	for _, l := range Lines(text) {
		lines = append(lines, l)
	}
	return lines
}

// Lines yields the 0-based index and content of each line of text, as
// SplitLines returns them, without making a slice of them.
func Lines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		// Most texts have no "\r", and IndexByte finds their line ends
		// faster than IndexAny, and faster than a loop over the bytes.
		cr := strings.IndexByte(text, '\r') >= 0
		for n := 0; text != ""; n++ {
			var i int
			if cr {
				i = strings.IndexAny(text, "\r\n")
			} else {
				i = strings.IndexByte(text, '\n')
			}
			if i < 0 {
				yield(n, text)
				return
			}
			if !yield(n, text[:i]) {
				return
			}
			if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			text = text[i+1:]
		}
	}
}
