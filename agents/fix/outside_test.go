package fix

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/internal/tooltest"
	"github.com/kodustech/kodyls/agents/redact"
)

const secretMarker = "MARKER_SECRET_4242"

// compile runs a real compiler in dir and returns what it printed.
func compile(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	tooltest.Need(t, name)
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWithholdOutside: real compiler output about a file outside the
// directory the build ran in loses those diagnostics and their source
// lines, keeps the diagnostics about the workspace's own code, and says
// how much it withheld.
func TestWithholdOutside(t *testing.T) {
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	writeFiles(t, outside, map[string]string{
		"secret.txt": secretMarker + " is the password\nsecond line " + secretMarker + "\n",
		"lib.rs":     "fn x() -> i32 { " + secretMarker + " }\n",
	})
	cases := []struct {
		name  string
		files map[string]string
		tool  string
		args  []string
		keep  string
	}{
		{"gcc absolute", map[string]string{"main.c": "int main(void) { return undefined_inside; }\n#include \"" + filepath.Join(outside, "secret.txt") + "\"\n"},
			"gcc", []string{"-fsyntax-only", "main.c"}, "undefined_inside"},
		{"gcc relative", map[string]string{"main.c": "int main(void) { return undefined_inside; }\n#include \"../outside/secret.txt\"\n"},
			"gcc", []string{"-fsyntax-only", "main.c"}, "undefined_inside"},
		{"clang", map[string]string{"main.c": "int main(void) { return undefined_inside; }\n#include \"" + filepath.Join(outside, "secret.txt") + "\"\n"},
			"clang", []string{"-fsyntax-only", "main.c"}, "undefined_inside"},
		{"rustc", map[string]string{"main.rs": "include!(\"" + filepath.Join(outside, "lib.rs") + "\");\nfn main() { let _: String = undefined_inside; }\n"},
			"rustc", []string{"--edition", "2021", "--emit=metadata", "-o", os.DevNull, "main.rs"}, "undefined_inside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.RemoveAll(ws); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, ws, c.files)
			out := compile(t, ws, c.tool, c.args...)
			if !strings.Contains(out, secretMarker) || !strings.Contains(out, c.keep) {
				t.Fatalf("the fixture must print the outside file and the inside error:\n%s", out)
			}
			got, n := withholdOutside(out, ws, "", "")
			t.Logf("%s", got)
			if strings.Contains(got, secretMarker) {
				t.Errorf("the outside file's content is still there:\n%s", got)
			}
			if !strings.Contains(got, c.keep) {
				t.Errorf("the diagnostic about the workspace's code was dropped:\n%s\nfrom:\n%s", got, out)
			}
			if n == 0 || !strings.Contains(got, "line(s) of the build output about files outside the workspace were withheld") {
				t.Errorf("%d lines withheld, and the output does not say so:\n%s", n, got)
			}
		})
	}
	t.Run("nothing outside", func(t *testing.T) {
		out := "./main.go:6:9: cannot use 42 (untyped int constant) as string value in return statement\n"
		if got, n := withholdOutside(out, ws, "", ""); got != out || n != 0 {
			t.Errorf("output about the workspace changed (%d): %q", n, got)
		}
	})
}

// TestEditsThatReadOutsideFiles: an edit that makes the code read a file
// outside the workspace, or a file on the privacy list, by path is
// rejected with the reason; references the file already had, and
// references inside the workspace, are not.
func TestEditsThatReadOutsideFiles(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"main.c":       "#include \"/usr/include/stdio.h\"\nint main(void) { return 0; }\n",
		"src/util.c":   "int util(void) { return 0; }\n",
		"src/util.h":   "int util(void);\n",
		"src/main.rs":  "fn main() {}\n",
		"web/index.ts": "export const x = 1;\n",
		"main.go":      "package main\n\n// #include <stdio.h>\nimport \"C\"\n\nfunc main() {}\n",
	})
	ig, err := redact.NewIgnore([]string{"private/"})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(file, oldText, newText string) Edit { return Edit{File: file, OldText: oldText, NewText: newText} }
	cases := []struct {
		name  string
		edits []Edit
		why   string // "" when the edits are valid
	}{
		{"absolute include", []Edit{edit("src/util.c", "int util", "#include \"/tmp/x/outside/secret.txt\"\nint util")}, "makes the code read /tmp/x/outside/secret.txt, which is outside the workspace"},
		{"angle include", []Edit{edit("src/util.c", "int util", "#include </etc/passwd>\nint util")}, "/etc/passwd, which is outside the workspace"},
		{"climbing include", []Edit{edit("src/util.c", "int util", "#include \"../../x/secret.h\"\nint util")}, "../../x/secret.h, which leaves the workspace"},
		{"spliced include", []Edit{edit("src/util.c", "int util", "#include \\\n\"/etc/shadow\"\nint util")}, "/etc/shadow"},
		{"embed", []Edit{edit("src/util.c", "int util", "const char k[] = {\n#embed \"/home/me/.ssh/id_rsa\"\n};\nint util")}, "outside the workspace"},
		{"include of .env", []Edit{edit("src/util.c", "int util", "#include \"../.env\"\nint util")}, ".env, which is on the privacy ignore list"},
		{"include of an ignorePaths file", []Edit{edit("src/util.c", "int util", "#include \"../private/keys.h\"\nint util")}, "private/keys.h, which is on the privacy ignore list"},
		{"cgo include", []Edit{edit("main.go", "// #include <stdio.h>", "// #include \"/etc/passwd\"")}, "/etc/passwd"},
		{"include split over two edits", []Edit{edit("src/util.c", "int util", "#include \"/etc/pa\nint util"), edit("src/util.c", "pa\nint", "passwd\"\nint")}, "/etc/passwd"},
		{"include_str", []Edit{edit("src/main.rs", "fn main() {}", "const K: &str = include_str!(\"/home/me/.aws/credentials\");\nfn main() {}")}, "outside the workspace"},
		{"include_bytes raw string", []Edit{edit("src/main.rs", "fn main() {}", "const K: &[u8] = include_bytes!(r\"../../../k\");\nfn main() {}")}, "leaves the workspace"},
		{"include", []Edit{edit("src/main.rs", "fn main() {}", "include!(\"../../lib.rs\");\nfn main() {}")}, "leaves the workspace"},
		{"path attribute", []Edit{edit("src/main.rs", "fn main() {}", "#[path = \"/opt/x.rs\"]\nmod x;\nfn main() {}")}, "/opt/x.rs"},
		{"ts import", []Edit{edit("web/index.ts", "export const x = 1;", "import s from \"../../secret\";\nexport const x = s;")}, "leaves the workspace"},
		{"ts reference", []Edit{edit("web/index.ts", "export const x = 1;", "/// <reference path=\"/etc/x.d.ts\" />\nexport const x = 1;")}, "/etc/x.d.ts"},

		{"inside include", []Edit{edit("src/main.rs", "fn main() {}", "include!(\"gen.rs\");\nfn main() {}"), edit("src/util.c", "int util", "#include \"util.h\"\n#include \"../main.c\"\n#include <stdlib.h>\nint util")}, ""},
		{"existing reference kept", []Edit{edit("main.c", "return 0;", "return 1;")}, ""},
		{"existing reference moved", []Edit{edit("main.c", "#include \"/usr/include/stdio.h\"\n", "#include \"/usr/include/stdio.h\"\n#include \"src/util.h\"\n")}, ""},
		{"ts relative import inside", []Edit{edit("web/index.ts", "export const x = 1;", "import { y } from \"./y\";\nexport const x = y;")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(root, ig.Match, c.edits)
			switch {
			case c.why == "" && err != nil:
				t.Errorf("valid edits rejected: %v", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Errorf("err %v, want it to say %q", err, c.why)
			}
		})
	}
}

// TestScratchCopyLeavesOutIgnoredFiles: files tracked in git but on the
// privacy list (the default list, and ignorePaths) are not in the copy
// the verifying build reads.
func TestScratchCopyLeavesOutIgnoredFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".env":             "TOKEN=" + secretMarker + "\n",
		"private/keys.h":   "#define KEY \"" + secretMarker + "\"\n",
		"config/app.pem":   secretMarker + "\n",
		"main.c":           "int main(void) { return 0; }\n",
		"include/public.h": "int f(void);\n",
	})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ig, err := redact.NewIgnore([]string{"private/"})
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixer{Workspace: root, Ignore: ig.Match}
	run, err := f.verify(context.Background(), "find . -type f -not -path './.git/*' | sort; cat .env private/keys.h config/app.pem", "", 0, []Edit{{File: "main.c", OldText: "return 0", NewText: "return 1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(run.output, secretMarker) {
		t.Errorf("an ignore-listed file reached the build:\n%s", run.output)
	}
	for _, want := range []string{"./main.c", "./include/public.h"} {
		if !strings.Contains(run.output, want) {
			t.Errorf("%s is missing from the scratch copy:\n%s", want, run.output)
		}
	}
	for _, gone := range []string{"./.env", "./private/keys.h", "./config/app.pem"} {
		if strings.Contains(run.output, gone+"\n") {
			t.Errorf("%s was copied:\n%s", gone, run.output)
		}
	}
}
