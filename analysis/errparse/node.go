package errparse

import (
	"regexp"
	"strings"
)

// Node.js uncaught exceptions.

var (
	// "/abs/a.js:3", "node:fs:448", "file:///x.mjs:3": the throw site Node
	// prints above the code excerpt.
	nodeHeadRE  = regexp.MustCompile(`^(\S.*):(\d+)$`)
	nodeCaretRE = regexp.MustCompile(`^\s*\^+\s*$`)
	// "TypeError: msg", "Error [ERR_X]: msg", "Uncaught RangeError: msg".
	nodeErrRE   = regexp.MustCompile(`^(?:Uncaught )?([A-Z][\w$]*)(?: \[([A-Z0-9_]+)\])?(?:: (.*))?$`)
	nodeFrameRE = regexp.MustCompile(`^\s+at (.*)$`)
	nodeLocRE   = regexp.MustCompile(`^(.*?):(\d+):(\d+)$`)
)

// parseNodeError handles Node's report of an uncaught exception: the
// optional throw-site header with its code excerpt, the "Name: message"
// line, then "    at …" frames and an optional "{ code: … }" block.
func parseNodeError(s *scanner) bool {
	start := s.i
	var head *Error
	if m := nodeHeadRE.FindStringSubmatch(s.lines[s.i]); m != nil && nodeCaretRE.MatchString(s.peek(s.i+2)) {
		head = &Error{File: m[1], Line: atoi(m[2])}
		s.i += 3
		for s.i < len(s.lines) && strings.TrimSpace(s.lines[s.i]) == "" {
			s.i++
		}
	}
	m := nodeErrRE.FindStringSubmatch(strings.TrimSpace(s.peek(s.i)))
	if m == nil || !looksLikeErrorName(m[1]) && head == nil {
		s.i = start
		return false
	}
	// The message may run over several lines ("Require stack:\n- /a.js")
	// before the frames; look ahead for the first frame.
	var extra []string
	j := s.i + 1
	for ; j < len(s.lines) && j <= s.i+12; j++ {
		l := s.lines[j]
		if nodeFrameRE.MatchString(l) || strings.TrimSpace(l) == "" {
			break
		}
		extra = append(extra, strings.TrimSpace(l))
	}
	hasFrames := nodeFrameRE.MatchString(s.peek(j)) && !javaFrameLine(s.peek(j))
	if !hasFrames && head == nil {
		s.i = start
		return false
	}
	e := Error{Tool: "node", Language: "javascript", Code: m[1], Message: m[3], Details: extra}
	if m[2] != "" {
		e.Code = m[2]
	}
	if e.Message == "" {
		e.Message = m[1]
	}
	if head != nil && !strings.HasPrefix(head.File, "node:") {
		e.File, e.Line = s.rel(head.File), head.Line
	}
	s.i = j
	for s.i < len(s.lines) {
		fm := nodeFrameRE.FindStringSubmatch(s.lines[s.i])
		if fm == nil {
			break
		}
		body := strings.TrimSpace(fm[1])
		props := strings.HasSuffix(body, " {")
		body = strings.TrimSuffix(body, " {")
		e.Frames = append(e.Frames, s.nodeFrame(body))
		s.i++
		if props {
			// Own properties of the error object, up to the closing brace.
			for s.i < len(s.lines) && strings.TrimSpace(s.lines[s.i]) != "}" {
				if p := strings.TrimSpace(s.lines[s.i]); p != "" {
					e.Details = append(e.Details, strings.TrimSuffix(p, ","))
				}
				s.i++
			}
			s.i++
			break
		}
	}
	if e.File == "" && head != nil && len(e.Frames) == 0 {
		e.File, e.Line = head.File, head.Line
	}
	s.add(e)
	return true
}

// looksLikeErrorName accepts the names JavaScript errors have, so that a
// random "Note: …" line is not taken for one.
func looksLikeErrorName(n string) bool {
	return n == "Error" || strings.HasSuffix(n, "Error") || strings.HasSuffix(n, "Exception") || n == "AggregateError"
}

// nodeFrame parses the part after "at ": "f (loc)", "loc", "async f (loc)",
// "new C (loc)", "Array.map (<anonymous>)".
func (s *scanner) nodeFrame(body string) Frame {
	fn, loc := "", body
	if strings.HasSuffix(body, ")") {
		if i := strings.LastIndex(body, " ("); i >= 0 {
			fn, loc = body[:i], body[i+2:len(body)-1]
		}
	}
	fn = strings.TrimPrefix(fn, "async ")
	f := Frame{Func: fn, File: loc}
	if m := nodeLocRE.FindStringSubmatch(loc); m != nil {
		f.File, f.Line, f.Column = m[1], atoi(m[2]), atoi(m[3])
	}
	f.InWorkspace = !nodeLibraryPath(f.File) && s.underWorkspace(f.File)
	f.File = s.rel(f.File)
	return f
}

func nodeLibraryPath(p string) bool {
	return p == "" || strings.HasPrefix(p, "node:") || strings.HasPrefix(p, "<") ||
		p == "native" || strings.HasPrefix(p, "internal/") || dependencyPath(p)
}
