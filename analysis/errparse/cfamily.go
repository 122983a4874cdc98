package errparse

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// gcc, g++, clang and the linkers behind them.

var (
	cDiagRE    = regexp.MustCompile(`^(\S.*?):(\d+):(?:(\d+):)? (fatal error|error|warning|note|remark): (.*)$`)
	cContextRE = regexp.MustCompile(`^(\S.*?): ((?:In |At |In instantiation of |In member function |In constructor |In destructor |In lambda function).*):$`)
	cIncludeRE = regexp.MustCompile(`^(In file included|\s+) from (\S.*?):(\d+)(?::\d+)?[,:]$`)
	// "a.cpp:3:5:   required from here" and similar template backtraces.
	cRequiredRE = regexp.MustCompile(`^(\S.*?):(\d+):(\d+):\s+(required .*|in .*expansion.*)$`)
	cExcerptRE  = regexp.MustCompile(`^\s*\d*\s*\|`)
	cFlagRE     = regexp.MustCompile(`\s*\[(-W[\w=+-]+|-f[\w=+-]+|-pedantic)\]$`)
	cDriverRE   = regexp.MustCompile(`^((?:[\w.-]*-)?(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|cc1|cc1plus|cc1obj)(?:-\d+(?:\.\d+)*)?(?:\.exe)?): (fatal error|error|warning|note): (.*)$`)

	ldPrefixRE  = regexp.MustCompile(`^((?:\S*/)?(?:[\w.-]*-)?(?:ld|ld\.bfd|ld\.gold|ld\.lld|lld|ld64\.lld|ld64|mold|gold)(?:\.exe)?): (.*)$`)
	ldFuncRE    = regexp.MustCompile("^(.+?): in function [`'‘\"](.+?)['’\"]:$")
	ldSectionRE = regexp.MustCompile(`^(.+?):\((\.[^)]*)\): (.*)$`)
	ldLineRE    = regexp.MustCompile(`^(.+?):(\d+): ((?:undefined reference to|multiple definition of|more undefined references to) .*)$`)
	ldMacHeadRE = regexp.MustCompile(`^Undefined symbols for architecture \S+:$`)
	// lld: ">>> referenced by main.rs:7 (src/main.rs:7)" (">>> defined at"
	// for a duplicate symbol), the source file and line the debug
	// information gives, the path in parentheses.
	lldRefRE = regexp.MustCompile(`^>>> (?:referenced by|defined at) (\S+?):(\d+)(?: \((.+):(\d+)\))?$`)
	// A Rust codegen unit, which the linker names when the object has no
	// debug information: "ffi.81dcabc1c53af598-cgu.0", "….rcgu.o".
	rustCGURE  = regexp.MustCompile(`-cgu\.\d+(?:\.rcgu\.o)?$|\.rcgu\.o$`)
	collect2RE = regexp.MustCompile(`^(collect2(?:\.exe)?: error: ld returned \d+ exit status|(?:clang|clang\+\+|gcc|g\+\+|cc)(?:-\d+)?: error: linker command failed.*)$`)
)

func (s *scanner) cTool() string {
	if s.clang {
		return "clang"
	}
	return "gcc"
}

func (s *scanner) cLanguage(file string) string {
	if l := LanguageOf(file); l == "c" || l == "cpp" {
		if l == "c" && s.cpp && strings.HasSuffix(file, ".h") {
			return "cpp" // a header seen from C++ code
		}
		return l
	}
	if s.cpp {
		return "cpp"
	}
	return "c"
}

// parseCFamily handles gcc/clang diagnostics, their context lines and the
// compiler driver's own errors.
func parseCFamily(s *scanner) bool {
	line := s.lines[s.i]
	if m := cContextRE.FindStringSubmatch(line); m != nil && !strings.HasSuffix(m[1], ".go") {
		// "At top level:" resets the function context.
		s.cContext = s.cContext[:0]
		if !templateContext(m[2]) {
			s.cAnchor = nil // a new function: errors no longer follow the last one
		}
		if !strings.HasPrefix(m[2], "At top level") {
			s.cContext = append(s.cContext, m[2])
		}
		s.i++
		return true
	}
	if m := cIncludeRE.FindStringSubmatch(line); m != nil {
		s.cContext = append(s.cContext, strings.TrimSpace(line))
		s.i++
		return true
	}
	if m := cRequiredRE.FindStringSubmatch(line); m != nil && !strings.HasSuffix(m[1], ".go") {
		// After "In instantiation of …:" the backtrace belongs to the
		// error that follows; otherwise to the one before.
		if s.instantiation() || s.lastC < 0 {
			s.cContext = append(s.cContext, strings.TrimSpace(line))
		} else {
			s.out[s.lastC].Details = append(s.out[s.lastC].Details, strings.TrimSpace(line))
		}
		s.i++
		return true
	}
	if m := cDriverRE.FindStringSubmatch(line); m != nil {
		tool := "gcc"
		if strings.Contains(m[1], "clang") {
			tool = "clang"
		}
		lang := "c"
		if s.cpp || strings.Contains(m[1], "++") || strings.Contains(m[1], "cc1plus") {
			lang = "cpp"
		}
		s.lastC = s.add(Error{Tool: tool, Language: lang, Severity: cSeverity(m[2]), Message: m[3]})
		s.i++
		return true
	}
	m := cDiagRE.FindStringSubmatch(line)
	if m == nil || strings.HasSuffix(m[1], ".go") || strings.HasSuffix(m[1], ".java") {
		return false
	}
	sev := cSeverity(m[4])
	msg := m[5]
	tool, lang, code := s.diagTool(m[1], msg)
	if tool != s.cTool() {
		// Another tool's "file:line:col: error: msg" (mypy on a .py
		// file): no C context, excerpt or header rules apply.
		s.i++
		if sev == "note" && s.lastC >= 0 && s.out[s.lastC].Tool == tool {
			loc := s.rel(m[1]) + ":" + m[2]
			if m[3] != "" {
				loc += ":" + m[3]
			}
			s.out[s.lastC].Details = append(s.out[s.lastC].Details, loc+": note: "+msg)
			return true
		}
		if code != "" {
			msg = strings.TrimSpace(strings.TrimSuffix(msg, "["+code+"]"))
		}
		s.lastC = s.add(Error{Tool: tool, Language: lang, File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), Severity: sev, Code: code, Message: msg})
		s.cFile[s.lastC] = m[1]
		return true
	}
	s.i++
	// Skip the source excerpt ("  7 |   code", "    |   ^~~~").
	for s.i < len(s.lines) && cExcerptRE.MatchString(s.lines[s.i]) {
		s.i++
	}
	// A note explains the error before it (candidates, previous
	// declarations): it belongs to that error, not on its own.
	if sev == "note" && s.lastC >= 0 {
		loc := s.rel(m[1]) + ":" + m[2]
		if m[3] != "" {
			loc += ":" + m[3]
		}
		last := &s.out[s.lastC]
		last.Details = append(last.Details, loc+": note: "+msg)
		// clang: "template.cpp:6:10: note: in instantiation of … requested
		// here" names the user's line after an error in a system header.
		if strings.HasSuffix(msg, "requested here") && s.userFile(m[1]) && !s.userFile(s.cFile[s.lastC]) && !s.relocated[s.lastC] {
			s.relocate(s.lastC, s.rel(m[1]), atoi(m[2]), atoi(m[3]))
		}
		return true
	}
	e := Error{Tool: s.cTool(), Language: s.cLanguage(m[1]), File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]), Severity: sev, Message: msg}
	if fm := cFlagRE.FindStringSubmatch(msg); fm != nil {
		e.Code = fm[1]
		e.Message = strings.TrimSuffix(msg, fm[0])
	}
	if len(s.cContext) > 0 {
		e.Details = append(e.Details, s.cContext...)
		// An include chain describes one error; a function context lasts
		// until the next one.
		keep := s.cContext[:0]
		for _, c := range s.cContext {
			if !strings.Contains(c, "included from") && !strings.HasPrefix(c, "from ") &&
				!templateContext(c) && !cRequiredRE.MatchString(c) {
				keep = append(keep, c)
			}
		}
		s.cContext = keep
	}
	s.lastC = s.add(e)
	s.cFile[s.lastC] = m[1]
	if !s.userFile(m[1]) {
		// g++: an error inside the standard library's templates, reached
		// from the user's "file:line:col:   required from here".
		for i := len(e.Details) - 1; i >= 0; i-- {
			if rm := cRequiredRE.FindStringSubmatch(e.Details[i]); rm != nil && strings.HasSuffix(rm[4], "required from here") && s.userFile(rm[1]) {
				s.relocate(s.lastC, s.rel(rm[1]), atoi(rm[2]), atoi(rm[3]))
				break
			}
		}
		// The next errors of the same instantiation (or of a failed
		// candidate's substitution) are printed without a backtrace to
		// the user's code: they belong to the user's line the last error
		// was located at.
		if !s.relocated[s.lastC] && s.cAnchor != nil && s.cTool() == "gcc" {
			a := *s.cAnchor
			s.relocate(s.lastC, a.File, a.Line, a.Column)
		}
	}
	if o := s.out[s.lastC]; s.userFile(s.cFile[s.lastC]) || s.relocated[s.lastC] {
		s.cAnchor = &Frame{File: o.File, Line: o.Line, Column: o.Column}
	}
	return true
}

var (
	// mypy's error code at the end of its message: "…; expected "int"  [arg-type]".
	mypyCodeRE = regexp.MustCompile(`  \[([a-z][a-z0-9-]*)\]$`)
	// Extensions of the files gcc and clang report on besides C and C++
	// sources: Objective-C, assembly, CUDA, preprocessed output, template
	// implementation files, and the grammars whose #line directives
	// errors point to.
	cFamilyExt = map[string]bool{
		".m": true, ".mm": true, ".s": true, ".sx": true, ".cu": true, ".cuh": true,
		".i": true, ".ii": true, ".tcc": true, ".txx": true, ".inl": true, ".inc": true, ".def": true,
		".ino": true, ".pde": true, ".y": true, ".yy": true, ".l": true, ".ll": true, ".cl": true,
	}
)

// diagTool names the tool of a "file:line:col: error: msg" line, a form
// gcc and clang share with other compilers and linters: gcc or clang
// for C-family files (and files with no extension: system headers such
// as <vector>, "<stdin>", "<command-line>"), mypy for a Python file with
// mypy's "[code]" (the code returned too) or in output that shows mypy
// at work ("Found 2 errors in 1 file (checked 3 source files)"), and
// for other files a generic "compiler", unless the output shows gcc or
// clang at work. The language is the file's.
func (s *scanner) diagTool(file, msg string) (tool, lang, code string) {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(file, `\`, "/")))
	l := LanguageOf(file)
	switch {
	case ext == "" || l == "c" || l == "cpp" || cFamilyExt[ext] || strings.HasPrefix(file, "<"):
		return s.cTool(), s.cLanguage(file), ""
	case l == "python":
		if m := mypyCodeRE.FindStringSubmatch(msg); m != nil {
			return "mypy", l, m[1]
		}
		if s.mypy || s.lastC >= 0 && s.out[s.lastC].Tool == "mypy" {
			return "mypy", l, "" // a note, or --hide-error-codes
		}
		return "compiler", l, ""
	case s.clang || len(s.cContext) > 0 || s.lastC >= 0 && (s.out[s.lastC].Tool == "gcc" || s.out[s.lastC].Tool == "clang"):
		return s.cTool(), s.cLanguage(file), ""
	}
	return "compiler", l, ""
}

// templateContext reports gcc's context lines of a template backtrace:
// "In instantiation of ‘…’" and SFINAE's "In substitution of ‘…’". They
// describe the next error only, unlike "In function ‘main’".
func templateContext(c string) bool {
	return strings.HasPrefix(c, "In instantiation of ") || strings.HasPrefix(c, "In substitution of ")
}

// instantiation reports whether the pending context opens a template
// instantiation backtrace.
func (s *scanner) instantiation() bool {
	for _, c := range s.cContext {
		if templateContext(c) || strings.Contains(c, "required from") {
			return true
		}
	}
	return false
}

// userFile tells the user's sources from system headers.
func (s *scanner) userFile(p string) bool {
	return !systemPath(p) && s.underWorkspace(p)
}

// relocate points error i at the user's line that led into a system
// header, keeping the header's location in Details.
func (s *scanner) relocate(i int, file string, line, col int) {
	e := &s.out[i]
	at := e.File + ":" + strconv.Itoa(e.Line)
	if e.Column > 0 {
		at += ":" + strconv.Itoa(e.Column)
	}
	e.Details = append(e.Details, "reported in "+at)
	e.File, e.Line, e.Column = file, line, col
	e.Language = s.cLanguage(file)
	s.relocated[i] = true
}

func cSeverity(s string) string {
	switch s {
	case "fatal error":
		return "error"
	case "remark":
		return "note"
	}
	return s
}

// parseLinker handles GNU ld, lld and the macOS linker.
// objectSource names the source file an object file the linker names was
// compiled from, by the build conventions: "b.o" from b.c (b.cpp when the
// output shows C++), CMake's "CMakeFiles/app.dir/src/b.c.o" from src/b.c.
// "" when the name is not an object file's.
func (s *scanner) objectSource(obj string) string {
	stem, ok := strings.CutSuffix(obj, ".o")
	if !ok || stem == "" || strings.HasSuffix(stem, "/") {
		return ""
	}
	if l := LanguageOf(stem); l == "c" || l == "cpp" {
		if i := strings.Index(stem, "CMakeFiles/"); i >= 0 {
			if j := strings.Index(stem[i:], ".dir/"); j >= 0 {
				return stem[:i] + stem[i+j+len(".dir/"):]
			}
		}
		return stem
	}
	if s.cpp {
		return stem + ".cpp"
	}
	return stem + ".c"
}

func parseLinker(s *scanner) bool {
	line := s.lines[s.i]
	if collect2RE.MatchString(line) {
		// The driver's summary of a failed link: context for the linker
		// error before it, an error of its own only when there is none.
		if s.lastLD >= 0 {
			s.out[s.lastLD].Details = append(s.out[s.lastLD].Details, line)
		} else {
			s.lastLD = s.add(Error{Tool: "ld", Language: s.cLanguage(""), Message: line})
		}
		s.i++
		return true
	}
	if ldMacHeadRE.MatchString(line) {
		e := Error{Tool: "ld", Language: s.cLanguage(""), Message: strings.TrimSuffix(line, ":")}
		s.i++
		for s.i < len(s.lines) && (strings.HasPrefix(s.lines[s.i], " ") || strings.HasPrefix(s.lines[s.i], "ld: symbol(s) not found")) {
			e.Details = append(e.Details, strings.TrimSpace(s.lines[s.i]))
			s.i++
		}
		s.lastLD = s.add(e)
		return true
	}
	rest, prefixed := line, false
	if m := ldPrefixRE.FindStringSubmatch(line); m != nil {
		rest, prefixed = m[2], true
	}
	if m := ldFuncRE.FindStringSubmatch(rest); m != nil && prefixed {
		s.ldContext = "in function " + m[2] + " (" + m[1] + ")"
		s.i++
		return true
	}
	var e Error
	switch {
	case ldSectionRE.MatchString(rest):
		m := ldSectionRE.FindStringSubmatch(rest)
		e = Error{File: m[1], Message: m[3], Details: []string{"at " + m[2]}}
	case ldLineRE.MatchString(rest):
		m := ldLineRE.FindStringSubmatch(rest)
		e = Error{File: m[1], Line: atoi(m[2]), Message: m[3]}
	case prefixed:
		e = Error{Message: rest}
		if strings.HasPrefix(rest, "warning: ") {
			e.Severity, e.Message = "warning", strings.TrimPrefix(rest, "warning: ")
		}
		e.Message = strings.TrimPrefix(e.Message, "error: ")
		if strings.HasPrefix(e.Message, "symbol(s) not found") && s.lastLD >= 0 {
			s.out[s.lastLD].Details = append(s.out[s.lastLD].Details, line)
			s.i++
			return true
		}
	default:
		return false
	}
	e.Tool = "ld"
	if rustCGURE.MatchString(e.File) {
		// Rust code without debug information: no source to name.
		e.Details = append(e.Details, "object: "+e.File)
		e.File = ""
	}
	e.Language = s.ldLanguage(e.File)
	if strings.HasSuffix(e.File, ".o") || strings.HasSuffix(e.File, ".a") || strings.HasSuffix(e.File, ".so") {
		e.Language = s.cLanguage("")
	}
	if src := s.objectSource(e.File); src != "" {
		e.Details = append(e.Details, "object: "+e.File)
		e.File = src
	}
	e.File = s.rel(e.File)
	if s.ldContext != "" {
		e.Details = append([]string{s.ldContext}, e.Details...)
		s.ldContext = ""
	}
	s.i++
	// lld: ">>> referenced by a.c" / ">>>               a.o:(main)"; with
	// debug information the first reference names the source line.
	for s.i < len(s.lines) && strings.HasPrefix(strings.TrimSpace(s.lines[s.i]), ">>> ") {
		ref := strings.TrimSpace(s.lines[s.i])
		e.Details = append(e.Details, ref)
		if m := lldRefRE.FindStringSubmatch(ref); m != nil && e.File == "" {
			file, line := m[1], m[2]
			if m[3] != "" {
				file, line = m[3], m[4]
			}
			e.File, e.Line = s.rel(file), atoi(line)
			e.Language = s.ldLanguage(file)
		}
		s.i++
	}
	s.lastLD = s.add(e)
	return true
}

// ldLanguage is the language of the source file a linker error names:
// the one of its extension (a Rust program's main.rs), else C or C++ as
// the output shows.
func (s *scanner) ldLanguage(file string) string {
	if l := LanguageOf(file); l != "" && l != "c" && l != "cpp" {
		return l
	}
	return s.cLanguage(file)
}

var (
	// UndefinedBehaviorSanitizer (clang and gcc -fsanitize=undefined):
	// "src/math/acc.c:6:13: runtime error: signed integer overflow: …",
	// with UBSAN_OPTIONS=print_stacktrace=1 the "#0 0x… in f file:line"
	// frames, and (clang) "SUMMARY: UndefinedBehaviorSanitizer:
	// undefined-behavior src/math/acc.c:6:13 in".
	ubsanRE        = regexp.MustCompile(`^(\S.*?):(\d+):(?:(\d+):)? runtime error: (.*)$`)
	ubsanSummaryRE = regexp.MustCompile(`^SUMMARY: UndefinedBehaviorSanitizer: (\S+)`)

	// A failed assert() as the C library reports it before abort():
	// glibc "prog: src/queue.c:8: push: Assertion `count < 4' failed.",
	// musl "Assertion failed: count < 4 (src/queue.c: push: 8)", macOS
	// and the BSDs "Assertion failed: (count < 4), function push, file
	// src/queue.c, line 8.".
	glibcAssertRE = regexp.MustCompile("^(?:([^\\s:]+): )?(\\S[^:]*?):(\\d+): (?:(.*?): )?Assertion [`'](.*)' failed\\.$")
	muslAssertRE  = regexp.MustCompile(`^Assertion failed: (.*) \((\S[^:]*?): (.*?): (\d+)\)$`)
	bsdAssertRE   = regexp.MustCompile(`^Assertion failed: \((.*)\), function (.*?), file (.*?), line (\d+)\.$`)
)

// parseUBSan handles an UndefinedBehaviorSanitizer report: Tool "ubsan",
// at the place it names (a frame of the user's code when that place is
// in a system header), Code the kind the SUMMARY line gives
// ("undefined-behavior" unless UBSAN_OPTIONS=report_error_type=1 names
// the check).
func parseUBSan(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.Contains(line, ": runtime error: ") {
		return false
	}
	m := ubsanRE.FindStringSubmatch(line)
	if m == nil || strings.HasSuffix(m[1], ".go") {
		return false
	}
	e := Error{Tool: "ubsan", Language: s.cLanguage(m[1]), File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]),
		Code: "undefined-behavior", Message: m[4]}
	s.i++
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if fm := sanFrameRE.FindStringSubmatch(l); fm != nil && !sanFrameObjRE.MatchString(l) {
			f := Frame{Func: fm[1], Line: atoi(fm[3]), Column: atoi(fm[4])}
			f.InWorkspace = !sanitizerRuntime(fm[1], fm[2]) && s.userFile(fm[2])
			f.File = s.rel(fm[2])
			e.Frames = append(e.Frames, f)
			s.i++
			continue
		}
		if sanFrameObjRE.MatchString(l) {
			s.i++
			continue
		}
		if strings.TrimSpace(l) == "" && strings.HasPrefix(s.peek(s.i+1), "SUMMARY: UndefinedBehaviorSanitizer:") {
			s.i++
			continue
		}
		if sm := ubsanSummaryRE.FindStringSubmatch(l); sm != nil {
			if sanKindRE.MatchString(sm[1]) {
				e.Code = sm[1]
			}
			s.i++
		}
		break
	}
	if len(e.Frames) > 0 && s.userFile(m[1]) {
		// The place ubsan names is the user's: it wins over the frames,
		// which gcc prints without a column.
		if f := &e.Frames[0]; f.File == e.File && f.Line == e.Line {
			f.Column = e.Column
		} else {
			e.Frames = append([]Frame{{File: e.File, Line: e.Line, Column: e.Column, InWorkspace: true}}, e.Frames...)
		}
	}
	if l := LanguageOf(e.File); l != "" {
		e.Language = l
	}
	s.add(e)
	return true
}

// parseCAssert handles a failed assert() (see glibcAssertRE): Tool
// "assert", Code "assert", Message "assertion failed: <expression>" in
// every C library's wording, the function in Details.
func parseCAssert(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.Contains(line, "Assertion") {
		return false
	}
	var file, ln, fn, expr, prog string
	if m := glibcAssertRE.FindStringSubmatch(line); m != nil {
		prog, file, ln, fn, expr = m[1], m[2], m[3], m[4], m[5]
	} else if m := bsdAssertRE.FindStringSubmatch(line); m != nil {
		expr, fn, file, ln = m[1], m[2], m[3], m[4]
	} else if m := muslAssertRE.FindStringSubmatch(line); m != nil {
		expr, file, fn, ln = m[1], m[2], m[3], m[4]
	} else {
		return false
	}
	e := Error{Tool: "assert", Language: s.cLanguage(file), File: s.rel(file), Line: atoi(ln), Code: "assert",
		Message: "assertion failed: " + expr}
	if fn != "" {
		e.Details = append(e.Details, "function: "+fn)
	}
	if prog != "" {
		e.Details = append(e.Details, "program: "+prog)
	}
	s.add(e)
	s.i++
	return true
}
