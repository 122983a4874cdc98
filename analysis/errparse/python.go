package errparse

import (
	"bufio"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Python tracebacks and syntax errors.

var (
	pyFrameRE = regexp.MustCompile(`^\s+File "(.*)", line (\d+)(?:, in (.*))?$`)
	// The exception line: a dotted class name whose last part starts with a
	// capital, optionally followed by ": message".
	pyExcRE = regexp.MustCompile(`^((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?:: ?(.*))?$`)
	pyLibRE = regexp.MustCompile(`/lib/python\d[\d.]*/|/Lib/`)

	// The warnings module: "/abs/main.py:3: DeprecationWarning: msg",
	// then the source line, indented.
	pyWarningRE = regexp.MustCompile(`^(\S.*?\.pyw?):(\d+): ([A-Z]\w*Warning): (.*)$`)
	// flake8 (pyflakes, pycodestyle; ruff's concise output is the same):
	// "pkg/util.py:5:12: F821 undefined name 'x'".
	flake8RE = regexp.MustCompile(`^(\S.*?\.pyi?):(\d+):(\d+): ([A-Z]{1,3}\d{2,4}) (.*)$`)
	// flake8's classes that stop a build: syntax errors, I/O errors and
	// undefined names (E9, F63, F7, F82, the selection flake8's docs and
	// CI templates use for "errors"); the other codes are style and lint.
	flake8ErrorRE = regexp.MustCompile(`^(E9|F63|F7|F82)`)
	// doctest: the failing example's header at column 0.
	doctestHeadRE = regexp.MustCompile(`^File "(.*)", line (\d+), in (\S+)$`)
)

const (
	pyTracebackHead = "Traceback (most recent call last):"
	pyGroupHead     = "+ Exception Group Traceback (most recent call last):"
	// The lines between the tracebacks of a chain, in Python's output and
	// in pytest's.
	pyChainCause  = "The above exception was the direct cause of the following exception:"
	pyChainDuring = "During handling of the above exception, another exception occurred:"
)

// parsePythonExceptionGroup handles the boxed report of an ExceptionGroup
// (Python 3.11+, asyncio.TaskGroup): "+ Exception Group Traceback …", the
// group's frames and exception behind "| ", then each sub-exception's
// traceback in a "+-+---- 1 ----" section. The box is removed and the text
// inside parsed as usual (nested groups included). The sub-exceptions are
// the root causes: they come first, the group last, as for a chain.
func parsePythonExceptionGroup(s *scanner) bool {
	if strings.TrimSpace(s.lines[s.i]) != pyGroupHead {
		return false
	}
	inner := []string{pyTracebackHead}
	s.i++
	for ; s.i < len(s.lines); s.i++ {
		l := strings.TrimLeft(s.lines[s.i], " ")
		if rest, ok := strings.CutPrefix(l, "|"); ok {
			inner = append(inner, strings.TrimPrefix(rest, " "))
			continue
		}
		if strings.HasPrefix(l, "+-") {
			continue // a sub-exception's separator, or the box's end
		}
		break
	}
	sub := newScanner(inner, s.o)
	sub.run()
	if len(sub.out) == 0 {
		return true
	}
	group := sub.out[0]
	causes := sub.out[1:]
	for i := range causes {
		causes[i].Details = append(causes[i].Details, "in exception group: "+group.Code+": "+group.Message)
	}
	for _, e := range causes {
		s.add(e)
	}
	s.add(group)
	return true
}

// parsePythonTraceback handles a full traceback, or the bare block Python
// prints for a SyntaxError in the main script ("  File "x.py", line 2").
func parsePythonTraceback(s *scanner) bool {
	line := s.lines[s.i]
	if strings.TrimSpace(line) == pyTracebackHead {
		s.i++
	} else if !pyFrameRE.MatchString(line) {
		// Also a traceback whose header was cut off, and the bare block
		// of a SyntaxError in the main script (a frame without ", in").
		return false
	}
	var printed []Frame // outermost first, as Python prints them
	var under []string  // the lines under the last frame: source, caret
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		m := pyFrameRE.FindStringSubmatch(l)
		if m == nil {
			// Source lines, carets, "[Previous line repeated N more
			// times]": everything indented belongs to the frames.
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				under = append(under, l)
				s.i++
				continue
			}
			break
		}
		printed = append(printed, Frame{File: m[1], Line: atoi(m[2]), Func: m[3]})
		under = nil
		s.i++
	}
	if s.i >= len(s.lines) {
		return len(printed) > 0 && s.addPython("", "", printed)
	}
	exc := strings.TrimSpace(s.lines[s.i])
	m := pyExcRE.FindStringSubmatch(exc)
	if m == nil {
		// Not an exception line: a truncated traceback. Keep what we have
		// so the frames are not lost.
		return len(printed) > 0 && s.addPython("", exc, printed)
	}
	s.i++
	if len(printed) > 0 && pySyntaxError(m[1]) && len(under) >= 2 {
		last := &printed[len(printed)-1]
		last.Column = s.pyCaretColumn(last.File, last.Line, under[0], under[1])
	}
	return s.addPython(m[1], m[2], printed)
}

// pySyntaxError reports the exception classes whose block Python prints
// with the source line and a caret under the column: SyntaxError and its
// subclasses.
func pySyntaxError(class string) bool {
	switch class[strings.LastIndexByte(class, '.')+1:] {
	case "SyntaxError", "IndentationError", "TabError":
		return true
	}
	return false
}

// maxPySourceReads bounds the files one Parse reads for the carets of
// syntax errors: pasted output can hold any number of them.
const maxPySourceReads = 16

// pyCaretColumn is the 1-based column, in characters, that the caret
// under a SyntaxError's source line points at, or 0 when it cannot be
// told. Python prints the line without its indentation (and the caret
// relative to that), so the indentation is read from the file: with no
// file to read, or a file whose line is not the one printed (it changed
// since), there is no column rather than a wrong one. The start of a
// range ("^^^^", Python 3.10 and later) is the column.
func (s *scanner) pyCaretColumn(file string, line int, src, caret string) int {
	text, ok := strings.CutPrefix(src, "    ")
	if !ok || !nodeCaretRE.MatchString(caret) || line <= 0 {
		return 0
	}
	inCaret, ok := strings.CutPrefix(caret, "    ")
	if !ok {
		return 0
	}
	at := utf8.RuneCountInString(inCaret[:strings.IndexByte(inCaret, '^')])
	if s.pyReads >= maxPySourceReads {
		return 0
	}
	s.pyReads++
	full, ok := readLine(s.sourcePath(file), line)
	if !ok {
		return 0
	}
	full = strings.TrimRight(full, " \t\f\r\n")
	text = strings.TrimRight(text, " \t\f\r\n")
	indent := len(full) - len(text)
	if text == "" || indent < 0 || full[indent:] != text || strings.Trim(full[:indent], " \t\f") != "" {
		return 0
	}
	return utf8.RuneCountInString(full[:indent]) + at + 1
}

// sourcePath is where the file a tool named, as printed, is on disk: an
// absolute path as it is, a relative one under the directory make entered,
// the directory the tool ran in (Options.Dir) or the workspace.
func (s *scanner) sourcePath(p string) string {
	p = strings.TrimPrefix(p, "file://")
	if p == "" || isAbs(p) {
		return p
	}
	if n := len(s.makeDirs); n > 0 {
		p = path.Join(s.makeDirs[n-1], p)
		if isAbs(p) {
			return p
		}
	}
	base := s.o.Dir
	if base == "" {
		base = s.o.Workspace
	}
	if base == "" {
		return p
	}
	return filepath.Join(base, filepath.FromSlash(p))
}

// maxSourceRead bounds how much of a file readLine reads.
const maxSourceRead = 8 << 20

// readLine returns the 1-based line n of a text file, without its line
// terminator.
func readLine(name string, n int) (string, bool) {
	if name == "" || n <= 0 {
		return "", false
	}
	f, err := os.Open(filepath.FromSlash(name))
	if err != nil {
		return "", false
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, maxSourceRead))
	for i := 1; ; i++ {
		l, err := r.ReadString('\n')
		if i == n {
			if err != nil && err != io.EOF || err == io.EOF && l == "" {
				return "", false
			}
			return strings.TrimRight(l, "\r\n"), true
		}
		if err != nil {
			return "", false
		}
	}
}

func (s *scanner) addPython(code, msg string, printed []Frame) bool {
	e := Error{Tool: "python", Language: "python", Code: code, Message: msg}
	if msg == "" {
		e.Message = code
	}
	// Innermost first: Python prints the most recent call last.
	for i := len(printed) - 1; i >= 0; i-- {
		f := printed[i]
		f.InWorkspace = !pyLibraryPath(f.File) && s.underWorkspace(f.File)
		f.File = s.rel(f.File)
		e.Frames = append(e.Frames, f)
	}
	// Exception messages may continue on following unindented lines only
	// in rare cases; a blank line or the next traceback ends them anyway.
	s.add(e)
	return true
}

func pyLibraryPath(p string) bool {
	if strings.HasPrefix(p, "<") { // <frozen runpy>, <string>, <stdin>
		return true
	}
	np := strings.ReplaceAll(p, `\`, "/")
	return dependencyPath(np) || pyLibRE.MatchString(np)
}

// parsePythonWarning handles a warning printed by the warnings module, and
// flake8's lines. A warning is primary only when nothing failed.
func parsePythonWarning(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.Contains(line, ".py") {
		return false
	}
	if m := flake8RE.FindStringSubmatch(line); m != nil {
		sev := "warning"
		if flake8ErrorRE.MatchString(m[4]) {
			sev = "error"
		}
		// pyflakes (F) and mccabe (C9) give the ast's offsets, in bytes;
		// pycodestyle (E, W) and most plugins count characters.
		unit := UnitChars
		if strings.HasPrefix(m[4], "F") || strings.HasPrefix(m[4], "C9") {
			unit = UnitBytes
		}
		s.add(Error{Tool: "flake8", Language: "python", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), ColumnUnit: unit, Severity: sev, Code: m[4], Message: m[5]})
		s.i++
		return true
	}
	m := pyWarningRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	e := Error{Tool: "python", Language: "python", File: s.rel(m[1]), Line: atoi(m[2]), Severity: "warning", Code: m[3], Message: m[4]}
	s.i++
	if l := s.peek(s.i); strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "" {
		e.Details = append(e.Details, "code: "+strings.TrimSpace(l))
		s.i++
	}
	s.add(e)
	return true
}

// parseDoctest handles a doctest failure: "File "/abs/x.py", line 6, in
// mod.f" at column 0, "Failed example:" and the example, then "Expected:"
// / "Got:" (or "Expected nothing" / "Got nothing"), or "Exception
// raised:" and the traceback. The error is at the example's line; its
// message says what was expected and what came, or is the exception.
func parseDoctest(s *scanner) bool {
	if !strings.HasPrefix(s.lines[s.i], `File "`) {
		return false
	}
	m := doctestHeadRE.FindStringSubmatch(s.lines[s.i])
	if m == nil || strings.TrimSpace(s.peek(s.i+1)) != "Failed example:" {
		return false
	}
	e := Error{Tool: "doctest", Language: "python", File: s.rel(m[1]), Line: atoi(m[2]), Details: []string{"test: " + m[3]}}
	s.i += 2
	blocks := map[string][]string{}
	cur := "example"
lines:
	for ; s.i < len(s.lines); s.i++ {
		l := s.lines[s.i]
		if strings.HasPrefix(l, "*****") || doctestHeadRE.MatchString(l) {
			break
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.TrimSpace(l) == "" {
			if t := strings.TrimSpace(l); t != "" {
				blocks[cur] = append(blocks[cur], t)
			}
			continue
		}
		switch t := strings.TrimSpace(l); t {
		case "Expected:", "Got:", "Exception raised:":
			cur = strings.TrimSuffix(t, ":")
		case "Expected nothing", "Got nothing":
			cur = strings.TrimSuffix(t, " nothing")
			blocks[cur] = []string{"nothing"}
		default:
			break lines // not doctest's: the report ended
		}
	}
	if ex := blocks["example"]; len(ex) > 0 {
		e.Details = append(e.Details, "example: "+strings.Join(ex, " "))
	}
	if tb := blocks["Exception raised"]; len(tb) > 0 {
		last := tb[len(tb)-1]
		if x := pyExcRE.FindStringSubmatch(last); x != nil {
			e.Code, e.Message = x[1], x[2]
			if e.Message == "" {
				e.Message = x[1]
			}
		} else {
			e.Message = last
		}
		e.Details = append(e.Details, tb...)
	} else {
		want, got := strings.Join(blocks["Expected"], "\n"), strings.Join(blocks["Got"], "\n")
		e.Message = "expected " + firstLine(want) + ", got " + firstLine(got)
		if strings.Contains(want, "\n") || strings.Contains(got, "\n") {
			e.Details = append(e.Details, "expected: "+want, "got: "+got)
		}
	}
	s.add(e)
	return true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
