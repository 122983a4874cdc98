package anchor

import (
	"fmt"
	"strings"
	"testing"
)

func FuzzLocate(f *testing.F) {
	f.Add(goSrc, "\t"+ifBlockB, 13, 15)
	f.Add(crlf(goSrc), "    if x < 0 {\n        return fmt.Errorf(\"negative: %d\", x)\n    }", 13, 15)
	f.Add(goSrc, "}", 10, 10)
	f.Add(errSrc, "err", 8, 8)
	f.Add(goSrc, "16 | \tfmt.Println(\"b\")\n17 | \treturn nil", 0, 0)
	f.Add(goSrc, "```go\n+x\n```", -1, 99)
	f.Add("", "", 1, 0)
	f.Add("a\r\n\r\nb", "\r\n b \r", 2, 1)
	f.Add("é\tü  x\n", "ü x", 1, 1)
	f.Fuzz(func(t *testing.T, text, code string, rs, re int) {
		s, m, ok := Locate(text, code, rs, re)
		if !ok {
			if m != MethodNone || s != (Span{}) {
				t.Fatalf("not ok but method %q span %+v", m, s)
			}
		} else {
			if m != MethodExact && m != MethodWhitespace && m != MethodLines {
				t.Fatalf("ok with method %q", m)
			}
			if s.Start < 0 || s.Start > s.End || s.End > len(text) {
				t.Fatalf("span %+v outside text of %d bytes", s, len(text))
			}
			if l := Lines(text, s); l != s {
				t.Fatalf("span %+v, Lines says %+v", s, l)
			}
			if m != MethodLines && (s.Start == s.End || isSpaceOrNL(text[s.Start]) || isSpaceOrNL(text[s.End-1])) {
				t.Fatalf("matched span %+v %q is not trimmed code", s, text[s.Start:s.End])
			}
			if m == MethodExact {
				// An exact match is the trimmed snippet verbatim, as
				// written or undecorated.
				got := text[s.Start:s.End]
				if cleaned, _ := undecorate(code); got != trimSpace(code) && got != trimSpace(cleaned) {
					t.Fatalf("exact span %q is not from %q", got, code)
				}
			}
		}
		// Neither of the other functions may panic on what Locate returns or
		// on arbitrary spans.
		r := Replacement(text, s, code)
		if ls := strings.LastIndexByte(text[:s.Start], '\n') + 1; lineEnding(text, ls) == "\r\n" && strings.Count(r, "\n") != strings.Count(r, "\r\n") {
			t.Fatalf("Replacement in a CRLF buffer wrote a bare LF: %q", r)
		}
		_ = Replacement(text, Span{Start: rs, End: re}, code)
		_, _ = Track(s, []Edit{{Start: rs, End: re, NewLen: len(code)}, {Start: re, End: rs, NewLen: rs}})
		_ = Lines(text, Span{Start: re, End: rs})
	})
}

// bigSource returns a Go-like file of n lines whose functions look alike,
// as generated code and table-heavy files do, so that the whitespace
// search meets many candidate first lines.
func bigSource(n int) string {
	var b strings.Builder
	b.WriteString("package big\n\nimport \"fmt\"\n\n")
	lines := 4
	for i := 0; lines < n; i++ {
		fmt.Fprintf(&b, "// f%d does its part.\nfunc f%d(x int) (int, error) {\n", i, i)
		fmt.Fprintf(&b, "\tif x < 0 {\n\t\treturn 0, fmt.Errorf(\"f%d: negative %%d\", x)\n\t}\n", i)
		fmt.Fprintf(&b, "\ttotal := 0\n\tfor i := 0; i < x; i++ {\n\t\ttotal += i * %d\n\t}\n", i%7+1)
		b.WriteString("\treturn total, nil\n}\n\n")
		lines += 12
	}
	return b.String()
}

func BenchmarkLocate(b *testing.B) {
	text := bigSource(5000)
	// A block near the end of the file, the worst place for a scan.
	target := "\tif x < 0 {\n\t\treturn 0, fmt.Errorf(\"f410: negative %d\", x)\n\t}\n\ttotal := 0"
	at := strings.Index(text, target)
	if at < 0 {
		b.Fatal("target not in the generated file")
	}
	line := strings.Count(text[:at], "\n") + 1
	respaced := strings.ReplaceAll(target, "\t", "    ")
	cases := []struct {
		name, code string
		method     Method
	}{
		{"exact", target, MethodExact},
		{"whitespace", respaced, MethodWhitespace},
		{"notfound", "\tif y > 0 {\n\t\treturn 1, nil\n\t}", MethodLines},
	}
	for _, c := range cases {
		if _, m, _ := Locate(text, c.code, line, line+3); m != c.method {
			b.Fatalf("%s: method %q", c.name, m)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Locate(text, c.code, line, line+3)
			}
		})
		// A Doc shared by the findings of one review normalises once.
		b.Run(c.name+"/doc", func(b *testing.B) {
			d := NewDoc(text)
			for b.Loop() {
				d.Locate(c.code, line, line+3)
			}
		})
	}
}
