package patch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadings(t *testing.T) {
	tests := []struct {
		path string
		line string
		want bool
	}{
		{"a.go", "func main() {", true},
		{"a.go", "func (s *Server) Run() error {", true},
		{"a.go", "type Server struct {", true},
		{"a.go", "type (", true},
		{"a.go", "\ttype local int", false},
		{"a.go", "\tfunc() {}()", false},
		{"a.go", "// func main is here", false},
		{"a.go", "var f = func() {}", false},

		{"a.ts", "function f(x: number) {", true},
		{"a.ts", "export default async function handler(req) {", true},
		{"a.js", "function* gen() {", true},
		{"a.tsx", "export class Store {", true},
		{"a.ts", "export abstract class Base {", true},
		{"a.ts", "  class Inner {", true},
		{"a.js", "const add = (a, b) => {", true},
		{"a.mjs", "export const load = async () => {", true},
		{"a.js", "  return items.map((x) => x * 2);", false},
		{"a.js", "// this function does things", false},
		{"a.js", "const functional = 1;", false},
		{"a.js", "classify(x);", false},

		{"a.py", "def f(x):", true},
		{"a.py", "    async def fetch(self):", true},
		{"a.py", "class Foo(Base):", true},
		{"a.py", "    define = 1", false},
		{"a.py", "# def commented(): pass", false},

		{"a.rs", "fn main() {", true},
		{"a.rs", "pub fn new() -> Self {", true},
		{"a.rs", "    pub(crate) async fn run(&self) {", true},
		{"a.rs", "impl<T> Display for Wrapper<T> {", true},
		{"a.rs", "impl Counter {", true},
		{"a.rs", "pub struct Counter {", true},
		{"a.rs", "unsafe extern \"C\" fn cb() {", true},
		{"a.rs", "    let fnord = 1;", false},
		{"a.rs", "public fn x() {", false},

		{"A.java", "public class Main {", true},
		{"a.c", "int main(int argc, char **argv) {", true},
		{"a.c", "    if (x) {", false},
		{"a.c", "} else {", false},
		{"a.c", "#if defined(X) {", false},
		{"a.c", "int main(void)", false},
		{"a.cpp", "/* block {", false},

		{"README.md", "# Title {", false},
		{"config.yaml", "key: {", false},
		{"Makefile", "all: {", false},
	}
	for _, tt := range tests {
		f := headingFunc(tt.path)
		got := f != nil && f(tt.line)
		if got != tt.want {
			t.Errorf("heading(%s, %q) = %v, want %v", tt.path, tt.line, got, tt.want)
		}
	}
}

func TestHeadingText(t *testing.T) {
	if got := headingText("\tfunc main() {  "); got != "func main() {" {
		t.Errorf("got %q", got)
	}
	// 79 ASCII bytes then a two-byte character: the cut must not split it.
	long := "def " + strings.Repeat("a", 75) + "ü(self):"
	got := headingText(long)
	if !utf8.ValidString(got) || len(got) > maxHeading {
		t.Errorf("headingText cut %q to invalid or long %q", long, got)
	}
	if got != long[:79] {
		t.Errorf("got %q, want %q", got, long[:79])
	}
	exact := strings.Repeat("x", maxHeading)
	if got := headingText(exact); got != exact {
		t.Errorf("a heading of exactly %d bytes was cut: %q", maxHeading, got)
	}
	// A heading cut through a token keeps no part of it: the prompt's
	// redaction would not recognise the rest.
	secret := `var syncClient = github.NewClient(nil).WithAuthToken("ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6")`
	if got := headingText(secret); strings.Contains(got, "ghp_SYML") {
		t.Errorf("the heading keeps the start of the token: %q", got)
	}
}

func TestSectionBetweenHunks(t *testing.T) {
	// The second hunk's nearest declaration is the first hunk's when no new
	// one lies between them; a declaration between them takes over.
	var base []string
	base = append(base, "package x", "", "func a() {")
	for i := range 20 {
		base = append(base, "\tstep"+string(rune('A'+i))+"()")
	}
	base = append(base, "}", "", "func b() {")
	for i := range 20 {
		base = append(base, "\tstep"+string(rune('a'+i))+"()")
	}
	base = append(base, "}")
	cur := append([]string(nil), base...)
	cur[4] = "\tchanged1()"
	cur[16] = "\tchanged2()"
	cur[40] = "\tchanged3()"
	p := Diff("x.go", strings.Join(base, "\n")+"\n", strings.Join(cur, "\n")+"\n", 3)
	var got []string
	for _, h := range p.Hunks {
		got = append(got, h.Section)
	}
	want := []string{"func a() {", "func a() {", "func b() {"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sections = %q, want %q", got, want)
	}
}
