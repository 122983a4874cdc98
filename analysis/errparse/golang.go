package errparse

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// go build / vet / test / run, and Go runtime panics.

var (
	goLineRE = regexp.MustCompile(`^(\S.*?\.go):(\d+)(?::(\d+))?: (.*)$`)
	// A problem in go.mod or go.work, as the go command lists them after
	// "go: errors parsing go.mod:" (tab-indented and absolute before Go
	// 1.26, unindented and relative since) or prefixes them with "go: ".
	goModLineRE  = regexp.MustCompile(`^\s*((?:\S*[/\\])?go\.(?:mod|work)):(\d+)(?::(\d+))?: (.*)$`)
	goTestLogRE  = regexp.MustCompile(`^( {4,}|\t+)(\S+\.go):(\d+): (.*)$`)
	goTestHeadRE = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)(?: \(\d.*\))?$`)
	goTestRunRE  = regexp.MustCompile(`^=== (RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	goCmdRE      = regexp.MustCompile(`^go: (.*)$`)
	goCmdNoise   = regexp.MustCompile(`^(downloading|finding|extracting|added|upgraded|downgraded|removed|creating|to add|found) `)
	goFrameLocRE = regexp.MustCompile(`^\t(.+?):(\d+)(?: \+0x[0-9a-fA-F]+)?$`)
	goGoroutRE   = regexp.MustCompile(`^goroutine \d+ \[.*\]:$`)
	goRecovered  = regexp.MustCompile(`\s*\[recovered(?:, repanicked)?\]$`)
)

// vetAnalyzers maps vet's text-mode messages to the analyzer that reports
// them: vet's text output carries no analyzer name and otherwise looks like
// a compiler error, so the message is all there is to tell them apart.
var vetAnalyzers = []struct {
	name string
	re   *regexp.Regexp
}{
	{"printf", regexp.MustCompile(`format %.* has arg .* of wrong type|call has possible (Printf )?formatting directive|call has arguments but no formatting directives|call needs \d+ args? but has \d+ args?|format %.* reads arg #\d+|format %.* is missing verb|ends with redundant newline|non-constant format string in call to|format %.* has unknown verb|arg .* is a func value, not called|possible formatting directive in .* call|format %.* has invalid|\(\w+\) call has possible formatting directive`)},
	{"assign", regexp.MustCompile(`^self-assignment of `)},
	{"atomic", regexp.MustCompile(`direct assignment to atomic value`)},
	{"bools", regexp.MustCompile(`^(redundant|suspect) (or|and): `)},
	{"composites", regexp.MustCompile(`composite literal uses unkeyed fields`)},
	{"copylocks", regexp.MustCompile(`(passes|copies) lock (by )?value|range var .* copies lock|lock by value`)},
	{"lostcancel", regexp.MustCompile(`the cancel function (is not used|returned by context)|this return statement may be reached without using the cancel`)},
	{"nilfunc", regexp.MustCompile(`comparison of function .* is always`)},
	{"shift", regexp.MustCompile(`\(\d+ bits\) too small for shift of`)},
	{"stdmethods", regexp.MustCompile(`^method .* should have signature`)},
	{"structtag", regexp.MustCompile(`struct field tag|struct field \w+ repeats \w+ tag`)},
	{"tests", regexp.MustCompile(`has malformed (name|example suffix)|should (have|return) .* (signature|nothing)|malformed name:`)},
	{"unmarshal", regexp.MustCompile(`call of .* passes non-pointer`)},
	{"unreachable", regexp.MustCompile(`^unreachable code$`)},
	{"unsafeptr", regexp.MustCompile(`possible misuse of unsafe\.Pointer`)},
	{"unusedresult", regexp.MustCompile(`^result of .* call not used$`)},
	{"loopclosure", regexp.MustCompile(`loop variable \w+ captured by func literal`)},
	{"httpresponse", regexp.MustCompile(`using \w+ before checking for errors`)},
	{"errorsas", regexp.MustCompile(`second argument to errors\.As`)},
	{"stringintconv", regexp.MustCompile(`conversion from .* to string yields a string of one rune`)},
	{"ifaceassert", regexp.MustCompile(`^impossible type assertion`)},
	{"sigchanyzer", regexp.MustCompile(`misuse of unbuffered os\.Signal channel`)},
	{"defers", regexp.MustCompile(`call to time\.Since is not deferred`)},
	{"timeformat", regexp.MustCompile(`2006-02-01 should be 2006-01-02`)},
	{"appends", regexp.MustCompile(`^append with no values$`)},
	{"waitgroup", regexp.MustCompile(`WaitGroup\.Add called from inside new goroutine`)},
	{"hostport", regexp.MustCompile(`address format .* does not work with IPv6`)},
	{"directive", regexp.MustCompile(`misplaced //go:debug directive`)},
	{"buildtag", regexp.MustCompile(`//go:build|\+build line`)},
	{"cgocall", regexp.MustCompile(`possibly passing Go type with embedded pointer to C`)},
	{"slog", regexp.MustCompile(`slog\.\w+ arg .* should be`)},
	{"stdversion", regexp.MustCompile(`requires go1\.\d+ or later \(module is go1`)},
}

func vetAnalyzer(msg string) string {
	for _, a := range vetAnalyzers {
		if a.re.MatchString(msg) {
			return a.name
		}
	}
	return ""
}

// parseGoLine handles "./x.go:3:2: msg" from the compiler or vet, the
// "# pkg" headers before them and "go: …" errors of the go command.
func parseGoLine(s *scanner) bool {
	line := s.lines[s.i]
	if strings.HasPrefix(line, "# ") {
		// "# pkg" / "# [pkg]" (vet): which package the next lines are
		// about. The errors name their files, so nothing to keep.
		s.i++
		return true
	}
	if m := goCmdRE.FindStringSubmatch(line); m != nil {
		if goCmdNoise.MatchString(m[1]) {
			s.i++
			return true
		}
		s.i++
		if l := goModLineRE.FindStringSubmatch(m[1]); l != nil {
			// "go: /abs/go.mod:3: unknown directive: x"
			s.addGoMod(l, "")
			return true
		}
		// "go: errors parsing go.mod:" lists the problems on the next
		// lines: each one is an error at its line of go.mod. Other
		// indented lines explain the error ("to create a module there,
		// run:").
		var located bool
		e := Error{Tool: "go", Language: "go", Message: m[1]}
		for s.i < len(s.lines) {
			l := s.lines[s.i]
			if g := goModLineRE.FindStringSubmatch(l); g != nil && (strings.HasPrefix(l, "\t") || strings.HasSuffix(m[1], ":")) {
				s.addGoMod(g, m[1])
				located = true
			} else if strings.HasPrefix(l, "\t") {
				e.Details = append(e.Details, strings.TrimSpace(l))
			} else {
				break
			}
			s.i++
		}
		if !located {
			s.add(e)
		}
		return true
	}
	if m := goModLineRE.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
		s.addGoMod(m, "")
		s.i++
		return true
	}
	vetPrefix := strings.HasPrefix(line, "vet: ")
	line = strings.TrimPrefix(line, "vet: ")
	m := goLineRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	e := Error{Tool: "go", Language: "go", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), Message: m[4]}
	if a := vetAnalyzer(m[4]); a != "" {
		e.Tool, e.Code = "go vet", a
	} else if vetPrefix {
		e.Tool = "go vet"
	}
	s.i++
	// The type checker prints "have (…)" / "want (…)" and similar
	// explanations on tab-indented lines after the message.
	for s.i < len(s.lines) && strings.HasPrefix(s.lines[s.i], "\t") && !goFrameLocRE.MatchString(s.lines[s.i]) {
		e.Details = append(e.Details, strings.TrimSpace(s.lines[s.i]))
		s.i++
	}
	s.add(e)
	return true
}

// addGoMod adds a problem of go.mod or go.work (m from goModLineRE),
// under the go command's header when there was one.
func (s *scanner) addGoMod(m []string, header string) {
	e := Error{Tool: "go", Language: "go", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), Message: m[4]}
	if header != "" {
		e.Details = append(e.Details, "go: "+header)
	}
	s.add(e)
}

// parseGoTestLine handles the go test output: the test headers (which say
// whose output follows) and the indented t.Error/t.Fatal log lines.
func parseGoTestLine(s *scanner) bool {
	line := s.lines[s.i]
	if m := goTestRunRE.FindStringSubmatch(line); m != nil {
		s.goTest = m[2]
		s.i++
		return true
	}
	if m := goTestHeadRE.FindStringSubmatch(line); m != nil {
		s.goTest = m[2]
		if m[1] == "FAIL" {
			s.failedTests = append(s.failedTests, m[2])
		} else {
			s.okTests[m[2]] = true
		}
		s.i++
		return true
	}
	m := goTestLogRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	indent := len(m[1])
	e := Error{Tool: "go test", Language: "go", File: s.rel(m[2]), Line: atoi(m[3]), Message: m[4]}
	if s.goTest != "" {
		e.Details = append(e.Details, "test: "+s.goTest)
		s.testErrs[s.goTest] = true
	}
	test := s.goTest
	s.i++
	// A multi-line t.Errorf message continues on lines indented deeper
	// than the first one. go test indents a blank line of the message too
	// (testify's block has one before "Diff:"): it continues the message
	// when the line after it does.
	deeper := func(l string) bool {
		return len(l)-len(strings.TrimLeft(l, " \t")) > indent
	}
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if !deeper(l) {
			break
		}
		if strings.TrimSpace(l) == "" {
			next := s.peek(s.i + 1)
			if strings.TrimSpace(next) == "" || !deeper(next) {
				break
			}
		}
		e.Details = append(e.Details, strings.TrimSpace(l))
		s.i++
	}
	if e.Message == "" {
		s.testify(&e)
	}
	if e.Message == "race detected during execution of test" && s.races > 0 {
		// The race report above says it all; this line only tells that
		// the test failed because of it, and which test that was.
		if r := s.lastRace; test != "" && !slices.Contains(s.out[r].Details, "test: "+test) {
			s.out[r].Details = append(s.out[r].Details, "test: "+test)
		}
		return true
	}
	i := s.add(e)
	s.testOf[i] = test
	if !strings.ContainsAny(m[2], `/\`) {
		s.goTestPending = append(s.goTestPending, goTestLog{i, m[2]})
	}
	return true
}

// lastLogFirst puts the last log line of each test before its other ones.
// The text does not tell t.Log from t.Error, but t.Fatal ends a test and
// tests log what they do before the check that fails, so the last line is
// the failure more often than the first: "converting 0.29 euros" then
// "Cents(0.29) = 28, want 29".
func (s *scanner) lastLogFirst() {
	lines := map[string][]int{}
	for i := range s.out {
		if t, ok := s.testOf[i]; ok {
			lines[t] = append(lines[t], i)
		}
	}
	moved := false
	for _, l := range lines {
		if len(l) > 1 {
			moved = true
			break
		}
	}
	if !moved {
		return
	}
	out := make([]Error, 0, len(s.out))
	testOf := map[int]string{}
	for i, e := range s.out {
		t, ok := s.testOf[i]
		if !ok {
			out = append(out, e)
			continue
		}
		l := lines[t]
		if i != l[0] {
			continue // emitted with the test's first line
		}
		last := l[len(l)-1]
		for _, j := range append([]int{last}, l[:len(l)-1]...) {
			testOf[len(out)] = t
			out = append(out, s.out[j])
		}
	}
	s.out, s.testOf = out, testOf
}

// finishGoTests reports failed tests that printed nothing of their own (a
// bare t.Fail, or a timeout) so that no failure goes unexplained. Parents of
// failed subtests are skipped: the subtest is the failure.
func (s *scanner) finishGoTests() {
	s.lastLogFirst()
	// In -v mode passing tests print their t.Log lines too: drop them.
	if len(s.okTests) > 0 {
		failed := map[string]bool{}
		for _, t := range s.failedTests {
			failed[t] = true
		}
		kept := s.out[:0]
		for i, e := range s.out {
			if t, ok := s.testOf[i]; ok && s.okTests[t] && !failed[t] {
				continue
			}
			kept = append(kept, e)
		}
		s.out = kept
	}
	for _, t := range s.failedTests {
		if s.testErrs[t] {
			continue
		}
		parent := false
		for _, u := range s.failedTests {
			if strings.HasPrefix(u, t+"/") {
				parent = true
				break
			}
		}
		if parent {
			continue
		}
		s.testErrs[t] = true
		s.add(Error{Tool: "go test", Language: "go", Message: t + " failed", Details: []string{"test: " + t}})
	}
}

// parseGoPanic handles "panic: …" and runtime "fatal error: …" followed by
// goroutine traces.
func parseGoPanic(s *scanner) bool {
	line := s.lines[s.i]
	var code, msg string
	switch {
	case strings.HasPrefix(line, "panic: "):
		code, msg = "panic", strings.TrimPrefix(line, "panic: ")
	case strings.HasPrefix(line, "fatal error: "):
		// gcc prints "fatal error:" too, but never at the start of a line
		// and never followed by goroutines.
		ok := false
		for j := s.i + 1; j < len(s.lines) && j <= s.i+6; j++ {
			if goGoroutRE.MatchString(s.lines[j]) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
		code, msg = "fatal error", strings.TrimPrefix(line, "fatal error: ")
	default:
		return false
	}
	e := Error{Tool: "go panic", Language: "go", Code: code}
	if goRecovered.MatchString(msg) {
		msg = goRecovered.ReplaceAllString(msg, "")
		e.Details = append(e.Details, "recovered and re-panicked")
	}
	e.Message = msg
	if s.goTest != "" {
		e.Details = append(e.Details, "test: "+s.goTest)
		s.testErrs[s.goTest] = true
	}
	s.i++
	// Until the first goroutine: the repeated "\tpanic: …" of an older
	// re-panic, "[signal SIGSEGV …]", "goexit" notes.
	for s.i < len(s.lines) && !goGoroutRE.MatchString(s.lines[s.i]) {
		l := strings.TrimSpace(s.lines[s.i])
		if l == "" {
			// A blank line ends the header; goroutines may follow.
			if !goGoroutRE.MatchString(s.peek(s.i + 1)) {
				break
			}
			s.i++
			continue
		}
		if !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "panic: ") && !strings.HasPrefix(s.lines[s.i], "\t") {
			break
		}
		if strings.TrimPrefix(l, "panic: ") != msg {
			e.Details = append(e.Details, l)
		}
		s.i++
	}
	first := true
	timeout := strings.HasPrefix(msg, "test timed out after ")
	for s.i < len(s.lines) && goGoroutRE.MatchString(s.lines[s.i]) {
		s.i++
		frames := s.goFrames()
		if first {
			e.Frames = frames
			first = false
		} else if timeout && !slices.ContainsFunc(e.Frames, func(f Frame) bool { return f.InWorkspace }) &&
			slices.ContainsFunc(frames, func(f Frame) bool { return f.InWorkspace }) {
			// The first goroutine of a timeout is go test's alarm; the
			// one to explain is the test that never returned.
			e.Frames = frames
		}
		for s.i < len(s.lines) && strings.TrimSpace(s.lines[s.i]) == "" && goGoroutRE.MatchString(s.peek(s.i+1)) {
			s.i++
		}
	}
	if strings.HasPrefix(s.peek(s.i), "exit status ") {
		s.i++
	}
	s.add(e)
	return true
}

// goFrames reads "func(args)" + "\tfile:line +0x…" pairs.
func (s *scanner) goFrames() []Frame {
	var frames []Frame
	for s.i < len(s.lines) {
		fn := s.lines[s.i]
		if strings.TrimSpace(fn) == "" || strings.HasPrefix(fn, "\t") {
			break
		}
		if strings.HasPrefix(fn, "...") { // "...additional frames elided..."
			s.i++
			continue
		}
		loc := goFrameLocRE.FindStringSubmatch(s.peek(s.i + 1))
		if loc == nil {
			break
		}
		name := goFuncName(fn)
		f := Frame{File: s.rel(loc[1]), Line: atoi(loc[2]), Func: name}
		// _testmain.go is generated by go test: never the user's code.
		f.InWorkspace = !goStdFunc(name) && !dependencyPath(loc[1]) && s.underWorkspace(loc[1]) &&
			path.Base(loc[1]) != "_testmain.go"
		frames = append(frames, f)
		s.i += 2
	}
	return frames
}

// goFuncName strips the argument list ("(0x1, …)" or "(...)") and the
// "created by … in goroutine N" wording from a trace line.
func goFuncName(l string) string {
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "created by ") {
		l = strings.TrimPrefix(l, "created by ")
		if i := strings.Index(l, " in goroutine "); i >= 0 {
			l = l[:i]
		}
		return l
	}
	if !strings.HasSuffix(l, ")") {
		return l
	}
	depth := 0
	for i := len(l) - 1; i >= 0; i-- {
		switch l[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return l[:i]
			}
		}
	}
	return l
}

// goStdFunc reports functions of the standard library and runtime: their
// package path's first element has no dot (and is not main).
func goStdFunc(fn string) bool {
	pkg := fn
	slash := strings.LastIndexByte(pkg, '/')
	if i := strings.IndexByte(pkg[slash+1:], '.'); i >= 0 {
		pkg = pkg[:slash+1+i]
	}
	if pkg == "main" {
		return false
	}
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// parseGoVetJSON reads the object go vet -json prints for each package:
// {"pkg": {"analyzer": [{"posn": "file:l:c", "message": …}]}}.
func parseGoVetJSON(s *scanner) bool {
	if s.noCloseFrom {
		return false
	}
	end := -1
	for j := s.i + 1; j < len(s.lines); j++ {
		if s.lines[j] == "}" {
			end = j
			break
		}
	}
	if end < 0 {
		// Remember, or a run of "{" lines would be scanned quadratically.
		s.noCloseFrom = true
		return false
	}
	blob := strings.Join(s.lines[s.i:end+1], "\n")
	var doc map[string]map[string]json.RawMessage
	if json.Unmarshal([]byte(blob), &doc) != nil {
		return false
	}
	type diag struct {
		Posn    string `json:"posn"`
		Message string `json:"message"`
	}
	var errs []Error
	for _, pkg := range sortedKeys(doc) {
		analyzers := doc[pkg]
		for _, a := range sortedKeys(analyzers) {
			var ds []diag
			if json.Unmarshal(analyzers[a], &ds) != nil {
				// {"error": "…"} when the package could not be analysed.
				var fail struct{ Error string }
				if json.Unmarshal(analyzers[a], &fail) == nil && fail.Error != "" {
					errs = append(errs, Error{Tool: "go vet", Language: "go", Message: fail.Error})
				}
				continue
			}
			for _, d := range ds {
				e := Error{Tool: "go vet", Language: "go", Code: a, Message: d.Message}
				e.File, e.Line, e.Column = splitPosn(d.Posn)
				e.File = s.rel(e.File)
				errs = append(errs, e)
			}
		}
	}
	sortByPosition(errs)
	s.out = append(s.out, errs...)
	s.i = end + 1
	return true
}

var posnRE = regexp.MustCompile(`^(.*?):(\d+)(?::(\d+))?$`)

func splitPosn(p string) (string, int, int) {
	if m := posnRE.FindStringSubmatch(p); m != nil {
		return m[1], atoi(m[2]), atoi(m[3])
	}
	return p, 0, 0
}

// goJSONStreams holds the Output of go test -json / go build -json events,
// per package in first-seen order.
type goJSONStreams struct {
	order []string
	text  map[string]*strings.Builder
}

// extractGoJSON removes test2json events from lines and reassembles their
// Output per package: the events of parallel packages interleave, and the
// text parsers need each package's output contiguous.
func extractGoJSON(lines []string) ([]string, goJSONStreams) {
	st := goJSONStreams{text: map[string]*strings.Builder{}}
	var rest []string
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"`) || !strings.Contains(l, `"Action"`) {
			rest = append(rest, l)
			continue
		}
		var ev struct {
			Action, Package, ImportPath, Output string
		}
		if json.Unmarshal([]byte(l), &ev) != nil || ev.Action == "" {
			rest = append(rest, l)
			continue
		}
		pkg := ev.Package
		if pkg == "" {
			pkg = ev.ImportPath
		}
		b := st.text[pkg]
		if b == nil {
			b = &strings.Builder{}
			st.text[pkg] = b
			st.order = append(st.order, pkg)
		}
		b.WriteString(ev.Output)
	}
	return rest, st
}

var (
	goRaceAccessRE = regexp.MustCompile(`^((?:Previous )?(?:[Rr]ead|[Ww]rite|[Aa]tomic read|[Aa]tomic write)) at (0x[0-9a-f]+) by (goroutine \d+|main goroutine):$`)
	goRaceFuncRE   = regexp.MustCompile(`^  (\S.*)$`)
	goRaceLocRE    = regexp.MustCompile(`^ {6}(.+?):(\d+)(?: \+0x[0-9a-fA-F]+)?$`)
	goTestifyRE    = regexp.MustCompile(`^(Error Trace|Error|Test|Messages):\s*(.*)$`)
	goStackLocRE   = regexp.MustCompile(`^(.+?\.go):(\d+)(?: \+0x[0-9a-fA-F]+)?$`)
)

// parseGoRace handles the race detector's report: "WARNING: DATA RACE",
// then each access ("Read at 0x… by goroutine 9:") with its stack, then the
// goroutines' creation stacks, up to the "==================" rule. The
// error is located at the first access's deepest frame in the user's code.
func parseGoRace(s *scanner) bool {
	if strings.TrimSpace(s.lines[s.i]) != "WARNING: DATA RACE" {
		return false
	}
	e := Error{Tool: "go race", Language: "go", Code: "data race"}
	if s.goTest != "" {
		e.Details = append(e.Details, "test: "+s.goTest)
	}
	s.i++
	for s.i < len(s.lines) && !strings.HasPrefix(s.lines[s.i], "==================") {
		l := s.lines[s.i]
		m := goRaceAccessRE.FindStringSubmatch(l)
		if m == nil {
			s.i++
			continue
		}
		firstAccess := e.Message == ""
		if firstAccess {
			e.Message = strings.TrimSuffix(l, ":")
		} else {
			e.Details = append(e.Details, strings.TrimSuffix(l, ":"))
		}
		s.i++
		for s.i+1 < len(s.lines) {
			fm := goRaceFuncRE.FindStringSubmatch(s.lines[s.i])
			lm := goRaceLocRE.FindStringSubmatch(s.lines[s.i+1])
			if fm == nil || lm == nil {
				break
			}
			if firstAccess {
				name := goFuncName(fm[1])
				f := Frame{File: s.rel(lm[1]), Line: atoi(lm[2]), Func: name}
				f.InWorkspace = !goStdFunc(name) && !dependencyPath(lm[1]) && s.underWorkspace(lm[1])
				e.Frames = append(e.Frames, f)
			}
			s.i += 2
		}
	}
	if s.i < len(s.lines) {
		s.i++ // the closing rule
	}
	s.races++
	s.lastRace = s.add(e)
	return true
}

// maxTestifyDiff bounds the lines of testify's "Diff:" kept in Details.
const maxTestifyDiff = 12

// testifyDetails restructures the block testify prints under an empty
// t.Errorf line ("Error Trace:", "Error:", "Test:", "Messages:"): the
// message is the Error field (its first lines when it ends with a colon,
// as "Not equal:" does), Details the Messages field then the first
// maxTestifyDiff lines of a "Diff:", the file is the first Error Trace entry, and a
// "Panic stack:" becomes the frames, so that a panic caught by
// assert.NotPanics points at the code that panicked.
func (s *scanner) testify(e *Error) {
	fields := map[string][]string{}
	cur := ""
	for _, d := range e.Details {
		if strings.HasPrefix(d, "test: ") {
			continue
		}
		if m := goTestifyRE.FindStringSubmatch(d); m != nil {
			cur = m[1]
			fields[cur] = append(fields[cur], strings.TrimSpace(m[2]))
			continue
		}
		if cur == "" {
			return
		}
		fields[cur] = append(fields[cur], d)
	}
	msg := fields["Error"]
	if len(msg) == 0 {
		return
	}
	e.Message = msg[0]
	rest := msg[1:]
	if strings.HasSuffix(e.Message, ":") {
		// "Not equal:" + "expected: 6" + "actual  : 5": the values are
		// the message; a diff after them is detail.
		for n := 0; n < 4 && len(rest) > 0 && rest[0] != "" && rest[0] != "Diff:"; n++ {
			e.Message += " " + strings.Join(strings.Fields(rest[0]), " ")
			rest = rest[1:]
		}
	}
	var details []string
	for _, d := range e.Details {
		if strings.HasPrefix(d, "test: ") {
			details = append(details, d)
		}
	}
	// The caller's message explains the check: it comes before the diff.
	if m := fields["Messages"]; len(m) > 0 {
		details = append(details, "Messages: "+strings.Join(m, " "))
	}
	diff := -1 // lines of the diff kept so far, -1 before "Diff:"
	for i := 0; i < len(rest); i++ {
		r := rest[i]
		if strings.HasPrefix(r, "Panic stack:") {
			e.Frames = s.testifyFrames(rest[i+1:])
			break
		}
		if r == "" {
			continue
		}
		if r == "Diff:" {
			diff = 0
		} else if diff >= 0 {
			if diff == maxTestifyDiff {
				details = append(details, "("+strconv.Itoa(len(rest)-i)+" more lines of diff)")
				break
			}
			diff++
		}
		details = append(details, strings.Join(strings.Fields(r), " "))
	}
	if tr := fields["Error Trace"]; len(tr) > 0 {
		file, line, _ := splitPosn(tr[0])
		if line > 0 {
			e.File, e.Line = s.rel(file), line
		}
	}
	e.Details = details
}

// testifyFrames reads "pkg.f(…)" + "/abs/x.go:12 +0x1d" pairs.
func (s *scanner) testifyFrames(lines []string) []Frame {
	var frames []Frame
	for i := 0; i+1 < len(lines); i++ {
		fn := strings.TrimSpace(strings.TrimPrefix(lines[i], "Panic stack:"))
		lm := goStackLocRE.FindStringSubmatch(lines[i+1])
		if lm == nil || !strings.HasSuffix(fn, ")") {
			continue
		}
		name := goFuncName(fn)
		f := Frame{File: s.rel(lm[1]), Line: atoi(lm[2]), Func: name}
		f.InWorkspace = !goStdFunc(name) && !dependencyPath(lm[1]) && s.underWorkspace(lm[1])
		frames = append(frames, f)
		i++
	}
	return frames
}
