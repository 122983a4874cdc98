package errparse

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestColumnUnitByteOffset: a column in each unit finds the same place of
// a line with a tab, an accented letter and emoji before it; a column out
// of the line or inside a character finds the line's end or the
// character's start.
func TestColumnUnitByteOffset(t *testing.T) {
	const line = "\ts := \"héllo 😀😀\"; y := undefinedThing"
	at := strings.Index(line, "undefinedThing") // 30
	emoji := strings.Index(line, "😀")           // 14
	for _, c := range []struct {
		unit         ColumnUnit
		column, want int
	}{
		{UnitBytes, 31, at},
		{UnitDefault, 31, at},
		{UnitChars, 24, at},     // each emoji is one character
		{UnitUTF16, 26, at},     // and two UTF-16 code units
		{UnitUTF16Tab8, 33, at}, // the tab reaches column 8
		{UnitDisplay, 29, at},   // the tab is 4 wide, each emoji 2

		{UnitBytes, 0, 0},
		{UnitChars, -3, 0},
		{UnitUTF16, 1000, len(line)},
		{UnitBytes, 1000, len(line)},
		{UnitBytes, emoji + 2, emoji}, // the second byte of 😀
		{UnitChars, 14, emoji},
		{UnitUTF16, 14, emoji},
		{UnitUTF16, 15, emoji}, // 😀's second half
		{UnitUTF16, 16, emoji + 4},
		{UnitUTF16Tab8, 21, emoji},
		{UnitUTF16Tab8, 4, 0}, // inside the tab's width
		{UnitUTF16Tab8, 9, 1},
		{UnitDisplay, 17, emoji},
		{UnitDisplay, 18, emoji}, // 😀's second column
		{UnitDisplay, 19, emoji + 4},
	} {
		if got := c.unit.ByteOffset(line, c.column); got != c.want {
			t.Errorf("%s column %d: byte %d, want %d", c.unit, c.column, got, c.want)
		}
	}
}

// toolColumnCase is a broken program and the command that reports its
// error: the column the tool prints must lead to the marker.
type toolColumnCase struct {
	name    string
	program string // must be installed, else the case is skipped
	files   map[string]string
	command string // run with sh in the program's directory
	file    string
	line    int
	marker  string // the text the column points at
	skip    string // the first occurrence of marker after skip
	unit    ColumnUnit
}

// mixedLine is the text that comes before each error: a tab (in most
// programs), an accented letter and emoji, each counted differently by
// one unit or another.
const mixed = `"héllo 😀😀"`

var toolColumnCases = []toolColumnCase{
	{name: "go build", program: "go", files: map[string]string{
		"go.mod":  "module example.com/cols\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() {\n\ts := " + mixed + "; _ = s; y := undefinedThing\n\t_ = y\n}\n",
	}, command: "go build ./...", file: "main.go", line: 4, marker: "undefinedThing", unit: UnitBytes},
	{name: "gcc byte columns", program: "gcc", files: map[string]string{
		"a.c": "int main(void) {\n\tconst char *s = " + mixed + "; int y = undefinedThing;\n}\n",
	}, command: "gcc -fsyntax-only -fdiagnostics-column-unit=byte a.c", file: "a.c", line: 2, marker: "undefinedThing", unit: UnitBytes},
	{name: "g++ byte columns", program: "g++", files: map[string]string{
		"a.cpp": "int main() {\n\tconst char *s = " + mixed + "; int y = undefinedThing;\n}\n",
	}, command: "g++ -fsyntax-only -fdiagnostics-column-unit=byte a.cpp", file: "a.cpp", line: 2, marker: "undefinedThing", unit: UnitBytes},
	{name: "gcc", program: "gcc", files: map[string]string{
		"a.c": "int main(void) {\n\tconst char *s = " + mixed + "; int y = undefinedThing;\n}\n",
	}, command: "gcc -fsyntax-only a.c", file: "a.c", line: 2, marker: "undefinedThing", unit: UnitDisplayTab8},
	{name: "g++", program: "g++", files: map[string]string{
		"a.cpp": "int main() {\n\tconst char *s = \"日本\" " + mixed + "; int y = undefinedThing;\n}\n",
	}, command: "g++ -fsyntax-only a.cpp", file: "a.cpp", line: 2, marker: "undefinedThing", unit: UnitDisplayTab8},
	{name: "clang", program: "clang", files: map[string]string{
		"a.c": "int main(void) {\n\tconst char *s = " + mixed + "; int y = undefinedThing;\n}\n",
	}, command: "clang -fsyntax-only a.c", file: "a.c", line: 2, marker: "undefinedThing", unit: UnitBytes},
	{name: "rustc", program: "rustc", files: map[string]string{
		"a.rs": "fn main() {\n\tlet s = " + mixed + "; let y = undefined_thing;\n}\n",
	}, command: "rustc --emit=metadata -o a.rmeta a.rs", file: "a.rs", line: 2, marker: "undefined_thing", unit: UnitChars},
	{name: "rustc json", program: "rustc", files: map[string]string{
		"a.rs": "fn main() {\n\tlet s = " + mixed + "; let y = undefined_thing;\n}\n",
	}, command: "rustc --error-format=json --emit=metadata -o a.rmeta a.rs", file: "a.rs", line: 2, marker: "undefined_thing", unit: UnitChars},
	{name: "cargo", program: "cargo", files: map[string]string{
		"Cargo.toml":  "[package]\nname = \"cols\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs": "fn main() {\n\tlet s = " + mixed + "; let y = undefined_thing;\n}\n",
	}, command: "cargo check --offline --quiet", file: "src/main.rs", line: 2, marker: "undefined_thing", unit: UnitChars},
	{name: "rust panic", program: "rustc", files: map[string]string{
		"p.rs": "fn main() {\n\tlet s = " + mixed + "; let v: Option<i32> = None; let y = v.unwrap();\n}\n",
	}, command: "rustc -o p p.rs 2>/dev/null && ./p", file: "p.rs", line: 2, marker: "unwrap", unit: UnitDisplay},
	{name: "javac", program: "javac", files: map[string]string{
		"A.java": "public class A {\n\tpublic static void main(String[] a) {\n\t\tString s = " + mixed + ";\tint y = undefinedThing;\n\t}\n}\n",
	}, command: "javac -d out A.java", file: "A.java", line: 3, marker: "undefinedThing", unit: UnitUTF16},
	{name: "javac -XDrawDiagnostics", program: "javac", files: map[string]string{
		"A.java": "public class A {\n\tpublic static void main(String[] a) {\n\t\tString s = " + mixed + ";\tint y = undefinedThing;\n\t}\n}\n",
	}, command: "javac -XDrawDiagnostics -d out A.java", file: "A.java", line: 3, marker: "undefinedThing", unit: UnitUTF16Tab8},
	{name: "node", program: "node", files: map[string]string{
		"a.js": "const s = " + mixed + ";\tconst y = undefinedThing;\n",
	}, command: "node a.js", file: "a.js", line: 1, marker: "undefinedThing", unit: UnitUTF16},
	{name: "node --check", program: "node", files: map[string]string{
		"b.js": "const s = " + mixed + ";\tconst y = (;\n",
	}, command: "node --check b.js", file: "b.js", line: 1, marker: ";", skip: "(", unit: UnitUTF16},
	{name: "tsc", program: "tsc", files: map[string]string{
		"a.ts": "const s = " + mixed + ";\tconst y: number = undefinedThing;\n",
	}, command: "tsc --noEmit a.ts", file: "a.ts", line: 1, marker: "undefinedThing", unit: UnitUTF16},
	// CPython 3.12 and earlier place the caret by bytes: the line's
	// text before the error is ASCII, its indentation is stripped.
	{name: "python syntax error", program: "python3", files: map[string]string{
		"a.py": "def f():\n    x = (1 +* 2)  # " + mixed + "\n",
	}, command: "python3 -m py_compile a.py", file: "a.py", line: 2, marker: "*", unit: UnitChars},
	{name: "python syntax error, tab", program: "python3", files: map[string]string{
		"a.py": "def f():\n\tx = (1 +* 2)  # " + mixed + "\n",
	}, command: "python3 a.py", file: "a.py", line: 2, marker: "*", unit: UnitChars},
	{name: "python syntax error, top level", program: "python3", files: map[string]string{
		"a.py": "x = 1\ndef f(:\n    pass\n",
	}, command: "python3 -m py_compile a.py", file: "a.py", line: 2, marker: ":", unit: UnitChars},
	{name: "python indentation error", program: "python3", files: map[string]string{
		"a.py": "def f():\n        x = 1\n    return x\n",
	}, command: "python3 a.py", file: "a.py", line: 3, marker: "\n", unit: UnitChars},
	{name: "python 3.13 syntax error", program: "python3.13", files: map[string]string{
		"a.py": "def f():\n    s = " + mixed + "; x = (1 +* 2)\n",
	}, command: "python3.13 -m py_compile a.py", file: "a.py", line: 2, marker: "*", unit: UnitChars},
	{name: "mypy", program: "mypy", files: map[string]string{
		"m.py": "def f() -> int:\n\ts = " + mixed + "; return undefined_thing\n",
	}, command: "mypy --no-error-summary --show-column-numbers --cache-dir=.mypy m.py", file: "m.py", line: 2, marker: "undefined_thing", unit: UnitBytes},
	{name: "shellcheck", program: "shellcheck", files: map[string]string{
		"a.sh": "#!/bin/sh\ns=" + mixed + ";\tif [ $s = x ]; then echo; fi\n",
	}, command: "shellcheck -f gcc a.sh", file: "a.sh", line: 2, marker: "$s", unit: UnitChars},
}

// TestToolColumnUnits runs the real tools on a line with a tab, an
// accented letter and emoji before the error: the column each prints,
// read in its tool's unit, is the place of the error. A tool that is not
// installed is skipped.
func TestToolColumnUnits(t *testing.T) {
	for _, c := range toolColumnCases {
		t.Run(c.name, func(t *testing.T) {
			// A name on PATH may be a shim with nothing behind it
			// (pyenv): the program must answer.
			if err := exec.Command(c.program, "--version").Run(); err != nil && exec.Command(c.program, "version").Run() != nil {
				t.Skipf("%s is not installed: %v", c.program, err)
			}
			dir := t.TempDir()
			for name, text := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-c", c.command)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "CARGO_TARGET_DIR="+filepath.Join(dir, "target"), "NO_COLOR=1")
			out, _ := cmd.CombinedOutput()
			lines := strings.Split(c.files[c.file], "\n")
			line := lines[c.line-1]
			want := strings.Index(line[strings.Index(line, c.skip):], c.marker) + strings.Index(line, c.skip)
			if c.marker == "\n" {
				want = len(line)
			}
			errs := Parse(string(out), Options{Workspace: dir})
			CommandColumnUnits(errs, c.command)
			for _, e := range errs {
				if path.Clean(e.File) != c.file || e.Line != c.line {
					continue
				}
				if e.ColumnUnit != c.unit {
					t.Errorf("unit %s, want %s", e.ColumnUnit, c.unit)
				}
				if got := e.ColumnUnit.ByteOffset(line, e.Column); e.Column == 0 || got != want {
					t.Errorf("column %d (%s) is byte %d of %q, want %d\n%s", e.Column, e.ColumnUnit, got, line, want, out)
				}
				return
			}
			t.Fatalf("no error at %s:%d in:\n%s", c.file, c.line, out)
		})
	}
}

// TestPythonCaretNeedsTheFile: Python prints a syntax error's line without
// its indentation, so the caret's column is placed with the file's line;
// with no file, or a file whose line is no longer the one printed, the
// error has no column rather than a wrong one.
func TestPythonCaretNeedsTheFile(t *testing.T) {
	out := "  File \"app/a.py\", line 2\n    x = (1 +* 2)\n            ^\nSyntaxError: invalid syntax\n"
	ws := t.TempDir()
	column := func() int {
		errs := Parse(out, Options{Workspace: ws})
		if len(errs) != 1 || errs[0].File != "app/a.py" || errs[0].Line != 2 || errs[0].ColumnUnit != UnitChars {
			t.Fatalf("%+v", errs)
		}
		return errs[0].Column
	}
	if c := column(); c != 0 {
		t.Errorf("no file: column %d, want 0", c)
	}
	write := func(text string) {
		if err := os.MkdirAll(filepath.Join(ws, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "app", "a.py"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("def f():\n\t  x = (1 +* 2)\r\n")
	if c := column(); c != 12 {
		t.Errorf("column %d, want 12 (3 characters of indentation, 8 before the caret)", c)
	}
	write("def f():\n    y = 2\n")
	if c := column(); c != 0 {
		t.Errorf("a changed file: column %d, want 0", c)
	}
	// Run in a subdirectory: the path is the tool's.
	out = strings.Replace(out, "app/a.py", "a.py", 1)
	write("def f():\n  x = (1 +* 2)\n")
	errs := Parse(out, Options{Workspace: ws, Dir: filepath.Join(ws, "app")})
	if len(errs) != 1 || errs[0].File != "app/a.py" || errs[0].Column != 11 {
		t.Errorf("run in app/: %+v, want app/a.py at column 11", errs)
	}
}

// TestFlake8ColumnsByCode: flake8 prints pyflakes' columns (F) in bytes and
// pycodestyle's (E, W) in characters; each line is read in its code's
// unit. The output is flake8 5.0.4's (pyflakes 2.5, pycodestyle 2.10) for
// the text below.
func TestFlake8ColumnsByCode(t *testing.T) {
	text := "def f():\n    s = \"héllo 日本\"; return s \n\n\ndef g():\n    t = \"😀😀\"; return undefined_thing\n"
	out := "f.py:2:19: E702 multiple statements on one line (semicolon)\n" +
		"f.py:2:29: W291 trailing whitespace\n" +
		"f.py:6:5: F841 local variable 't' is assigned to but never used\n" +
		"f.py:6:13: E702 multiple statements on one line (semicolon)\n" +
		"f.py:6:28: F821 undefined name 'undefined_thing'\n"
	lines := strings.Split(text, "\n")
	want := map[string]int{ // code@line → byte offset of what it names
		"E702@2": strings.Index(lines[1], ";"),
		"W291@2": len(lines[1]) - 1,
		"F841@6": strings.Index(lines[5], "t"),
		"E702@6": strings.Index(lines[5], ";"),
		"F821@6": strings.Index(lines[5], "undefined_thing"),
	}
	errs := Parse(out, Options{})
	if len(errs) != len(want) {
		t.Fatalf("%d errors: %+v", len(errs), errs)
	}
	for _, e := range errs {
		key := fmt.Sprintf("%s@%d", e.Code, e.Line)
		if got := e.ColumnUnit.ByteOffset(lines[e.Line-1], e.Column); got != want[key] {
			t.Errorf("%s: column %d (%s) is byte %d, want %d", key, e.Column, e.ColumnUnit, got, want[key])
		}
	}
}
