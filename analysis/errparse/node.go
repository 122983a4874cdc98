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
	// node --test prints "TypeError [Error]: msg": the bracket holds the
	// constructor, not a code.
	nodeErrRE   = regexp.MustCompile(`^(?:Uncaught )?([A-Z][\w$]*)(?: \[(?:([A-Z0-9_]+)|[A-Z]\w*)\])?(?:: (.*))?$`)
	nodeFrameRE = regexp.MustCompile(`^\s+at (.*)$`)
	nodeLocRE   = regexp.MustCompile(`^(.*?):(\d+):(\d+)$`)
	nodeTestRE  = regexp.MustCompile(`^\s*✖ (.+?) \(\d[\d.]*m?s\)$`)
)

// parseNodeError handles Node's report of an uncaught exception: the
// optional throw-site header with its code excerpt, the "Name: message"
// line, then "    at …" frames and an optional "{ code: … }" block.
func parseNodeError(s *scanner) bool {
	start := s.i
	var head *Error
	if m := nodeTestRE.FindStringSubmatch(s.lines[s.i]); m != nil {
		// node --test's spec reporter: "✖ name (1.2ms)" heads the
		// failure of that test.
		s.nodeTest = m[1]
		s.i++
		return true
	}
	if m := nodeHeadRE.FindStringSubmatch(s.lines[s.i]); m != nil && nodeCaretRE.MatchString(s.peek(s.i+2)) {
		caret := s.peek(s.i + 2)
		head = &Error{File: m[1], Line: atoi(m[2]), Column: len([]rune(caret[:strings.IndexByte(caret, '^')])) + 1}
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
	// Blank lines inside the message ("Expected values to be strictly
	// equal:\n\n-1 !== 3\n") are allowed when frames follow.
	var extra []string
	j := s.i + 1
	for ; j < len(s.lines) && j <= s.i+12; j++ {
		l := s.lines[j]
		if nodeFrameRE.MatchString(l) {
			break
		}
		if strings.TrimSpace(l) == "" {
			k := j + 1
			for k < len(s.lines) && k <= s.i+12 && !nodeFrameRE.MatchString(s.lines[k]) {
				k++
			}
			if !nodeFrameRE.MatchString(s.peek(k)) || k > s.i+12 {
				break
			}
			continue
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
		if e.Code == "SyntaxError" {
			// A SyntaxError's frames are those of the require() or
			// import that loaded the file; the header is the mistake.
			f := Frame{File: head.File, Line: head.Line, Column: head.Column}
			f.InWorkspace = !nodeLibraryPath(f.File) && s.underWorkspace(f.File)
			f.File = s.rel(f.File)
			e.Frames = append(e.Frames, f)
		}
	}
	if s.nodeTest != "" {
		e.Details = append(e.Details, "test: "+s.nodeTest)
	}
	s.i = j
	chain := []Error{e}
	s.nodeFrames(&chain[0], &chain)
	if e := &chain[0]; e.File == "" && head != nil && len(e.Frames) == 0 {
		e.File, e.Line = head.File, head.Line
	}
	s.addChain(chain)
	return true
}

// nodeFrames reads "at …" frames into e, and the "{ … }" block of the
// error's own properties after the last one; a "[cause]: Error: …" in that
// block is the next exception of the chain, appended to chain with its own
// frames.
func (s *scanner) nodeFrames(e *Error, chain *[]Error) {
	idx := len(*chain) - 1
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "... ") && strings.HasSuffix(t, " stack trace ...") {
			// "... 5 lines matching cause stack trace ..."
			s.i++
			continue
		}
		fm := nodeFrameRE.FindStringSubmatch(l)
		if fm == nil {
			break
		}
		body := strings.TrimSpace(fm[1])
		props := strings.HasSuffix(body, " {")
		body = strings.TrimSuffix(body, " {")
		f := s.nodeFrame(body)
		(*chain)[idx].Frames = append((*chain)[idx].Frames, f)
		s.i++
		if !props {
			continue
		}
		// Own properties of the error object, up to the closing brace.
		for s.i < len(s.lines) && strings.TrimSpace(s.lines[s.i]) != "}" {
			p := strings.TrimSpace(s.lines[s.i])
			if rest, ok := strings.CutPrefix(p, "[cause]: "); ok {
				if m := nodeErrRE.FindStringSubmatch(rest); m != nil {
					c := Error{Tool: "node", Language: "javascript", Code: m[1], Message: m[3]}
					if m[2] != "" {
						c.Code = m[2]
					}
					if c.Message == "" {
						c.Message = m[1]
					}
					*chain = append(*chain, c)
					s.i++
					s.nodeFrames(&c, chain)
					continue
				}
			}
			if p != "" {
				(*chain)[idx].Details = append((*chain)[idx].Details, strings.TrimSuffix(p, ","))
			}
			s.i++
		}
		s.i++
		break
	}
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
