package errparse

import (
	"testing"
)

// Forms of the fourth held-out batch's misses, trimmed from the real
// outputs (testdata/heldout/captured), and their neighbours: go.mod
// errors, linters that print no severity word, Python's warnings and
// doctest, shellcheck's JSON, the last-resort "path.ext:line:col: msg"
// form, and an error in a dependency printed before the user's.
func TestLintForms(t *testing.T) {
	cases := []formCase{
		{
			name:   "go.mod error, unindented (Go 1.26)",
			input:  "go: errors parsing go.mod:\ngo.mod:5: unknown directive: toolchian\n",
			count:  1,
			want:   want{"go", "go", "go.mod", 5, 0, "error", "", "unknown directive: toolchian"},
			detail: "go: errors parsing go.mod:",
		},
		{
			name:  "go.mod errors, tab-indented and absolute (before Go 1.26)",
			input: "go: errors parsing go.mod:\n\t/work/ws/go.mod:3: invalid go version '1.2x': must match format 1.23\n\t/work/ws/go.mod:5: unknown directive: toolchian\n",
			count: 2,
			want:  want{"go", "go", "go.mod", 3, 0, "error", "", "invalid go version '1.2x': must match format 1.23"},
		},
		{
			name:  "go.work error after go:",
			input: "go: /work/ws/go.work:4: unknown directive: usee\n",
			count: 1,
			want:  want{"go", "go", "go.work", 4, 0, "error", "", "unknown directive: usee"},
		},
		{
			name: "eslint -f unix",
			input: `/work/ws/src/utils/format.js:2:9: 'unused' is assigned a value but never used. [Error/no-unused-vars]
/work/ws/src/utils/format.js:3:7: Expected a conditional expression and instead saw an assignment. [Error/no-cond-assign]

2 problems
`,
			count: 2,
			want:  want{"eslint", "javascript", "src/utils/format.js", 2, 9, "error", "no-unused-vars", "'unused' is assigned a value but never used."},
		},
		{
			name: "eslint -f unix, a warning before an error",
			input: `/work/ws/src/a.ts:1:1: Unexpected console statement. [Warning/no-console]
/work/ws/src/a.ts:4:3: Parsing error: ';' expected. [Error]
`,
			count: 2,
			want:  want{"eslint", "typescript", "src/a.ts", 4, 3, "error", "", "Parsing error: ';' expected."},
		},
		{
			name: "eslint -f compact",
			input: `/work/ws/src/utils/format.js: line 2, col 9, Error - 'unused' is assigned a value but never used. (no-unused-vars)
/work/ws/src/utils/format.js: line 3, col 7, Error - Unexpected constant condition. (no-constant-condition)

2 problems
`,
			count: 2,
			want:  want{"eslint", "javascript", "src/utils/format.js", 2, 9, "error", "no-unused-vars", "'unused' is assigned a value but never used."},
		},
		{
			name: "eslint -f visualstudio",
			input: `/work/ws/src/utils/format.js(2,9): error no-unused-vars : 'unused' is assigned a value but never used.
/work/ws/src/utils/format.js(3,7): error no-cond-assign : Expected a conditional expression and instead saw an assignment.

2 problems
`,
			count: 2,
			want:  want{"eslint", "javascript", "src/utils/format.js", 2, 9, "error", "no-unused-vars", "'unused' is assigned a value but never used."},
		},
		{
			name:  "MSBuild's form from another tool",
			input: "Program.cs(12,5): error CS1002: ; expected\n",
			count: 1,
			want:  want{"lint", "", "Program.cs", 12, 5, "error", "CS1002", "; expected"},
		},
		{
			name:  "flake8: the undefined name, not the unused import before it",
			input: "pkg/util.py:1:1: F401 'os' imported but unused\npkg/util.py:5:12: F821 undefined name 'undefined_name'\n",
			count: 2,
			want:  want{"flake8", "python", "pkg/util.py", 5, 12, "error", "F821", "undefined name 'undefined_name'"},
		},
		{
			name:  "flake8: style only",
			input: "pkg/util.py:1:1: F401 'os' imported but unused\npkg/util.py:9:80: E501 line too long (88 > 79 characters)\n",
			count: 2,
			want:  want{"flake8", "python", "pkg/util.py", 1, 1, "warning", "F401", "'os' imported but unused"},
		},
		{
			name:   "Python warning",
			input:  "/work/ws/main.py:3: DeprecationWarning: now_stamp is deprecated, use stamp()\n  print(now_stamp())\n2026-11-25T12:24:50.516703\n",
			count:  1,
			want:   want{"python", "python", "main.py", 3, 0, "warning", "DeprecationWarning", "now_stamp is deprecated, use stamp()"},
			detail: "code: print(now_stamp())",
		},
		{
			name: "a Python warning before a traceback: the traceback is primary",
			input: `/work/ws/main.py:3: DeprecationWarning: now_stamp is deprecated, use stamp()
  print(now_stamp())
Traceback (most recent call last):
  File "/work/ws/main.py", line 4, in <module>
    int("x")
ValueError: invalid literal for int() with base 10: 'x'
`,
			count: 2,
			want:  want{"python", "python", "main.py", 4, 0, "error", "ValueError", "invalid literal for int() with base 10: 'x'"},
		},
		{
			name: "doctest: expected and got",
			input: `**********************************************************************
File "/work/ws/textutil/slug.py", line 6, in slug.slugify
Failed example:
    slugify("  Trim me ")
Expected:
    'trim-me'
Got:
    '--trim-me-'
**********************************************************************
1 items had failures:
   1 of   2 in slug.slugify
***Test Failed*** 1 failures.
`,
			count:  1,
			want:   want{"doctest", "python", "textutil/slug.py", 6, 0, "error", "", "expected 'trim-me', got '--trim-me-'"},
			detail: "example: slugify(\"  Trim me \")",
		},
		{
			name: "doctest: an exception raised",
			input: `**********************************************************************
File "/work/ws/calc.py", line 4, in calc.div
Failed example:
    div(1, 0)
Exception raised:
    Traceback (most recent call last):
      File "/usr/lib/python3.12/doctest.py", line 1368, in __run
        exec(compile(example.source, filename, "single",
      File "<doctest calc.div[0]>", line 1, in <module>
        div(1, 0)
      File "/work/ws/calc.py", line 7, in div
        return a / b
               ~~^~~
    ZeroDivisionError: division by zero
**********************************************************************
`,
			count:  1,
			want:   want{"doctest", "python", "calc.py", 4, 0, "error", "ZeroDivisionError", "division by zero"},
			detail: "test: calc.div",
		},
		{
			name:  "shellcheck -f json1, only an info",
			input: `{"comments":[{"file":"scripts/deploy.sh","line":3,"endLine":3,"column":8,"endColumn":39,"level":"info","code":1091,"message":"Not following: ./lib/common.sh was not specified as input (see shellcheck -x).","fix":null}]}` + "\n",
			count: 1,
			want:  want{"shellcheck", "shell", "scripts/deploy.sh", 3, 8, "note", "SC1091", "Not following: ./lib/common.sh was not specified as input (see shellcheck -x)."},
		},
		{
			name:  "shellcheck -f json, a warning after an info",
			input: `[{"file":"deploy.sh","line":3,"endLine":3,"column":8,"endColumn":39,"level":"info","code":1091,"message":"Not following: ./lib/common.sh","fix":null},{"file":"deploy.sh","line":5,"endLine":5,"column":1,"endColumn":9,"level":"warning","code":2164,"message":"Use 'cd ... || exit' in case cd fails.","fix":null}]` + "\n",
			count: 2,
			want:  want{"shellcheck", "shell", "deploy.sh", 5, 1, "warning", "SC2164", "Use 'cd ... || exit' in case cd fails."},
		},
		{
			name:  "tsc: an error in a package's .d.ts, then the user's",
			input: "node_modules/badtypes/index.d.ts(1,55): error TS2304: Cannot find name 'Result'.\nsrc/app.ts(5,9): error TS2322: Type 'string' is not assignable to type 'number'.\n",
			count: 2,
			want:  want{"tsc", "typescript", "src/app.ts", 5, 9, "error", "TS2322", "Type 'string' is not assignable to type 'number'."},
		},
		{
			name:  "flake8: an error in .venv, then the user's",
			input: "/work/ws/.venv/lib/python3.12/site-packages/pkg/api.py:3:1: F821 undefined name 'x'\n/work/ws/app/main.py:8:5: F821 undefined name 'y'\n",
			count: 2,
			want:  want{"flake8", "python", "app/main.py", 8, 5, "error", "F821", "undefined name 'y'"},
		},
		{
			name:  "go build: a vendored package's error, then the user's",
			input: "# example.com/app\nvendor/github.com/x/y/y.go:3:2: undefined: z\n./main.go:9:1: missing return\n",
			count: 2,
			want:  want{"go", "go", "./main.go", 9, 1, "error", "", "missing return"},
		},
		{
			name:  "only errors in dependencies: the first one",
			input: "vendor/github.com/x/y/y.go:3:2: undefined: z\nvendor/github.com/x/y/w.go:9:1: missing return\n",
			count: 2,
			want:  want{"go", "go", "vendor/github.com/x/y/y.go", 3, 2, "error", "", "undefined: z"},
		},
		{
			name:  "a dependency's error before the user's warning: the error",
			input: "node_modules/badtypes/index.d.ts(1,55): error TS2304: Cannot find name 'Result'.\nsrc/app.ts(5,9): warning TS6133: 'x' is declared but its value is never read.\n",
			count: 2,
			want:  want{"tsc", "typescript", "node_modules/badtypes/index.d.ts", 1, 55, "error", "TS2304", "Cannot find name 'Result'."},
		},
		{
			name:  "last resort: a linter's line with a severity in brackets",
			input: "config/app.yaml:3:1: [error] duplication of key \"port\" in mapping (key-duplicates)\n",
			count: 1,
			want:  want{"lint", "", "config/app.yaml", 3, 1, "error", "", "duplication of key \"port\" in mapping (key-duplicates)"},
		},
		{
			name:  "last resort: a severity word and a code",
			input: "src/Cfg.kt:3:34: error[K0425]: unresolved reference: defualtPort\n",
			count: 1,
			want:  want{"lint", "", "src/Cfg.kt", 3, 34, "error", "K0425", "unresolved reference: defualtPort"},
		},
		{
			name:  "last resort: no severity word",
			input: "/work/ws/lib/Shape.rb:12:7: C: Style/StringLiterals: Prefer single-quoted strings\n",
			count: 1,
			want:  want{"lint", "", "lib/Shape.rb", 12, 7, "error", "", "C: Style/StringLiterals: Prefer single-quoted strings"},
		},
		{
			name: "last resort never before a known tool's error",
			input: `lib/util.rb:2:1: W: Lint/UselessAssignment: Useless assignment to variable - x.
Traceback (most recent call last):
  File "/work/ws/main.py", line 4, in <module>
    int("x")
ValueError: invalid literal for int() with base 10: 'x'
`,
			count: 2,
			want:  want{"python", "python", "main.py", 4, 0, "error", "ValueError", "invalid literal for int() with base 10: 'x'"},
		},
	}
	for i := range cases {
		cases[i].ws = "/work/ws"
	}
	runForms(t, cases)
}

// The last-resort form takes no URL, host:port, time of day or number.
func TestGenericNotFiles(t *testing.T) {
	for _, in := range []string{
		"http://x:80:1: connection refused",
		"https://example.com/a.js:3:4: failed",
		"example.com:443:1: connection refused",
		"db.internal:5432:1: timeout",
		"12:30:45.123: tick",
		"2024-01-02T12:30:45.123Z:1:2: started",
		"10.0.0.1:8080:1: listening",
		"v1.2.3:4:5: released",
		"see a.py:3:4 for details",
		"  indented.py:3:4: not at the start",
		".env:3:1: no extension",
	} {
		if errs := Parse(in+"\n", Options{}); len(errs) != 0 {
			t.Errorf("%q gave %+v", in, errs)
		}
	}
}
