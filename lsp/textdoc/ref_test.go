package textdoc

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// This file holds a deliberately naive model of a document that the tests
// compare the real implementation against. It shares no code with it: it
// splits the text with a range loop (the runtime's UTF-8 decoder rather than
// package utf8), keeps every line as a slice of characters, measures them
// with package utf16 and locates positions by summing lengths from the start
// of the text.

// refLine is one line of the model: its characters, each the bytes of one
// rune or a single invalid byte, and its terminator ("" for the last line).
type refLine struct {
	chars []string
	term  string
}

func (l refLine) content() string { return strings.Join(l.chars, "") }

// refSplit splits text into lines the way the LSP defines them.
func refSplit(text string) []refLine {
	var starts []int
	for i := range text {
		starts = append(starts, i)
	}
	starts = append(starts, len(text))
	var lines []refLine
	var cur refLine
	for k := 0; k+1 < len(starts); k++ {
		ch := text[starts[k]:starts[k+1]]
		switch ch {
		case "\n":
			cur.term = "\n"
		case "\r":
			cur.term = "\r"
			if k+2 < len(starts) && text[starts[k+1]:starts[k+2]] == "\n" {
				cur.term = "\r\n"
				k++
			}
		default:
			cur.chars = append(cur.chars, ch)
			continue
		}
		lines = append(lines, cur)
		cur = refLine{}
	}
	return append(lines, cur)
}

// refWidth returns how many units of enc the character ch takes.
func refWidth(ch string, enc Encoding) int {
	if enc == UTF8 {
		return len(ch)
	}
	// Converting an invalid byte yields U+FFFD, one unit, as required.
	return utf16.RuneLen([]rune(ch)[0])
}

// refUnits returns the length of line in units of enc.
func refUnits(l refLine, enc Encoding) int {
	n := 0
	for _, ch := range l.chars {
		n += refWidth(ch, enc)
	}
	return n
}

// refOffset returns the byte offset of p in the text split into lines, or
// false if p is out of range.
func refOffset(lines []refLine, p Position, enc Encoding) (int, bool) {
	if int64(p.Line) >= int64(len(lines)) {
		return 0, false
	}
	off := 0
	for _, l := range lines[:p.Line] {
		off += len(l.content()) + len(l.term)
	}
	c := int64(p.Character)
	u := int64(0)
	for _, ch := range lines[p.Line].chars {
		if u == c {
			return off, true
		}
		u += int64(refWidth(ch, enc))
		if u > c {
			return 0, false // c is strictly inside ch
		}
		off += len(ch)
	}
	return off, true // at or past the end of the line
}

// refApply1 applies one change to text, or reports false if its range is
// out of range.
func refApply1(text string, ch Change, enc Encoding) (string, bool) {
	if ch.Range == nil {
		return ch.Text, true
	}
	r := *ch.Range
	if r.Start.Line > r.End.Line || (r.Start.Line == r.End.Line && r.Start.Character > r.End.Character) {
		return "", false
	}
	lines := refSplit(text)
	s, ok := refOffset(lines, r.Start, enc)
	if !ok {
		return "", false
	}
	e, ok := refOffset(lines, r.End, enc)
	if !ok {
		return "", false
	}
	return text[:s] + ch.Text + text[e:], true
}

// refApply applies changes in order, or reports false if any is out of range.
func refApply(text string, changes []Change, enc Encoding) (string, bool) {
	for _, ch := range changes {
		var ok bool
		if text, ok = refApply1(text, ch, enc); !ok {
			return "", false
		}
	}
	return text, true
}

// chunkConfigs are the chunk sizes tests run under: every line its own
// chunk, a few lines per chunk, and the production sizes, under which the
// small texts of the tests fit in one chunk.
var chunkConfigs = []struct {
	name        string
	target, min int
}{
	{"line chunks", 1, 1},
	{"small chunks", 8, 3},
	{"default chunks", chunkTarget, chunkMin},
}

// setChunkSizes sets the chunk sizes until the test ends.
func setChunkSizes(t testing.TB, target, min int) {
	oldTarget, oldMin := chunkTarget, chunkMin
	chunkTarget, chunkMin = target, min
	t.Cleanup(func() { chunkTarget, chunkMin = oldTarget, oldMin })
}

// checkStructure checks the invariants of d's chunks: they hold the text,
// each is located where its predecessors end, only the sole chunk of an
// empty document is empty, each starts with a line start, and their line
// starts together are exactly those a fresh scan of the whole text finds,
// which also proves that no chunk boundary splits a line or a CRLF.
func checkStructure(t testing.TB, d *Document) {
	t.Helper()
	text := d.Text()
	var joined strings.Builder
	var starts []int
	byteStart, lineStart := 0, 0
	for k, c := range d.chunks {
		if c.byteStart != byteStart || c.lineStart != lineStart {
			t.Fatalf("chunk %d of %q located at byte %d line %d, want %d, %d", k, text, c.byteStart, c.lineStart, byteStart, lineStart)
		}
		if c.text == "" && len(d.chunks) > 1 {
			t.Fatalf("chunk %d of %q is empty", k, text)
		}
		if len(c.lines) == 0 || c.lines[0] != 0 {
			t.Fatalf("chunk %d of %q has line starts %v", k, text, c.lines)
		}
		joined.WriteString(c.text)
		for _, l := range c.lines {
			starts = append(starts, byteStart+l)
		}
		byteStart += len(c.text)
		lineStart += len(c.lines)
	}
	if joined.String() != text {
		t.Fatalf("chunks hold %q, Text is %q", joined.String(), text)
	}
	if want := indexLines(text); !slices.Equal(starts, want) {
		t.Fatalf("line starts of %q are %v, want %v", text, starts, want)
	}
}

// checkAgainstRef checks every query method of d against the model, at every
// character boundary, inside every character and past every line end, in
// both encodings.
func checkAgainstRef(t testing.TB, d *Document) {
	t.Helper()
	checkStructure(t, d)
	text := d.Text()
	lines := refSplit(text)
	if got := d.LineCount(); got != len(lines) {
		t.Fatalf("LineCount of %q = %d, want %d", text, got, len(lines))
	}
	off := 0
	for i, l := range lines {
		if got := d.LineStart(i); got != off {
			t.Fatalf("LineStart(%d) of %q = %d, want %d", i, text, got, off)
		}
		if got, want := d.Line(i), l.content(); got != want {
			t.Fatalf("Line(%d) of %q = %q, want %q", i, text, got, want)
		}
		// Each query costs time linear in the line, so on long lines only
		// the ends and a sample in between are checked, keeping the check
		// linear rather than quadratic for the fuzzer's sake.
		stride := max(1, len(l.chars)/64)
		for _, enc := range []Encoding{UTF16, UTF8} {
			u, o := 0, off
			for k := 0; ; k++ {
				sampled := k < 16 || len(l.chars)-k < 16 || k%stride == 0
				p := Position{Line: uint32(i), Character: uint32(u)}
				if sampled {
					if got, err := d.Offset(p, enc); err != nil || got != o {
						t.Fatalf("Offset(%s, %s) of %q = %d, %v, want %d", p, enc, text, got, err, o)
					}
					if got := d.PositionAt(o, enc); got != p {
						t.Fatalf("PositionAt(%d, %s) of %q = %s, want %s", o, enc, text, got, p)
					}
				}
				if k == len(l.chars) {
					break
				}
				ch := l.chars[k]
				w := refWidth(ch, enc)
				for x := 1; sampled && x < w; x++ {
					q := Position{Line: uint32(i), Character: uint32(u + x)}
					if _, err := d.Offset(q, enc); !errors.Is(err, ErrOutOfRange) {
						t.Fatalf("Offset(%s, %s) of %q inside %q: err = %v, want ErrOutOfRange", q, enc, text, ch, err)
					}
				}
				for b := 1; sampled && b < len(ch); b++ {
					if got := d.PositionAt(o+b, enc); got != p {
						t.Fatalf("PositionAt(%d, %s) of %q inside %q = %s, want %s", o+b, enc, text, ch, got, p)
					}
				}
				u += w
				o += len(ch)
			}
			end := Position{Line: uint32(i), Character: uint32(u)}
			for _, c := range []uint32{uint32(u + 1), math.MaxUint32} {
				p := Position{Line: uint32(i), Character: c}
				if got, err := d.Offset(p, enc); err != nil || got != o {
					t.Fatalf("Offset(%s, %s) of %q past the line = %d, %v, want %d", p, enc, text, got, err, o)
				}
			}
			for b := 1; b < len(l.term); b++ {
				if got := d.PositionAt(o+b, enc); got != end {
					t.Fatalf("PositionAt(%d, %s) of %q inside the terminator = %s, want %s", o+b, enc, text, got, end)
				}
			}
		}
		off += len(l.content()) + len(l.term)
	}
	for _, line := range []uint32{uint32(len(lines)), math.MaxUint32} {
		if _, err := d.Offset(Position{Line: line}, UTF16); !errors.Is(err, ErrOutOfRange) {
			t.Fatalf("Offset of line %d of %q: err = %v, want ErrOutOfRange", line, text, err)
		}
	}
	if got := d.PositionAt(-1, UTF16); got != (Position{}) {
		t.Fatalf("PositionAt(-1) = %s, want 0:0", got)
	}
	if got, want := d.PositionAt(len(text)+5, UTF16), d.PositionAt(len(text), UTF16); got != want {
		t.Fatalf("PositionAt past the end = %s, want %s", got, want)
	}
}
