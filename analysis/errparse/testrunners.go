package errparse

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Test runners whose reports are not a language's own crash output: pytest,
// jest, vitest and node --test's TAP reporter. (node --test's spec reporter
// prints Node's usual error format and is read by parseNodeError.)

var (
	pytestRootRE = regexp.MustCompile(`^rootdir: (\S.*?)(?:, .*)?$`)
	pytestHeadRE = regexp.MustCompile(`^_{3,} (\S.*?) _{3,}$`)
	// The long style's "test_x.py:8: KeyError"; a setup error ends with
	// the bare "test_x.py:9" of the test that asked for the fixture.
	pytestLongLocRE = regexp.MustCompile(`^(\S+?\.py):(\d+)(?:: ?([A-Za-z_][\w.]*)?)?$`)
	// A fixture pytest cannot provide: "file /x/test_api.py, line 9", then
	// the test's def line and "E       fixture 'clinet' not found".
	pytestFileLineRE = regexp.MustCompile(`^file (\S.*), line (\d+)$`)
	// The phase of an error outside the test's body: "ERROR at setup of
	// test_x" names the test that the summary line names test_x.
	pytestPhaseRE   = regexp.MustCompile(`^ERROR at (setup|teardown) of (\S.*)$`)
	pytestShortRE   = regexp.MustCompile(`^(\S+?\.py):(\d+): in (\S+)$`)
	pytestSummaryRE = regexp.MustCompile(`^(FAILED|ERROR) (\S+?\.py)(?:::(\S+))?(?: - (.*))?$`)
	// --tb=line: one "path.py:12: message" line per failure.
	pytestLineRE    = regexp.MustCompile(`^(\S+?\.py):(\d+): (\S.*)$`)
	pytestSectionRE = regexp.MustCompile(`^={3,} (\S.*?) ={3,}$`)

	jestHeadRE   = regexp.MustCompile(`^\s*● (\S.*)$`)
	jestCodeRE   = regexp.MustCompile(`^\s*>?\s*\d+ \|`)
	jestCaretRE  = regexp.MustCompile(`^\s*\|\s*\^`)
	vitestHeadRE = regexp.MustCompile(`^\s*FAIL\s+(\S+) > (.*)$`)
	vitestLocRE  = regexp.MustCompile(`^\s*❯ (?:(\S+) )?(\S+?):(\d+):(\d+)$`)
	vitestCodeRE = regexp.MustCompile(`^\s*\d*\|`)

	tapNotOkRE = regexp.MustCompile(`^\s*not ok \d+ - (.*?)(?: # .*)?$`)
	tapFieldRE = regexp.MustCompile(`^(\s+)([A-Za-z_]\w*): ?(.*)$`)
)

// pythonError splits an "E   ZeroDivisionError: division by zero" line
// into class and message; a bare "assert x == y" is an AssertionError.
func pythonError(line string) (code, msg string) {
	if strings.HasPrefix(line, "assert ") || line == "assert" {
		return "AssertionError", line
	}
	if m := pyExcRE.FindStringSubmatch(line); m != nil {
		if m[2] == "" {
			return m[1], m[1]
		}
		return m[1], m[2]
	}
	return "", line
}

// parsePytest handles pytest's report: the rootdir line (file names are
// relative to it), one section per failure under a "____ test_x ____" rule
// in the long (default) or short traceback style, and the "FAILED
// file::test - msg" summary lines, which become errors of their own only
// for tests no section described (pytest -q --tb=no, or a pasted summary).
// The error is located at the innermost frame of the user's code; "E   "
// lines give the exception and message.
func parsePytest(s *scanner) bool {
	line := s.lines[s.i]
	if !s.pytest && !strings.HasPrefix(line, "FAILED ") && !strings.HasPrefix(line, "ERROR ") {
		return false
	}
	if m := pytestRootRE.FindStringSubmatch(line); m != nil {
		s.pytestRoot = m[1]
		s.i++
		return true
	}
	if m := pytestSummaryRE.FindStringSubmatch(line); m != nil {
		// A section names a test of a class TestX.test_y, the summary
		// TestX::test_y.
		test := strings.ReplaceAll(m[3], "::", ".")
		if s.pytestSeen[test] && m[3] != "" {
			// A section without a traceback (--tb=line prints only the
			// "E" lines of a setup error): the summary names the file.
			for _, j := range s.pytestTestErrs[test] {
				if s.out[j].File == "" && len(s.out[j].Frames) == 0 {
					s.out[j].File = s.rel(s.pytestPath(m[2]))
				}
			}
		}
		if !s.pytestSeen[test] || m[3] == "" {
			e := Error{Tool: "pytest", Language: "python", File: s.rel(s.pytestPath(m[2]))}
			e.Code, e.Message = pythonError(m[4])
			if e.Message == "" {
				e.Message = m[1] + " " + m[3]
			}
			if j := s.pytestLineFailure(e); j >= 0 {
				// The --tb=line report of the same failure: it has
				// the line, this one the test's name.
				if m[3] != "" {
					s.out[j].Details = append(s.out[j].Details, "test: "+m[3])
				}
				s.i++
				return true
			}
			if m[3] != "" {
				e.Details = append(e.Details, "test: "+m[3])
			}
			s.add(e)
		}
		s.i++
		return true
	}
	if m := pytestSectionRE.FindStringSubmatch(line); m != nil && s.pytestSession() {
		s.pytestSection = m[1]
		s.i++
		return true
	}
	if s.pytestSection == "FAILURES" && s.pytestSession() {
		if m := pytestLineRE.FindStringSubmatch(line); m != nil && !pytestShortRE.MatchString(line) {
			file := s.pytestPath(m[1])
			e := Error{Tool: "pytest", Language: "python", File: s.rel(file), Line: atoi(m[2])}
			e.Code, e.Message = pythonError(m[3])
			s.pytestLines = append(s.pytestLines, s.add(e))
			s.i++
			return true
		}
	}
	m := pytestHeadRE.FindStringSubmatch(line)
	if m == nil || strings.HasPrefix(m[1], "_ ") || !s.pytestSession() {
		return false
	}
	test := m[1]
	e := Error{Tool: "pytest", Language: "python", Details: []string{"test: " + test}}
	if pm := pytestPhaseRE.FindStringSubmatch(test); pm != nil {
		test = pm[2]
		e.Details = []string{"test: " + test, "during: " + pm[1]}
	}
	// One part per exception of a chain, in printed order: the original
	// cause first, then each exception raised while handling it.
	type part struct {
		printed []Frame
		eLines  []string
		code    string
	}
	parts := []part{{}}
	var section []string
	anyE := false
	s.i++
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if pytestHeadRE.MatchString(l) && !strings.HasPrefix(l, "_ _") || strings.HasPrefix(l, "===") {
			break
		}
		s.i++
		section = append(section, l)
		if t := strings.TrimRight(l, " "); t == pyChainCause || t == pyChainDuring {
			parts = append(parts, part{})
			continue
		}
		p := &parts[len(parts)-1]
		if fm := pytestFileLineRE.FindStringSubmatch(l); fm != nil {
			p.printed = append(p.printed, s.pytestFrame(fm[1], fm[2], ""))
			continue
		}
		if rest, ok := strings.CutPrefix(l, "E "); ok {
			p.eLines = append(p.eLines, strings.TrimSpace(rest))
			anyE = true
			continue
		}
		if fm := pytestShortRE.FindStringSubmatch(l); fm != nil {
			p.printed = append(p.printed, s.pytestFrame(fm[1], fm[2], fm[3]))
			continue
		}
		if fm := pytestLongLocRE.FindStringSubmatch(l); fm != nil {
			if f := s.pytestFrame(fm[1], fm[2], ""); len(p.printed) == 0 || p.printed[len(p.printed)-1] != f {
				p.printed = append(p.printed, f)
			}
			if fm[3] != "" {
				p.code = fm[3]
			}
		}
	}
	if s.pytestSeen == nil {
		s.pytestSeen = map[string]bool{}
		s.pytestTestErrs = map[string][]int{}
	}
	first := len(s.out)
	if !anyE && s.pytestNative(section, e.Details) {
		// --tb=native: Python's own traceback, read as Python's.
		s.pytestSeen[test] = true
		s.pytestTestErrs[test] = pytestRange(first, len(s.out))
		return true
	}
	var chain []Error
	for _, p := range parts {
		if len(p.eLines) == 0 && len(p.printed) == 0 && len(parts) > 1 {
			continue
		}
		pe := e
		pe.Details = slices.Clone(e.Details)
		pe.Code = p.code
		if len(p.eLines) > 0 {
			code, msg := pythonError(p.eLines[0])
			if pe.Code == "" || code != "AssertionError" {
				pe.Code = code
			}
			pe.Message = msg
			pe.Details = append(pe.Details, p.eLines[1:]...)
		}
		if pe.Message == "" {
			pe.Message = test + " failed"
		}
		for i := len(p.printed) - 1; i >= 0; i-- {
			pe.Frames = append(pe.Frames, p.printed[i])
		}
		chain = append(chain, pe)
	}
	// The chain policy of Python's own tracebacks: every exception is an
	// Error, the root cause first (addChain takes them outermost first).
	slices.Reverse(chain)
	s.addChain(chain)
	s.pytestSeen[test] = true
	s.pytestTestErrs[test] = pytestRange(first, len(s.out))
	return true
}

func pytestRange(from, to int) []int {
	var r []int
	for i := from; i < to; i++ {
		r = append(r, i)
	}
	return r
}

// pytestNative reads a failure section printed with --tb=native, which
// holds Python's own traceback (chained ones included) instead of pytest's
// frames and "E" lines. The errors are pytest's, named after the test. It
// reports false when the section holds no traceback.
func (s *scanner) pytestNative(section, details []string) bool {
	if !slices.ContainsFunc(section, func(l string) bool { return strings.TrimSpace(l) == pyTracebackHead }) {
		return false
	}
	sub := newScanner(section, s.o)
	sub.run()
	if len(sub.out) == 0 {
		return false
	}
	for _, e := range sub.out {
		e.Tool = "pytest"
		e.Details = append(slices.Clone(details), e.Details...)
		s.add(e)
	}
	return true
}

// pytestSession tells pytest's "____ name ____" rules from other
// underlined text: the output shows pytest at work.
func (s *scanner) pytestSession() bool {
	return s.pytestRoot != "" || s.pytest
}

// pytestLineFailure returns the index of the --tb=line failure that e, a
// summary line's error, reports again, or -1. The line names where the
// exception was raised (often not the test file the summary names), so
// the two are matched by exception and message, each line once, in
// order; a summary message cut to the terminal's width ends in "...".
func (s *scanner) pytestLineFailure(e Error) int {
	for k, j := range s.pytestLines {
		if j < 0 {
			continue
		}
		o := s.out[j]
		same := o.Message == e.Message
		if cut, ok := strings.CutSuffix(e.Message, "..."); ok && !same {
			same = cut != "" && strings.HasPrefix(o.Message, cut)
		}
		if same && (o.Code == e.Code || e.Code == "") {
			s.pytestLines[k] = -1
			return j
		}
	}
	return -1
}

func (s *scanner) pytestPath(p string) string {
	if s.pytestRoot != "" && !isAbs(p) {
		p = path.Join(s.pytestRoot, p)
	}
	return p
}

func (s *scanner) pytestFrame(file, line, fn string) Frame {
	file = s.pytestPath(file)
	f := Frame{File: file, Line: atoi(line), Func: fn}
	f.InWorkspace = !pyLibraryPath(file) && !strings.Contains(file, "/_pytest/") && s.underWorkspace(file)
	f.File = s.rel(file)
	return f
}

// parseJest handles a jest failure: "● suite › test", the matcher or error
// message, the code excerpt, then "at f (file:line:col)" frames (relative
// to the root directory).
func parseJest(s *scanner) bool {
	if !s.jest {
		return false
	}
	m := jestHeadRE.FindStringSubmatch(s.lines[s.i])
	if m == nil {
		return false
	}
	e := Error{Tool: "jest", Language: "javascript", Details: []string{"test: " + m[1]}}
	s.i++
	var msg []string
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if jestHeadRE.MatchString(l) || strings.HasPrefix(l, "Test Suites:") {
			break
		}
		s.i++
		t := strings.TrimSpace(l)
		switch {
		case t == "" || jestCodeRE.MatchString(l) || jestCaretRE.MatchString(l):
		case strings.HasPrefix(t, "at "):
			f := s.nodeFrame(strings.TrimPrefix(t, "at "))
			e.Frames = append(e.Frames, f)
		default:
			if len(e.Frames) == 0 {
				msg = append(msg, t)
			}
		}
	}
	if len(msg) > 0 {
		e.Message = msg[0]
		if em := nodeErrRE.FindStringSubmatch(msg[0]); em != nil && looksLikeErrorName(em[1]) && em[3] != "" {
			e.Code, e.Message = em[1], em[3]
		}
		e.Details = append(e.Details, msg[1:]...)
	}
	if e.Message == "" {
		e.Message = m[1] + " failed"
	}
	s.add(e)
	return true
}

// parseVitest handles a vitest failure: " FAIL  file > test", the
// "AssertionError: …" line, the diff, then "❯ [fn] file:line:col" frames
// with code excerpts, up to the "⎯⎯⎯" rule.
func parseVitest(s *scanner) bool {
	if !strings.Contains(s.lines[s.i], "FAIL") {
		return false
	}
	m := vitestHeadRE.FindStringSubmatch(s.lines[s.i])
	if m == nil {
		return false
	}
	e := Error{Tool: "vitest", Language: "javascript", Details: []string{"test: " + m[2]}}
	s.i++
	var msg []string
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if strings.HasPrefix(strings.TrimSpace(l), "⎯") || vitestHeadRE.MatchString(l) {
			break
		}
		s.i++
		if fm := vitestLocRE.FindStringSubmatch(l); fm != nil {
			f := Frame{Func: fm[1], Line: atoi(fm[3]), Column: atoi(fm[4])}
			f.InWorkspace = !nodeLibraryPath(fm[2]) && s.underWorkspace(fm[2])
			f.File = s.rel(fm[2])
			e.Frames = append(e.Frames, f)
			continue
		}
		if t := strings.TrimSpace(l); t != "" && !vitestCodeRE.MatchString(l) && len(e.Frames) == 0 {
			msg = append(msg, t)
		}
	}
	if len(msg) > 0 {
		e.Message = msg[0]
		if em := nodeErrRE.FindStringSubmatch(msg[0]); em != nil && em[3] != "" {
			e.Code, e.Message = em[1], em[3]
		}
		e.Details = append(e.Details, msg[1:]...)
	}
	if e.Message == "" {
		e.Message = m[2] + " failed"
	}
	s.add(e)
	return true
}

// parseTAP handles a failed test in node --test's TAP output: "not ok N -
// name" and its YAML block (error, code, name, stack).
func parseTAP(s *scanner) bool {
	if !strings.Contains(s.lines[s.i], "not ok ") {
		return false
	}
	m := tapNotOkRE.FindStringSubmatch(s.lines[s.i])
	if m == nil || strings.TrimSpace(s.peek(s.i+1)) != "---" {
		return false
	}
	base := len(s.peek(s.i+1)) - len(strings.TrimLeft(s.peek(s.i+1), " "))
	s.i += 2
	fields := map[string][]string{}
	cur := ""
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if strings.TrimSpace(l) == "..." {
			s.i++
			break
		}
		s.i++
		if fm := tapFieldRE.FindStringSubmatch(l); fm != nil && len(fm[1]) == base {
			cur = fm[2]
			if v := strings.TrimSpace(fm[3]); v != "|-" && v != "|" && v != ">-" {
				fields[cur] = append(fields[cur], strings.Trim(v, `'"`))
			}
			continue
		}
		if cur != "" && strings.TrimSpace(l) != "" {
			fields[cur] = append(fields[cur], strings.TrimSpace(l))
		}
	}
	errLines := fields["error"]
	if len(errLines) == 0 {
		// A passing subtest's parent or a cancelled test: nothing to
		// explain beyond the name.
		errLines = []string{m[1] + " failed"}
	}
	e := Error{Tool: "node", Language: "javascript", Message: errLines[0], Details: []string{"test: " + m[1]}}
	e.Details = append(e.Details, errLines[1:]...)
	code, name := first(fields["code"]), first(fields["name"])
	e.Code = code
	if code == "" || code == "ERR_TEST_FAILURE" {
		// The runner's wrapper code says nothing of the error itself.
		e.Code = name
	}
	for _, f := range fields["stack"] {
		e.Frames = append(e.Frames, s.nodeFrame(f))
	}
	if len(e.Frames) == 0 {
		if loc := first(fields["location"]); loc != "" {
			e.File, e.Line, e.Column = splitPosn(loc)
			e.File = s.rel(e.File)
		}
	}
	s.add(e)
	return true
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}
