package errparse

import (
	"slices"
	"strings"
	"testing"
)

// Forms that the tools on this machine cannot produce (the macOS linker and
// lld are not here, older Rust releases print panics differently) or that
// need a setup the fixtures do not have. The samples follow the tools' documented formats;
// the real-output fixtures are in fixtures_test.go.
func TestForms(t *testing.T) {
	cases := []formCase{
		{
			name: "clang diagnostics with a note",
			input: `undeclared.c:13:20: error: use of undeclared identifier 'totl'; did you mean 'total'?
   13 |     printf("%d\n", totl);
      |                    ^~~~
      |                    total
undeclared.c:12:9: note: 'total' declared here
   12 |     int total = sum(3);
      |         ^
undeclared.c:4:9: warning: unused variable 'unused_count' [-Wunused-variable]
1 warning and 1 error generated.
`,
			count:  2,
			want:   want{"clang", "c", "undeclared.c", 13, 20, "error", "", "use of undeclared identifier 'totl'; did you mean 'total'?"},
			detail: "undeclared.c:12:9: note: 'total' declared here",
		},
		{
			name: "macOS ld undefined symbols",
			input: `Undefined symbols for architecture arm64:
  "_compute", referenced from:
      _main in link-8f1c2a.o
ld: symbol(s) not found for architecture arm64
clang: error: linker command failed with exit code 1 (use -v to see invocation)
`,
			count:  1,
			want:   want{"ld", "c", "", 0, 0, "error", "", "Undefined symbols for architecture arm64"},
			detail: "clang: error: linker command failed with exit code 1 (use -v to see invocation)",
		},
		{
			name: "lld undefined symbol",
			input: `ld.lld: error: undefined symbol: compute
>>> referenced by link.c
>>>               link.o:(main)
clang: error: linker command failed with exit code 1 (use -v to see invocation)
`,
			count:  1,
			want:   want{"ld", "c", "", 0, 0, "error", "", "undefined symbol: compute"},
			detail: ">>> referenced by link.c",
		},
		{
			name: "GNU ld with debug info and a library not found",
			input: `/usr/bin/ld: /tmp/ws/app.o: in function ` + "`main'" + `:
/tmp/ws/app.c:4: undefined reference to ` + "`compute'" + `
/usr/bin/ld: cannot find -lmissing: No such file or directory
collect2: error: ld returned 1 exit status
`,
			ws:     "/tmp/ws",
			count:  2,
			want:   want{"ld", "c", "app.c", 4, 0, "error", "", "undefined reference to `compute'"},
			detail: "in function main (/tmp/ws/app.o)",
		},
		{
			name:  "gcc driver error",
			input: "gcc: fatal error: no input files\ncompilation terminated.\n",
			count: 1,
			want:  want{"gcc", "c", "", 0, 0, "error", "", "no input files"},
		},
		{
			name: "go runtime fatal error",
			ws:   "/work/ws",
			input: `fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.wait(...)
	/work/ws/dead/main.go:5
main.main()
	/work/ws/dead/main.go:9 +0x25
exit status 2
`,
			count: 1,
			want:  want{"go panic", "go", "dead/main.go", 5, 0, "error", "fatal error", "all goroutines are asleep - deadlock!"},
		},
		{
			name: "go panic with a custom value and several goroutines",
			ws:   "/work/ws",
			input: `panic: boom: config missing

goroutine 7 [running]:
example.com/app/internal/cfg.Load({0x4b1c2a, 0x3})
	/work/ws/internal/cfg/cfg.go:41 +0x1a5
created by main.main in goroutine 1
	/work/ws/main.go:12 +0x65

goroutine 1 [chan receive]:
main.main()
	/work/ws/main.go:14 +0x7d
exit status 2
`,
			count: 1,
			want:  want{"go panic", "go", "internal/cfg/cfg.go", 41, 0, "error", "panic", "boom: config missing"},
		},
		{
			name: "go test verbose: passing logs are not failures, subtests and silent failures are",
			input: `=== RUN   TestA
    a_test.go:5: just a log
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/sub
    a_test.go:9: got 1, want 2
        extra context line
--- FAIL: TestB (0.00s)
    --- FAIL: TestB/sub (0.00s)
=== RUN   TestC
--- FAIL: TestC (0.00s)
FAIL
FAIL	example.com/a	0.003s
`,
			count:  2,
			want:   want{"go test", "go", "a_test.go", 9, 0, "error", "", "got 1, want 2"},
			detail: "extra context line",
		},
		{
			name:  "go command error",
			input: "go: downloading example.com/x v1.0.0\ngo: cannot find main module, but found .git/config in /work/ws\n\tto create a module there, run:\n\tgo mod init\n",
			count: 1,
			want:  want{"go", "go", "", 0, 0, "error", "", "cannot find main module, but found .git/config in /work/ws"},
		},
		{
			name: "go type error with have/want lines",
			input: `# example.com/a
./a.go:9:12: not enough arguments in call to add
	have (number)
	want (int, int)
`,
			count:  1,
			want:   want{"go", "go", "./a.go", 9, 12, "error", "", "not enough arguments in call to add"},
			detail: "want (int, int)",
		},
		{
			name: "java exception with a cause and JDK frames",
			input: `Exception in thread "main" java.lang.IllegalStateException: cannot start
	at java.base/java.util.Objects.requireNonNull(Objects.java:233)
	at com.acme.App.start(App.java:22)
	at com.acme.App.main(App.java:9)
Caused by: java.io.FileNotFoundException: app.properties (No such file or directory)
	at java.base/java.io.FileInputStream.open0(Native Method)
	at com.acme.Config.load(Config.java:14)
	... 2 more
`,
			// The chain policy: the root cause comes first and is primary.
			count:  2,
			want:   want{"java", "java", "Config.java", 14, 0, "error", "java.io.FileNotFoundException", "app.properties (No such file or directory)"},
			detail: "cause of: java.lang.IllegalStateException: cannot start",
		},
		{
			name: "javac lint warning",
			input: `Main.java:5: warning: [deprecation] stop() in Thread has been deprecated
        t.stop();
         ^
1 warning
`,
			count: 1,
			want:  want{"javac", "java", "Main.java", 5, 10, "warning", "deprecation", "stop() in Thread has been deprecated"},
		},
		{
			name: "node error with a code and a require stack",
			ws:   "/work/ws",
			input: `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module './missing'
Require stack:
- /work/ws/app.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at Module.require (node:internal/modules/cjs/loader:1311:19)
    at require (node:internal/modules/helpers:179:18)
    at Object.<anonymous> (/work/ws/app.js:1:1)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/work/ws/app.js' ]
}

Node.js v20.11.0
`,
			count:  1,
			want:   want{"node", "javascript", "app.js", 1, 1, "error", "Error", "Cannot find module './missing'"},
			detail: "code: 'MODULE_NOT_FOUND'",
		},
		{
			name:  "node error with a bracketed code; dependency frames are not the user's",
			ws:    "/work/ws",
			input: "TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string. Received undefined\n    at lib (/work/ws/node_modules/dep/index.js:3:9)\n    at run (/work/ws/src/run.js:8:3)\n",
			count: 1,
			want:  want{"node", "javascript", "src/run.js", 8, 3, "error", "ERR_INVALID_ARG_TYPE", `The "path" argument must be of type string. Received undefined`},
		},
		{
			name: "python traceback through site-packages",
			ws:   "/work/ws",
			input: `Traceback (most recent call last):
  File "/work/ws/app.py", line 3, in <module>
    requests.get(url)
  File "/usr/lib/python3/dist-packages/requests/api.py", line 73, in get
    return request("get", url, params=params, **kwargs)
requests.exceptions.MissingSchema: Invalid URL 'x': No scheme supplied.
`,
			count: 1,
			want:  want{"python", "python", "app.py", 3, 0, "error", "requests.exceptions.MissingSchema", "Invalid URL 'x': No scheme supplied."},
		},
		{
			// Rust before 1.73 quoted the message and put the place last.
			name: "rust panic before 1.73",
			input: `thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 7', src/main.rs:2:5
note: run with ` + "`RUST_BACKTRACE=1`" + ` environment variable to display a backtrace
`,
			count: 1,
			want:  want{"rust panic", "rust", "src/main.rs", 2, 5, "error", "panic", "index out of bounds: the len is 3 but the index is 7"},
		},
		{
			// Rust 1.73 to 1.88: the place first, the message on the next
			// line, no thread id.
			name: "rust panic 1.73 to 1.88",
			input: `thread 'main' panicked at src/main.rs:2:5:
index out of bounds: the len is 3 but the index is 7
note: run with ` + "`RUST_BACKTRACE=1`" + ` environment variable to display a backtrace
`,
			count: 1,
			want:  want{"rust panic", "rust", "src/main.rs", 2, 5, "error", "panic", "index out of bounds: the len is 3 but the index is 7"},
		},
		{
			name: "rust lint warning only",
			input: `warning: unused variable: ` + "`x`" + `
 --> src/main.rs:2:9
  |
2 |     let x = 5;
  |         ^ help: if this is intentional, prefix it with an underscore: ` + "`_x`" + `
  |
  = note: ` + "`#[warn(unused_variables)]`" + ` on by default

warning: 1 warning emitted
`,
			count: 1,
			want:  want{"rustc", "rust", "src/main.rs", 2, 9, "warning", "unused_variables", "unused variable: `x`"},
		},
		{
			name:  "tsc without a file",
			input: "error TS5023: Unknown compiler option 'strictest'.\n",
			count: 1,
			want:  want{"tsc", "typescript", "", 0, 0, "error", "TS5023", "Unknown compiler option 'strictest'."},
		},
		{
			name:  "ANSI colours and CRLF",
			input: "\x1b[1m./a.go:3:2: \x1b[31mundefined: x\x1b[0m\r\n",
			count: 1,
			want:  want{"go", "go", "./a.go", 3, 2, "error", "", "undefined: x"},
		},
		{
			name:  "windows paths inside the workspace",
			ws:    `C:\work\ws`,
			input: `C:\work\ws\src\a.ts(3,7): error TS2339: Property 'x' does not exist on type 'Y'.` + "\n",
			count: 1,
			want:  want{"tsc", "typescript", "src/a.ts", 3, 7, "error", "TS2339", "Property 'x' does not exist on type 'Y'."},
		},
		{
			name: "a warning after notes is primary",
			input: `lint.sh:2:1: note: read without -r will mangle backslashes. [SC2162]
lint.sh:4:1: warning: Use 'cd ... || exit' or 'cd ... || return' in case cd fails. [SC2164]
lint.sh:5:6: note: Double quote to prevent globbing and word splitting. [SC2086]
`,
			count: 3,
			want:  want{"shellcheck", "shell", "lint.sh", 4, 1, "warning", "SC2164", "Use 'cd ... || exit' or 'cd ... || return' in case cd fails."},
		},
		{
			name: "pytest: a fixture missing for a method, with the summary line",
			ws:   "/work/ws",
			input: `============================= test session starts ==============================
rootdir: /work/ws
collected 1 item

tests/test_api.py E                                                      [100%]

==================================== ERRORS ====================================
_______________________ ERROR at setup of TestApi.test_get _____________________
file /work/ws/tests/test_api.py, line 12
      def test_get(self, db_session):
E       fixture 'db_session' not found
>       available fixtures: cache, capfd, db, monkeypatch, tmp_path
>       use 'pytest --fixtures [testpath]' for help on them.

/work/ws/tests/test_api.py:12
=========================== short test summary info ============================
ERROR tests/test_api.py::TestApi::test_get
=============================== 1 error in 0.01s ===============================
`,
			count:  1,
			want:   want{"pytest", "python", "tests/test_api.py", 12, 0, "error", "", "fixture 'db_session' not found"},
			detail: "during: setup",
		},
		{
			name: "pytest --tb=native with a chained exception",
			ws:   "/work/ws",
			input: `============================= test session starts ==============================
rootdir: /work/ws
collected 1 item

test_cfg.py F                                                            [100%]

=================================== FAILURES ===================================
__________________________________ test_load ___________________________________
Traceback (most recent call last):
  File "/work/ws/cfg.py", line 4, in load
    return int(raw)
ValueError: invalid literal for int() with base 10: 'x'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/work/ws/test_cfg.py", line 5, in test_load
    load("x")
  File "/work/ws/cfg.py", line 6, in load
    raise ConfigError("bad port") from e
cfg.ConfigError: bad port
=========================== short test summary info ============================
FAILED test_cfg.py::test_load - cfg.ConfigError: bad port
============================== 1 failed in 0.01s ===============================
`,
			count:  2,
			want:   want{"pytest", "python", "cfg.py", 4, 0, "error", "ValueError", "invalid literal for int() with base 10: 'x'"},
			detail: "test: test_load",
		},
		{
			name:  "only warnings: the first one is primary",
			input: "a.c:1:5: warning: unused variable ‘x’ [-Wunused-variable]\na.c:2:5: warning: unused variable ‘y’ [-Wunused-variable]\n",
			count: 2,
			want:  want{"gcc", "c", "a.c", 1, 5, "warning", "-Wunused-variable", "unused variable ‘x’"},
		},
	}
	runForms(t, cases)
}

// formCase is one sample of a tool's output and the primary error it
// must give.
type formCase struct {
	name   string
	ws     string // the workspace; "" for none
	input  string
	count  int
	want   want // the primary error
	detail string
	frames []Frame // the primary error's, when set
}

// runForms parses each case's input and checks its errors' count and its
// primary error.
func runForms(t *testing.T, cases []formCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := Parse(c.input, Options{Workspace: c.ws})
			if len(errs) != c.count {
				for _, e := range errs {
					t.Logf("%+v %q", project(e), e.Details)
				}
				t.Fatalf("got %d errors, want %d", len(errs), c.count)
			}
			p := errs[Primary(errs)]
			expectErr(t, p, c.want)
			if c.detail != "" && !slices.Contains(p.Details, c.detail) {
				t.Errorf("details %q lack %q", p.Details, c.detail)
			}
			if c.frames != nil {
				expectFrames(t, p, c.frames)
			}
		})
	}
}

func TestPrimaryEmpty(t *testing.T) {
	if got := Primary(nil); got != -1 {
		t.Errorf("Primary(nil) = %d, want -1", got)
	}
	if errs := Parse("", Options{}); len(errs) != 0 {
		t.Errorf("Parse(\"\") = %+v", errs)
	}
	if errs := Parse("all good\nok  \texample.com/x\t0.01s\n", Options{}); len(errs) != 0 {
		t.Errorf("clean output gave %+v", errs)
	}
}

// Mixed output of several tools in one paste keeps each tool's errors.
func TestMixedTools(t *testing.T) {
	var b strings.Builder
	for _, f := range []string{"go-build", "tsc", "python-nameerror", "gcc-link", "node-esm", "eslint-stylish", "cargo"} {
		b.WriteString(loadFixture(t, f))
		b.WriteString("\n")
	}
	errs := Parse(b.String(), Options{Workspace: testWorkspace})
	count := map[string]int{}
	for _, e := range errs {
		count[e.Tool]++
	}
	wantCount := map[string]int{"go": 4, "tsc": 4, "python": 1, "ld": 1, "node": 1, "eslint": 6, "cargo": 2}
	for tool, n := range wantCount {
		if count[tool] != n {
			t.Errorf("%s: %d errors, want %d (all: %v)", tool, count[tool], n, count)
		}
	}
	if len(errs) != 19 {
		t.Errorf("got %d errors, want 19", len(errs))
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range fixtureCases {
		f.Add(loadFixture(f, c.fixture), testWorkspace)
	}
	f.Add("panic: x\n\ngoroutine 1 [running]:\nmain.main(\n\t:0\n", "")
	f.Add("Traceback (most recent call last):\n  File \"\", line 99999999999999999999, in x\n", "/")
	f.Add("{\n\"a\": {\"b\": [{\"posn\": \"::\"}]}\n}\n[{\"filePath\":1}]\n", `C:\`)
	f.Add("x.go:-1:-2: m\n`'‘“ 0x 1.5s", "")
	f.Fuzz(func(t *testing.T, out, ws string) {
		errs := Parse(out, Options{Workspace: ws})
		p := Primary(errs)
		if len(errs) == 0 && p != -1 || len(errs) > 0 && (p < 0 || p >= len(errs)) {
			t.Fatalf("Primary = %d for %d errors", p, len(errs))
		}
		for _, e := range errs {
			if e.Line < 0 || e.Column < 0 {
				t.Fatalf("negative position: %+v", e)
			}
			for _, fr := range e.Frames {
				if fr.Line < 0 || fr.Column < 0 {
					t.Fatalf("negative frame position: %+v", fr)
				}
			}
			if e.Severity != "error" && e.Severity != "warning" && e.Severity != "note" {
				t.Fatalf("severity %q", e.Severity)
			}
			if e.Tool == "" || len(e.Fingerprint) != 16 || strings.Contains(e.Message, "\n") {
				t.Fatalf("malformed error %+v", e)
			}
		}
	})
}
