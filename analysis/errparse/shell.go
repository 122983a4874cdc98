package errparse

import (
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// bash, shellcheck, CMake, make's directory changes and the sanitizers.

var (
	// "deploy.sh: line 4: deploy_to: command not found" (bash) and
	// "deploy.sh: 4: deploy_to: not found" (dash, as /bin/sh).
	bashErrRE = regexp.MustCompile(`^(\S+?): line (\d+): (.*)$`)
	dashErrRE = regexp.MustCompile(`^(\S+?\.(?:sh|bash)): (\d+): (.*)$`)
	// A syntax error in a command string: "bash: -c: line 1: syntax error…".
	bashCmdErrRE = regexp.MustCompile(`^((?:\S*/)?(?:bash|sh|dash|zsh|ksh)): -c: line (\d+): (.*)$`)
	// shellcheck -f gcc: "x.sh:5:12: note: msg [SC2086]".
	shellcheckGccRE = regexp.MustCompile(`^(\S.*?):(\d+):(\d+): (error|warning|note|info|style): (.*) \[(SC\d+)\]$`)
	// shellcheck -f tty: "In x.sh line 5:", the code, then one caret line
	// per finding: "           ^-----^ SC2086 (info): msg".
	shellcheckTtyRE   = regexp.MustCompile(`^In (\S.*) line (\d+):$`)
	shellcheckCaretRE = regexp.MustCompile(`^(\s*)\^[-^]*\s+(SC\d+) \((error|warning|info|style)\): (.*)$`)

	cmakeRE     = regexp.MustCompile(`^CMake (Error|Warning|Deprecation Warning)(?: \(dev\))? at (\S.*?):(\d+) \((\w+)\):$`)
	cmakeBareRE = regexp.MustCompile(`^CMake (Error|Warning)(?: \(dev\))?: (.*)$`)

	makeDirRE   = regexp.MustCompile("^g?make(?:\\[\\d+\\])?: (Entering|Leaving) directory [`'‘](.*)['’]$")
	makeErrorRE = regexp.MustCompile(`^g?make(?:\[\d+\])?: \*\*\* `)
	// "make: *** [Makefile:4: version.h] Error 127": the rule's file and
	// the line of the recipe command that failed.
	makeRecipeRE = regexp.MustCompile(`^g?make(?:\[\d+\])?: \*\*\* \[(\S+?):(\d+): (.*?)\] (Error \d+.*)$`)

	sanitizerRE   = regexp.MustCompile(`^==\d+==ERROR: (Address|Leak|Thread|Memory)Sanitizer: (\S+)(.*)$`)
	sanFrameRE    = regexp.MustCompile(`^\s+#\d+ 0x[0-9a-f]+ in (\S+) (.*?)(?::(\d+))?(?::(\d+))?$`)
	sanFrameObjRE = regexp.MustCompile(`^\s+#\d+ 0x[0-9a-f]+ (?:in \S+ )?\(`)
	// "SUMMARY: AddressSanitizer: double-free …": the report's kind, when
	// the first line says it in words ("attempting double-free on …").
	sanSummaryRE = regexp.MustCompile(`^SUMMARY: \w+Sanitizer: ([A-Za-z]+(?:-[a-z]+)*)\b`)
	sanKindRE    = regexp.MustCompile(`^(?:[a-z]+(?:-[a-z]+)+|SEGV|BUS|FPE|ILL)$`)
)

func shellSeverity(s string) string {
	switch s {
	case "error", "warning":
		return s
	}
	return "note"
}

// parseShell handles bash's and dash's own errors and shellcheck's gcc
// and tty formats.
func parseShell(s *scanner) bool {
	line := s.lines[s.i]
	// Cheap checks first: these run on every line that nothing else took.
	if !strings.Contains(line, "[SC") && !strings.HasPrefix(line, "In ") && !strings.Contains(line, ": line ") &&
		!strings.Contains(line, ".sh: ") && !strings.Contains(line, ".bash: ") {
		return false
	}
	if m := shellcheckGccRE.FindStringSubmatch(line); m != nil {
		s.add(Error{Tool: "shellcheck", Language: "shell", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]),
			Severity: shellSeverity(m[4]), Code: m[6], Message: m[5]})
		s.i++
		return true
	}
	if m := shellcheckTtyRE.FindStringSubmatch(line); m != nil {
		s.i++
		n := 0
		for s.i < len(s.lines) && strings.TrimSpace(s.lines[s.i]) != "" {
			if c := shellcheckCaretRE.FindStringSubmatch(s.lines[s.i]); c != nil {
				s.add(Error{Tool: "shellcheck", Language: "shell", File: s.rel(m[1]), Line: atoi(m[2]),
					Column: len([]rune(c[1])) + 1, Severity: shellSeverity(c[3]), Code: c[2], Message: c[4]})
				n++
			}
			s.i++
		}
		return true
	}
	m := bashErrRE.FindStringSubmatch(line)
	if m == nil {
		m = dashErrRE.FindStringSubmatch(line)
	}
	next := bashErrRE
	if m == nil {
		m, next = bashCmdErrRE.FindStringSubmatch(line), bashCmdErrRE
	}
	if m == nil || strings.HasSuffix(m[1], ".go") {
		return false
	}
	e := Error{Tool: "bash", Language: "shell", File: s.rel(m[1]), Line: atoi(m[2]), Message: m[3]}
	if shellNames[path.Base(m[1])] {
		// "bash: line 3: …" from bash -c '…': the name is the shell's
		// ($0), not a file, and the line is the command string's.
		e.File, e.Line = "", 0
		e.Details = []string{"line " + m[2] + " of the command string"}
	}
	s.add(e)
	s.i++
	// After "syntax error near unexpected token", bash echoes the line
	// ("x.sh: line 4: `fi fi'"): part of the same error.
	if strings.HasPrefix(m[3], "syntax error") {
		if n := next.FindStringSubmatch(s.peek(s.i)); n != nil && n[1] == m[1] && n[2] == m[2] &&
			strings.HasPrefix(n[3], "`") && strings.HasSuffix(n[3], "'") {
			s.out[len(s.out)-1].Details = append(s.out[len(s.out)-1].Details, "line: "+strings.TrimSuffix(strings.TrimPrefix(n[3], "`"), "'"))
			s.i++
		}
	}
	return true
}

// shellcheckComment is one finding of shellcheck -f json1 ({"comments":
// [...]}) or -f json (the bare array).
type shellcheckComment struct {
	File    string  `json:"file"`
	Line    int     `json:"line"`
	Column  int     `json:"column"`
	Level   string  `json:"level"`
	Code    *int    `json:"code"`
	Message *string `json:"message"`
}

// parseShellcheckJSON handles shellcheck's JSON formats; ok is false when
// the line is not one of them.
func parseShellcheckJSON(s *scanner, line string) bool {
	var comments []shellcheckComment
	if strings.HasPrefix(line, "[") {
		if json.Unmarshal([]byte(line), &comments) != nil {
			return false
		}
	} else {
		var doc struct {
			Comments *[]shellcheckComment `json:"comments"`
		}
		if json.Unmarshal([]byte(line), &doc) != nil || doc.Comments == nil {
			return false
		}
		comments = *doc.Comments
	}
	for _, c := range comments {
		if c.Code == nil || c.Message == nil || c.Level == "" {
			return false // not shellcheck's
		}
	}
	for _, c := range comments {
		s.add(Error{Tool: "shellcheck", Language: "shell", File: s.rel(c.File), Line: c.Line, Column: c.Column,
			Severity: shellSeverity(c.Level), Code: "SC" + strconv.Itoa(*c.Code), Message: *c.Message})
	}
	s.i++
	return true
}

// shellNames are the names a shell prints for itself when it runs a
// command string (bash -c, sh -c: $0) or its startup environment.
var shellNames = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "-bash": true, "environment": true}

// parseCMake handles "CMake Error at CMakeLists.txt:4 (add_executable):"
// with its indented message (Code is the command), and "CMake Error: …".
func parseCMake(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.HasPrefix(line, "CMake ") {
		return false
	}
	if m := cmakeBareRE.FindStringSubmatch(line); m != nil && !strings.Contains(m[2], " at ") {
		sev := "error"
		if m[1] == "Warning" {
			sev = "warning"
		}
		s.add(Error{Tool: "cmake", Language: "cmake", Severity: sev, Message: m[2]})
		s.i++
		return true
	}
	m := cmakeRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	e := Error{Tool: "cmake", Language: "cmake", File: s.rel(m[2]), Line: atoi(m[3]), Code: m[4], Severity: "error"}
	if m[1] != "Error" {
		e.Severity = "warning"
	}
	s.i++
	var body []string
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if l != "" && !strings.HasPrefix(l, " ") {
			break
		}
		if t := strings.TrimSpace(l); t != "" {
			body = append(body, t)
		}
		s.i++
	}
	if len(body) > 0 {
		e.Message, body = body[0], body[1:]
		// "Cannot find source file:" + "missing.c": the value is part of
		// the message.
		if strings.HasSuffix(e.Message, ":") && len(body) > 0 {
			e.Message += " " + body[0]
			body = body[1:]
		}
	}
	e.Details = body
	s.add(e)
	return true
}

// parseMake follows make's "Entering directory" / "Leaving directory"
// lines: the compilers it runs name files relative to that directory (see
// scanner.rel). Its own "*** [Makefile:4: target] Error 1" lines are
// usually the echo of a compiler error above them; when the output holds no
// other error (a recipe command that is missing or failed without saying
// where), the first of them is the error, at the recipe's line.
func parseMake(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.HasPrefix(line, "make") && !strings.HasPrefix(line, "gmake") {
		return false
	}
	if m := makeDirRE.FindStringSubmatch(line); m != nil {
		if m[1] == "Entering" {
			s.makeDirs = append(s.makeDirs, m[2])
		} else if len(s.makeDirs) > 0 {
			s.makeDirs = s.makeDirs[:len(s.makeDirs)-1]
		}
		s.i++
		return true
	}
	if makeErrorRE.MatchString(line) {
		if m := makeRecipeRE.FindStringSubmatch(line); m != nil && s.makeFailure == nil {
			e := Error{Tool: "make", Language: "make", File: s.rel(m[1]), Line: atoi(m[2]), Message: m[4] + " making " + m[3]}
			if prev := strings.TrimSpace(s.peek(s.i - 1)); prev != "" && !makeErrorRE.MatchString(prev) && !makeDirRE.MatchString(prev) {
				e.Message = prev
				e.Details = []string{"target " + m[3] + ": " + m[4]}
			}
			s.makeFailure = &e
		}
		s.i++
		return true
	}
	return false
}

// finishMake adds make's own failure when nothing else explains it.
func (s *scanner) finishMake() {
	if s.makeFailure == nil {
		return
	}
	for _, e := range s.out {
		if e.Severity == "" || e.Severity == "error" {
			return
		}
	}
	s.add(*s.makeFailure)
}

// parseSanitizer handles an AddressSanitizer (or Leak/Thread/Memory
// sanitizer) report: "==N==ERROR: AddressSanitizer: heap-buffer-overflow
// on address …", the access line, the "#0 0x… in f file:line[:col]" frames
// of the faulting access, then the allocation stacks and shadow bytes,
// which are skipped up to "==N==ABORTING".
func parseSanitizer(s *scanner) bool {
	if !strings.HasPrefix(s.lines[s.i], "==") {
		return false
	}
	m := sanitizerRE.FindStringSubmatch(s.lines[s.i])
	if m == nil {
		return false
	}
	tool := map[string]string{"Address": "asan", "Leak": "lsan", "Thread": "tsan", "Memory": "msan"}[m[1]]
	msg := m[2] + m[3]
	if i := strings.Index(msg, " at pc "); i >= 0 {
		msg = msg[:i]
	}
	e := Error{Tool: tool, Language: s.cLanguage(""), Code: sanitizerCode(m[2], msg), Message: msg}
	s.i++
	first := true
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if strings.HasPrefix(l, "==") && strings.HasSuffix(l, "==ABORTING") {
			s.i++
			break
		}
		if sanitizerRE.MatchString(l) {
			break
		}
		s.i++
		if fm := sanFrameRE.FindStringSubmatch(l); fm != nil && !sanFrameObjRE.MatchString(l) {
			if first {
				f := Frame{Func: fm[1], Line: atoi(fm[3]), Column: atoi(fm[4])}
				f.InWorkspace = !sanitizerRuntime(fm[1], fm[2]) && s.underWorkspace(fm[2]) && !systemPath(fm[2])
				f.File = s.rel(fm[2])
				e.Frames = append(e.Frames, f)
			}
			continue
		}
		if sanFrameObjRE.MatchString(l) {
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" {
			first = len(e.Frames) == 0
			continue
		}
		if sm := sanSummaryRE.FindStringSubmatch(t); sm != nil && sanKindRE.MatchString(sm[1]) {
			e.Code = sm[1]
		}
		if strings.HasPrefix(t, "SUMMARY: ") || strings.HasPrefix(t, "Shadow byte") {
			// The rest is the shadow memory dump and its legend.
			for s.i < len(s.lines) && !strings.HasSuffix(s.lines[s.i], "==ABORTING") && !sanitizerRE.MatchString(s.lines[s.i]) {
				s.i++
			}
			continue
		}
		if len(e.Details) < 4 && !strings.HasPrefix(t, "#") {
			e.Details = append(e.Details, t)
		}
	}
	if e.Language == "" || LanguageOf(firstFile(e.Frames)) != "" {
		e.Language = LanguageOf(firstFile(e.Frames))
	}
	s.add(e)
	return true
}

// sanitizerCode is the kind of a sanitizer report, taken from its first
// line: "heap-buffer-overflow on address …" → heap-buffer-overflow,
// LeakSanitizer's "detected memory leaks" → memory-leak. The SUMMARY line,
// when it names a kind, overrides it (see parseSanitizer).
func sanitizerCode(first, msg string) string {
	switch {
	case strings.HasPrefix(msg, "detected memory leaks"):
		return "memory-leak"
	case strings.HasPrefix(msg, "data race"):
		return "data-race"
	case strings.HasPrefix(msg, "attempting double-free"):
		return "double-free"
	case strings.HasPrefix(msg, "attempting free on address which was not malloc()-ed"):
		return "bad-free"
	}
	return first
}

// sanitizerRuntime reports the frames of the sanitizer's runtime and of
// the C library's startup code, which are never the user's code: the
// interceptors of memcpy or malloc ("__interceptor_memcpy" in
// …/libsanitizer/sanitizer_common/…), "__asan_memcpy", and
// "__libc_start_main_impl ../csu/libc-start.c".
func sanitizerRuntime(fn, file string) bool {
	for _, p := range []string{"__interceptor_", "__asan_", "__lsan_", "__tsan_", "__msan_", "__sanitizer_", "__ubsan_", "__libc_start", "___interceptor_"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	f := strings.ReplaceAll(file, `\`, "/")
	for _, d := range []string{"libsanitizer/", "compiler-rt/lib/", "sysdeps/", "csu/", "/sanitizer_common/", "/asan/asan_", "/lsan/lsan_", "/tsan/", "/msan/"} {
		if strings.HasPrefix(f, d) || strings.Contains(f, "/"+d) {
			return true
		}
	}
	return strings.HasPrefix(fn, "__") && f == ""
}

func firstFile(fs []Frame) string {
	for _, f := range fs {
		if f.InWorkspace {
			return f.File
		}
	}
	return ""
}

// systemPath reports the compiler's and the system's headers and
// libraries: an error there is never where the user's mistake is.
func systemPath(p string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	for _, d := range []string{"/usr/include/", "/usr/lib/", "/usr/local/include/", "/usr/bin/../lib/", "/include/c++/", "/Library/Developer/", "/Applications/Xcode", "Program Files", "/opt/homebrew/include/"} {
		if strings.Contains(p, d) {
			return true
		}
	}
	return false
}
