package textdoc

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Document is an immutable snapshot of an open buffer. Every method only
// reads, so a *Document is safe to share across goroutines; edits produce a
// new Document via Apply.
type Document struct {
	uri     string
	version int32
	text    string
	// lines[i] is the byte offset at which line i starts. lines[0] is always
	// 0, so the slice is never empty, and a text ending in a line terminator
	// has a last, empty line starting at len(text). It is shared between
	// snapshots when an edit leaves it unchanged, and never mutated.
	lines []int
}

// New returns a snapshot of text at the given version.
func New(uri string, version int32, text string) *Document {
	return &Document{uri: uri, version: version, text: text, lines: indexLines(text)}
}

// URI returns the document's URI, as the client sent it.
func (d *Document) URI() string { return d.uri }

// Version returns the client's version of this snapshot.
func (d *Document) Version() int32 { return d.version }

// Text returns the whole text.
func (d *Document) Text() string { return d.text }

// LineCount returns the number of lines. The text after the last terminator
// is a line even when empty, so "a\nb" and "a\n" have 2 lines and "" has 1.
func (d *Document) LineCount() int { return len(d.lines) }

// Line returns line i without its terminator, or "" if there is no line i.
func (d *Document) Line(i int) string {
	if i < 0 || i >= len(d.lines) {
		return ""
	}
	return d.text[d.lines[i]:contentEnd(d.text, d.lines, i)]
}

// LineStart returns the byte offset at which line i starts, or -1 if there is
// no line i.
func (d *Document) LineStart(i int) int {
	if i < 0 || i >= len(d.lines) {
		return -1
	}
	return d.lines[i]
}

// Offset converts p to a byte offset into Text. A character past the end of
// its line means the end of the line, as the LSP specifies, but a line past
// the last one, or a character that falls inside a character taking several
// units (half of a UTF-16 surrogate pair, or the middle of a multi-byte UTF-8
// sequence), is an error wrapping ErrOutOfRange: such a position cannot have
// come from a client that agrees with us on the text.
func (d *Document) Offset(p Position, enc Encoding) (int, error) {
	return offset(d.text, d.lines, p, enc)
}

// PositionAt converts a byte offset into a position. Offsets are clamped to
// the text; an offset inside a line terminator maps to the end of the line,
// and one inside a multi-byte character to the start of that character, so
// the result is always a position Offset accepts.
func (d *Document) PositionAt(off int, enc Encoding) Position {
	off = min(max(off, 0), len(d.text))
	// The line is the last one starting at or before off.
	i := sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off }) - 1
	start := d.lines[i]
	line := d.text[start:contentEnd(d.text, d.lines, i)]
	n := min(off-start, len(line))
	for n > 0 && !isBoundary(line, n) {
		n--
	}
	if enc == UTF8 {
		return Position{Line: uint32(i), Character: uint32(n)}
	}
	return Position{Line: uint32(i), Character: uint32(utf16Len(line[:n]))}
}

// Apply returns a new snapshot at version with changes applied in order, each
// change's range referring to the text left by the previous one, exactly as
// didChange specifies. It fails, changing nothing, if version is not greater
// than d's (ErrVersion) or if any change has a range outside the text it
// applies to (ErrOutOfRange): applying only part of a notification would put
// the server and the client out of step for good.
func (d *Document) Apply(version int32, changes []Change, enc Encoding) (*Document, error) {
	if version <= d.version {
		return nil, fmt.Errorf("version %d is not after %d: %w", version, d.version, ErrVersion)
	}
	text, lines := d.text, d.lines
	for i, ch := range changes {
		if ch.Range == nil {
			text, lines = ch.Text, indexLines(ch.Text)
			continue
		}
		r := *ch.Range
		if r.End.before(r.Start) {
			return nil, fmt.Errorf("change %d: range start %s after end %s: %w", i, r.Start, r.End, ErrOutOfRange)
		}
		start, err := offset(text, lines, r.Start, enc)
		if err != nil {
			return nil, fmt.Errorf("change %d: range start: %w", i, err)
		}
		end, err := offset(text, lines, r.End, enc)
		if err != nil {
			return nil, fmt.Errorf("change %d: range end: %w", i, err)
		}
		text, lines = splice(text, lines, start, end, ch.Text)
	}
	return &Document{uri: d.uri, version: version, text: text, lines: lines}, nil
}

// indexLines returns the line starts of text.
func indexLines(text string) []int {
	// Counting "\n" is fast and exact for LF and CRLF texts, the common case,
	// so the slice rarely grows.
	lines := make([]int, 1, 1+strings.Count(text, "\n"))
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			lines = append(lines, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			lines = append(lines, i+1)
		}
	}
	return lines
}

// isLineStart reports whether a line starts at byte offset p of text. That
// depends only on the bytes at p-1 and p, which is what lets splice rescan
// only around an edit.
func isLineStart(text string, p int) bool {
	switch {
	case p == 0:
		return true
	case p > len(text):
		return false
	case text[p-1] == '\n':
		return true
	case text[p-1] == '\r':
		// A "\r" followed by "\n" is half of a CRLF, which ends the line
		// only after the "\n".
		return p == len(text) || text[p] != '\n'
	}
	return false
}

// splice replaces text[start:end] by repl and returns the new text with its
// line starts, derived from the old ones instead of rescanning everything.
// Whether a line starts at p depends only on the bytes at p-1 and p, so line
// starts before start are unchanged, those at or after end+1 only shift by
// the change in length, and only the offsets from start to the end of repl
// need a look. That window includes the byte after repl because a "\r" before
// it and a "\n" after it (or the reverse) may join into one CRLF or split.
func splice(text string, lines []int, start, end int, repl string) (string, []int) {
	newText := text[:start] + repl + text[end:]
	newEnd := start + len(repl)
	delta := newEnd - end
	lo := sort.SearchInts(lines, start)
	hi := sort.SearchInts(lines, end+1)
	// Besides start itself, a line can only start in the window right
	// after a terminator byte of repl, which bounds the capacity needed.
	window := 1 + strings.Count(repl, "\n") + strings.Count(repl, "\r")
	out := make([]int, lo, lo+window+len(lines)-hi)
	copy(out, lines[:lo])
	for p := start; p <= newEnd; p++ {
		if isLineStart(newText, p) {
			out = append(out, p)
		}
	}
	for _, s := range lines[hi:] {
		out = append(out, s+delta)
	}
	return newText, out
}

// contentEnd returns the byte offset at which line i's terminator starts,
// which is len(text) for the last line.
func contentEnd(text string, lines []int, i int) int {
	if i+1 >= len(lines) {
		return len(text)
	}
	end := lines[i+1] - 1 // the terminator's last byte
	if text[end] == '\n' && end > lines[i] && text[end-1] == '\r' {
		end--
	}
	return end
}

// offset implements Document.Offset on a text and its line starts, so that
// Apply can resolve positions against intermediate texts.
func offset(text string, lines []int, p Position, enc Encoding) (int, error) {
	if uint64(p.Line) >= uint64(len(lines)) {
		return 0, fmt.Errorf("position %s: line past last line %d: %w", p, len(lines)-1, ErrOutOfRange)
	}
	i := int(p.Line)
	start := lines[i]
	n, ok := unitOffset(text[start:contentEnd(text, lines, i)], p.Character, enc)
	if !ok {
		return 0, fmt.Errorf("position %s: inside a %s character: %w", p, enc, ErrOutOfRange)
	}
	return start + n, nil
}

// unitOffset returns the byte offset within line of the character'th unit,
// clamped to the end of the line, and false if that unit is not the first of
// a character.
func unitOffset(line string, character uint32, enc Encoding) (int, bool) {
	if enc == UTF8 {
		if uint64(character) >= uint64(len(line)) {
			return len(line), true
		}
		n := int(character)
		return n, isBoundary(line, n)
	}
	u := uint32(0)
	for i := 0; i < len(line); {
		if u == character {
			return i, true
		}
		if c := line[i]; c < utf8.RuneSelf {
			u++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		if r > 0xFFFF {
			if u+1 == character {
				return 0, false // between the two halves of a surrogate pair
			}
			u += 2
		} else {
			// This includes a RuneError for an invalid byte, which counts
			// as one unit, like the U+FFFD a client would show for it.
			u++
		}
		i += size
	}
	return len(line), true
}

// isBoundary reports whether byte offset n of s (0 <= n <= len(s)) starts a
// character when s is decoded as UTF-8 with each invalid byte standing for
// itself. It looks back at most three bytes rather than decoding from the
// start of s: a byte that is not a continuation byte always starts a
// character, and a continuation byte is inside one only if the nearest such
// byte before it begins a valid sequence long enough to cover it.
func isBoundary(s string, n int) bool {
	if n <= 0 || n >= len(s) || utf8.RuneStart(s[n]) {
		return true
	}
	for j := n - 1; j >= 0 && j >= n-(utf8.UTFMax-1); j-- {
		if utf8.RuneStart(s[j]) {
			_, size := utf8.DecodeRuneInString(s[j:])
			return j+size <= n
		}
	}
	return true
}

// utf16Len returns the number of UTF-16 code units s takes, counting each
// invalid byte as one.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
