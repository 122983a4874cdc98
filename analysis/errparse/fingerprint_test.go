package errparse

import (
	"regexp"
	"testing"
)

// ref names one error of a fixture.
type ref struct {
	fixture string
	index   int
}

func (r ref) get(t *testing.T) Error {
	t.Helper()
	errs := parseFixture(t, r.fixture)
	if r.index >= len(errs) {
		t.Fatalf("%s has %d errors, no [%d]", r.fixture, len(errs), r.index)
	}
	return errs[r.index]
}

// The same mistake with other names, in another file, on another line,
// reported by another output mode of the same tool: one fingerprint.
func TestFingerprintSameMistake(t *testing.T) {
	pairs := []struct {
		name string
		a, b ref
	}{
		{"go undefined foo (a.go) vs bar (b.go)", ref{"go-build", 2}, ref{"go-build", 3}},
		{"go build text vs -json", ref{"go-build", 0}, ref{"go-build-json", 0}},
		{"go vet text vs -json", ref{"go-vet", 0}, ref{"go-vet-json", 0}},
		{"go test failures with other numbers", ref{"go-test", 0}, ref{"go-test", 1}},
		{"go nil map panic in a program vs in a test", ref{"go-panic-nilmap", 0}, ref{"go-test", 2}},
		{"TS2339 'y' on point.ts vs 'email' on user.ts", ref{"tsc", 2}, ref{"tsc", 3}},
		{"TS2322 with other types", ref{"tsc", 0}, ref{"tsc", 1}},
		{"tsc plain vs --pretty", ref{"tsc", 3}, ref{"tsc-pretty", 3}},
		{"eslint no-unused-vars on two names", ref{"eslint-stylish", 0}, ref{"eslint-stylish", 4}},
		{"eslint stylish vs json (trailing period)", ref{"eslint-stylish", 2}, ref{"eslint-json", 2}},
		{"E0382 `v` (rustc) vs `acct` (cargo)", ref{"rustc-moved", 0}, ref{"cargo", 1}},
		{"E0382 human vs json", ref{"rustc-moved", 0}, ref{"rustc-json", 0}},
		{"E0308 rustc vs cargo json", ref{"rustc-mismatch", 0}, ref{"cargo-json", 0}},
		{"gcc unused variable on two names", ref{"gcc-undeclared", 0}, ref{"gcc-undeclared", 2}},
		{"python NameError offset vs undefined_setting", ref{"python-nameerror", 0}, ref{"python-nameerror-other", 0}},
		{"python ValueError alone vs chained", ref{"python-valueerror", 0}, ref{"python-chained", 0}},
		{"node not a function, CommonJS vs ESM", ref{"node-notfunction", 0}, ref{"node-esm", 0}},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			a, b := p.a.get(t), p.b.get(t)
			if a.Fingerprint != b.Fingerprint {
				t.Errorf("fingerprints differ:\n %s %q → %q\n %s %q → %q", a.Fingerprint, a.Message, Template(a), b.Fingerprint, b.Message, Template(b))
			}
		})
	}
}

// Different kinds of error never share a fingerprint.
func TestFingerprintDifferentMistake(t *testing.T) {
	pairs := []struct {
		name string
		a, b ref
	}{
		{"go undefined vs declared and not used", ref{"go-build", 2}, ref{"go-build", 0}},
		{"go undefined vs cannot use", ref{"go-build", 2}, ref{"go-build", 1}},
		{"go vet printf wrong type vs formatting directive", ref{"go-vet", 0}, ref{"go-vet", 1}},
		{"go compiler vs vet reporting the same type error", ref{"go-build", 1}, ref{"go-vet-typecheck", 0}},
		{"go nil map panic vs nil pointer panic", ref{"go-panic-nilmap", 0}, ref{"go-panic-nilptr", 0}},
		{"TS2339 vs TS2322", ref{"tsc", 3}, ref{"tsc", 0}},
		{"E0382 vs E0308", ref{"rustc-moved", 0}, ref{"rustc-mismatch", 0}},
		{"eslint no-unused-vars vs no-undef", ref{"eslint-json", 0}, ref{"eslint-json", 2}},
		{"javac incompatible types vs cannot find symbol", ref{"javac", 0}, ref{"javac", 1}},
		{"python NameError vs ValueError", ref{"python-nameerror", 0}, ref{"python-valueerror", 0}},
		{"gcc undeclared vs unused variable", ref{"gcc-undeclared", 1}, ref{"gcc-undeclared", 0}},
		{"node not a function vs cannot read properties", ref{"node-notfunction", 0}, ref{"node-typeerror", 0}},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			a, b := p.a.get(t), p.b.get(t)
			if a.Fingerprint == b.Fingerprint {
				t.Errorf("same fingerprint %s for %q (%q) and %q (%q)", a.Fingerprint, a.Message, Template(a), b.Message, Template(b))
			}
		})
	}
}

// Hand-made variants of real messages: other identifiers, files, lines.
func TestFingerprintVariants(t *testing.T) {
	same := [][2]Error{
		{
			{Tool: "go", Code: "", Message: "undefined: foo", File: "a.go", Line: 3},
			{Tool: "go", Code: "", Message: "undefined: barBaz", File: "pkg/b.go", Line: 90},
		},
		{
			{Tool: "tsc", Code: "TS2339", Message: "Property 'email' does not exist on type 'User'."},
			{Tool: "tsc", Code: "TS2339", Message: "Property 'id' does not exist on type 'Promise<Order[]>'."},
		},
		{
			{Tool: "python", Code: "NameError", Message: "name 'x' is not defined"},
			{Tool: "python", Code: "NameError", Message: "name 'total_count' is not defined. Did you mean: 'total'?"},
		},
		{
			{Tool: "node", Code: "TypeError", Message: "config.load is not a function"},
			{Tool: "node", Code: "TypeError", Message: "fetchUser is not a function"},
		},
		{
			{Tool: "go vet", Code: "printf", Message: "fmt.Printf format %d has arg name of wrong type string"},
			{Tool: "go vet", Code: "printf", Message: "log.Printf format %s has arg n of wrong type int"},
		},
		{
			{Tool: "go", Message: "x.foo undefined (type T has no field or method foo)"},
			{Tool: "go", Message: "s.cfg.Name undefined (type *Server has no field or method Name, but does have field name)"},
		},
		{
			{Tool: "javac", Message: "incompatible types: String cannot be converted to int"},
			{Tool: "javac", Message: "incompatible types: List<Integer> cannot be converted to Set<String>"},
		},
		{
			{Tool: "go panic", Code: "panic", Message: "runtime error: index out of range [5] with length 3"},
			{Tool: "go panic", Code: "panic", Message: "runtime error: index out of range [12] with length 0"},
		},
		{
			{Tool: "python", Code: "FileNotFoundError", Message: "[Errno 2] No such file or directory: '/home/a/x.json'"},
			{Tool: "python", Code: "FileNotFoundError", Message: "[Errno 2] No such file or directory: 'config/settings.yaml'"},
		},
		{
			{Tool: "go test", Message: "request 3f2b1c9e-8a7d-4c1e-9b2a-0c4d5e6f7a8b timed out after 1.5s at 0xc000012345"},
			{Tool: "go test", Message: "request 00000000-0000-0000-0000-000000000001 timed out after 300ms at 0x4a"},
		},
		{
			{Tool: "gcc", Message: "‘totl’ undeclared (first use in this function); did you mean ‘total’?"},
			{Tool: "gcc", Message: "‘count’ undeclared (first use in this function)"},
		},
	}
	for _, p := range same {
		if Fingerprint(p[0]) != Fingerprint(p[1]) {
			t.Errorf("want one fingerprint:\n %q → %q\n %q → %q", p[0].Message, Template(p[0]), p[1].Message, Template(p[1]))
		}
	}
	differ := [][2]Error{
		// Same message, other tool or code.
		{{Tool: "tsc", Code: "TS2339", Message: "x"}, {Tool: "tsc", Code: "TS2551", Message: "x"}},
		{{Tool: "gcc", Message: "x"}, {Tool: "clang", Message: "x"}},
		{{Tool: "go", Message: "undefined: x"}, {Tool: "go", Message: "declared and not used: x"}},
		{{Tool: "node", Code: "TypeError", Message: "x is not a function"}, {Tool: "node", Code: "TypeError", Message: "x is not iterable"}},
	}
	for _, p := range differ {
		if Fingerprint(p[0]) == Fingerprint(p[1]) {
			t.Errorf("want different fingerprints for %+v and %+v", p[0], p[1])
		}
	}
}

func TestFingerprintShape(t *testing.T) {
	e := Error{Tool: "go", Message: "undefined: foo"}
	fp := Fingerprint(e)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(fp) {
		t.Fatalf("Fingerprint = %q, want 16 hex digits", fp)
	}
	// Stable across calls and ignoring location and details.
	e2 := e
	e2.File, e2.Line, e2.Column, e2.Details = "x/y.go", 99, 7, []string{"note"}
	if Fingerprint(e2) != fp {
		t.Errorf("location changed the fingerprint")
	}
	// Pinned so an accidental change of the rules (which would orphan the
	// history of past errors) shows up here.
	if fp != "337666cac99dd05c" {
		t.Errorf("Fingerprint(undefined: foo) = %s; if the rules changed on purpose, update this", fp)
	}
}

// Each template rule, in isolation as far as possible.
func TestTemplateRules(t *testing.T) {
	cases := []struct{ in, want string }{
		// 1. suggestions
		{"name 'x' is not defined. Did you mean: 'y'?", "name <id> is not defined"},
		// 2. URLs
		{"see https://example.com/docs?x=1 for details", "see <url> for details"},
		// 3. quotes of every kind, apostrophes left alone
		{"can't find 'x' in \"y\"", "can't find <id> in <id>"},
		{"undefined reference to `foo'", "undefined reference to <id>"},
		{"borrow of moved value: `v`", "borrow of moved value: <id>"},
		{"‘x’ undeclared", "<id> undeclared"},
		{"“smart” quotes", "<id> quotes"},
		{"it's the user's 'thing'", "it's the user's <id>"},
		// 4. UUIDs
		{"job 3f2b1c9e-8a7d-4c1e-9b2a-0c4d5e6f7a8b failed", "job <uuid> failed"},
		// 4b. dates with a time of day; a date alone and a log's time stay as they were
		{"current time 2026-11-25T15:09:30Z is after 2026-11-24T00:00:00+01:00", "current time <time> is after <time>"},
		{"at 2026-11-25 15:09:30.123456789 +0000 UTC m=+0.5", "at <time> m=+<n>"},
		{"at 2026-11-25t15:09:30,5-0500, again 20261125T150930Z", "at <time>, again <time>"},
		{"since 2026-11-25 15:09", "since <time>"},
		{"released 2026-11-25", "released <n>-<n>-<n>"},
		{"2026/11/25 15:09:30 dial failed", "<path> <n>:<n>:<n> dial failed"},
		// 5. paths, with line:col, unix and windows, relative
		{"open /tmp/x/config.yaml: no such file or directory", "open <path>: no such file or directory"},
		{`C:\Users\me\app\main.go:12:3: oops`, "<path>: oops"},
		{"error in ./src/app.ts:3:7", "error in <path>"},
		{"cannot load src/lib/util.js", "cannot load <path>"},
		{"imported from main.go:12", "imported from <path>"},
		{"read/write conflict", "read/write conflict"},
		// 6. hex and addresses
		{"bad pointer 0xc000012345 in heap", "bad pointer <hex> in heap"},
		{"checksum deadbeef12345678 mismatch", "checksum <hex> mismatch"},
		// 7. durations
		{"timeout after 1.5s (limit 300ms, total 1m30s)", "timeout after <duration> (limit <duration>, total <duration>)"},
		// 8. numbers, not inside identifiers
		{"index out of range [5] with length 3", "index out of range [<n>] with length <n>"},
		{"int32 overflow at 42", "int32 overflow at <n>"},
		// 9. dotted identifiers
		{"fmt.Println call has possible Printf formatting directive %d", "<id> call has possible Printf formatting directive %<verb>"},
		// 10. shapes
		{"undefined: foo", "undefined: <id>"},
		{"declared and not used: x", "declared and not used: <id>"},
		{"too many arguments in call to f", "too many arguments in call to <id>"},
		{`cannot use x (variable of type string) as int value in assignment`, "cannot use <id> (<expr>) as <type> value in assignment"},
		{"method add in class Calc cannot be applied to given types;", "method <id> in class <id> cannot be applied to given types;"},
		{"f() takes 1 positional argument but 2 were given", "<id>() takes <n> positional argument but <n> were given"},
		// 11. trailing period, 12. white space
		{"  Expected  '==='   and instead saw '=='. ", "Expected <id> and instead saw <id>"},
		// Only the first line counts.
		{"first line 1\nsecond line 2", "first line <n>"},
	}
	for _, c := range cases {
		if got := Template(Error{Message: c.in}); got != c.want {
			t.Errorf("Template(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// An error that quotes the clock is one error, run after run: the
// timestamps neither split its fingerprint nor make its message another.
func TestTimestampsDoNotSplitAnError(t *testing.T) {
	runs := []string{
		"x509: certificate has expired or is not yet valid: current time 2026-11-25T15:09:30Z is after 2026-11-24T00:00:00Z",
		"x509: certificate has expired or is not yet valid: current time 2026-11-25T15:10:02.51Z is after 2026-11-24T00:00:00Z",
		"x509: certificate has expired or is not yet valid: current time 2026-11-26T09:00:00+01:00 is after 2026-11-24T00:00:00Z",
	}
	fp, key := "", ""
	for i, m := range runs {
		e := Error{Tool: "go test", Message: m}
		if i == 0 {
			fp, key = Fingerprint(e), MessageKey(m)
			continue
		}
		if Fingerprint(e) != fp {
			t.Errorf("run %d: fingerprint %s, want %s (template %q)", i, Fingerprint(e), fp, Template(e))
		}
		if MessageKey(m) != key {
			t.Errorf("run %d: message key %q, want %q", i, MessageKey(m), key)
		}
	}
	if MessageKey("2026/11/25 15:09:30 dial tcp: refused") != MessageKey("2026/11/26 08:00:01.5 dial tcp: refused") {
		t.Error("a log's timestamp made another message key")
	}
	// Names and numbers stay: they are what tells one error from another.
	for _, p := range [][2]string{
		{"No module named 'requests'", "No module named 'numpy'"},
		{"undefined: foo", "undefined: bar"},
		{"got 3, want 4", "got 3, want 5"},
	} {
		if MessageKey(p[0]) == MessageKey(p[1]) {
			t.Errorf("MessageKey(%q) = MessageKey(%q)", p[0], p[1])
		}
	}
}
