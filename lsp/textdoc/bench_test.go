package textdoc

import (
	"fmt"
	"strings"
	"testing"
)

// benchText returns a buffer of n lines of typical source length, with some
// non-ASCII text so that UTF-16 counting does real work.
func benchText(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "\tx%d := fmt.Sprintf(\"línea %%d 😀 日本\", %d) // comment\n", i, i)
	}
	return sb.String()
}

// BenchmarkApplyOneCharEdit10kLines types characters one at a time into the
// middle line of a 10,000-line buffer, as didChange notifications. Every
// 1,000 keystrokes it reopens the buffer, outside the timer, so that the
// line being typed into stays of a realistic length however long the
// benchmark runs.
func BenchmarkApplyOneCharEdit10kLines(b *testing.B) {
	const uri = "file:///bench.go"
	text := benchText(10000)
	s := NewStore()
	s.Open(uri, 0, text)
	b.ReportAllocs()
	version := int32(0)
	for b.Loop() {
		version++
		typed := uint32(version % 1000)
		if typed == 0 {
			b.StopTimer()
			s.Open(uri, version, text)
			b.StartTimer()
			continue
		}
		r := rng(5000, 10+typed, 5000, 10+typed)
		if _, err := s.Change(uri, version, []Change{{Range: r, Text: "x"}}, UTF16); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOffsetUTF16(b *testing.B) {
	d := New("file:///bench.go", 0, benchText(10000))
	// The end of line 5000, past the emoji and the CJK text.
	p := Position{Line: 5000, Character: uint32(utf16Len(d.Line(5000)))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Offset(p, UTF16); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPositionAtUTF16(b *testing.B) {
	d := New("file:///bench.go", 0, benchText(10000))
	off := d.LineStart(5001) - 2
	b.ReportAllocs()
	for b.Loop() {
		_ = d.PositionAt(off, UTF16)
	}
}

func BenchmarkNew10kLines(b *testing.B) {
	text := benchText(10000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = New("file:///bench.go", 0, text)
	}
}
