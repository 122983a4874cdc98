package errparse

import (
	"regexp"
	"strings"
)

// javac diagnostics and Java runtime exceptions.

var (
	javacRE    = regexp.MustCompile(`^(\S.*?\.java):(\d+): (error|warning|Note|note): (.*)$`)
	javacRawRE = regexp.MustCompile(`^(\S.*?\.java):(\d+):(\d+): (compiler\.(err|warn|note|misc)\.[\w.]+): ?(.*)$`)
	// Maven's compiler plugin: "[ERROR] /abs/A.java:[11,21] msg".
	mavenRE      = regexp.MustCompile(`^\[(ERROR|WARNING|INFO)\] (\S.*?\.(?:java|kt|scala|groovy)):\[(\d+),(\d+)\] (.*)$`)
	javacLintRE  = regexp.MustCompile(`^\[([\w-]+)\] (.*)$`)
	javacDetRE   = regexp.MustCompile(`^\s{2,}(symbol|location|required|found|reason|where|actual and formal argument lists differ|both|first type|second type|lower bounds|upper bounds)\b.*$`)
	javaThreadRE = regexp.MustCompile(`^Exception in thread "(.*?)" (\S+?)(?:: (.*))?$`)
	javaExcRE    = regexp.MustCompile(`^((?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*)(?:: (.*))?$`)
	javaFrameRE  = regexp.MustCompile(`^\s+at ([^\s(]+)\((.*)\)$`)
	javaCauseRE  = regexp.MustCompile(`^(Caused by|Suppressed): (.*)$`)
)

// javaFrameLine tells a Java frame ("at a.B.c(B.java:3)") from a Node one
// ("at c (/x.js:3:5)"): Java has no space before the parenthesis.
func javaFrameLine(l string) bool { return javaFrameRE.MatchString(l) }

// parseJavac handles "A.java:3: error: msg" with its code excerpt, caret
// and indented symbol/location lines, and -XDrawDiagnostics lines.
func parseJavac(s *scanner) bool {
	line := s.lines[s.i]
	if m := javacRawRE.FindStringSubmatch(line); m != nil {
		sev := map[string]string{"err": "error", "warn": "warning", "note": "note", "misc": "note"}[m[5]]
		s.add(Error{Tool: "javac", Language: "java", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), ColumnUnit: UnitUTF16Tab8, Severity: sev, Code: m[4], Message: m[6]})
		s.i++
		return true
	}
	if m := mavenRE.FindStringSubmatch(line); m != nil {
		sev := map[string]string{"ERROR": "error", "WARNING": "warning", "INFO": "note"}[m[1]]
		e := Error{Tool: "javac", Language: LanguageOf(m[2]), File: s.rel(m[2]), Line: atoi(m[3]), Column: atoi(m[4]), ColumnUnit: UnitUTF16Tab8, Severity: sev, Message: m[5], Details: []string{"reported by maven"}}
		if lm := javacLintRE.FindStringSubmatch(m[5]); lm != nil {
			e.Code, e.Message = lm[1], lm[2]
		}
		s.add(e)
		s.i++
		return true
	}
	m := javacRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	e := Error{Tool: "javac", Language: "java", File: s.rel(m[1]), Line: atoi(m[2]), Severity: strings.ToLower(m[3]), Message: m[4]}
	if lm := javacLintRE.FindStringSubmatch(m[4]); lm != nil {
		e.Code, e.Message = lm[1], lm[2]
	}
	s.i++
	// The source line, then a caret under the column.
	if caret := s.peek(s.i + 1); nodeCaretRE.MatchString(caret) && !javacRE.MatchString(s.peek(s.i)) {
		e.Column = len([]rune(caret[:strings.IndexByte(caret, '^')])) + 1
		s.i += 2
	}
	for s.i < len(s.lines) && javacDetRE.MatchString(s.lines[s.i]) {
		e.Details = append(e.Details, strings.Join(strings.Fields(s.lines[s.i]), " "))
		s.i++
	}
	s.add(e)
	return true
}

// parseJavaException handles an uncaught exception ("Exception in thread
// "main" java.lang.X: msg") or a printed stack trace (a dotted class name
// followed by "\tat" frames).
func parseJavaException(s *scanner) bool {
	line := s.lines[s.i]
	var class, msg, thread string
	if m := javaThreadRE.FindStringSubmatch(line); m != nil {
		thread, class, msg = m[1], m[2], m[3]
	} else if m := javaExcRE.FindStringSubmatch(line); m != nil && javaFrameLine(s.peek(s.i+1)) {
		class, msg = m[1], m[2]
	} else {
		return false
	}
	e := Error{Tool: "java", Language: "java", Code: class, Message: msg}
	if msg == "" {
		e.Message = class
	}
	if thread != "" {
		e.Details = append(e.Details, "thread: "+thread)
	}
	s.i++
	// chain holds the exception and its "Caused by:" exceptions, outermost
	// first; suppressed exceptions (indented) only become Details.
	chain := []Error{e}
	cur := &chain[0]
	suppressed := false
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if fm := javaFrameRE.FindStringSubmatch(l); fm != nil {
			if !suppressed {
				cur.Frames = append(cur.Frames, s.javaFrame(fm[1], fm[2]))
			}
			s.i++
			continue
		}
		if cm := javaCauseRE.FindStringSubmatch(strings.TrimSpace(l)); cm != nil {
			if cm[1] == "Caused by" && l == strings.TrimLeft(l, " \t") {
				c := Error{Tool: "java", Language: "java", Message: cm[2]}
				if m := javaExcRE.FindStringSubmatch(cm[2]); m != nil {
					c.Code, c.Message = m[1], m[2]
					if c.Message == "" {
						c.Message = c.Code
					}
				}
				chain = append(chain, c)
				cur = &chain[len(chain)-1]
				suppressed = false
			} else {
				cur.Details = append(cur.Details, strings.TrimSpace(l))
				suppressed = true
			}
			s.i++
			continue
		}
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "... ") && strings.HasSuffix(t, " more") {
			// "... 3 more": the last 3 frames are those of the enclosing
			// exception; restore them so the cause reaches main().
			if n := atoi(strings.TrimSuffix(strings.TrimPrefix(t, "... "), " more")); n > 0 && !suppressed && len(chain) > 1 {
				outer := chain[len(chain)-2].Frames
				if n <= len(outer) {
					cur.Frames = append(cur.Frames, outer[len(outer)-n:]...)
				}
			}
			s.i++
			continue
		}
		break
	}
	s.addChain(chain)
	return true
}

// javaFrame parses "[module/]pkg.Class.method" and "(File.java:12)".
func (s *scanner) javaFrame(fn, loc string) Frame {
	module := ""
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		module, fn = fn[:i], fn[i+1:]
	}
	f := Frame{Func: fn}
	if file, line, ok := strings.Cut(loc, ":"); ok {
		f.File, f.Line = file, atoi(line)
	} else if strings.HasSuffix(loc, ".java") {
		f.File = loc
	}
	// Frames in a named JDK module or a JDK package are never the user's.
	lib := module != "" && module != "app" && !strings.HasPrefix(module, "app/")
	f.InWorkspace = !lib && !javaLibraryFunc(fn) && f.File != ""
	return f
}

func javaLibraryFunc(fn string) bool {
	for _, p := range []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "scala.", "org.junit.", "junit."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
