// Package errparse turns the output of build tools, test runners and crashing
// programs into structured errors, picks the primary one and fingerprints it.
// It is the first stage of the RCA agent ("explain this error"): parse →
// primary → fingerprint → cache/history → agent. It uses only the standard
// library and never panics, whatever text it is given.
//
// # Supported forms
//
// Parse detects the tool from the text itself, line by line, so mixed output
// (go build followed by go vet, a compiler followed by the linker) works.
// ANSI colour codes and CR line endings are removed first.
//
//   - go build / go run / go vet: "# pkg" headers, "./x.go:3:2: msg" (column
//     optional), tab-indented continuation lines as Details, "vet: " prefixed
//     lines (vet's own type check: Tool "go vet", Code empty), "go: …" errors of the go command
//     (a problem that "go: errors parsing go.mod:" lists, indented or not,
//     is an error at its line of go.mod or go.work), and "go vet -json" (the
//     multi-line JSON object; Code is the analyzer). A text-mode vet line looks
//     exactly like a compiler line, so a line is attributed to "go vet" (Code
//     = analyzer) when its message matches a known vet analyzer message, and to
//     "go" (Code empty: the compiler prints no codes) otherwise.
//   - go test: "--- FAIL: TestX" and "=== RUN" headers, indented "x_test.go:12:
//     msg" log lines (Tool "go test", Details "test: TestX"), a failed test
//     with no output ("TestX failed"), "go test -json" and "go build -json"
//     (their Output fields are reassembled per package and parsed as text;
//     Details get "package: …"). In -v output, log lines of tests that
//     passed or were skipped are dropped: they are not failures. A failed
//     test's last log line comes before its others (t.Fatal ends a test,
//     t.Log lines usually precede the failing check).
//   - Go panics and fatal errors: "panic: …" / "fatal error: …", "[signal …]",
//     "goroutine N [running]:", "pkg.f(...)" + "\t/abs/x.go:12 +0x1d" frames,
//     "created by". Tool "go panic", Code "panic" or "fatal error", Message the
//     rest without the " [recovered…]" suffix. A panic inside a test stays a
//     "go panic" (so it groups with the same panic outside tests) and gets the
//     test name in Details.
//   - tsc: "src/a.ts(3,7): error TS2339: …", the --pretty form "src/a.ts:3:7 -
//     error TS2339: …" and file-less "error TS5023: …"; indented message-chain
//     lines become Details. Code is "TS2339".
//   - rustc / cargo human output: "error[E0382]: …" then " --> file:line:col",
//     sub-diagnostics ("note: …", "help: …", "= note: …") as Details; Code is
//     the error code, or for a lint warning the lint name taken from the
//     "#[warn(lint)]" note. --error-format=json (rustc) and
//     --message-format=json (cargo, reason "compiler-message"): the primary
//     span gives the location, children become Details. Summary lines
//     ("aborting due to…", "could not compile…", "For more information…")
//     are not errors. Tool is "cargo" when the output shows cargo at work
//     ("Compiling x v…", JSON "reason"), else "rustc". The short format
//     ("src/a.rs:3:34: error[E0425]: msg", a .rs file or an E code). A
//     failed build script ("failed to run custom build command for …"):
//     what it printed, under "Caused by:", is parsed as output of its own
//     (a panic at build.rs:6:43), cargo's message in Details; with no
//     error in it, cargo's message is the error, the script's last lines
//     in Details. "linking with `cc` failed": the linker's output quoted
//     in the "= note:" lines gives the errors (Tool "ld", Language "rust"
//     unless the file is another language's), rustc's message and notes
//     in Details.
//   - gcc / g++ / clang: "a.c:3:5: error: …" (column optional), "note:" lines
//     and "required from here" lines attached to the previous error as
//     Details, "In function ‘main’:" / "In file included from" context added
//     to the next error's Details, source excerpts skipped, the "[-Wflag]"
//     suffix moved into Code, driver lines ("gcc: error: …"). Tool is "clang"
//     when the output shows clang ("N errors generated.", "clang: …").
//     Other tools print the same "file:line:col: error: msg" form: the
//     line is gcc's or clang's for C-family files (and files without an
//     extension, such as <vector>), mypy's for a .py file with mypy's
//     "  [code]" suffix (moved into Code) or in output with mypy's
//     "Found N errors…" summary, else Tool "compiler" with the file's
//     language (nasm's .asm), unless the output shows gcc or clang at
//     work.
//   - ld: "undefined reference to `foo'" (with "(.text+0x…)" or a line
//     number), "in function `main':" context, "ld: cannot find -lx", lld's
//     "ld.lld: error: …" with ">>>" Details, macOS "Undefined symbols for
//     architecture …:" + "ld: symbol(s) not found"; lld's first ">>>
//     referenced by main.c:3 (src/main.c:3)" (or ">>> defined at") gives
//     the location; a Rust codegen unit ("x-cgu.0") is no file; "collect2: error: ld
//     returned 1 exit status" and "clang: error: linker command failed" are
//     folded into the preceding linker error's Details. Tool "ld"; Language
//     from the source file when the linker names one, else "cpp" when the
//     output shows C++, else "c".
//   - Python: "Traceback (most recent call last):" with "File "x.py", line 3,
//     in f" frames, chained tracebacks, and the bare SyntaxError block
//     ("File "x.py", line 2" + code + caret). Code is the exception class as
//     printed ("ValueError", "json.decoder.JSONDecodeError"). The caret of a
//     SyntaxError (IndentationError, TabError) gives its column; Python
//     prints the line without its indentation, so the column is counted in
//     the file's line, read from disk (Options.Dir or Workspace): no column
//     when it cannot be read or no longer holds the printed text. Each traceback
//     of a chain ("The above exception was the direct cause…") is one Error,
//     in printed order, so the original cause comes first and is primary.
//     An ExceptionGroup's boxed report ("+ Exception Group Traceback", "| "
//     lines) is unboxed; its sub-exceptions come first, the group last.
//     The warnings module's "x.py:3: DeprecationWarning: msg" (severity
//     "warning", Code the category); doctest's failures ("File "x.py",
//     line 6, in m.f" + "Failed example:"; Tool "doctest", the message
//     from Expected/Got or the exception raised); flake8 ("x.py:5:12: F821
//     msg", Code the code, severity "error" for E9, F63, F7 and F82, the
//     classes that stop a build, else "warning").
//   - javac: "A.java:3: error: …" with the column taken from the caret line
//     and "symbol:"/"location:"/"required:"/"found:" lines as Details (Code is
//     the lint category of "warning: [deprecation] …", else empty), and
//     -XDrawDiagnostics ("A.java:3:21: compiler.err.cant.resolve.location: …",
//     Code the diagnostic key), and Maven's "[ERROR] /abs/A.java:[3,21] …".
//   - java (runtime): "Exception in thread "main" java.lang.X: msg" with "\tat
//     pkg.C.m(C.java:5)" frames; "Caused by:" lines become Details. Code is the
//     exception class. Tool "java" (not in the original list: it is what a
//     Java program prints, as python and node are).
//   - Node.js: the "/abs/a.js:3" + code + caret header, "TypeError: …" and
//     "    at f (/abs/a.js:3:5)" frames (also "at /abs/a.js:3:5", file://
//     URLs, "<anonymous>"), the "{ code: 'ENOENT', … }" property block as
//     Details. Code is the bracketed code of "Error [ERR_X]: …" when present,
//     else the error name ("TypeError").
//   - ESLint: stylish (a file header line, then "  3:7  error  msg  rule"),
//     -f json, and the one-line formats unix ("a.js:2:9: msg [Error/rule]"),
//     compact ("a.js: line 2, col 9, Error - msg (rule)") and visualstudio
//     ("a.js(2,9): error rule : msg"; the same form for another language
//     is another tool's: Tool "lint"). Code is the rule id; empty for
//     parsing errors.
//   - Rust panics ("thread 'main' (12345) panicked at src/x.rs:2:38:", the
//     older forms, RUST_BACKTRACE frames, cargo test's "---- t stdout ----"):
//     Tool "rust panic", Code "panic". go test -race reports: Tool "go race",
//     Code "data race", at the first access's frame in the workspace. A go
//     test timeout is located in the goroutine running the test. testify's
//     block (Error Trace / Error / Messages) gives the message, the file and,
//     for assert.NotPanics, the panic's frames.
//   - pytest (long, short and --tb=line tracebacks, rootdir-relative paths,
//     "FAILED f::t - msg" lines when no section describes the test; a
//     section holding a chain is split at Python's "The above exception…"
//     / "During handling…" lines and follows the chain policy below; a
//     --tb=line failure is reported once, with the summary line's test
//     name, and a section without frames takes the summary's file), jest, vitest,
//     node --test (spec: Node's own format; TAP: the YAML block).
//   - C/C++ beyond the compiler line: an error in a system header moves to
//     the user's "required from here" (g++) or "requested here" (clang)
//     line, "reported in …" keeping the header's place; a g++ error in a
//     system header printed without such a line (the next error of the
//     same instantiation or substitution) moves to the user's line of the
//     error before it; "In substitution of" describes only the next error; make's "Entering
//     directory" resolves relative file names; make's "*** [Makefile:4:
//     target] Error 127" is an error (Tool "make", at the recipe's line) only
//     when nothing else in the output is; a linker error that names only
//     an object file is located at its source (b.o → b.c, or b.cpp when the
//     output shows C++; CMake's CMakeFiles/x.dir/src/b.c.o → src/b.c), the
//     object kept in Details; AddressSanitizer and LeakSanitizer (Tool
//     "asan" / "lsan", Code the bug kind as the SUMMARY line names it:
//     "heap-buffer-overflow", "double-free", "memory-leak" for "detected
//     memory leaks"), located at the first frame of the user's code, past
//     the sanitizer's interceptors (__interceptor_memcpy, malloc in
//     libsanitizer/) and libc's startup frames (sysdeps/, csu/); "CMake
//     Error at f:3 (cmd):" (Code cmd); UndefinedBehaviorSanitizer
//     ("src/a.c:6:13: runtime error: …", Tool "ubsan", at that place,
//     Code the kind of the "SUMMARY: UndefinedBehaviorSanitizer:" line,
//     "undefined-behavior" by default, frames of print_stacktrace=1); a
//     failed assert() in glibc's, musl's and macOS's wording (Tool and
//     Code "assert", Message "assertion failed: <expression>", the
//     function in Details).
//   - bash/dash ("x.sh: line 3: msg"; the line bash echoes after a syntax
//     error is a Detail; "bash: line 3: msg" and "bash: -c: line 1: msg"
//     from a command string name no file, the line is in Details),
//     shellcheck -f gcc, -f tty, -f json and -f json1.
//   - Anything else of the form "path.ext:line:col: message", as a last
//     resort: Tool "lint", Language from the extension, Severity "error"
//     unless the message starts with a severity word ("warning: …",
//     "error[E0425]: …", "[error] …"). A line is read so only when no
//     parser above recognised it, and these errors come after all the
//     others, so they are primary only when no known tool reported an
//     error of the same severity. The path must have an extension and no
//     colon: URLs, host:port and times of day are not files.
//
// # Exception chains
//
// One policy for Java "Caused by:", Node "[cause]" and Python's chained
// tracebacks ("direct cause" and "During handling…", in pytest's sections
// too): every exception of
// the chain is an Error, the root cause first, so it is the primary error,
// located at its deepest frame in the workspace (Java's "... N more" frames
// are restored from the enclosing trace). A Java or Node cause with no
// frame in the workspace takes the location of the nearest enclosing
// exception that has one. Errors repeated exactly (test runners print
// failures twice) are reported once.
//
// # Files, frames and the primary error
//
// File is the path as printed, except that an absolute path (or file:// URL)
// inside Options.Workspace, as printed or once the symbolic links of its
// directory are resolved, is made relative to it, with forward slashes;
// and that when the tool ran in another directory (Options.Dir), a
// relative path is made relative to the workspace, or absolute when it
// lies outside it.
// Frames are stored innermost first, whatever order the tool prints them in
// (Python prints the innermost last). A frame is InWorkspace when it is not a
// runtime/standard-library/dependency frame (Go packages without a dot in
// their first path element other than main, node:… and node_modules, Python's
// lib/pythonX and site-packages, JDK classes and modules, "<…>"
// pseudo-files) and, when it is an absolute path and Options.Workspace is
// set, when it lies inside the workspace. For a stack trace, File/Line/Column
// of the error are those of the deepest (innermost) in-workspace frame; when
// there is none they stay at the location the tool printed, or the innermost
// non-library frame, or the innermost frame. Primary returns the first error
// of severity "error", else the first warning, else 0; of the same
// severity, an error in the user's files before one in a dependency
// (node_modules/, site-packages/, .venv/, vendor/).
//
// Text lines longer than 32 KiB are skipped (JSON lines are not), and
// templates are computed from the first 1 KiB of the message: that keeps
// Parse linear and fast on pasted garbage.
//
// # Fingerprint rules
//
// Template(e) rewrites the first line of e.Message with these rules, in this
// order, so that the same mistake made with other names, in another file or
// on another line gives the same template:
//
//  1. "did you mean …" suggestions at the end are dropped.
//  2. URLs (scheme://…) → <url>.
//  3. Quoted text → <id>: '…', "…", `…`, `…' (as ld prints), ‘…’, “…”. A
//     quote only opens after a non-word character and only closes before one,
//     so apostrophes in "can't" do not count.
//  4. UUIDs → <uuid>.
//     Dates with a time of day (RFC 3339 / ISO 8601, with T or a blank,
//     fractional seconds, Z or an offset: 2026-11-25T15:09:30Z,
//     2026-11-25 15:09:30.5 +0000 UTC, 20261125T150930Z) → <time>. A date
//     alone is left to rule 8; a log's 2026/11/25 15:09:30 is already
//     <path> <n>:<n>:<n> by rules 5 and 8.
//  5. File paths → <path>: absolute unix or windows paths, ./ ../ ~/ paths,
//     relative paths with a slash and a file extension or two slashes, and
//     bare names with a source extension (x.go, a.ts), each with an optional
//     :line[:col] suffix.
//  6. Hex: 0x… (memory addresses) and runs of 8+ hex digits with a digit
//     → <hex>.
//  7. Durations (1.5s, 300ms, 1m30s, 2µs) → <duration>.
//  8. Numbers → <n> (digits inside identifiers such as int32 are kept).
//  9. Dotted identifiers (fmt.Printf, config.load, java.lang.String) → <id>.
//  10. Bare identifiers and types in known message shapes → <id> / <type>:
//     Go's "undefined: x", "declared and not used: x", "x.y undefined (type T
//     has no field or method y)", "cannot use x (variable of type T) as U
//     value", vet's printf messages; JavaScript's "x is not a function/
//     defined/…"; javac's "incompatible types: A cannot be converted to B",
//     "method m in class C cannot be applied…"; "f()" calls. For javac
//     -XDrawDiagnostics (Code "compiler.…"), whose message is only the
//     diagnostic's arguments, every remaining bare word → <id>.
//  11. A trailing period is dropped (ESLint prints it in JSON, not in stylish).
//  12. Runs of white space collapse to one space.
//
// Line and column numbers are never part of the template. Fingerprint(e) is
// the first 16 hex digits of sha256(tool family, code, template), where the
// tool family is the Tool except that "cargo" counts as "rustc" (cargo only
// relays rustc's diagnostics).
package errparse

import (
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Error is one diagnostic, test failure or crash found in tool output. The
// JSON names are those of the `kodyls explain --json` contract.
type Error struct {
	Tool     string `json:"tool"`
	Language string `json:"language"`
	// File is as printed by the tool, or relative to the workspace when it
	// lies inside it.
	File string `json:"file,omitempty"`
	// Line and Column are 1-based; 0 means the output had none. Column
	// is the tool's, as printed, counted in ColumnUnit.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// ColumnUnit is what Column counts (bytes, characters, UTF-16 code
	// units, …), the tool's unit unless its parser knows better (see
	// ColumnUnit).
	ColumnUnit ColumnUnit `json:"-"`
	// Severity is "error", "warning" or "note".
	Severity string `json:"severity"`
	// Code is the tool's identifier for the kind of error (see the package
	// comment per tool); empty when the tool prints none.
	Code string `json:"code,omitempty"`
	// Message is the main message, one line.
	Message string `json:"message"`
	// Details holds notes, help lines, context and extra message lines.
	Details []string `json:"details,omitempty"`
	// Frames is the stack of a panic, traceback or exception, innermost
	// first.
	Frames      []Frame `json:"frames,omitempty"`
	Fingerprint string  `json:"fingerprint"`
}

// Frame is one stack frame of a panic, traceback or exception.
type Frame struct {
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Column      int    `json:"column,omitempty"`
	Func        string `json:"func,omitempty"`
	InWorkspace bool   `json:"inWorkspace"`
}

// Options tune parsing.
type Options struct {
	// Workspace is the absolute workspace root. Paths inside it are made
	// relative, and it decides which stack frames are the user's code.
	Workspace string
	// Dir is the absolute directory the tool ran in, which the relative
	// paths of its output are relative to; "" is the Workspace. When it
	// is another directory, each relative path is made relative to the
	// workspace, or absolute when it lies outside it.
	Dir string

	paths *paths
}

// Parse extracts every error it recognises from output, in the order they
// appear (errors reassembled from go test -json / go build -json come after
// the rest). It never panics; text it does not recognise is skipped.
func Parse(output string, o Options) []Error {
	if o.Workspace != "" {
		o.paths = newPaths(o)
	}
	text := normalizeText(output)
	lines := strings.Split(text, "\n")
	lines, goJSON := extractGoJSON(lines)

	s := newScanner(lines, o)
	s.run()
	errs := s.out
	for _, pkg := range goJSON.order {
		sub := newScanner(strings.Split(goJSON.text[pkg].String(), "\n"), o)
		sub.goPkg = pkg
		sub.run()
		for _, e := range sub.out {
			if pkg != "" {
				e.Details = append(e.Details, "package: "+pkg)
			}
			errs = append(errs, e)
		}
	}
	for i := range errs {
		finish(&errs[i], o)
	}
	return dedupe(errs)
}

// dedupe drops an error that repeats an earlier one exactly (same tool,
// place, code and message): test runners print their failures twice, once
// as they happen and once in a closing summary.
func dedupe(errs []Error) []Error {
	type key struct {
		tool, file    string
		line, col     int
		code, message string
	}
	seen := make(map[key]bool, len(errs))
	kept := errs[:0]
	for _, e := range errs {
		k := key{e.Tool, e.File, e.Line, e.Column, e.Code, e.Message}
		if seen[k] {
			continue
		}
		seen[k] = true
		kept = append(kept, e)
	}
	return kept
}

// Primary returns the index of the error to explain: the first one of
// severity "error", else the first warning (a linter's report of warnings
// and notes), else the first one; -1 when errs is empty. Of the same
// severity, an error in the user's code comes before one in an installed
// dependency (node_modules/, site-packages/, .venv/, vendor/, …: see
// dependencyPath), as a stack trace is located at the user's frame: tsc
// reporting a broken .d.ts of a package before the user's type error is
// about the user's error. The location of a stack trace is already its
// deepest in-workspace frame (Parse sets it).
func Primary(errs []Error) int {
	for _, sev := range []string{"error", "warning"} {
		lib := -1
		for i, e := range errs {
			if e.Severity != sev {
				continue
			}
			if !dependencyPath(e.File) {
				return i
			}
			if lib < 0 {
				lib = i
			}
		}
		if lib >= 0 {
			return lib
		}
	}
	if len(errs) > 0 {
		return 0
	}
	return -1
}

var (
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]`)
)

// normalizeText removes colour codes and carriage returns, which tools emit
// when they believe they write to a terminal and which would defeat every
// line pattern below.
func normalizeText(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRE.ReplaceAllString(s, "")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return s
}

// finish fills what every error needs whatever its parser: a severity, a
// one-line message, a location from the stack and the fingerprint.
func finish(e *Error, o Options) {
	if e.Severity == "" {
		e.Severity = "error"
	}
	e.Message = strings.TrimSpace(e.Message)
	if i := strings.IndexByte(e.Message, '\n'); i >= 0 {
		rest := strings.Split(e.Message[i+1:], "\n")
		e.Message = strings.TrimSpace(e.Message[:i])
		for _, r := range rest {
			if r = strings.TrimSpace(r); r != "" {
				e.Details = append(e.Details, r)
			}
		}
	}
	if e.Line < 0 {
		e.Line = 0
	}
	if e.Column < 0 {
		e.Column = 0
	}
	if len(e.Frames) > 0 {
		locateFromFrames(e)
	}
	if e.Language == "" {
		e.Language = LanguageOf(e.File)
	}
	if e.ColumnUnit == UnitDefault {
		e.ColumnUnit = ToolColumnUnit(e.Tool)
	}
	e.Fingerprint = Fingerprint(*e)
}

// locateFromFrames points the error at the innermost frame in the workspace:
// that is the user's code closest to the failure, which is what the RCA
// agent must read (not runtime/panic.go or node:internal).
func locateFromFrames(e *Error) {
	for _, f := range e.Frames {
		if f.InWorkspace && f.File != "" {
			e.File, e.Line, e.Column = f.File, f.Line, f.Column
			return
		}
	}
	if e.File != "" {
		return
	}
	f := e.Frames[0]
	for _, g := range e.Frames {
		if !libraryFrame(e.Tool, g) {
			f = g
			break
		}
	}
	e.File, e.Line, e.Column = f.File, f.Line, f.Column
}

// libraryFrame applies the per-language library heuristics alone (no
// workspace): the fallback when no frame lies in the workspace.
func libraryFrame(tool string, f Frame) bool {
	switch tool {
	case "go panic":
		return goStdFunc(f.Func) || dependencyPath(f.File)
	case "node":
		return nodeLibraryPath(f.File)
	case "python":
		return pyLibraryPath(f.File)
	case "java":
		return javaLibraryFunc(f.Func)
	case "asan", "lsan", "tsan", "msan":
		return sanitizerRuntime(f.Func, f.File) || systemPath(f.File)
	}
	return false
}

// scanner walks the lines once; each line parser looks at the current line
// and, when it recognises it, consumes it and the lines that belong to it.
type scanner struct {
	lines []string
	i     int
	o     Options
	out   []Error

	// What the whole output says about its producer.
	cargo, clang, cpp, pytest, jest, mypy bool

	// Context carried from line to line.
	goTest         string // the test whose output follows
	failedTests    []string
	okTests        map[string]bool // passed or skipped: their log lines are not failures
	testErrs       map[string]bool
	testOf         map[int]string   // index in out of a go test log line → its test
	cContext       []string         // "In function ‘main’" and include chains, for the next C error
	ldContext      string           // "in function `main'", for the next linker error
	rustTest       string           // the cargo test whose output follows
	nodeTest       string           // the node --test test whose failure follows
	races          int              // data races reported so far
	pytestRoot     string           // pytest's rootdir: its paths are relative to it
	pytestSection  string           // the "=== FAILURES ===" section pytest is in
	pytestLines    []int            // indexes in out of pytest --tb=line failures
	makeDirs       []string         // make's "Entering directory" stack
	makeFailure    *Error           // make's first "*** [file:line: target] Error N"
	cFile          map[int]string   // index in out of a C error → its file as printed
	relocated      map[int]bool     // C errors moved from a system header to the user's line
	cAnchor        *Frame           // the user's line of the last C error, for the errors of a system header after it
	pytestSeen     map[string]bool  // tests a pytest section described
	pytestTestErrs map[string][]int // indexes in out of the errors of each described test
	lastRace       int              // index in out of the last one
	lastC          int              // index in out of the last gcc/clang/ld error, -1 if none
	lastLD         int
	pyReads        int         // files read for the carets of syntax errors (pyCaretColumn)
	noCloseFrom    bool        // no line "}" follows: a go vet -json object cannot start
	generic        []Error     // lines of the last-resort form (parseGeneric)
	goTestPending  []goTestLog // go test log lines not yet placed in their package
	goModules      []goModule  // the modules of the tool's directory, read at the first package
	goPkg          string      // the package of a go test -json stream, "" otherwise
}

func newScanner(lines []string, o Options) *scanner {
	s := &scanner{lines: lines, o: o, lastC: -1, lastLD: -1, testErrs: map[string]bool{}, okTests: map[string]bool{}, testOf: map[int]string{}, cFile: map[int]string{}, relocated: map[int]bool{}}
	s.sniff()
	return s
}

var (
	cargoMarkRE  = regexp.MustCompile(`^\s*(Compiling|Checking|Building|Finished|Running) \S+ v\d|^error: could not compile ` + "`" + `|^warning: build failed`)
	clangMarkRE  = regexp.MustCompile(`^\d+ (errors?|warnings?)( and \d+ (errors?|warnings?))? generated\.$|^clang(\+\+)?(-\d+)?: |^Apple clang|^clang version`)
	pytestMarkRE = regexp.MustCompile(`^={5,} (test session starts|FAILURES|short test summary info|ERRORS) =+$`)
	jestMarkRE   = regexp.MustCompile(`^(FAIL|PASS) \S|^Test Suites: `)
	mypyMarkRE   = regexp.MustCompile(`^(Found \d+ errors? in \d+ files? \(checked \d+ source files?\)|Success: no issues found in \d+ source files?)$`)
	cppMarkRE    = regexp.MustCompile(`\.(cc|cpp|cxx|c\+\+|hpp|hh|hxx)[:(]|^(g\+\+|c\+\+|clang\+\+|cc1plus): `)
)

// sniff looks at the whole output once for the few facts that a single line
// cannot tell: cargo vs a bare rustc, clang vs gcc (same line format),
// C++ (a linker error has no source extension to go by), and mypy (its
// notes and, with --hide-error-codes, its errors have no code).
func (s *scanner) sniff() {
	for _, l := range s.lines {
		if len(l) > maxLineLen {
			continue
		}
		if !s.cargo && cargoMarkRE.MatchString(l) {
			s.cargo = true
		}
		if !s.clang && clangMarkRE.MatchString(l) {
			s.clang = true
		}
		if !s.cpp && cppMarkRE.MatchString(l) {
			s.cpp = true
		}
		if !s.pytest && pytestMarkRE.MatchString(l) {
			s.pytest = true
		}
		if !s.jest && jestMarkRE.MatchString(l) {
			s.jest = true
		}
		if !s.mypy && mypyMarkRE.MatchString(l) {
			s.mypy = true
		}
	}
}

type lineParser func(s *scanner) bool

// maxLineLen bounds the text lines the line parsers look at; JSON lines
// (cargo, ESLint) are exempt, they can legitimately be long.
const maxLineLen = 32 << 10

func (s *scanner) run() {
	parsers := []lineParser{
		parseGoPanic,
		parseGoRace,
		parseRustPanic,
		parsePytest,
		parseJest,
		parseVitest,
		parseTAP,
		parseMake,
		parseSanitizer,
		parseUBSan,
		parseCAssert,
		parseCMake,
		parseGoPkgSummary,
		parseGoTestLine,
		parsePythonExceptionGroup,
		parsePythonTraceback,
		parseDoctest,
		parsePythonWarning,
		parseJavaException,
		parseNodeError,
		parseRustHuman,
		parseTSC,
		parseESLintStylish,
		parseESLintLine,
		parseJavac,
		parseShell,
		parseLinker,
		parseCFamily,
		parseGoLine,
		parseGeneric, // last: only what nothing else recognised
	}
	for s.i < len(s.lines) {
		line := s.lines[s.i]
		if strings.TrimSpace(line) == "" {
			s.i++
			continue
		}
		if (line[0] == '{' || line[0] == '[') && parseJSONLine(s) {
			continue
		}
		if len(line) > maxLineLen {
			// No diagnostic line is this long (minified code, a dumped
			// blob); matching it would only cost time.
			s.i++
			continue
		}
		start := s.i
		matched := false
		for _, p := range parsers {
			if p(s) {
				matched = true
				break
			}
			s.i = start // a parser that gave up must not have moved
		}
		if !matched || s.i <= start {
			s.i = start + 1
		}
	}
	if s.goPkg != "" {
		s.placeGoTest(s.goPkg)
	}
	s.finishGoTests()
	// A line only the last-resort form recognised comes after what the
	// tools kodyls knows reported: it never takes their place as the
	// primary error of the same severity.
	s.out = append(s.out, s.generic...)
	s.finishMake()
}

// add appends e and returns its index.
func (s *scanner) add(e Error) int {
	s.out = append(s.out, e)
	return len(s.out) - 1
}

// addChain adds the exceptions of a chain, given outermost first (as Java
// and Node print them), root cause first: that is the chain policy, the
// root cause is the primary error. A cause whose frames never reach the
// user's code (thrown and wrapped inside a library) takes the location of
// the nearest exception above it that does, so the primary error always
// points at the user's code when any of the chain does.
func (s *scanner) addChain(chain []Error) {
	slices.Reverse(chain)
	for i := range chain {
		if len(chain) > 1 {
			if i > 0 {
				chain[i].Details = append(chain[i].Details, "caused by: "+chain[i-1].Code+": "+chain[i-1].Message)
			}
			if i+1 < len(chain) {
				chain[i].Details = append(chain[i].Details, "cause of: "+chain[i+1].Code+": "+chain[i+1].Message)
			}
		}
		if slices.ContainsFunc(chain[i].Frames, inWorkspace) {
			continue
		}
		for _, outer := range chain[i+1:] {
			if j := slices.IndexFunc(outer.Frames, inWorkspace); j >= 0 {
				f := outer.Frames[j]
				chain[i].File, chain[i].Line, chain[i].Column = f.File, f.Line, f.Column
				break
			}
		}
	}
	for _, e := range chain {
		s.add(e)
	}
}

func inWorkspace(f Frame) bool { return f.InWorkspace && f.File != "" }

// peek returns line i, or "" past the end.
func (s *scanner) peek(i int) string {
	if i >= 0 && i < len(s.lines) {
		return s.lines[i]
	}
	return ""
}

// rel returns the path an Error reports for p as printed: relative to
// the workspace when it lies inside it (see Options), else absolute or
// as printed.
func (s *scanner) rel(p string) string {
	if n := len(s.makeDirs); n > 0 && p != "" && !isAbs(p) && !strings.HasPrefix(p, "file://") {
		// Under make -C, a compiler names files relative to the directory
		// make entered.
		p = path.Join(s.makeDirs[n-1], p)
	}
	return s.o.rel(p)
}

// underWorkspace reports whether a path as printed is under the
// workspace; with no workspace, or a relative path of a tool that ran in
// the workspace, it has no opinion (true).
func (s *scanner) underWorkspace(p string) bool {
	if s.o.Workspace == "" {
		return true
	}
	return !isAbs(s.rel(p))
}

// paths is what one Parse learns about the file system to place paths:
// where the tool ran, and where symbolic links lead.
type paths struct {
	// dir is Options.Dir, slash-separated, when it is not the workspace;
	// "" when relative paths are relative to the workspace.
	dir string
	// realWS is the workspace with its links resolved; "" when unknown.
	realWS   string
	resolved bool
	// real maps a directory to where its links lead, "" when it cannot
	// be resolved.
	real map[string]string
}

// maxResolved bounds the directories one Parse resolves: pasted output
// can name any number of them.
const maxResolved = 1024

func newPaths(o Options) *paths {
	p := &paths{real: map[string]string{}}
	if o.Dir != "" && slashClean(o.Dir) != slashClean(o.Workspace) {
		p.dir = slashClean(o.Dir)
	}
	return p
}

// realDir is where the links of an absolute directory lead.
func (p *paths) realDir(dir string) string {
	if r, ok := p.real[dir]; ok {
		return r
	}
	if len(p.real) >= maxResolved {
		return ""
	}
	r, err := filepath.EvalSymlinks(filepath.FromSlash(dir))
	if err != nil {
		r = ""
	}
	r = filepath.ToSlash(r)
	p.real[dir] = r
	return r
}

func slashClean(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if c := path.Clean(p); c != "." {
		return c
	}
	return p
}

// rel is the path an Error reports for p (file:// URLs become paths): an
// absolute path inside the workspace, as printed or once the symbolic
// links of its directory are resolved, relative to the workspace; a
// relative path, when the tool ran elsewhere than in the workspace (Dir),
// relative to the workspace, or absolute when it lies outside; anything
// else as printed.
func (o Options) rel(p string) string {
	if strings.HasPrefix(p, "file://") {
		p = strings.TrimPrefix(p, "file://")
		if len(p) > 2 && p[0] == '/' && p[2] == ':' { // file:///C:/x
			p = p[1:]
		}
	}
	if o.Workspace == "" || p == "" {
		return p
	}
	abs := p
	if !isAbs(p) {
		if o.paths == nil || o.paths.dir == "" || !filePath(p) {
			return p
		}
		abs = path.Join(o.paths.dir, strings.ReplaceAll(p, `\`, "/"))
	}
	if r, ok := under(abs, o.Workspace); ok {
		return r
	}
	if o.paths != nil {
		if r, ok := o.paths.throughLinks(abs, o.Workspace); ok {
			return r
		}
	}
	return abs
}

// throughLinks places an absolute path that is not under the workspace as
// printed: the workspace reached through a link (a symlinked checkout, a
// path printed through another spelling of it).
func (p *paths) throughLinks(abs, ws string) (string, bool) {
	if !p.resolved {
		p.resolved = true
		if r, err := filepath.EvalSymlinks(filepath.FromSlash(ws)); err == nil {
			p.realWS = filepath.ToSlash(r)
		}
	}
	if p.realWS == "" {
		return "", false // no link leads into a workspace that is not there
	}
	n := strings.ReplaceAll(abs, `\`, "/")
	dir := p.realDir(path.Dir(n))
	if dir == "" {
		return "", false
	}
	real := path.Join(dir, path.Base(n))
	for _, w := range []string{p.realWS, ws} {
		if r, ok := under(real, w); ok {
			return r, true
		}
	}
	return "", false
}

// filePath reports whether a relative name printed as a file is one:
// "<stdin>", "<frozen …>" and "node:fs" are not.
func filePath(p string) bool {
	return !strings.HasPrefix(p, "<") && !schemeRE.MatchString(p)
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// under returns p relative to ws when it lies under it.
func under(p, ws string) (string, bool) {
	if ws == "" || !isAbs(p) {
		return "", false
	}
	np := strings.ReplaceAll(p, `\`, "/")
	nw := strings.TrimRight(strings.ReplaceAll(ws, `\`, "/"), "/")
	if nw == "" {
		return "", false
	}
	windows := len(nw) >= 2 && nw[1] == ':'
	hasPrefix := strings.HasPrefix(np, nw+"/")
	if windows {
		hasPrefix = strings.HasPrefix(strings.ToLower(np), strings.ToLower(nw)+"/")
	}
	if !hasPrefix {
		return "", false
	}
	return path.Clean(np[len(nw)+1:]), true
}

func isAbs(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z')
}

// dependencyPath reports paths of installed dependencies, which are never
// the code the user can fix even when they sit inside the workspace: npm
// packages, Python packages and virtual environments, Go's module cache,
// cargo's registry and vendored dependencies (go mod vendor, cargo vendor,
// Composer, Bundler).
func dependencyPath(p string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	for _, d := range []string{"/node_modules/", "/site-packages/", "/dist-packages/", "/.venv/", "/pkg/mod/", "/.cargo/registry/", "/vendor/"} {
		if strings.Contains(p, d) || strings.HasPrefix(p, d[1:]) {
			return true
		}
	}
	return false
}

var extLanguage = map[string]string{
	".go": "go",
	".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".vue": "javascript",
	".rs": "rust",
	".c":  "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp", ".ipp": "cpp",
	".py": "python", ".pyi": "python",
	".java": "java",
}

// LanguageOf guesses the language of a file from its extension ("go",
// "typescript", "rust", …); "" when unknown.
func LanguageOf(file string) string {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(file, `\`, "/")))
	return extLanguage[ext]
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// parseJSONLine handles the machine-readable modes: rustc/cargo JSON
// diagnostics (one object per line), ESLint -f json (one array) and
// go vet -json (a multi-line object).
func parseJSONLine(s *scanner) bool {
	line := strings.TrimSpace(s.lines[s.i])
	if line == "{" {
		return parseGoVetJSON(s)
	}
	if line[0] == '[' {
		return parseShellcheckJSON(s, line) || parseESLintJSON(s, line)
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &probe) != nil {
		return false
	}
	if _, ok := probe["comments"]; ok {
		return parseShellcheckJSON(s, line)
	}
	if _, ok := probe["reason"]; ok {
		return parseCargoJSON(s, probe)
	}
	_, rustc := probe["$message_type"]
	if _, ok := probe["spans"]; ok || rustc {
		return parseRustcJSON(s, line)
	}
	return false
}
