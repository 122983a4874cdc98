// Package patch turns what a developer changed in a buffer, relative to the
// file's baseline (its content at the last commit), into hunks and renders
// them in the patch format of the Kodus file-level review.
//
// The review prompt receives each file as
//
//	## file: 'x.go'
//
//	@@ -10,7 +10,8 @@ func main() {
//	__new hunk__
//	10  	a := 1
//	11 +	b := 2
//	12  	return a
//	__old hunk__
//	 	a := 1
//	-	b := 3
//	 	return a
//
// where every line of the new side carries its absolute line number in the
// buffer, which is what findings must point at. See Render for the exact
// rules.
//
// Hunks that only delete lines are dropped: the model could only comment on
// code that is no longer in the buffer. Each hunk has a content hash that
// ignores its position, so the review cache still hits after an edit above
// it moved it down.
package patch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/kodustech/kodyls/analysis/changes"
)

// DefaultContext is the number of unchanged lines shown around a change, as
// in git diff and in the Kodus pipeline.
const DefaultContext = 3

// Line is one line of a hunk.
type Line struct {
	// Kind is ' ' for context, '+' for an added line and '-' for a removed
	// one.
	Kind byte
	// Text is the line without its terminator.
	Text string
	// OldLine and NewLine are the line's 1-based numbers in the baseline and
	// in the buffer; 0 on the side where the line does not exist.
	OldLine, NewLine int
}

// Hunk is a group of changes with the unchanged lines around them. Start and
// line counts follow unified diff conventions: a start is 1-based, and when
// a side has no line the start is the number of the line before the hunk (0
// at the top of the file), as in "@@ -0,0 +1,3 @@".
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	// Section is the nearest line above the hunk's first change that looks
	// like a declaration in the file's language (see headingFunc), shown
	// after the "@@" of the header; "" when none is found.
	Section string
	Lines   []Line
}

// Added returns the buffer line numbers of the hunk's added lines, in
// increasing order.
func (h Hunk) Added() []int {
	var out []int
	for _, l := range h.Lines {
		if l.Kind == '+' {
			out = append(out, l.NewLine)
		}
	}
	return out
}

// Contains reports whether the buffer line number line falls within the new
// side of the hunk, context included: the lines the model was shown.
func (h Hunk) Contains(line int) bool {
	return h.NewLines > 0 && line >= h.NewStart && line < h.NewStart+h.NewLines
}

// hasAdded reports whether the hunk adds at least one line.
func (h Hunk) hasAdded() bool {
	for _, l := range h.Lines {
		if l.Kind == '+' {
			return true
		}
	}
	return false
}

// hashVersion is mixed into every hash, so that changing what a hunk means
// (the context size, how lines are split) can retire old cache entries.
const hashVersion = "kodyls/patch hunk v1"

// Hash returns the hex SHA-256 of the hunk's lines: each one's kind and
// text, in order. Line numbers, the header and the section are left out, so
// a hunk pushed down by lines inserted far above it keeps its hash and its
// cached review. The context lines are part of it: when they change, what
// the model saw around the change did too.
func (h Hunk) Hash() string {
	d := sha256.New()
	d.Write([]byte(hashVersion))
	var buf [binary.MaxVarintLen64 + 1]byte
	for _, l := range h.Lines {
		// The length prefix keeps the encoding unambiguous even for a hunk
		// built by hand whose text contains a newline.
		buf[0] = l.Kind
		n := binary.PutUvarint(buf[1:], uint64(len(l.Text)))
		d.Write(buf[:1+n])
		d.Write([]byte(l.Text))
	}
	return hex.EncodeToString(d.Sum(nil))
}

// FilePatch is the reviewable change to one file.
type FilePatch struct {
	// Path is the file's path as the prompt names it, normally relative to
	// the repository root and slash-separated.
	Path string
	// Hunks are in file order; none of them is deletion-only.
	Hunks []Hunk
	// Untracked is set when the file had no baseline: it is new, and its
	// single hunk adds the whole file.
	Untracked bool
}

// ChangedLines returns the buffer line numbers of every added line, in
// increasing order. A modified line counts as added.
func (p FilePatch) ChangedLines() []int {
	var out []int
	for _, h := range p.Hunks {
		out = append(out, h.Added()...)
	}
	return out
}

// HunkAt returns the index of the hunk whose new side contains the buffer
// line number line, for attaching a finding to the hunk it came from.
func (p FilePatch) HunkAt(line int) (int, bool) {
	for i, h := range p.Hunks {
		if h.Contains(line) {
			return i, true
		}
	}
	return 0, false
}

// Diff compares a file's baseline with the buffer's current text and
// returns the hunks worth reviewing, with context unchanged lines around
// each change (DefaultContext when context is negative). Changes closer
// than 2*context lines share a hunk, as in unified diffs.
//
// A base of "" means the file has no baseline: the patch is marked
// Untracked and the whole buffer is one added hunk. (An empty tracked file
// that gained content gives the same hunk; callers that know better may
// clear Untracked.)
//
// Lines are compared without their terminators, so converting line endings
// or adding or removing the final newline changes nothing; see
// changes.SplitLines. Nor does adding or removing a byte order mark: see
// changes.MatchBOM.
func Diff(path, base, current string, context int) FilePatch {
	p := FilePatch{Path: path, Untracked: base == ""}
	for _, h := range allHunks(path, changes.MatchBOM(base, current), current, context) {
		if h.hasAdded() {
			p.Hunks = append(p.Hunks, h)
		}
	}
	return p
}

// allHunks returns every hunk of the diff, deletion-only ones included, so
// that tests can check that applying them to base gives current.
func allHunks(path, base, current string, context int) []Hunk {
	if context < 0 {
		context = DefaultContext
	}
	a, b := changes.SplitLines(base), changes.SplitLines(current)
	edits := changes.DiffLines(a, b)
	if len(edits) == 0 {
		return nil
	}
	isHeading := headingFunc(path)
	var hunks []Hunk
	scanned := 0 // buffer lines [0, scanned) were searched for a heading
	section := ""
	for i := 0; i < len(edits); {
		// Edits separated by at most 2*context unchanged lines share a hunk,
		// whose context would otherwise overlap.
		j := i + 1
		for j < len(edits) && edits[j].A0-edits[j-1].A1 <= 2*context {
			j++
		}
		first, last := edits[i], edits[j-1]
		// The unchanged lines before the first edit and after the last one
		// are the same on both sides, so one count serves both.
		before := min(context, first.A0)
		after := min(context, len(a)-last.A1)
		oldFrom, newFrom := first.A0-before, first.B0-before
		oldTo, newTo := last.A1+after, last.B1+after

		h := Hunk{OldLines: oldTo - oldFrom, NewLines: newTo - newFrom}
		h.OldStart, h.NewStart = oldFrom, newFrom
		if h.OldLines > 0 {
			h.OldStart++
		}
		if h.NewLines > 0 {
			h.NewStart++
		}
		h.Lines = make([]Line, 0, (oldTo-oldFrom)+(last.B1-first.B0))
		ai, bi := oldFrom, newFrom
		unchanged := func(toA int) {
			for ; ai < toA; ai, bi = ai+1, bi+1 {
				h.Lines = append(h.Lines, Line{Kind: ' ', Text: b[bi], OldLine: ai + 1, NewLine: bi + 1})
			}
		}
		for _, e := range edits[i:j] {
			unchanged(e.A0)
			for ; ai < e.A1; ai++ {
				h.Lines = append(h.Lines, Line{Kind: '-', Text: a[ai], OldLine: ai + 1})
			}
			for ; bi < e.B1; bi++ {
				h.Lines = append(h.Lines, Line{Kind: '+', Text: b[bi], NewLine: bi + 1})
			}
		}
		unchanged(oldTo)

		// The heading is searched backwards from the line above the first
		// change, not above the hunk as git does: it then names the
		// declaration the change belongs to even when that line is in the
		// leading context. Lines above the previous search point were
		// searched already.
		if isHeading != nil {
			for k := first.B0 - 1; k >= scanned; k-- {
				if isHeading(b[k]) {
					section = headingText(b[k])
					break
				}
			}
			scanned = max(scanned, first.B0)
			h.Section = section
		}
		hunks = append(hunks, h)
		i = j
	}
	return hunks
}
