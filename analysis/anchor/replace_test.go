package anchor

import (
	"strings"
	"testing"
)

// fix anchors code in text at the given lines, applies improved and returns
// the new text.
func fix(t *testing.T, text, code string, rs, re int, improved string) string {
	t.Helper()
	s, _, ok := Locate(text, code, rs, re)
	if !ok {
		t.Fatalf("Locate(%q) failed", code)
	}
	return text[:s.Start] + Replacement(text, s, improved) + text[s.End:]
}

// pySrc indents with four spaces.
const pySrc = "def f(x):\n" + // 1
	"    if x:\n" + // 2
	"        return 1\n" + // 3
	"    return 0\n" // 4

func TestReplacement(t *testing.T) {
	// The if block of B, as it must read after each fix.
	const fixedB = "\tif x < 0 {\n\t\treturn errNegative\n\t}\n"
	tests := []struct {
		name     string
		text     string
		code     string
		rs, re   int
		improved string
		want     string // the whole new text
	}{
		{
			"indented like the file",
			goSrc, "\t" + ifBlockB, 13, 15,
			"\tif x < 0 {\n\t\treturn errNegative\n\t}",
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			"first line not indented, the rest like the file",
			goSrc, ifBlockB, 13, 15,
			"if x < 0 {\n\t\treturn errNegative\n\t}",
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			// The surrounding code is one tab deep; the fix was written at
			// column 0 and lands one tab deep.
			"written at column 0, indented like the surrounding code",
			goSrc, ifBlockB, 13, 15,
			"if x < 0 {\n\treturn errNegative\n}",
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			"spaces in a tab-indented file",
			goSrc, ifBlockB, 13, 15,
			"    if x < 0 {\n        return errNegative\n    }",
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			"spaces, first line not indented",
			goSrc, ifBlockB, 13, 15,
			"if x < 0 {\n        return errNegative\n    }",
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			"one line becomes a block, written at column 0",
			goSrc, `fmt.Println("b")`, 16, 16,
			"if x == 0 {\n\treturn errZero\n}\nfmt.Println(\"b\")",
			strings.Replace(goSrc, "\tfmt.Println(\"b\")\n", "\tif x == 0 {\n\t\treturn errZero\n\t}\n\tfmt.Println(\"b\")\n", 1),
		},
		{
			"one line becomes a block, written like the file",
			goSrc, `fmt.Println("b")`, 16, 16,
			"if x == 0 {\n\t\treturn errZero\n\t}\n\tfmt.Println(\"b\")",
			strings.Replace(goSrc, "\tfmt.Println(\"b\")\n", "\tif x == 0 {\n\t\treturn errZero\n\t}\n\tfmt.Println(\"b\")\n", 1),
		},
		{
			"snippet ends inside the enclosing block",
			goSrc, "\tfmt.Println(\"b\")\n\treturn nil\n}", 16, 18,
			"fmt.Println(\"c\")\n\treturn nil\n}",
			strings.Replace(goSrc, "\tfmt.Println(\"b\")\n\treturn nil\n}", "\tfmt.Println(\"c\")\n\treturn nil\n}", 1),
		},
		{
			"mid-line span",
			goSrc, `fmt.Errorf("negative: %d", x)`, 14, 14,
			`fmt.Errorf("x < 0: %d", x)`,
			strings.Replace(goSrc, "return nil\n}\n\nfunc B(x int) error {\n\tif x < 0 {\n\t\treturn fmt.Errorf(\"negative: %d\", x)", "return nil\n}\n\nfunc B(x int) error {\n\tif x < 0 {\n\t\treturn fmt.Errorf(\"x < 0: %d\", x)", 1),
		},
		{
			"trailing newline in improvedCode",
			goSrc, `fmt.Println("b")`, 16, 16,
			"fmt.Println(\"c\")\n",
			strings.Replace(goSrc, `fmt.Println("b")`, `fmt.Println("c")`, 1),
		},
		{
			"blank lines and trailing spaces around improvedCode",
			goSrc, `fmt.Println("b")`, 16, 16,
			"\n\n\tfmt.Println(\"c\")  \n\n",
			strings.Replace(goSrc, `fmt.Println("b")`, `fmt.Println("c")`, 1),
		},
		{
			"fenced improvedCode",
			goSrc, `fmt.Println("b")`, 16, 16,
			"```go\n\tfmt.Println(\"c\")\n```",
			strings.Replace(goSrc, `fmt.Println("b")`, `fmt.Println("c")`, 1),
		},
		{
			"blank line inside improvedCode keeps no indentation",
			goSrc, `fmt.Println("b")`, 16, 16,
			"fmt.Println(\"c\")\n\n\tfmt.Println(\"d\")",
			strings.Replace(goSrc, `fmt.Println("b")`, "fmt.Println(\"c\")\n\n\tfmt.Println(\"d\")", 1),
		},
		{
			"CRLF buffer keeps CRLF",
			crlf(goSrc), ifBlockB, 13, 15,
			"if x < 0 {\n\t\treturn errNegative\n\t}",
			strings.Replace(crlf(goSrc), crlf("\t"+ifBlockB+"\n\tfmt"), crlf(strings.TrimSuffix(fixedB, "\n")+"\n\tfmt"), 1),
		},
		{
			"CRLF improvedCode in a CRLF buffer",
			crlf(goSrc), ifBlockB, 13, 15,
			crlf("if x < 0 {\n\t\treturn errNegative\n\t}\n"),
			strings.Replace(crlf(goSrc), crlf("\t"+ifBlockB+"\n\tfmt"), crlf(strings.TrimSuffix(fixedB, "\n")+"\n\tfmt"), 1),
		},
		{
			"CRLF improvedCode in an LF buffer",
			goSrc, ifBlockB, 13, 15,
			crlf("if x < 0 {\n\t\treturn errNegative\n\t}"),
			strings.Replace(goSrc, "\t"+ifBlockB+"\n\tfmt", strings.TrimSuffix(fixedB, "\n")+"\n\tfmt", 1),
		},
		{
			"spaces: relative block",
			pySrc, "return 1", 3, 3,
			"if x is None:\n    return None\nreturn 1",
			"def f(x):\n    if x:\n        if x is None:\n            return None\n        return 1\n    return 0\n",
		},
		{
			"spaces: tabs in improvedCode",
			pySrc, "return 1", 3, 3,
			"if x is None:\n\treturn None\nreturn 1",
			"def f(x):\n    if x:\n        if x is None:\n            return None\n        return 1\n    return 0\n",
		},
		{
			"spaces: absolute block",
			pySrc, "if x:\n        return 1", 2, 3,
			"    if x > 0:\n        return 1",
			"def f(x):\n    if x > 0:\n        return 1\n    return 0\n",
		},
		{
			"top-level code in a tab-indented file",
			"x := 1\nfunc f() {\n\ty()\n}\n", "x := 1", 1, 1,
			"if c {\n    x = 1\n}",
			"if c {\n\tx = 1\n}\nfunc f() {\n\ty()\n}\n",
		},
		{
			"blank line from the lines fallback",
			"func f() {\n\ta()\n\t\n\tb()\n}\n", "", 3, 3,
			"x := 1",
			"func f() {\n\ta()\n\tx := 1\n\tb()\n}\n",
		},
		{
			"empty improvedCode deletes",
			goSrc, `fmt.Println("b")`, 16, 16,
			" \n ",
			strings.Replace(goSrc, `fmt.Println("b")`, "", 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fix(t, tt.text, tt.code, tt.rs, tt.re, tt.improved); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s\n(%q)", got, tt.want, got)
			}
		})
	}
}

// TestReplacementTrailingNewline covers hand-made spans that end with a
// line break: the result ends with one too, in the buffer's style.
func TestReplacementTrailingNewline(t *testing.T) {
	for _, text := range []string{goSrc, crlf(goSrc)} {
		eol := "\n"
		if strings.Contains(text, "\r\n") {
			eol = "\r\n"
		}
		old := "\tfmt.Println(\"b\")" + eol
		start := strings.Index(text, old)
		s := Lines(text, Span{Start: start, End: start + len(old)})
		for _, improved := range []string{"\tfmt.Println(\"c\")", "\tfmt.Println(\"c\")\n", "\tfmt.Println(\"c\")\r\n"} {
			got := Replacement(text, s, improved)
			if want := "\tfmt.Println(\"c\")" + eol; got != want {
				t.Errorf("Replacement(%q) = %q, want %q", improved, got, want)
			}
		}
	}
}

func TestReplacementOutOfRange(t *testing.T) {
	for _, s := range []Span{{Start: -3, End: 2}, {Start: 5, End: 999}, {Start: 9, End: 1}, {Start: 999, End: 1000}} {
		_ = Replacement("ab\ncd", s, "x\n  y")
		_ = Replacement("", s, "x\n\ty")
	}
}

// TestReplacementNoOp checks that a fix whose improvedCode is the anchored
// code itself, as the model would copy it (from the first non-blank byte,
// or whole lines), changes nothing.
func TestReplacementNoOp(t *testing.T) {
	for _, c := range []struct {
		text, code string
		rs, re     int
	}{
		{goSrc, ifBlockB, 13, 15},
		{goSrc, "func B(x int) error {\n\tif x < 0 {", 12, 13},
		{goSrc, "\treturn nil\n}\n\nfunc B(x int) error {", 9, 12},
		{crlf(goSrc), ifBlockB, 6, 8},
		{pySrc, "if x:\n        return 1\n    return 0", 2, 4},
		{pySrc, "def f(x):\n    if x:", 1, 2},
	} {
		s, _, ok := Locate(c.text, c.code, c.rs, c.re)
		if !ok {
			t.Fatalf("Locate(%q) failed", c.code)
		}
		old := c.text[s.Start:s.End]
		for _, improved := range []string{old, c.code, strings.ReplaceAll(c.code, "\r\n", "\n")} {
			if got := Replacement(c.text, s, improved); got != old {
				t.Errorf("Replacement(%q) = %q, want %q", improved, got, old)
			}
		}
	}
}
