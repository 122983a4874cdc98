package errparse

import (
	"regexp"
	"strings"
)

// Python tracebacks and syntax errors.

var (
	pyFrameRE = regexp.MustCompile(`^\s+File "(.*)", line (\d+)(?:, in (.*))?$`)
	// The exception line: a dotted class name whose last part starts with a
	// capital, optionally followed by ": message".
	pyExcRE = regexp.MustCompile(`^((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?:: ?(.*))?$`)
	pyLibRE = regexp.MustCompile(`/lib/python\d[\d.]*/|/Lib/`)
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
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		m := pyFrameRE.FindStringSubmatch(l)
		if m == nil {
			// Source lines, carets, "[Previous line repeated N more
			// times]": everything indented belongs to the frames.
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				s.i++
				continue
			}
			break
		}
		printed = append(printed, Frame{File: m[1], Line: atoi(m[2]), Func: m[3]})
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
	return s.addPython(m[1], m[2], printed)
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
