package errparse

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// testWorkspace replaces the $WORKSPACE placeholder that generate.sh writes
// in place of the temporary directory the tools ran in.
const testWorkspace = "/work/ws"

// loadFixture reads testdata/outputs/<name>.txt with the placeholder
// substituted, as if the tools had run in testWorkspace.
func loadFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "outputs", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "$WORKSPACE", testWorkspace)
}

func parseFixture(t testing.TB, name string) []Error {
	t.Helper()
	return Parse(loadFixture(t, name), Options{Workspace: testWorkspace})
}

// want is the part of an Error a table case pins down.
type want struct {
	Tool, Language, File string
	Line, Column         int
	Severity, Code       string
	Message              string
}

func project(e Error) want {
	return want{e.Tool, e.Language, e.File, e.Line, e.Column, e.Severity, e.Code, e.Message}
}

type fixtureCase struct {
	fixture string
	count   int
	primary int  // expected index of the primary error
	want    want // the primary error
	// details must each be one of the primary's Details.
	details []string
	// check, when set, looks at the rest.
	check func(t *testing.T, errs []Error)
}

var fixtureCases = []fixtureCase{
	// --- Go ---
	{
		fixture: "go-build", count: 4,
		want: want{"go", "go", "./a.go", 6, 2, "error", "", "declared and not used: unused"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"go", "go", "./a.go", 7, 14, "error", "", `cannot use "hello" (untyped string constant) as int value in variable declaration`})
			expectErr(t, errs[2], want{"go", "go", "./a.go", 8, 14, "error", "", "undefined: foo"})
			expectErr(t, errs[3], want{"go", "go", "./b.go", 4, 9, "error", "", "undefined: bar"})
		},
	},
	{
		fixture: "go-build-json", count: 4,
		want:    want{"go", "go", "./a.go", 6, 2, "error", "", "declared and not used: unused"},
		details: []string{"package: example.com/build"},
	},
	{
		fixture: "go-vet", count: 2,
		want: want{"go vet", "go", "main.go", 7, 20, "error", "printf", "fmt.Printf format %d has arg name of wrong type string"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"go vet", "go", "main.go", 9, 2, "error", "printf", "fmt.Println call has possible Printf formatting directive %d"})
		},
	},
	{
		fixture: "go-vet-json", count: 2,
		// -json prints absolute paths: made relative to the workspace.
		want: want{"go vet", "go", "go/vet/main.go", 7, 20, "error", "printf", "fmt.Printf format %d has arg name of wrong type string"},
	},
	{
		fixture: "go-vet-typecheck", count: 1,
		want: want{"go vet", "go", "./a.go", 7, 14, "error", "", `cannot use "hello" (untyped string constant) as int value in variable declaration`},
	},
	{
		fixture: "go-build-vet", count: 6,
		want: want{"go", "go", "./a.go", 6, 2, "error", "", "declared and not used: unused"},
		check: func(t *testing.T, errs []Error) {
			// The two tools in one output keep their own identity.
			for i, tool := range []string{"go", "go", "go", "go", "go vet", "go vet"} {
				if errs[i].Tool != tool {
					t.Errorf("errs[%d].Tool = %q, want %q", i, errs[i].Tool, tool)
				}
			}
		},
	},
	{
		fixture: "go-panic-nilmap", count: 1,
		// The panic happens in the helper record, inlined into main: the
		// deepest frame is main.record at main.go:7, not main.main.
		want: want{"go panic", "go", "go/panic/main.go", 7, 0, "error", "panic", "assignment to entry in nil map"},
		check: func(t *testing.T, errs []Error) {
			expectFrames(t, errs[0], []Frame{
				{File: "go/panic/main.go", Line: 7, Func: "main.record", InWorkspace: true},
				{File: "go/panic/main.go", Line: 12, Func: "main.main", InWorkspace: true},
			})
		},
	},
	{
		fixture: "go-panic-nilptr", count: 1,
		want: want{"go panic", "go", "go/nilptr/main.go", 15, 0, "error", "panic", "runtime error: invalid memory address or nil pointer dereference"},
		check: func(t *testing.T, errs []Error) {
			if f := errs[0].Frames[0]; f.Func != "main.describe" {
				t.Errorf("innermost frame = %+v, want main.describe", f)
			}
			if d := errs[0].Details; len(d) != 1 || !strings.HasPrefix(d[0], "[signal SIGSEGV: segmentation violation") {
				t.Errorf("details = %q, want the signal line", d)
			}
		},
	},
	{
		fixture: "go-test", count: 3,
		want:    want{"go test", "go", "calc_test.go", 7, 0, "error", "", "Add(2, 3) = 6, want 5"},
		details: []string{"test: TestAdd"},
		check:   checkGoTest,
	},
	{
		fixture: "go-test-json", count: 3,
		want:    want{"go test", "go", "calc_test.go", 7, 0, "error", "", "Add(2, 3) = 6, want 5"},
		details: []string{"test: TestAdd", "package: example.com/gotest/calc"},
		check:   checkGoTest,
	},

	// --- TypeScript ---
	{
		fixture: "tsc", count: 4,
		want:  want{"tsc", "typescript", "src/count.ts", 1, 5, "error", "TS2322", "Type 'string' is not assignable to type 'number'."},
		check: checkTSC,
	},
	{
		fixture: "tsc-pretty", count: 4,
		want:  want{"tsc", "typescript", "src/count.ts", 1, 5, "error", "TS2322", "Type 'string' is not assignable to type 'number'."},
		check: checkTSC,
	},

	// --- ESLint ---
	{
		fixture: "eslint-stylish", count: 6,
		want:  want{"eslint", "javascript", "eslint/app.js", 1, 7, "error", "no-unused-vars", "'unusedThing' is assigned a value but never used"},
		check: checkESLint,
	},
	{
		fixture: "eslint-json", count: 6,
		want:  want{"eslint", "javascript", "eslint/app.js", 1, 7, "error", "no-unused-vars", "'unusedThing' is assigned a value but never used."},
		check: checkESLint,
	},

	// --- Rust ---
	{
		fixture: "rustc-moved", count: 2,
		want: want{"rustc", "rust", "moved.rs", 9, 26, "error", "E0382", "borrow of moved value: `v`"},
		details: []string{
			"note: consider changing this parameter type in function `consume` to borrow instead if owning the value isn't necessary",
			"help: consider cloning the value if the performance cost is acceptable",
		},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"rustc", "rust", "moved.rs", 7, 9, "warning", "unused_variables", "unused variable: `spare`"})
		},
	},
	{
		fixture: "rustc-mismatch", count: 1,
		want: want{"rustc", "rust", "mismatch.rs", 2, 22, "error", "E0308", "mismatched types"},
	},
	{
		fixture: "rustc-json", count: 2,
		want:    want{"rustc", "rust", "moved.rs", 9, 26, "error", "E0382", "borrow of moved value: `v`"},
		details: []string{"help: consider cloning the value if the performance cost is acceptable"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"rustc", "rust", "moved.rs", 7, 9, "warning", "unused_variables", "unused variable: `spare`"})
		},
	},
	{
		fixture: "cargo", count: 2,
		want:  want{"cargo", "rust", "mismatch/src/main.rs", 3, 22, "error", "E0308", "mismatched types"},
		check: checkCargo,
	},
	{
		fixture: "cargo-json", count: 2,
		want:  want{"cargo", "rust", "mismatch/src/main.rs", 3, 22, "error", "E0308", "mismatched types"},
		check: checkCargo,
	},

	// --- C / C++ / linker ---
	{
		fixture: "gcc-undeclared", count: 3,
		primary: 1, // the first error, after a warning
		want:    want{"gcc", "c", "undeclared.c", 13, 20, "error", "", "‘totl’ undeclared (first use in this function); did you mean ‘total’?"},
		details: []string{
			"In function ‘main’",
			"undeclared.c:13:20: note: each undeclared identifier is reported only once for each function it appears in",
		},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[0], want{"gcc", "c", "undeclared.c", 4, 9, "warning", "-Wunused-variable", "unused variable ‘unused_count’"})
			if !slices.Contains(errs[0].Details, "In function ‘sum’") {
				t.Errorf("warning details = %q, want the function context", errs[0].Details)
			}
		},
	},
	{
		fixture: "gcc-link", count: 1,
		want:    want{"ld", "c", "link.c", 0, 0, "error", "", "undefined reference to `compute'"},
		details: []string{"in function main (link.o)", "collect2: error: ld returned 1 exit status"},
	},
	{
		// Generated once clang was installed (apt-get install clang).
		fixture: "clang-undeclared", count: 2,
		primary: 1, // the error, after the warning
		want:    want{"clang", "c", "undeclared.c", 13, 20, "error", "", "use of undeclared identifier 'totl'; did you mean 'total'?"},
	},
	{
		fixture: "clang-link", count: 1,
		want: want{"ld", "c", "link.c", 0, 0, "error", "", "undefined reference to `compute'"},
	},
	{
		fixture: "gxx-overload", count: 1,
		// g++ got an absolute path: relative to the workspace.
		want:    want{"gcc", "cpp", "c/overload.cpp", 6, 11, "error", "", "invalid initialization of reference of type ‘const std::string&’ {aka ‘const std::__cxx11::basic_string<char>&’} from expression of type ‘int’"},
		details: []string{"In function ‘int main()’", "c/overload.cpp:3:31: note: in passing argument 1 of ‘void greet(const std::string&, int)’"},
	},

	// --- Python ---
	{
		fixture: "python-nameerror", count: 1,
		want: want{"python", "python", "python/nameerror.py", 2, 0, "error", "NameError", "name 'offset' is not defined"},
		check: func(t *testing.T, errs []Error) {
			// Innermost first, although Python prints it last.
			expectFrames(t, errs[0], []Frame{
				{File: "python/nameerror.py", Line: 2, Func: "total", InWorkspace: true},
				{File: "python/nameerror.py", Line: 6, Func: "report", InWorkspace: true},
				{File: "python/nameerror.py", Line: 9, Func: "<module>", InWorkspace: true},
			})
		},
	},
	{
		fixture: "python-nameerror-other", count: 1,
		want: want{"python", "python", "python/other_nameerror.py", 4, 0, "error", "NameError", "name 'undefined_setting' is not defined"},
	},
	{
		fixture: "python-syntaxerror", count: 1,
		want: want{"python", "python", "python/syntax.py", 1, 0, "error", "SyntaxError", "expected ':'"},
	},
	{
		fixture: "python-valueerror", count: 1,
		want: want{"python", "python", "python/valueerror.py", 5, 0, "error", "ValueError", "invalid literal for int() with base 10: 'http'"},
	},
	{
		fixture: "python-chained", count: 2,
		want: want{"python", "python", "python/chained.py", 2, 0, "error", "ValueError", "invalid literal for int() with base 10: 'http'"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"python", "python", "python/chained.py", 9, 0, "error", "RuntimeError", "bad port setting"})
		},
	},

	// --- Java ---
	{
		fixture: "javac", count: 2,
		want: want{"javac", "java", "Main.java", 3, 21, "error", "", "incompatible types: String cannot be converted to int"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"javac", "java", "Main.java", 4, 28, "error", "", "cannot find symbol"})
			if !slices.Equal(errs[1].Details, []string{"symbol: variable undefinedVar", "location: class Main"}) {
				t.Errorf("details = %q", errs[1].Details)
			}
		},
	},
	{
		fixture: "javac-raw", count: 2,
		want: want{"javac", "java", "Main.java", 3, 21, "error", "compiler.err.prob.found.req", "(compiler.misc.inconvertible.types: java.lang.String, int)"},
		check: func(t *testing.T, errs []Error) {
			if errs[1].Code != "compiler.err.cant.resolve.location" || errs[1].Column != 28 {
				t.Errorf("errs[1] = %+v", errs[1])
			}
		},
	},
	{
		fixture: "java-npe", count: 1,
		want:    want{"java", "java", "Main.java", 5, 0, "error", "java.lang.NullPointerException", `Cannot invoke "String.length()" because "Main.name" is null`},
		details: []string{"thread: main"},
		check: func(t *testing.T, errs []Error) {
			if n := len(errs[0].Frames); n != 2 || errs[0].Frames[0].Func != "Main.nameLength" {
				t.Errorf("frames = %+v", errs[0].Frames)
			}
		},
	},

	// --- Node.js ---
	{
		fixture: "node-notfunction", count: 1,
		// Thrown in lib.js, called from main.js: the innermost frame wins.
		want: want{"node", "javascript", "node/lib.js", 4, 17, "error", "TypeError", "config.load is not a function"},
		check: func(t *testing.T, errs []Error) {
			checkNodeFrames(t, errs[0], 3)
		},
	},
	{
		fixture: "node-typeerror", count: 1,
		want: want{"node", "javascript", "node/undefined.js", 2, 20, "error", "TypeError", "Cannot read properties of undefined (reading 'toUpperCase')"},
		check: func(t *testing.T, errs []Error) {
			if f := errs[0].Frames[1]; f.Func != "Array.map" || f.InWorkspace {
				t.Errorf("frame 1 = %+v, want Array.map outside the workspace", f)
			}
		},
	},
	{
		fixture: "node-enoent", count: 1,
		// Thrown inside node:fs: the primary location skips it.
		want:    want{"node", "javascript", "node/readfile.js", 4, 24, "error", "Error", "ENOENT: no such file or directory, open 'missing-settings.json'"},
		details: []string{"code: 'ENOENT'", "syscall: 'open'"},
		check: func(t *testing.T, errs []Error) {
			f := errs[0].Frames[0]
			if f.File != "node:fs" || f.InWorkspace {
				t.Errorf("innermost frame = %+v, want node:fs outside the workspace", f)
			}
		},
	},
	{
		fixture: "node-esm", count: 1,
		want: want{"node", "javascript", "node/esm.mjs", 4, 17, "error", "TypeError", "config.load is not a function"},
		check: func(t *testing.T, errs []Error) {
			// "at file:///…:7:1" has no function name.
			if f := errs[0].Frames[1]; f.Func != "" || f.File != "node/esm.mjs" || f.Line != 7 || !f.InWorkspace {
				t.Errorf("frame 1 = %+v", f)
			}
		},
	},

	// --- Rust panics (Rust 1.95: the thread id is printed) ---
	{
		fixture: "rust-panic", count: 1,
		want:    want{"rust panic", "rust", "src/main.rs", 2, 31, "error", "panic", "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }"},
		details: []string{"thread: main"},
	},
	{
		fixture: "rust-panic-backtrace", count: 1,
		want: want{"rust panic", "rust", "src/main.rs", 2, 31, "error", "panic", "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }"},
		check: func(t *testing.T, errs []Error) {
			f := errs[0].Frames
			if len(f) != 7 || f[0].InWorkspace || f[4] != (Frame{File: "src/main.rs", Line: 2, Column: 31, Func: "panicky::parse_port", InWorkspace: true}) {
				t.Errorf("frames = %+v", f)
			}
		},
	},
	{
		// Every failing cargo test is a panic; the division happens in the
		// library, not in the test that called it.
		fixture: "cargo-test", count: 2,
		want:    want{"rust panic", "rust", "src/lib.rs", 2, 5, "error", "panic", "attempt to divide by zero"},
		details: []string{"test: tests::average_of_none"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"rust panic", "rust", "src/lib.rs", 11, 9, "error", "panic", "assertion `left == right` failed"})
			if !slices.Equal(errs[1].Details, []string{"test: tests::average_of_two", "left: 1", "right: 2"}) {
				t.Errorf("details = %q", errs[1].Details)
			}
		},
	},

	// --- Go test reports ---
	{
		fixture: "go-test-race", count: 1,
		// The racing access in the user's code, not testing.go's line.
		want:    want{"go race", "go", "go/race/counter.go", 6, 0, "error", "data race", "Read at 0x00c0000182a8 by goroutine 9"},
		details: []string{"Previous write at 0x00c0000182a8 by goroutine 8", "test: TestCount"},
	},
	{
		fixture: "go-test-timeout", count: 1,
		// The goroutine running the test, not go test's alarm.
		want: want{"go panic", "go", "go/timeout/wait.go", 4, 0, "error", "panic", "test timed out after 2s"},
	},
	{
		fixture: "go-testify", count: 2,
		want:    want{"go test", "go", "go/testify/sum_test.go", 11, 0, "error", "", "Not equal: expected: 6 actual : 5"},
		details: []string{"test: TestSum", "Messages: sum of 1..3"},
		check: func(t *testing.T, errs []Error) {
			// A panic caught by assert.NotPanics: located where it happened.
			expectErr(t, errs[1], want{"go test", "go", "go/testify/sum.go", 5, 0, "error", "", "func (assert.PanicTestFunc)(0x5b0120) should not panic"})
			if !slices.Contains(errs[1].Details, "Panic value: runtime error: slice bounds out of range [1:0]") {
				t.Errorf("details = %q", errs[1].Details)
			}
		},
	},

	{
		// assert.Equal on a struct and on a string: testify prints a blank
		// line, then a Diff:, then Test: and Messages:.
		fixture: "go-testify-diff", count: 2,
		want:    want{"go test", "go", "go/testifydiff/user_test.go", 12, 0, "error", "", `Not equal: expected: user.User{Name:"ana", Email:"ana@example.com", Roles:[]string{"admin", "dev"}} actual : user.User{Name:"ana", Email:"ana@example.com", Roles:[]string{"admin,dev"}}`},
		details: []string{"test: TestParse", `Messages: parsing "ana"`, "Diff:", `- (string) (len=3) "dev"`, `+ (string) (len=9) "admin,dev"`},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"go test", "go", "go/testifydiff/user_test.go", 17, 0, "error", "", `Not equal: expected: "Hello, bo!\nYour roles: dev.\n" actual : "Hello, bo!\nYour roles: dev\n"`})
			if !slices.Contains(errs[1].Details, "-Your roles: dev.") || !slices.Contains(errs[1].Details, "+Your roles: dev") {
				t.Errorf("details = %q, want the diff", errs[1].Details)
			}
		},
	},

	// --- Python test runners and chains ---
	{
		fixture: "pytest-long", count: 2,
		want:    want{"pytest", "python", "python/pytest/test_calc.py", 5, 0, "error", "AssertionError", "assert 2.0 == 3"},
		details: []string{"test: test_mean", "+  where 2.0 = mean([1, 2, 3])"},
		check:   checkPytest,
	},
	{
		fixture: "pytest-short", count: 2,
		want:  want{"pytest", "python", "python/pytest/test_calc.py", 5, 0, "error", "AssertionError", "assert 2.0 == 3"},
		check: checkPytest,
	},
	{
		// Only the summary: the file is known, the line is not.
		fixture: "pytest-summary", count: 2,
		want: want{"pytest", "python", "test_calc.py", 0, 0, "error", "AssertionError", "assert 2.0 == 3"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"pytest", "python", "test_calc.py", 0, 0, "error", "ZeroDivisionError", "division by zero"})
		},
	},
	{
		// "raise ValueError(…) from e" in a fixture and a test, and "During
		// handling of …": every exception of a chain is an error, the root
		// cause first, at its own line (the KeyError at conf.py:8, not the
		// raise at conf.py:10).
		fixture: "pytest-chain-long", count: 4,
		want:    want{"pytest", "python", "python/pytestchain/app/conf.py", 8, 0, "error", "KeyError", "'port'"},
		details: []string{"test: test_fix", "during: setup", "cause of: ValueError: port missing"},
		check:   checkPytestChain,
	},
	{
		fixture: "pytest-chain-short", count: 4,
		want:    want{"pytest", "python", "python/pytestchain/app/conf.py", 8, 0, "error", "KeyError", "'port'"},
		details: []string{"test: test_fix", "during: setup"},
		check:   checkPytestChain,
	},
	{
		// --tb=line prints a setup error's "E" lines only: the summary's
		// "ERROR tests/test_conf.py::test_fix" gives the file. Each failure
		// of the FAILURES section is reported once, with the summary's test
		// name, although the summary names the test file and the line the
		// file where the exception was raised.
		fixture: "pytest-chain-line", count: 4,
		want:    want{"pytest", "python", "python/pytestchain/tests/test_conf.py", 0, 0, "error", "KeyError", "'port'"},
		details: []string{"test: test_fix", "during: setup"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"pytest", "python", "python/pytestchain/tests/test_conf.py", 0, 0, "error", "ValueError", "port missing"})
			expectErr(t, errs[2], want{"pytest", "python", "python/pytestchain/app/conf.py", 10, 0, "error", "ValueError", "port missing"})
			expectErr(t, errs[3], want{"pytest", "python", "python/pytestchain/app/conf.py", 18, 0, "error", "KeyError", "'default_timeout'"})
			if !slices.Contains(errs[2].Details, "test: test_load") || !slices.Contains(errs[3].Details, "test: test_timeout") {
				t.Errorf("details %q, %q lack the tests' names", errs[2].Details, errs[3].Details)
			}
		},
	},
	{
		// "During handling of the above exception": the original exception
		// is the root cause, located in the user's code, not in json.
		fixture: "python-during", count: 2,
		want: want{"python", "python", "python/during.py", 6, 0, "error", "json.decoder.JSONDecodeError", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"python", "python", "python/during.py", 8, 0, "error", "NameError", "name 'defaults' is not defined"})
		},
	},

	// --- Java chain ---
	{
		fixture: "java-caused-by", count: 2,
		want:    want{"java", "java", "Main.java", 3, 0, "error", "java.lang.NumberFormatException", `For input string: "http"`},
		details: []string{"cause of: java.lang.IllegalStateException: bad config"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"java", "java", "Main.java", 10, 0, "error", "java.lang.IllegalStateException", "bad config"})
		},
	},

	// --- Node.js ---
	{
		fixture: "node-cause", count: 2,
		want:    want{"node", "javascript", "node/cause/cause.js", 3, 30, "error", "RangeError", "not a port: http"},
		details: []string{"cause of: Error: bad config"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"node", "javascript", "node/cause/cause.js", 11, 11, "error", "Error", "bad config"})
		},
	},
	{
		// The module with the mistake, not the require() that loaded it.
		fixture: "node-require-syntax", count: 1,
		want: want{"node", "javascript", "node/syntax/settings.js", 4, 3, "error", "SyntaxError", "Unexpected identifier 'timeout'"},
	},
	{
		fixture: "node-throw", count: 1,
		want: want{"node", "javascript", "node/throw.js", 4, 31, "error", "RangeError", "42 is over the limit"},
	},
	{
		// The failures are printed twice (as they happen, then under
		// "failing tests:"): reported once.
		fixture: "node-test-spec", count: 2,
		want:    want{"node", "javascript", "node/nodetest/sum.test.js", 6, 10, "error", "ERR_ASSERTION", "Expected values to be strictly equal:"},
		details: []string{"-1 !== 3", "test: adds"},
		check:   checkNodeTest,
	},
	{
		fixture: "node-test-tap", count: 2,
		want:    want{"node", "javascript", "node/nodetest/sum.test.js", 6, 10, "error", "ERR_ASSERTION", "Expected values to be strictly equal:"},
		details: []string{"-1 !== 3", "test: adds"},
		check:   checkNodeTest,
	},
	{
		fixture: "jest", count: 2,
		want:    want{"jest", "javascript", "sum.test.js", 4, 21, "error", "", "expect(received).toBe(expected) // Object.is equality"},
		details: []string{"test: adds", "Expected: 3", "Received: -1"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"jest", "javascript", "sum.js", 6, 16, "error", "TypeError", "Cannot read properties of undefined (reading 'name')"})
		},
	},
	{
		fixture: "vitest", count: 2,
		want:    want{"vitest", "javascript", "sum.test.js", 5, 21, "error", "AssertionError", "expected -1 to be 3 // Object.is equality"},
		details: []string{"test: adds"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"vitest", "javascript", "sum.js", 6, 16, "error", "TypeError", "Cannot read properties of undefined (reading 'name')"})
		},
	},

	// --- C / C++ beyond the compiler line ---
	{
		// The error is in stl_algo.h; the user's line is "required from here".
		fixture: "gxx-template", count: 1,
		want:    want{"gcc", "cpp", "template.cpp", 6, 14, "error", "", "no match for ‘operator-’ (operand types are ‘std::_List_iterator<int>’ and ‘std::_List_iterator<int>’)"},
		details: []string{"reported in /usr/include/c++/12/bits/stl_algo.h:1938:50"},
	},
	{
		// clang reports two errors in stl_algo.h for the one sort() call:
		// both move to template.cpp:6:10 and are then the same error.
		fixture: "clang-template", count: 1,
		want:    want{"clang", "cpp", "template.cpp", 6, 10, "error", "", "invalid operands to binary expression ('std::_List_iterator<int>' and 'std::_List_iterator<int>')"},
		details: []string{"reported in /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_algo.h:1938:22"},
	},
	{
		// std::thread with a reference parameter: three errors in
		// std_thread.h; the last has no "required from here" of its own and
		// follows the one before to thread.cpp:12:32, where it repeats it.
		fixture: "gxx-thread", count: 2,
		want:    want{"gcc", "cpp", "thread.cpp", 12, 32, "error", "", "static assertion failed: std::thread arguments must be invocable after conversion to rvalues"},
		details: []string{"reported in /usr/include/c++/12/bits/std_thread.h:129:72"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"gcc", "cpp", "thread.cpp", 12, 32, "error", "", "no type named ‘type’ in ‘struct std::thread::_Invoker<std::tuple<void (*)(Job&), Job> >::__result<std::tuple<void (*)(Job&), Job> >’"})
		},
	},
	{
		// "In substitution of" explains a failed candidate: it stays with
		// that error, not the next one; the error g++ then reports in
		// stl_iterator_base_types.h is located at the user's call.
		fixture: "gxx-substitution", count: 4,
		want: want{"gcc", "cpp", "substitution.cpp", 18, 19, "error", "", "no matching function for call to ‘total(std::vector<Item>&)’"},
		check: func(t *testing.T, errs []Error) {
			if d := errs[1].Details; !slices.Contains(d, "substitution.cpp:18:19:   required from here") {
				t.Errorf("errs[1] details = %q, want the substitution's backtrace", d)
			}
			for _, d := range errs[2].Details {
				if strings.HasPrefix(d, "In substitution of") || strings.Contains(d, "required from here") {
					t.Errorf("errs[2] details leak another error's context: %q", d)
				}
			}
			expectErr(t, errs[3], want{"gcc", "cpp", "substitution.cpp", 19, 40, "error", "", "no type named ‘iterator_category’ in ‘struct std::iterator_traits<int>’"})
		},
	},
	{
		// make -C lib: util.c is lib/util.c.
		fixture: "make-recursive", count: 1,
		want: want{"gcc", "c", "c/make/lib/util.c", 2, 16, "error", "", "‘factor’ undeclared (first use in this function)"},
	},
	{
		fixture: "gcc-asan", count: 1,
		want:    want{"asan", "c", "c/asan/asan.c", 6, 0, "error", "heap-buffer-overflow", "heap-buffer-overflow on address 0x602000000020"},
		details: []string{"READ of size 4 at 0x602000000020 thread T0"},
		check: func(t *testing.T, errs []Error) {
			if f := errs[0].Frames; len(f) != 4 || f[1].Func != "main" || !f[1].InWorkspace || f[2].InWorkspace || f[3].InWorkspace {
				t.Errorf("frames = %+v", f)
			}
		},
	},
	{
		// Built with relative paths: the overflow happens in the sanitizer's
		// memcpy interceptor (libsanitizer/…), called from the user's line.
		fixture: "gcc-asan-memcpy", count: 1,
		want:    want{"asan", "c", "src/memcp.c", 4, 0, "error", "stack-buffer-overflow", "stack-buffer-overflow on address 0x7ffd384bbaf8"},
		details: []string{"WRITE of size 24 at 0x7ffd384bbaf8 thread T0"},
		check: func(t *testing.T, errs []Error) {
			if f := errs[0].Frames; len(f) != 5 || f[0].InWorkspace || f[0].Func != "__interceptor_memcpy" || !f[1].InWorkspace || f[3].InWorkspace {
				t.Errorf("frames = %+v", f)
			}
		},
	},
	{
		// strcpy is intercepted as memcpy; gcc's own warning comes first
		// and the sanitizer's error is primary.
		fixture: "gcc-asan-strcpy", count: 2,
		primary: 1,
		want:    want{"asan", "c", "src/strcp.c", 6, 0, "error", "heap-buffer-overflow", "heap-buffer-overflow on address 0x602000000016"},
	},
	{
		// The leak's first frame is the malloc interceptor.
		fixture: "gcc-lsan-leak", count: 1,
		want:    want{"lsan", "c", "src/leak.c", 5, 0, "error", "memory-leak", "detected memory leaks"},
		details: []string{"Direct leak of 7 byte(s) in 1 object(s) allocated from:"},
	},
	{
		fixture: "cmake", count: 2,
		want: want{"cmake", "cmake", "CMakeLists.txt", 4, 0, "error", "add_executable", "Cannot find source file: missing.c"},
	},

	// --- Shell ---
	{
		fixture: "bash-error", count: 1,
		want: want{"bash", "shell", "deploy.sh", 4, 0, "error", "", "deploy_to: command not found"},
	},
	{
		// bash echoes the offending line after a syntax error: one error.
		fixture: "bash-syntax-echo", count: 1,
		want:    want{"bash", "shell", "scripts/syn.sh", 4, 0, "error", "", "syntax error near unexpected token `fi'"},
		details: []string{"line: fi fi"},
	},
	{
		// bash -c names itself ($0): no file, the line is the command's.
		fixture: "bash-c", count: 2,
		want:    want{"bash", "shell", "", 0, 0, "error", "", "deplyo: command not found"},
		details: []string{"line 3 of the command string"},
		check: func(t *testing.T, errs []Error) {
			expectErr(t, errs[1], want{"bash", "shell", "", 0, 0, "error", "", "syntax error near unexpected token `fi'"})
		},
	},
	{
		fixture: "shellcheck-gcc", count: 1,
		want: want{"shellcheck", "shell", "deploy.sh", 5, 12, "note", "SC2086", "Double quote to prevent globbing and word splitting."},
	},
	{
		fixture: "shellcheck-tty", count: 1,
		want: want{"shellcheck", "shell", "deploy.sh", 5, 12, "note", "SC2086", "Double quote to prevent globbing and word splitting."},
	},
}

func checkPytest(t *testing.T, errs []Error) {
	// The ZeroDivisionError happens in calc.py, called from the test.
	expectErr(t, errs[1], want{"pytest", "python", "python/pytest/calc.py", 2, 0, "error", "ZeroDivisionError", "division by zero"})
	if f := errs[1].Frames; len(f) != 2 || f[1].File != "python/pytest/test_calc.py" || f[1].Line != 9 {
		t.Errorf("frames = %+v", f)
	}
}

func checkPytestChain(t *testing.T, errs []Error) {
	expectErr(t, errs[1], want{"pytest", "python", "python/pytestchain/app/conf.py", 10, 0, "error", "ValueError", "port missing"})
	if !slices.Contains(errs[1].Details, "caused by: KeyError: 'port'") {
		t.Errorf("details = %q", errs[1].Details)
	}
	expectErr(t, errs[2], want{"pytest", "python", "python/pytestchain/app/conf.py", 16, 0, "error", "ValueError", "invalid literal for int() with base 10: 'soon'"})
	expectErr(t, errs[3], want{"pytest", "python", "python/pytestchain/app/conf.py", 18, 0, "error", "KeyError", "'default_timeout'"})
	if !slices.Contains(errs[3].Details, "test: test_timeout") {
		t.Errorf("details = %q", errs[3].Details)
	}
}

func checkNodeTest(t *testing.T, errs []Error) {
	expectErr(t, errs[1], want{"node", "javascript", "node/nodetest/sum.js", 6, 16, "error", "TypeError", "Cannot read properties of undefined (reading 'name')"})
}

func checkGoTest(t *testing.T, errs []Error) {
	expectErr(t, errs[1], want{"go test", "go", "calc_test.go", 13, 0, "error", "", "Add(7, 0) = 0, want 7"})
	// The panic inside TestInc: located in store.go (the deepest frame in
	// the workspace), not in testing.go or runtime/panic.go.
	p := errs[2]
	expectErr(t, p, want{"go panic", "go", "go/gotest/store/store.go", 8, 0, "error", "panic", "assignment to entry in nil map"})
	if !slices.Contains(p.Details, "test: TestInc") {
		t.Errorf("panic details = %q, want the test name", p.Details)
	}
	if p.Frames[0].InWorkspace || !strings.HasPrefix(p.Frames[0].Func, "testing.") {
		t.Errorf("innermost frame = %+v, want a testing frame outside the workspace", p.Frames[0])
	}
	i := slices.IndexFunc(p.Frames, func(f Frame) bool { return f.InWorkspace })
	if i < 0 || p.Frames[i].Func != "example.com/gotest/store.(*Store).Inc" {
		t.Errorf("deepest workspace frame %d of %+v, want (*Store).Inc", i, p.Frames)
	}
}

func checkTSC(t *testing.T, errs []Error) {
	expectErr(t, errs[1], want{"tsc", "typescript", "src/handler.ts", 3, 14, "error", "TS2322", "Type '(event: number) => void' is not assignable to type 'Handler'."})
	if !slices.Equal(errs[1].Details, []string{"Types of parameters 'event' and 'event' are incompatible.", "Type 'string' is not assignable to type 'number'."}) {
		t.Errorf("message chain = %q", errs[1].Details)
	}
	expectErr(t, errs[3], want{"tsc", "typescript", "src/user.ts", 6, 15, "error", "TS2339", "Property 'email' does not exist on type 'User'."})
}

func checkESLint(t *testing.T, errs []Error) {
	if e := errs[1]; e.Severity != "warning" || e.Code != "eqeqeq" {
		t.Errorf("errs[1] = %+v, want the eqeqeq warning", e)
	}
	// A parsing error has no rule.
	if e := errs[3]; e.File != "eslint/broken.js" || e.Code != "" || !strings.HasPrefix(e.Message, "Parsing error: ") {
		t.Errorf("errs[3] = %+v, want the parsing error without a rule", e)
	}
	if e := errs[5]; e.Code != "no-undef" || e.File != "eslint/util.js" || e.Line != 3 || e.Column != 10 {
		t.Errorf("errs[5] = %+v", e)
	}
}

func checkCargo(t *testing.T, errs []Error) {
	expectErr(t, errs[1], want{"cargo", "rust", "moved/src/main.rs", 12, 29, "error", "E0382", "borrow of moved value: `acct`"})
	if !slices.Contains(errs[1].Details, "note: if `Account` implemented `Clone`, you could clone the value") {
		t.Errorf("details = %q", errs[1].Details)
	}
}

// checkNodeFrames: the first n frames are the user's, the rest node:internal.
func checkNodeFrames(t *testing.T, e Error, n int) {
	t.Helper()
	for i, f := range e.Frames {
		internal := strings.HasPrefix(f.File, "node:")
		if f.InWorkspace != (i < n) || internal == (i < n) {
			t.Errorf("frame %d = %+v (want in workspace: %v)", i, f, i < n)
		}
	}
}

func expectErr(t *testing.T, e Error, w want) {
	t.Helper()
	if got := project(e); got != w {
		t.Errorf("error mismatch\n got %+v\nwant %+v", got, w)
	}
}

func expectFrames(t *testing.T, e Error, w []Frame) {
	t.Helper()
	if !slices.Equal(e.Frames, w) {
		t.Errorf("frames\n got %+v\nwant %+v", e.Frames, w)
	}
}

func TestFixtures(t *testing.T) {
	for _, c := range fixtureCases {
		t.Run(c.fixture, func(t *testing.T) {
			errs := parseFixture(t, c.fixture)
			if len(errs) != c.count {
				for _, e := range errs {
					t.Logf("%+v", project(e))
				}
				t.Fatalf("got %d errors, want %d", len(errs), c.count)
			}
			p := Primary(errs)
			if p != c.primary {
				t.Fatalf("Primary = %d, want %d", p, c.primary)
			}
			expectErr(t, errs[p], c.want)
			for _, d := range c.details {
				if !slices.Contains(errs[p].Details, d) {
					t.Errorf("details %q lack %q", errs[p].Details, d)
				}
			}
			for i, e := range errs {
				if e.Fingerprint == "" || e.Fingerprint != Fingerprint(e) {
					t.Errorf("errs[%d].Fingerprint = %q, want %q", i, e.Fingerprint, Fingerprint(e))
				}
				if e.Line < 0 || e.Column < 0 || strings.Contains(e.Message, "\n") {
					t.Errorf("errs[%d] malformed: %+v", i, e)
				}
			}
			if c.check != nil {
				c.check(t, errs)
			}
		})
	}
}

// TestFixturesCovered keeps the fixtures honest: the generator exists, every
// captured output has a table case (so a new fixture cannot be forgotten)
// and every case has its output.
func TestFixturesCovered(t *testing.T) {
	if fi, err := os.Stat(filepath.Join("testdata", "generate.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("testdata/generate.sh missing or not executable: %v", err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "outputs", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/outputs: %v", err)
	}
	have := map[string]bool{}
	for _, c := range fixtureCases {
		if have[c.fixture] {
			t.Errorf("fixture %s has two cases", c.fixture)
		}
		have[c.fixture] = true
	}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		names = append(names, name)
		if !have[name] {
			t.Errorf("outputs/%s.txt has no table case", name)
		}
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "/tmp/errparse.") {
			t.Errorf("outputs/%s.txt still holds the temporary path", name)
		}
	}
	sort.Strings(names)
	for name := range have {
		if _, found := slices.BinarySearch(names, name); !found {
			t.Errorf("case %s has no outputs/%s.txt", name, name)
		}
	}
	// The generator must mention every fixture it is supposed to produce.
	script, _ := os.ReadFile(filepath.Join("testdata", "generate.sh"))
	for _, name := range names {
		if !strings.Contains(string(script), "capture "+name+" ") {
			t.Errorf("generate.sh does not produce %s", name)
		}
	}
}

// Without a workspace, paths stay as printed and frames are judged by the
// library heuristics alone.
func TestNoWorkspace(t *testing.T) {
	errs := Parse(loadFixture(t, "go-test"), Options{})
	p := errs[2]
	if p.File != testWorkspace+"/go/gotest/store/store.go" || p.Line != 8 {
		t.Errorf("panic location = %s:%d", p.File, p.Line)
	}
	errs = Parse(loadFixture(t, "node-enoent"), Options{})
	if errs[0].File != testWorkspace+"/node/readfile.js" {
		t.Errorf("node location = %s", errs[0].File)
	}
}

// A workspace that does not contain the code: no frame is in it, and the
// location falls back to what the tool printed or the innermost frame that
// is not library code.
func TestOtherWorkspace(t *testing.T) {
	errs := Parse(loadFixture(t, "python-nameerror"), Options{Workspace: "/elsewhere"})
	if e := errs[0]; e.File != testWorkspace+"/python/nameerror.py" || e.Line != 2 || e.Frames[0].InWorkspace {
		t.Errorf("got %+v", e)
	}
	errs = Parse(loadFixture(t, "node-enoent"), Options{Workspace: "/elsewhere"})
	if e := errs[0]; e.File != testWorkspace+"/node/readfile.js" || e.Line != 4 || e.Frames[1].InWorkspace {
		t.Errorf("got %s:%d, want readfile.js:4, the first frame that is not node's", e.File, e.Line)
	}
	errs = Parse(loadFixture(t, "go-test"), Options{Workspace: "/elsewhere"})
	if e := errs[2]; e.File != testWorkspace+"/go/gotest/store/store.go" || e.Line != 8 {
		t.Errorf("got %s:%d, want store.go:8, the first frame that is not testing or runtime", e.File, e.Line)
	}
}
