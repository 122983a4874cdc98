package rules

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// mustRule builds a file-scoped, enabled rule with a regex detector.
func mustRule(t testing.TB, file, pattern, flags string, paths ...string) *Rule {
	t.Helper()
	d, err := NewDetector("regex", pattern, flags)
	if err != nil {
		t.Fatal(err)
	}
	return &Rule{UUID: "id-" + file, Title: file, File: file, Severity: SeverityMedium, Scope: ScopeFile, Enabled: true, Paths: paths, Detector: d}
}

func TestAppliesTo(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		file  string
		want  bool
	}{
		{"no paths means every file", nil, "any/where.txt", true},
		{"double star at root", []string{"**/*.go"}, "main.go", true},
		{"double star nested", []string{"**/*.go"}, "a/b/c.go", true},
		{"other extension", []string{"**/*.go"}, "a/b/c.ts", false},
		{"exclusion wins", []string{"**/*.go", "!**/*_test.go"}, "a/b_test.go", false},
		{"exclusion does not touch others", []string{"**/*.go", "!**/*_test.go"}, "a/b.go", true},
		{"only exclusions: everything else", []string{"!vendor/**"}, "cmd/x.go", true},
		{"only exclusions: excluded", []string{"!vendor/**"}, "vendor/x/y.go", false},
		{"single star stays in one directory", []string{"src/*.go"}, "src/a/b.go", false},
		{"alternatives", []string{"src/**/*.{ts,tsx}"}, "src/ui/App.tsx", true},
		{"OS separators and ./ are normalised", []string{"src/**"}, "./src/a.go", true},
		{"case matters", []string{"**/*.go"}, "A.GO", false},
		{"any positive pattern suffices", []string{"a/**", "b/**"}, "b/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rule{Enabled: true, Scope: ScopeFile, Paths: tt.paths}
			if got := r.AppliesTo(tt.file); got != tt.want {
				t.Errorf("AppliesTo(%q) with %q = %v, want %v", tt.file, tt.paths, got, tt.want)
			}
		})
	}

	t.Run("disabled", func(t *testing.T) {
		r := &Rule{Enabled: false, Scope: ScopeFile}
		if r.AppliesTo("a.go") {
			t.Error("a disabled rule applies")
		}
	})
	t.Run("pull request scope", func(t *testing.T) {
		r := &Rule{Enabled: true, Scope: ScopePullRequest}
		if r.AppliesTo("a.go") {
			t.Error("a pull_request rule applies to a single file")
		}
	})
	t.Run("parsed rule", func(t *testing.T) {
		r, err := Parse("no-fmt.md", readFixture(t, "good/no-fmt.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !r.AppliesTo("pkg/log.go") || r.AppliesTo("pkg/log_test.go") || r.AppliesTo("README.md") {
			t.Error("the fixture's globs do not select pkg/log.go alone")
		}
	})
}

func TestDetect(t *testing.T) {
	fmtRule := mustRule(t, ".kody/rules/b-fmt.md", `fmt\.Println\(`, "")
	todoRule := mustRule(t, ".kody/rules/a-todo.md", `todo`, "i")
	wordRule := mustRule(t, ".kody/rules/c-word.md", `né`, "")
	goOnly := mustRule(t, ".kody/rules/d-go.md", `x`, "", "**/*.go")

	type hit struct {
		rule       *Rule
		line       int
		start, end int
		match      string
	}
	tests := []struct {
		name    string
		rules   []*Rule
		path    string
		text    string
		include func(int) bool
		want    []hit
	}{
		{
			name:  "all lines, sorted by line then start",
			rules: []*Rule{fmtRule, todoRule},
			path:  "a.go",
			text:  "package a\nfunc f() { fmt.Println(1) } // TODO\nfmt.Println(2)\n",
			want: []hit{
				{fmtRule, 1, 11, 23, "fmt.Println("},
				{todoRule, 1, 31, 35, "TODO"},
				{fmtRule, 2, 0, 12, "fmt.Println("},
			},
		},
		{
			name:    "include limits the lines",
			rules:   []*Rule{fmtRule},
			path:    "a.go",
			text:    "fmt.Println(0)\nfmt.Println(1)\nfmt.Println(2)",
			include: func(l int) bool { return l == 1 },
			want:    []hit{{fmtRule, 1, 0, 12, "fmt.Println("}},
		},
		{
			name:  "byte columns after multi-byte characters",
			rules: []*Rule{wordRule},
			path:  "a.txt",
			// "日本" is 6 bytes and "é" 2, so the match starts at byte 7.
			text: "日本 né",
			want: []hit{{wordRule, 0, 7, 10, "né"}},
		},
		{
			name:  "every match on a line, case-insensitive",
			rules: []*Rule{todoRule},
			path:  "a.go",
			text:  "// ToDo: one, TODO two, todo three",
			want: []hit{
				{todoRule, 0, 3, 7, "ToDo"},
				{todoRule, 0, 14, 18, "TODO"},
				{todoRule, 0, 24, 28, "todo"},
			},
		},
		{
			name:  "same start: ordered by rule file",
			rules: []*Rule{fmtRule, mustRule(t, ".kody/rules/a-fmt.md", `fmt`, "")},
			path:  "a.go",
			text:  "fmt.Println(",
			want: []hit{
				{nil, 0, 0, 3, "fmt"}, // a-fmt.md sorts first
				{fmtRule, 0, 0, 12, "fmt.Println("},
			},
		},
		{
			name:  "CRLF and CR line endings",
			rules: []*Rule{todoRule},
			path:  "a.go",
			text:  "a\r\nTODO\rb\r\n\ntodo",
			want: []hit{
				{todoRule, 1, 0, 4, "TODO"},
				{todoRule, 4, 0, 4, "todo"},
			},
		},
		{
			name:  "rules that do not apply are skipped",
			rules: []*Rule{goOnly},
			path:  "a.ts",
			text:  "x",
		},
		{
			name:  "empty matches are not reported",
			rules: []*Rule{mustRule(t, "star.md", `y*`, "")},
			path:  "a",
			text:  "xyx\n\n",
			want:  []hit{{nil, 0, 1, 2, "y"}},
		},
		{
			name:  "rules without detectors are skipped",
			rules: []*Rule{{UUID: "u", File: "n.md", Enabled: true, Scope: ScopeFile}, nil},
			path:  "a",
			text:  "anything",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.rules, tt.path, tt.text, tt.include)
			if len(got) != len(tt.want) {
				t.Fatalf("Detect = %s, want %d violations", dump(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if (w.rule != nil && g.Rule != w.rule) || g.Line != w.line || g.Start != w.start || g.End != w.end || g.Match != w.match {
					t.Errorf("violation %d = %s, want line %d [%d,%d) %q", i, dump(got[i:i+1]), w.line, w.start, w.end, w.match)
				}
				if g.Match != tt.text[lineStart(tt.text, g.Line)+g.Start:lineStart(tt.text, g.Line)+g.End] {
					t.Errorf("violation %d: Start/End do not slice out Match", i)
				}
			}
		})
	}
}

// lineStart returns the byte offset of a line in text, splitting like an
// editor does.
func lineStart(text string, line int) int {
	off := 0
	for range line {
		i := strings.IndexAny(text[off:], "\r\n")
		off += i + 1
		if text[off-1] == '\r' && off < len(text) && text[off] == '\n' {
			off++
		}
	}
	return off
}

func dump(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "{%s %d [%d,%d) %q} ", v.Rule.File, v.Line, v.Start, v.End, v.Match)
	}
	return b.String()
}

func TestDetectIncludeCalledOncePerLine(t *testing.T) {
	var seen []int
	Detect([]*Rule{mustRule(t, "r.md", "x", "")}, "f", "a\nb\nc\n", func(l int) bool {
		seen = append(seen, l)
		return true
	})
	if !reflect.DeepEqual(seen, []int{0, 1, 2}) {
		t.Errorf("include called for %v, want [0 1 2]", seen)
	}
}

func TestDetectHandBuiltDetector(t *testing.T) {
	// A Detector built without NewDetector is compiled on the fly; an
	// invalid one is skipped rather than panicking.
	good := &Rule{File: "g.md", Enabled: true, Scope: ScopeFile, Detector: &Detector{Type: "regex", Pattern: "B", Flags: "i"}}
	bad := &Rule{File: "b.md", Enabled: true, Scope: ScopeFile, Detector: &Detector{Type: "regex", Pattern: "("}}
	got := Detect([]*Rule{good, bad}, "f", "abc", nil)
	if len(got) != 1 || got[0].Rule != good || got[0].Start != 1 {
		t.Errorf("Detect = %s", dump(got))
	}
	if good.Detector.re != nil {
		t.Error("Detect wrote the compiled pattern back into a shared rule")
	}
}

func TestNewDetectorErrors(t *testing.T) {
	tests := []struct{ typ, pattern, flags, msg string }{
		{"", "x", "", `detector has no "type"`},
		{"ast", "x", "", `unknown detector type "ast"`},
		{"regex", "", "", "detector pattern is empty"},
		{"regex", "x", "m", `unknown detector flag 'm'`},
		{"regex", `a(?=b)`, "", "do not support lookahead (?="},
		{"regex", `\k<n>`, "", "named backreferences"},
	}
	for _, tt := range tests {
		_, err := NewDetector(tt.typ, tt.pattern, tt.flags)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("NewDetector(%q, %q, %q) = %v, want %q", tt.typ, tt.pattern, tt.flags, err, tt.msg)
		}
	}
	// An escaped backslash followed by a digit is not a backreference.
	if hasBackreference(`\\1`) || !hasBackreference(`(a)\1`) {
		t.Error("hasBackreference misreads escapes")
	}
}

func BenchmarkDetect5000(b *testing.B) {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, "\tx := compute(%d) // a line of ordinary Go code with ünïcode\n", i)
	}
	text := sb.String()
	rs := []*Rule{
		mustRule(b, "a.md", `fmt\.Println\(`, ""),
		mustRule(b, "b.md", `TODO`, "i"),
		mustRule(b, "c.md", `\bpanic\(`, ""),
	}
	changed := func(l int) bool { return l%1000 == 0 }
	b.Run("changed-lines", func(b *testing.B) {
		for b.Loop() {
			Detect(rs, "a.go", text, changed)
		}
	})
	b.Run("all-lines", func(b *testing.B) {
		for b.Loop() {
			Detect(rs, "a.go", text, nil)
		}
	})
}

func TestForEachLine(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\r\nb\rc\n", []string{"a", "b", "c"}},
		{"\r\n\r\n", []string{"", ""}},
	}
	for _, tt := range tests {
		var got []string
		forEachLine(tt.text, func(n int, line string) {
			if n != len(got) {
				t.Errorf("%q: line %d reported as %d", tt.text, len(got), n)
			}
			got = append(got, line)
		})
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("forEachLine(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// A detector with a replacement gives each violation its fix: the match
// with the template expanded, groups and $$ included; without one, none.
func TestDetectFix(t *testing.T) {
	src := "---\ntitle: printing\ndetector:\n  type: regex\n  pattern: 'fmt\\.Println\\((?P<arg>[^)]*)\\)'\n  replace: 'log.Info(${arg}) // $$'\n---\n"
	r, err := Parse("print.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text := "package main\n\tfmt.Println(\"a\"); fmt.Println(x)\n"
	vs := Detect([]*Rule{r}, "main.go", text, nil)
	if len(vs) != 2 {
		t.Fatalf("violations %+v, want 2", vs)
	}
	for i, want := range []string{`log.Info("a") // $`, `log.Info(x) // $`} {
		if !vs[i].HasFix || vs[i].Fix != want {
			t.Errorf("violation %d: fix %q (has %v), want %q", i, vs[i].Fix, vs[i].HasFix, want)
		}
	}

	del, err := Parse("del.md", []byte("---\ntitle: no debugger\ndetector:\n  type: regex\n  pattern: 'debugger;'\n  replace: ''\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if vs := Detect([]*Rule{del}, "a.js", "debugger;\n", nil); len(vs) != 1 || !vs[0].HasFix || vs[0].Fix != "" {
		t.Fatalf("an empty replacement deletes the match: %+v", vs)
	}
	plain := mustRule(t, "plain.md", `fmt\.Println`, "")
	if vs := Detect([]*Rule{plain}, "main.go", text, nil); len(vs) != 2 || vs[0].HasFix {
		t.Fatalf("a detector without replace offers no fix: %+v", vs)
	}
}
