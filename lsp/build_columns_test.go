package lsp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// mixed comes before the error on the line of each broken program: an
// accented letter and two emoji, which the compilers count in bytes,
// characters or UTF-16 code units, each its own way.
const mixed = `"héllo 😀😀"`

// buildColumnCase is a build on save whose error must be shown under its
// marker, whatever unit the tool counts columns in.
type buildColumnCase struct {
	name     string
	program  string // skipped when it is not installed
	files    map[string]string
	onSave   string
	file     string
	line     int    // 0-based
	marker   string // what the error is under
	encoding string // the position encoding the editor negotiates; "" is UTF-16
}

var buildColumnCases = []buildColumnCase{
	{name: "go", program: "go", files: map[string]string{
		"go.mod":  "module example.com/cols\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() {\n\ts := " + mixed + "; _ = s; y := undefinedThing\n\t_ = y\n}\n",
	}, onSave: "GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local go build ./...", file: "main.go", line: 3, marker: "undefinedThing"},
	{name: "go, utf-8 positions", program: "go", files: map[string]string{
		"go.mod":  "module example.com/cols\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() {\n\ts := " + mixed + "; _ = s; y := undefinedThing\n\t_ = y\n}\n",
	}, onSave: "GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local go build ./...", file: "main.go", line: 3, marker: "undefinedThing", encoding: "utf-8"},
	{name: "gcc", program: "gcc", files: map[string]string{
		"a.c": "int main(void) {\n\tconst char *s = " + mixed + "; int y = undefinedThing;\n}\n",
	}, onSave: "gcc -fsyntax-only -fdiagnostics-column-unit=byte a.c", file: "a.c", line: 1, marker: "undefinedThing"},
	{name: "rustc", program: "rustc", files: map[string]string{
		"a.rs": "fn main() {\n\tlet s = " + mixed + "; let y = undefined_thing;\n}\n",
	}, onSave: "rustc --emit=metadata -o a.rmeta a.rs", file: "a.rs", line: 1, marker: "undefined_thing"},
	{name: "javac", program: "javac", files: map[string]string{
		"A.java": "public class A {\n\tpublic static void main(String[] a) {\n\t\tString s = " + mixed + ";\tint y = undefinedThing;\n\t}\n}\n",
	}, onSave: "javac -XDrawDiagnostics -d out A.java", file: "A.java", line: 2, marker: "undefinedThing"},
	{name: "node", program: "node", files: map[string]string{
		"b.js": "const s = " + mixed + ";\tconst y = (;\n",
	}, onSave: "node --check b.js", file: "b.js", line: 0, marker: ";\n"},
	{name: "python", program: "python3", files: map[string]string{
		"a.py": "x = 1\ndef f(:\n    pass\n",
	}, onSave: "python3 -m py_compile a.py", file: "a.py", line: 1, marker: ":\n"},
	{name: "python, indented", program: "python3", files: map[string]string{
		"a.py": "def f():\n    x = (1 +* 2)  # " + mixed + "\n",
	}, onSave: "python3 -m py_compile a.py", file: "a.py", line: 1, marker: "*"},
}

// TestBuildErrorColumnsAreTheEditors: the real compilers count the column
// of an error on a line with non-ASCII text in bytes (go, gcc),
// characters (rustc, Python) or UTF-16 code units (javac, node); the
// diagnostic is under the error in the editor's own units either way.
func TestBuildErrorColumnsAreTheEditors(t *testing.T) {
	for _, c := range buildColumnCases {
		t.Run(c.name, func(t *testing.T) {
			if err := exec.Command(c.program, "--version").Run(); err != nil && exec.Command(c.program, "version").Run() != nil {
				t.Skipf("%s is not installed: %v", c.program, err)
			}
			repo := lsptest.NewRepo(t, c.files)
			s := start(t, repo.Dir, lsp.Options{})
			init := lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{"onSave": c.onSave, "timeoutMs": 60000}}}
			if c.encoding != "" {
				init.PositionEncodings = []string{c.encoding}
			}
			s.Initialize(init)
			s.OpenFile(c.file)
			s.Save(c.file)
			s.AwaitIdle("")
			line := strings.Split(c.files[c.file], "\n")[c.line]
			at := strings.Index(c.files[c.file][strings.Index(c.files[c.file], line):], c.marker)
			want := uint32(len(utf16.Encode([]rune(line[:at]))))
			if c.encoding == "utf-8" {
				want = uint32(at)
			}
			var got []protocol.Diagnostic
			for _, d := range s.Diagnostics(c.file) {
				if src, _ := d.Source.Get(); src == "build" && d.Range.Start.Line == uint32(c.line) {
					got = append(got, d)
				}
			}
			if len(got) == 0 {
				t.Fatalf("no build diagnostic on line %d: %s", c.line, lsptest.Describe(s.Diagnostics(c.file)))
			}
			if got[0].Range.Start.Character != want {
				t.Fatalf("the error is shown at %d:%d, want %d:%d (under %q of %q): %s", got[0].Range.Start.Line, got[0].Range.Start.Character, c.line, want, c.marker, line, lsptest.Describe(got))
			}
			s.Shutdown()
		})
	}
}

// TestBuildTimeoutIsTold: a build that runs past build.timeoutMs is
// stopped; the errors of the build before it, which may no longer be
// true, are cleared and the user is told, rather than left with stale
// errors or what looks like a clean build.
func TestBuildTimeoutIsTold(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		"onSave":    "if [ -e slow ]; then sleep 30; fi; echo 'main.c:1:5: error: boom' >&2; exit 1",
		"timeoutMs": 1000,
	}}})
	s.OpenFile("main.c")
	s.Save("main.c")
	s.AwaitIdle("")
	if !hasBuildDiagnostic(s.Diagnostics("main.c")) {
		t.Fatalf("the first build's error is not shown: %s", lsptest.Describe(s.Diagnostics("main.c")))
	}
	repo.Write(map[string]string{"slow": ""})
	s.Save("main.c")
	s.AwaitIdle("")
	if ds := s.Diagnostics("main.c"); hasBuildDiagnostic(ds) {
		t.Fatalf("the build that timed out left the last build's errors: %s", lsptest.Describe(ds))
	}
	told := false
	for _, m := range s.Messages() {
		told = told || strings.Contains(m, "did not finish within 1s (build.timeoutMs)")
	}
	if !told {
		t.Fatalf("the timeout was not told: %q", s.Messages())
	}
	s.Shutdown()
}

// TestBuildInASubdirectory: a build.onSave that enters a directory
// ("cd svc && go build ./...") reports paths relative to it; its errors
// are shown in that directory's files, not in the root's files of the
// same name.
func TestBuildInASubdirectory(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":     "package main\n\nfunc main() {}\n",
		"svc/go.mod":  "module example.com/svc\n\ngo 1.21\n",
		"svc/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(undefinedThing)\n}\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		"onSave": "cd svc && GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local go build ./...", "timeoutMs": 60000,
	}}})
	s.OpenFile("main.go")
	s.OpenFile("svc/main.go")
	s.Save("svc/main.go")
	s.AwaitIdle("")
	if ds := s.Diagnostics("main.go"); hasBuildDiagnostic(ds) {
		t.Fatalf("svc's error is shown in the root's main.go: %s", lsptest.Describe(ds))
	}
	ds := s.Diagnostics("svc/main.go")
	if len(ds) != 1 || ds[0].Range.Start.Line != 5 || ds[0].Range.Start.Character != 13 {
		t.Fatalf("svc/main.go: %s, want the error at 5:13", lsptest.Describe(ds))
	}
	s.Shutdown()
}

// TestCargoBuildInASubdirectory: cargo names files relative to its
// package ("src/main.rs"), which is in the directory the build entered.
func TestCargoBuildInASubdirectory(t *testing.T) {
	if err := exec.Command("cargo", "--version").Run(); err != nil {
		t.Skip("cargo is not installed")
	}
	repo := lsptest.NewRepo(t, map[string]string{
		"rs/Cargo.toml":  "[package]\nname = \"rs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"rs/src/main.rs": "fn main() {\n    let y = undefined_thing;\n}\n",
	})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		"onSave": "cd rs && cargo check --offline --quiet", "timeoutMs": 60000,
	}}})
	s.OpenFile("rs/src/main.rs")
	s.Save("rs/src/main.rs")
	s.AwaitIdle("")
	ds := s.Diagnostics("rs/src/main.rs")
	if len(ds) == 0 || ds[0].Range.Start.Line != 1 || ds[0].Range.Start.Character != 12 {
		t.Fatalf("rs/src/main.rs: %s, want the error at 1:12", lsptest.Describe(ds))
	}
	s.Shutdown()
}

// TestBuildErrorsOffTheirFileAreNotShown: an error naming a file that
// does not exist, or a line past the end of its file, is not shown on
// some other line; a failed build with only such errors is told like any
// build that failed with nothing to show.
func TestBuildErrorsOffTheirFileAreNotShown(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"build": map[string]any{
		"onSave": "echo 'gone.c:1:1: error: no such file' >&2; echo 'main.c:40:2: error: past the end' >&2; exit 1",
	}}})
	s.OpenFile("main.c")
	s.Save("main.c")
	s.AwaitIdle("")
	if ds := s.Diagnostics("main.c"); hasBuildDiagnostic(ds) {
		t.Fatalf("an error past the end of main.c is shown: %s", lsptest.Describe(ds))
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "gone.c")); err == nil {
		t.Fatal("gone.c exists")
	}
	told := false
	for _, m := range s.Messages() {
		told = told || strings.Contains(m, "with no error kodyls can show on a line")
	}
	if !told {
		t.Fatalf("the failed build was not told: %q", s.Messages())
	}
	s.Shutdown()
}
