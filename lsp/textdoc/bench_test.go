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

func BenchmarkApplyOneCharEdit10kLines(b *testing.B) {
	const uri = "file:///bench.go"
	s := NewStore()
	d := s.Open(uri, 0, benchText(10000))
	b.SetBytes(int64(len(d.Text())))
	b.ReportAllocs()
	version := int32(0)
	for b.Loop() {
		version++
		r := rng(5000, 10, 5000, 10)
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
