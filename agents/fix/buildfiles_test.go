package fix_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/fix"
)

// TestBuildDefinitionEdits: the files a build reads its instructions
// from are refused, by well-known name, by what the command line and
// the build definitions name, and by content for go.mod and tsconfig;
// the sources being built are not.
func TestBuildDefinitionEdits(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"Makefile":             "include ci.inc\n\nbuild: main.go gen\n\tgo build ./...\n\ngen:\n\tsh tools/gen\n\t./scripts/check.sh\n",
		"ci.inc":               "X = 1\n",
		"tools/gen":            "echo gen\n",
		"scripts/check.sh":     "echo check\n",
		"main.go":              "package main\n\nfunc main() {}\n",
		"package.json":         `{"scripts":{"build":"node tools/bundle.js && tsc -p ."}}`,
		"tools/bundle.js":      "console.log(1)\n",
		"src/index.js":         "console.log(2)\n",
		"vite.config.ts":       "export default {}\n",
		"go.mod":               "module m\n\ngo 1.22\n\nrequire example.com/a v1.0.0\n",
		"tsconfig.json":        `{"compilerOptions":{"strict":true,"lib":["es2020"]}}`,
		"macros/Cargo.toml":    "[package]\nname = \"macros\"\n\n[lib]\nproc-macro = true\n",
		"macros/src/lib.rs":    "pub fn m() {}\n",
		"app/Cargo.toml":       "[package]\nname = \"app\"\n",
		"app/src/main.rs":      "fn main() {}\n",
		"app/build.rs":         "fn main() {}\n",
		".cargo/config.toml":   "[build]\n",
		"lib/build.gradle.kts": "plugins {}\n",
		"verify":               "#!/bin/sh\nexit 0\n",
		"docs/notes.md":        "notes\n",
		"cmake/deps.cmake":     "set(X 1)\n",
		"pkg/CMakeLists.txt":   "project(p)\n",
		"main.c":               "int main(void) { return 1; }\n",
		"Main.java":            "class Main { int x; }\n",
		"index.ts":             "let s: number = \"0\";\n",
		"main.rs":              "fn main() {}\n",
		"build.sh":             "gcc main.c\n",
		"tools/gen.py":         "print(1)\n",
		"tsconfig.build.json":  "{}\n",
		"args.rsp":             "-Wall\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	must(t, os.Chmod(filepath.Join(root, "verify"), 0o755))
	cases := []struct {
		build   string
		edit    fix.Edit
		refused string // a part of the reason; "" when the edit is allowed
	}{
		{"make", fix.Edit{File: "Makefile", OldText: "go build", NewText: "touch x; go build"}, "defines the build (make)"},
		{"go build ./...", fix.Edit{File: "Makefile", OldText: "go build", NewText: "touch x"}, "defines the build (make)"},
		{"make", fix.Edit{File: "ci.inc", OldText: "X = 1", NewText: "X = 2"}, "Makefile runs it"},
		{"make", fix.Edit{File: "tools/gen", OldText: "gen", NewText: "pwn"}, "Makefile runs it"},
		{"make", fix.Edit{File: "scripts/check.sh", OldText: "check", NewText: "pwn"}, "Makefile runs it"},
		{"make", fix.Edit{File: "main.go", OldText: "func main() {}", NewText: "func main() { }"}, ""},
		{"npm run build", fix.Edit{File: "package.json", OldText: "node", NewText: "sh"}, "npm scripts"},
		{"npm run build", fix.Edit{File: "tools/bundle.js", OldText: "1", NewText: "2"}, "package.json runs it"},
		{"npm run build", fix.Edit{File: "src/index.js", OldText: "2", NewText: "3"}, ""},
		{"npm run build", fix.Edit{File: "vite.config.ts", OldText: "{}", NewText: "{x}"}, "runs as code"},
		{"go build ./...", fix.Edit{File: "go.mod", OldText: "go 1.22", NewText: "go 1.22\ntoolchain go1.99"}, "toolchain"},
		{"go build ./...", fix.Edit{File: "go.mod", OldText: "require example.com/a v1.0.0", NewText: "require example.com/a v1.1.0"}, ""},
		{"tsc -p .", fix.Edit{File: "tsconfig.json", OldText: `"strict":true`, NewText: `"strict":true,"plugins":[{"name":"x"}]`}, "plugins"},
		{"tsc -p .", fix.Edit{File: "tsconfig.json", OldText: `"es2020"`, NewText: `"es2020","dom"`}, ""},
		{"cargo build", fix.Edit{File: "macros/src/lib.rs", OldText: "m()", NewText: "n()"}, "procedural macro crate macros/Cargo.toml"},
		{"cargo build", fix.Edit{File: "app/src/main.rs", OldText: "main()", NewText: "main( )"}, ""},
		{"cargo build", fix.Edit{File: "app/build.rs", OldText: "main()", NewText: "main( )"}, "cargo build scripts"},
		{"cargo build", fix.Edit{File: ".cargo/config.toml", OldText: "[build]", NewText: "[build]\nrustc-wrapper = \"x\""}, "cargo"},
		{"gradle build", fix.Edit{File: "lib/build.gradle.kts", OldText: "{}", NewText: "{ }"}, "gradle"},
		{"cmake --build b", fix.Edit{File: "cmake/deps.cmake", OldText: "1", NewText: "2"}, "cmake"},
		{"cmake --build b", fix.Edit{File: "pkg/CMakeLists.txt", OldText: "p", NewText: "q"}, "cmake"},
		{"./verify", fix.Edit{File: "verify", OldText: "exit 0", NewText: "exit 1"}, "the build command \"./verify\" runs or reads it as its build definition"},
		// Sources named on the command line are what a fix edits; the
		// scripts and definitions it names are not.
		{"gcc -fsyntax-only main.c", fix.Edit{File: "main.c", OldText: "return 1", NewText: "return 0"}, ""},
		{"gcc -c main.c -o main.o", fix.Edit{File: "main.c", OldText: "return 1", NewText: "return 0"}, ""},
		{"javac Main.java", fix.Edit{File: "Main.java", OldText: "int x", NewText: "long x"}, ""},
		{"tsc index.ts", fix.Edit{File: "index.ts", OldText: "\"0\"", NewText: "0"}, ""},
		{"rustc main.rs", fix.Edit{File: "main.rs", OldText: "main()", NewText: "main( )"}, ""},
		{"sh build.sh", fix.Edit{File: "build.sh", OldText: "gcc", NewText: "touch x; gcc"}, "runs it with sh"},
		{"python3 tools/gen.py && gcc main.c", fix.Edit{File: "tools/gen.py", OldText: "1", NewText: "2"}, "runs it with python3"},
		{"python3 tools/gen.py && gcc main.c", fix.Edit{File: "main.c", OldText: "return 1", NewText: "return 0"}, ""},
		{"make -f ci.inc", fix.Edit{File: "ci.inc", OldText: "X = 1", NewText: "X = 2"}, "(-f)"},
		{"tsc -p tsconfig.build.json", fix.Edit{File: "tsconfig.build.json", OldText: "{}", NewText: "{ }"}, "(-p)"},
		{"gcc @args.rsp main.c", fix.Edit{File: "args.rsp", OldText: "-Wall", NewText: "-fplugin=x.so"}, "reads its arguments from it"},
		{"go vet ./...", fix.Edit{File: "verify", OldText: "exit 0", NewText: "exit 1"}, "executable"},
		{"go vet ./...", fix.Edit{File: "docs/notes.md", OldText: "notes", NewText: "more"}, ""},
		{"", fix.Edit{File: "Makefile", OldText: "go build", NewText: "touch x"}, ""},
	}
	for _, c := range cases {
		got := fix.BuildDefinitionEdits(root, c.build, []fix.Edit{c.edit})
		switch {
		case c.refused == "" && len(got) != 0:
			t.Errorf("%s with %q: refused (%s), want allowed", c.edit.File, c.build, got[0].Reason)
		case c.refused != "" && len(got) != 1:
			t.Errorf("%s with %q: allowed, want refused (%s)", c.edit.File, c.build, c.refused)
		case c.refused != "" && !strings.Contains(got[0].Reason, c.refused):
			t.Errorf("%s with %q: reason %q, want %q", c.edit.File, c.build, got[0].Reason, c.refused)
		}
	}
}
