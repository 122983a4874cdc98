package anchor

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// goSrc has two functions with the same if block, so that line numbers are
// needed to tell them apart. Its 1-based lines are numbered in comments of
// the test cases.
const goSrc = `package demo

import "fmt"

func A(x int) error {
	if x < 0 {
		return fmt.Errorf("negative: %d", x)
	}
	return nil
}

func B(x int) error {
	if x < 0 {
		return fmt.Errorf("negative: %d", x)
	}
	fmt.Println("b")
	return nil
}
`

// errSrc has many short, common tokens.
const errSrc = "package p\n" + // 1
	"\n" + // 2
	"func f() error {\n" + // 3
	"\terr := g()\n" + // 4
	"\tif err != nil {\n" + // 5
	"\t\treturn err\n" + // 6
	"\t}\n" + // 7
	"\tfmt.Fprintln(os.Stderr, err)\n" + // 8
	"\treturn nil\n" + // 9
	"}\n" // 10

// twinSrc has the same code verbatim in C and re-indented with spaces in D.
const twinSrc = "func C() {\n" + // 1
	"\tx := compute(1, 2)\n" + // 2
	"\tuse(x)\n" + // 3
	"}\n" + // 4
	"\n" + // 5
	"func D() {\n" + // 6
	"    x := compute(1, 2)\n" + // 7
	"    use(x)\n" + // 8
	"}\n" // 9

const ifBlockB = "if x < 0 {\n\t\treturn fmt.Errorf(\"negative: %d\", x)\n\t}"

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestLocate(t *testing.T) {
	type want struct {
		method   Method
		sl, el   int    // 0-based lines, when method != none
		text     string // text[Start:End], when method != none
		startsAt string // if set, Start == strings.Index(text, startsAt)
	}
	tests := []struct {
		name   string
		text   string
		code   string
		rs, re int
		want   want
	}{
		// Exact.
		{"exact", goSrc, `fmt.Println("b")`, 16, 16, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
		{"exact with indentation and newline", goSrc, "\tfmt.Println(\"b\")\n", 16, 16, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
		{"exact, reported lines wrong", goSrc, `fmt.Println("b")`, 3, 4, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
		{"exact, no reported lines", goSrc, `fmt.Println("b")`, 0, 0, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
		{"exact multi-line", goSrc, "\tfmt.Println(\"b\")\n\treturn nil\n}", 16, 18, want{MethodExact, 15, 17, "fmt.Println(\"b\")\n\treturn nil\n}", ""}},
		{"exact mid-line", goSrc, `Errorf("negative: %d", x)`, 14, 14, want{MethodExact, 13, 13, `Errorf("negative: %d", x)`, ""}},

		// Duplicates resolved by the reported lines.
		{"duplicate, lines of B", goSrc, "\t" + ifBlockB, 13, 15, want{MethodExact, 12, 14, ifBlockB, ""}},
		{"duplicate, lines of A", goSrc, "\t" + ifBlockB, 6, 8, want{MethodExact, 5, 7, ifBlockB, ""}},
		{"duplicate, nearer B", goSrc, ifBlockB, 11, 11, want{MethodExact, 12, 14, ifBlockB, ""}},
		{"duplicate, nearer A", goSrc, ifBlockB, 9, 9, want{MethodExact, 5, 7, ifBlockB, ""}},
		{"duplicate, off by one", goSrc, ifBlockB, 14, 16, want{MethodExact, 12, 14, ifBlockB, ""}},
		{"duplicate, lines past the end", goSrc, ifBlockB, 90, 95, want{MethodExact, 12, 14, ifBlockB, ""}},
		{"duplicate, no reported lines", goSrc, ifBlockB, 0, 0, want{method: MethodNone}},
		{"duplicate, tie goes to the earliest", "foo(1)\nbar(2)\nz\nw\nfoo(1)\nbar(2)\n", "foo(1)\nbar(2)", 3, 4, want{MethodExact, 0, 1, "foo(1)\nbar(2)", ""}},

		// Whitespace-tolerant.
		{"re-indented with spaces", goSrc, "    if x < 0 {\n        return fmt.Errorf(\"negative: %d\", x)\n    }", 13, 15, want{MethodWhitespace, 12, 14, ifBlockB, ""}},
		{"re-indented, lines of A", goSrc, "if x < 0 {\n  return fmt.Errorf(\"negative: %d\", x)\n}", 6, 8, want{MethodWhitespace, 5, 7, ifBlockB, ""}},
		{"inner whitespace collapsed", goSrc, "if x  <\t0 {\n\treturn   fmt.Errorf(\"negative: %d\",  x)\n}", 13, 15, want{MethodWhitespace, 12, 14, ifBlockB, ""}},
		{"trailing spaces in snippet", goSrc, "fmt.Println(\"b\")   \n\treturn nil \t", 16, 17, want{MethodWhitespace, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"trailing spaces in text", strings.ReplaceAll(goSrc, "\n", "  \n"), "\tfmt.Println(\"b\")\n\treturn nil\n}", 16, 18, want{MethodWhitespace, 15, 17, "fmt.Println(\"b\")  \n\treturn nil  \n}", ""}},
		{"CRLF text, LF snippet", crlf(goSrc), "\t" + ifBlockB, 13, 15, want{MethodWhitespace, 12, 14, crlf(ifBlockB), ""}},
		{"CRLF text, one-line snippet", crlf(goSrc), "\tfmt.Println(\"b\")\n", 16, 16, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
		{"LF text, CRLF snippet", goSrc, crlf("\t" + ifBlockB), 13, 15, want{MethodWhitespace, 12, 14, ifBlockB, ""}},
		{"CRLF both", crlf(goSrc), crlf("\t" + ifBlockB), 13, 15, want{MethodExact, 12, 14, crlf(ifBlockB), ""}},
		// Surrounding blank lines and the first line's indentation are
		// trimmed before the verbatim search, so these match exactly.
		{"leading and trailing blank lines", goSrc, "\n\n\tfmt.Println(\"b\")\n\treturn nil\n\n", 16, 17, want{MethodExact, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"first line's indentation missing", goSrc, "fmt.Println(\"b\")\n\treturn nil", 16, 17, want{MethodExact, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"first line's indentation missing, rest re-indented", goSrc, "fmt.Println(\"b\")\n    return nil", 16, 17, want{MethodWhitespace, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"blank lines inside differ", goSrc, "}\n\n\n\nfunc B(x int) error {", 10, 12, want{MethodWhitespace, 9, 11, "}\n\nfunc B(x int) error {", ""}},
		{"starts mid-line", goSrc, "Errorf(\"negative: %d\", x)\n    }\n    fmt.Println(\"b\")", 14, 16, want{MethodWhitespace, 13, 15, "Errorf(\"negative: %d\", x)\n\t}\n\tfmt.Println(\"b\")", ""}},
		{"ends mid-line", goSrc, "  }\n  fmt.Println", 15, 16, want{MethodWhitespace, 14, 15, "}\n\tfmt.Println", ""}},
		{"one line, inner whitespace", goSrc, "fmt.Errorf(\"negative: %d\",   x)", 7, 7, want{MethodWhitespace, 6, 6, `fmt.Errorf("negative: %d", x)`, ""}},
		{"whitespace occurrence at the reported lines beats an exact one elsewhere", twinSrc, "\tx := compute(1, 2)\n\tuse(x)", 7, 8, want{MethodWhitespace, 6, 7, "x := compute(1, 2)\n    use(x)", ""}},
		{"exact occurrence at the reported lines", twinSrc, "\tx := compute(1, 2)\n\tuse(x)", 2, 3, want{MethodExact, 1, 2, "x := compute(1, 2)\n\tuse(x)", ""}},
		{"twins without reported lines are ambiguous", twinSrc, "x := compute(1, 2)\nuse(x)", 0, 0, want{method: MethodNone}},

		// Not found: the reported lines, or nothing.
		{"not found, lines", goSrc, `fmt.Printf("c")`, 16, 16, want{MethodLines, 15, 15, `fmt.Println("b")`, ""}},
		{"not found, several lines", goSrc, "if x <= 0 {\n\treturn nil\n}", 13, 15, want{MethodLines, 12, 14, ifBlockB, ""}},
		{"not found, first reported line blank", goSrc, "whatever()", 11, 12, want{MethodLines, 11, 11, "func B(x int) error {", ""}},
		{"identifier cut at the start", goSrc, "rrorf(\"negative: %d\", x)\n  }\n  fmt.Println(\"b\")", 14, 16, want{MethodLines, 13, 15, "return fmt.Errorf(\"negative: %d\", x)\n\t}\n\tfmt.Println(\"b\")", ""}},
		{"not found, end 0 means one line", goSrc, "nope()", 16, 0, want{MethodLines, 15, 15, `fmt.Println("b")`, ""}},
		{"not found, swapped lines", goSrc, "nope()", 17, 16, want{MethodLines, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"not found, last empty line", goSrc, "nope()", 19, 19, want{MethodLines, 18, 18, "", ""}},
		{"not found, blank line keeps its whitespace", "a\n\t \nb", "nope()", 2, 2, want{MethodLines, 1, 1, "\t ", ""}},
		{"not found, CRLF line", crlf(goSrc), "nope()", 16, 16, want{MethodLines, 15, 15, `fmt.Println("b")`, ""}},
		{"not found, lines past the end", goSrc, `fmt.Printf("c")`, 40, 41, want{method: MethodNone}},
		{"not found, end past the end", goSrc, `fmt.Printf("c")`, 18, 20, want{method: MethodNone}},
		{"not found, no lines", goSrc, `fmt.Printf("c")`, 0, 0, want{method: MethodNone}},
		{"not found, negative lines", goSrc, `fmt.Printf("c")`, -3, -1, want{method: MethodNone}},
		{"empty snippet, lines", goSrc, "", 17, 17, want{MethodLines, 16, 16, "return nil", ""}},
		{"blank snippet, lines", goSrc, " \n\t\r\n", 16, 17, want{MethodLines, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"blank snippet, no lines", goSrc, "  ", 0, 0, want{method: MethodNone}},
		{"empty text", "", "x", 1, 1, want{MethodLines, 0, 0, "", ""}},
		{"empty text, line 2", "", "x", 2, 2, want{method: MethodNone}},

		// Short snippets.
		{"short, on the reported line", goSrc, "return nil", 17, 17, want{MethodExact, 16, 16, "return nil", ""}},
		{"short, reported range overlaps", goSrc, "return nil", 8, 10, want{MethodExact, 8, 8, "return nil", ""}},
		{"short, nearby is not enough", goSrc, "return nil", 12, 12, want{method: MethodNone}},
		{"short, no reported lines", goSrc, "return nil", 0, 0, want{method: MethodNone}},
		{"short brace", goSrc, "}", 10, 10, want{MethodExact, 9, 9, "}", ""}},
		{"short brace on a blank line", goSrc, "}", 11, 11, want{method: MethodNone}},
		{"short brace, re-indented", goSrc, "    }", 15, 15, want{MethodExact, 14, 14, "}", ""}},
		{"short token", errSrc, "err", 6, 6, want{MethodExact, 5, 5, "err", "err\n\t}"}},
		{"short token not inside an identifier", errSrc, "err", 8, 8, want{MethodExact, 7, 7, "err", "err)"}},
		{"short token, whole words only", errSrc, "Std", 8, 8, want{MethodLines, 7, 7, "fmt.Fprintln(os.Stderr, err)", ""}},
		{"short but unique", goSrc, `import "fmt"`, 0, 0, want{MethodExact, 2, 2, `import "fmt"`, ""}},
		{"short, whitespace", goSrc, "return   nil", 9, 9, want{MethodWhitespace, 8, 8, "return nil", ""}},
		{"short, whitespace, away from the lines", goSrc, "return   nil", 1, 1, want{method: MethodNone}},
		{"long snippet away from the lines is kept", errSrc, "fmt.Fprintln(os.Stderr, err)", 1, 1, want{MethodExact, 7, 7, "fmt.Fprintln(os.Stderr, err)", ""}},

		// Decorations copied from the prompt.
		{"numbered listing", goSrc, "16 | \tfmt.Println(\"b\")\n17 | \treturn nil", 0, 0, want{MethodExact, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"numbered listing gives the lines", goSrc, " 9 | \treturn nil", 0, 0, want{MethodExact, 8, 8, "return nil", ""}},
		{"Kodus hunk gives the lines", goSrc, "13 +\tif x < 0 {\n14 +\t\treturn fmt.Errorf(\"negative: %d\", x)\n15 +\t}", 0, 0, want{MethodExact, 12, 14, ifBlockB, ""}},
		{"Kodus context lines", goSrc, "16  \tfmt.Println(\"b\")\n17  \treturn nil\n18  }", 0, 0, want{MethodExact, 15, 17, "fmt.Println(\"b\")\n\treturn nil\n}", ""}},
		{"reported lines win over numbers", goSrc, "13 +\tif x < 0 {\n14 +\t\treturn fmt.Errorf(\"negative: %d\", x)\n15 +\t}", 6, 8, want{MethodExact, 5, 7, ifBlockB, ""}},
		{"numbers must count up", goSrc, "16 | \tfmt.Println(\"b\")\n18 | \treturn nil", 16, 17, want{MethodLines, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"plus markers", goSrc, "+\tfmt.Println(\"b\")\n+\treturn nil", 16, 17, want{MethodExact, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"fence", goSrc, "```go\n\tfmt.Println(\"b\")\n\treturn nil\n```", 16, 17, want{MethodExact, 15, 16, "fmt.Println(\"b\")\n\treturn nil", ""}},
		{"inline code", goSrc, "`fmt.Println(\"b\")`", 16, 16, want{MethodExact, 15, 15, `fmt.Println("b")`, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m, ok := Locate(tt.text, tt.code, tt.rs, tt.re)
			if m != tt.want.method {
				t.Fatalf("method = %q, want %q (span %+v %q)", m, tt.want.method, s, sub(tt.text, s))
			}
			if ok != (m != MethodNone) {
				t.Fatalf("ok = %v with method %q", ok, m)
			}
			if !ok {
				if s != (Span{}) {
					t.Errorf("span = %+v, want zero", s)
				}
				return
			}
			if got := tt.text[s.Start:s.End]; got != tt.want.text {
				t.Errorf("text = %q, want %q", got, tt.want.text)
			}
			if s.StartLine != tt.want.sl || s.EndLine != tt.want.el {
				t.Errorf("lines = %d-%d, want %d-%d", s.StartLine, s.EndLine, tt.want.sl, tt.want.el)
			}
			if tt.want.startsAt != "" {
				if i := strings.Index(tt.text, tt.want.startsAt); s.Start != i {
					t.Errorf("Start = %d, want %d", s.Start, i)
				}
			}
			if l := Lines(tt.text, s); l != s {
				t.Errorf("Lines disagrees: %+v vs %+v", l, s)
			}
		})
	}
}

func sub(text string, s Span) string {
	s = clamp(len(text), s)
	return text[s.Start:s.End]
}

// TestDocReuse checks that a Doc answers like Locate, however often and
// concurrently it is asked (run with -race).
func TestDocReuse(t *testing.T) {
	d := NewDoc(goSrc)
	codes := []string{"    if x < 0 {\n        return fmt.Errorf(\"negative: %d\", x)\n    }", `fmt.Println("b")`, "nope", "return nil"}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- true }()
			for i := 0; i < 50; i++ {
				for _, c := range codes {
					s1, m1, ok1 := d.Locate(c, 13, 17)
					s2, m2, ok2 := Locate(goSrc, c, 13, 17)
					if s1 != s2 || m1 != m2 || ok1 != ok2 {
						t.Errorf("Doc.Locate(%q) = %+v %v %v, Locate = %+v %v %v", c, s1, m1, ok1, s2, m2, ok2)
						return
					}
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	if d.Text() != goSrc {
		t.Error("Text changed")
	}
}

func TestNormLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		" \t\r":            "",
		"a":                "a",
		"\t a  b\t\tc \r":  "a b c",
		"a b":              "a b",
		"  x :=\t1 // c  ": "x := 1 // c",
	} {
		if got := normLine(in); got != want {
			t.Errorf("normLine(%q) = %q, want %q", in, got, want)
		}
		n := normLine(in)
		for p := 0; p < len(n); p++ {
			if n[p] == ' ' {
				continue
			}
			if r := rawIndex(in, p); r >= len(in) || in[r] != n[p] {
				t.Errorf("rawIndex(%q, %d) = %d", in, p, r)
			}
		}
	}
}

func TestUndecorate(t *testing.T) {
	tests := []struct {
		in, want string
		lo, hi   int // 1-based; 0 when no hint
	}{
		{"  9 | a\n 10 | b\n 11 |\n 12 | c", "a\nb\n\nc", 9, 12},
		{"43 +\tx\n44  \ty", "\tx\n\ty", 43, 44},
		{"1 | a\n\n3 | c", "a\n\nc", 1, 3},
		{"1 | a\n3 | c", "1 | a\n3 | c", 0, 0},
		{"1 + 2", " 2", 1, 1}, // only tried when "1 + 2" itself is not found
		{"x + 1\n+ y", "x + 1\n+ y", 0, 0},
		{"+a\n b\n+c", "a\n b\nc", 0, 0},
		{"```go\na\n```", "a", 0, 0},
		{"`a`", "a", 0, 0},
		{"0 | a", "0 | a", 0, 0},
		{"1234567890 | a", "1234567890 | a", 0, 0},
	}
	for _, tt := range tests {
		got, hint := undecorate(tt.in)
		if got != tt.want {
			t.Errorf("undecorate(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.lo == 0 && hint.ok || tt.lo != 0 && (!hint.ok || hint.lo != tt.lo-1 || hint.hi != tt.hi-1) {
			t.Errorf("undecorate(%q) hint = %+v, want %d-%d", tt.in, hint, tt.lo, tt.hi)
		}
	}
}

// TestLocateLargeFile picks occurrences deep in a file with thousands of
// candidates, where the scan stops as soon as the outcome is settled.
func TestLocateLargeFile(t *testing.T) {
	text := bigSource(5000)
	lines := strings.Split(text, "\n")
	for _, want := range []int{100, 2500, 4990} { // 0-based lines holding "\t}"
		for lines[want] != "\t}" {
			want++
		}
		s, m, ok := Locate(text, "}", want+1, want+1)
		if !ok || m != MethodExact || s.StartLine != want || text[s.Start:s.End] != "}" {
			t.Errorf("} at line %d: %+v %q %v", want, s, m, ok)
		}
		// A short, re-indented two-line snippet: accepted only where it
		// overlaps the reported lines.
		at := want
		for lines[at] != "\t}" || lines[at+1] != "\ttotal := 0" {
			at++
		}
		s, m, ok = Locate(text, "    }\n    total := 0", at+1, at+2)
		if !ok || m != MethodWhitespace || s.StartLine != at || s.EndLine != at+1 {
			t.Errorf("re-indented snippet at line %d: %+v %q %v", at, s, m, ok)
		}
		if s, m, ok := Locate(text, "    }\n    total := 0", at-2, at-1); ok {
			t.Errorf("re-indented short snippet away from its lines: %+v %q", s, m)
		}
	}
}

// TestLocatePathological checks that a periodic text and a long periodic
// snippet, where occurrences overlap everywhere, neither hang nor guess.
func TestLocatePathological(t *testing.T) {
	text := strings.Repeat("a", 1<<20)
	code := strings.Repeat("a", 1<<19)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s, m, ok := Locate(text, code, 1, 1); ok {
			t.Errorf("Locate = %+v %q, want none", s, m)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Locate did not return")
	}
}

// TestLocateRandomExact compares Locate with a brute-force reference on
// snippets cut verbatim from texts built of a few repeated lines, so that
// occurrences abound and the early end of the scan is exercised. The texts
// have no blank lines and one indentation, so the whitespace-tolerant
// search finds nothing the verbatim one misses and the reference can stick
// to verbatim occurrences.
func TestLocateRandomExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"\ta b", "\tb", "\t}", "\tc a", "\treturn err", "\tif err != nil {"}
	for iter := 0; iter < 5000; iter++ {
		var lines []string
		for n := 1 + rng.IntN(40); n > 0; n-- {
			lines = append(lines, vocab[rng.IntN(len(vocab))])
		}
		text := strings.Join(lines, "\n") + "\n"
		i := rng.IntN(len(text))
		j := i + 1 + rng.IntN(min(40, len(text)-i))
		code := text[i:j]
		trimmed := trimSpace(code)
		if trimmed == "" {
			continue
		}
		rs, re := rng.IntN(len(lines)+3), 0
		if rng.IntN(2) == 0 {
			re = rs + rng.IntN(3)
		}
		rep := newReported(rs, re)
		short := nonBlankLen(trimmed) < shortLen

		// Reference: every verbatim occurrence, ranked.
		type occ struct{ start, sl, el, gap, diff int }
		var all []occ
		for k := 0; k+len(trimmed) <= len(text); k++ {
			if text[k:k+len(trimmed)] != trimmed || short && !wordBounded(text, k, k+len(trimmed)) {
				continue
			}
			o := occ{start: k, sl: strings.Count(text[:k], "\n"), el: strings.Count(text[:k+len(trimmed)-1], "\n")}
			if rep.ok {
				o.gap, o.diff = rep.gap(o.sl, o.el), abs(o.sl-rep.lo)
			}
			all = append(all, o)
		}
		if len(all) == 0 {
			continue // cut inside an identifier: not this test's business
		}
		best := all[0]
		for _, o := range all[1:] {
			if o.gap < best.gap || o.gap == best.gap && o.diff < best.diff {
				best = o
			}
		}
		wantOK := len(all) == 1 || rep.ok && (!short || best.gap == 0)

		s, m, ok := Locate(text, code, rs, re)
		if ok != wantOK || ok && (m != MethodExact || s.Start != best.start || s.End != best.start+len(trimmed)) {
			t.Fatalf("text %q code %q lines %d-%d: got %+v %q %v, want start %d ok %v (%d occurrences)", text, code, rs, re, s, m, ok, best.start, wantOK, len(all))
		}
	}
}

// TestHas: whether quoted code is in a text at all, as Locate would find
// it, however many times.
func TestHas(t *testing.T) {
	d := NewDoc("func a() {\n\treturn  x\n}\n\nfunc b() {\n\treturn x\n}\n")
	for code, want := range map[string]bool{
		"return x":               true, // twice, once with other spacing
		"func b() {\n  return x": true,
		"12 | func a() {":        true, // a numbered listing's line
		"return y":               false,
		"returnx":                false,
		"":                       false,
		" \n ":                   false,
	} {
		if got := d.Has(code); got != want {
			t.Errorf("Has(%q) = %v, want %v", code, got, want)
		}
	}
}
