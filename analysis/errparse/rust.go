package errparse

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// rustc and cargo, human and JSON.

var (
	rustHeadRE  = regexp.MustCompile(`^(error|warning|note|help)(?:\[([A-Za-z]*\d+|[a-z_:]+)\])?: (.*)$`)
	rustArrowRE = regexp.MustCompile(`^\s*--> (.*?):(\d+):(\d+)$`)
	rustSubRE   = regexp.MustCompile(`^(?:\s*= )?(note|help|warning|suggestion)(?:\[\w+\])?: (.*)$`)
	rustLintRE  = regexp.MustCompile(`#\[(?:warn|deny|forbid)\(([\w:]+)\)\]`)
	// --error-format=short / --message-format short: one line per
	// diagnostic, "src/cfg.rs:3:34: error[E0425]: cannot find value …".
	rustShortRE = regexp.MustCompile(`^(\S.*?):(\d+):(\d+): (error|warning|note|help)(?:\[([A-Za-z]*\d+|[a-z_:]+)\])?: (.*)$`)
	rustCodeRE  = regexp.MustCompile(`^E\d{4}$`)
	// cargo's wrappers of a failure whose cause it prints below: the
	// build script's output, the linker's.
	cargoBuildScriptRE = regexp.MustCompile("^failed to run custom build command for `")
	rustLinkFailedRE   = regexp.MustCompile("^linking with `[^`]+` failed")
	// Lines that summarise rather than report.
	rustSummaryRE = regexp.MustCompile(`^(aborting due to|could not compile |build failed|test failed, to rerun pass|Some errors have detailed explanations|For more information about|` + "`" + `[^` + "`" + `]+` + "`" + ` \([^)]*\) generated \d+ warning|\d+ warnings? emitted|unused manifest key)`)
)

func (s *scanner) rustTool() string {
	if s.cargo {
		return "cargo"
	}
	return "rustc"
}

// parseRustHuman handles "error[E0382]: msg" followed by " --> file:l:c",
// the annotated excerpt and note/help sub-diagnostics up to a blank line.
func parseRustHuman(s *scanner) bool {
	line := s.lines[s.i]
	if strings.HasPrefix(line, "For more information about") || strings.HasPrefix(line, "Some errors have detailed explanations") {
		s.i++
		return true
	}
	m := rustHeadRE.FindStringSubmatch(line)
	if m == nil {
		return parseRustShort(s)
	}
	if m[1] == "error" && m[2] == "" && cargoBuildScriptRE.MatchString(m[3]) {
		parseCargoBuildScript(s, m[3])
		return true
	}
	arrow := rustArrowRE.FindStringSubmatch(s.peek(s.i + 1))
	// "error: msg" alone is ambiguous (javac, go, gcc drivers print it);
	// it is rust's when it has a code, an arrow, or cargo is at work.
	if m[2] == "" && arrow == nil && !s.cargo {
		if m[1] == "error" && rustSummaryRE.MatchString(m[3]) {
			s.i++
			return true
		}
		return false
	}
	if rustSummaryRE.MatchString(m[3]) || m[1] == "note" || m[1] == "help" {
		s.i++
		return true
	}
	e := Error{Tool: s.rustTool(), Language: "rust", Severity: m[1], Code: m[2], Message: m[3]}
	s.i++
	if arrow != nil {
		e.File, e.Line, e.Column = s.rel(arrow[1]), atoi(arrow[2]), atoi(arrow[3])
		s.i++
	}
	link := e.Severity == "error" && rustLinkFailedRE.MatchString(e.Message)
	var linker []string // the linker's output, quoted in "= note:" lines
	inLinker := false
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if l == "" || strings.TrimSpace(l) == "" && !inLinker {
			break
		}
		if link {
			// The linker's output starts in a note, its other lines
			// indented under it (blank ones too).
			if text, ok := rustNoteText(l); ok {
				inLinker = linkerOutputStart(text)
				if inLinker {
					linker = append(linker, text)
					s.i++
					continue
				}
			} else if inLinker {
				linker = append(linker, strings.TrimSpace(l))
				s.i++
				continue
			}
		}
		if sm := rustSubRE.FindStringSubmatch(l); sm != nil {
			e.Details = append(e.Details, sm[1]+": "+sm[2])
			if e.Code == "" {
				if lm := rustLintRE.FindStringSubmatch(sm[2]); lm != nil {
					e.Code = lm[1]
				}
			}
		}
		s.i++
	}
	if link && s.addLinkerErrors(e, linker) {
		return true
	}
	s.add(e)
	return true
}

// parseRustShort handles rustc's --error-format=short and cargo's
// --message-format short: "src/cfg.rs:3:34: error[E0425]: msg", the
// message followed by the primary label. It is rust's when the file is a
// .rs file or the code is rustc's (E0425).
func parseRustShort(s *scanner) bool {
	m := rustShortRE.FindStringSubmatch(s.lines[s.i])
	if m == nil || !strings.HasSuffix(m[1], ".rs") && !rustCodeRE.MatchString(m[5]) {
		return false
	}
	sev := m[4]
	if sev == "help" {
		sev = "note"
	}
	s.add(Error{Tool: s.rustTool(), Language: "rust", File: s.rel(m[1]), Line: atoi(m[2]), Column: atoi(m[3]),
		Severity: sev, Code: m[5], Message: m[6]})
	s.i++
	return true
}

// rustNoteRE is a "= note:" line of a rustc diagnostic; its text starts
// at the end of the match.
var rustNoteRE = regexp.MustCompile(`^\s*= note: `)

// rustNoteText returns the text of a "= note:" line.
func rustNoteText(l string) (string, bool) {
	if loc := rustNoteRE.FindStringIndex(l); loc != nil {
		return l[loc[1]:], true
	}
	return "", false
}

// linkerOutputStart reports the first line of the linker's output in a
// note of rustc, as opposed to the command line ("\"cc\" \"-m64\" …") and
// rustc's advice ("some arguments are omitted", "use the `-l` flag …").
func linkerOutputStart(text string) bool {
	return ldPrefixRE.MatchString(text) || ldLineRE.MatchString(text) || ldSectionRE.MatchString(text) ||
		ldMacHeadRE.MatchString(text) || collect2RE.MatchString(text)
}

// addLinkerErrors adds the errors of the linker output rustc quoted in a
// "linking with `cc` failed" diagnostic (rust-lld's "undefined symbol" at
// ">>> referenced by main.rs:7 (src/main.rs:7)", GNU ld's
// "src/main.rs:7: undefined reference to …"), rustc's diagnostic becoming
// their Details. False when the output names no linker error.
func (s *scanner) addLinkerErrors(wrapper Error, linker []string) bool {
	if len(linker) == 0 {
		return false
	}
	sub := newScanner(linker, s.o)
	sub.run()
	found := false
	for _, e := range sub.out {
		if e.Tool != "ld" {
			continue
		}
		if e.Language == "" || e.File == "" || LanguageOf(e.File) == "" {
			e.Language = "rust"
		}
		e.Details = append(e.Details, wrapper.Message)
		for _, d := range wrapper.Details {
			if !strings.HasPrefix(d, "note:  \"") && !strings.HasPrefix(d, "note: some arguments are omitted") {
				e.Details = append(e.Details, d)
			}
		}
		s.add(e)
		found = true
	}
	return found
}

// parseCargoBuildScript handles cargo's report of a failed build script:
// "error: failed to run custom build command for `x v0.1.0 (/path)`",
// notes, then under "Caused by:" the script's exit status and its stdout
// and stderr, indented by two spaces. What the script printed is parsed
// as output of its own (a panic at build.rs:6:43, a compiler's errors);
// its errors carry cargo's message in Details. With none, cargo's message
// is the error.
func parseCargoBuildScript(s *scanner, msg string) {
	e := Error{Tool: "cargo", Language: "rust", Severity: "error", Message: msg}
	s.i++
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if sm := rustSubRE.FindStringSubmatch(l); sm != nil && !strings.HasPrefix(l, " ") {
			e.Details = append(e.Details, sm[1]+": "+sm[2])
			s.i++
			continue
		}
		if strings.TrimSpace(l) == "" {
			s.i++
			continue
		}
		break
	}
	if s.peek(s.i) != "Caused by:" {
		s.add(e)
		return
	}
	s.i++
	var out []string // what the build script printed
	inOutput := false
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if l != "" && !strings.HasPrefix(l, "  ") {
			break
		}
		s.i++
		l = strings.TrimPrefix(l, "  ")
		switch {
		case l == "--- stdout" || l == "--- stderr":
			inOutput = true
		case inOutput:
			out = append(out, l)
		case strings.TrimSpace(l) != "":
			e.Details = append(e.Details, strings.TrimSpace(l))
		}
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	sub := newScanner(out, s.o)
	sub.run()
	if !slices.ContainsFunc(sub.out, func(se Error) bool { return se.Severity == "" || se.Severity == "error" }) {
		// No error recognised (warnings at most): cargo's is the error,
		// the script's last lines the best clue to it.
		tail := out
		if len(tail) > 20 {
			tail = tail[len(tail)-20:]
		}
		for _, l := range tail {
			if t := strings.TrimSpace(l); t != "" {
				e.Details = append(e.Details, t)
			}
		}
		s.add(e)
	}
	for _, se := range sub.out {
		se.Details = append(se.Details, msg)
		s.add(se)
	}
}

type rustSpan struct {
	FileName    string `json:"file_name"`
	LineStart   int    `json:"line_start"`
	ColumnStart int    `json:"column_start"`
	IsPrimary   bool   `json:"is_primary"`
	Label       string `json:"label"`
}

type rustDiag struct {
	Message string `json:"message"`
	Code    *struct {
		Code string `json:"code"`
	} `json:"code"`
	Level    string     `json:"level"`
	Spans    []rustSpan `json:"spans"`
	Children []rustDiag `json:"children"`
}

// parseCargoJSON handles cargo --message-format=json lines; only
// "compiler-message" carries diagnostics (artifacts and build-finished do
// not).
func parseCargoJSON(s *scanner, probe map[string]json.RawMessage) bool {
	var reason string
	if json.Unmarshal(probe["reason"], &reason) != nil {
		return false
	}
	s.i++
	if reason != "compiler-message" {
		return true
	}
	var d rustDiag
	if json.Unmarshal(probe["message"], &d) == nil {
		s.addRustDiag("cargo", d)
	}
	return true
}

// parseRustcJSON handles rustc --error-format=json lines.
func parseRustcJSON(s *scanner, line string) bool {
	var d rustDiag
	if json.Unmarshal([]byte(line), &d) != nil || d.Level == "" {
		return false
	}
	s.i++
	s.addRustDiag(s.rustTool(), d)
	return true
}

func (s *scanner) addRustDiag(tool string, d rustDiag) {
	level := d.Level
	switch {
	case level == "failure-note" || rustSummaryRE.MatchString(d.Message):
		return
	case strings.HasPrefix(level, "error"): // "error: internal compiler error"
		level = "error"
	case level == "help":
		level = "note"
	}
	e := Error{Tool: tool, Language: "rust", Severity: level, Message: d.Message}
	if d.Code != nil {
		e.Code = d.Code.Code
	}
	pick := -1
	for i, sp := range d.Spans {
		if sp.IsPrimary {
			pick = i
			break
		}
	}
	if pick < 0 && len(d.Spans) > 0 {
		pick = 0
	}
	if pick >= 0 {
		sp := d.Spans[pick]
		e.File, e.Line, e.Column = s.rel(sp.FileName), sp.LineStart, sp.ColumnStart
	}
	for _, c := range d.Children {
		e.Details = append(e.Details, c.Level+": "+c.Message)
	}
	s.add(e)
}

var (
	// "thread 'main' panicked at src/main.rs:2:5:" (Rust 1.73+), with the
	// thread id Rust 1.89+ adds ("thread 'main' (12345) panicked at …"),
	// and the older "thread 'main' panicked at 'msg', src/main.rs:2:5".
	rustPanicRE     = regexp.MustCompile(`^thread '([^']*)'(?: \(\d+\))? panicked at (?:'(.*)', )?(\S.*?):(\d+):(\d+):?$`)
	rustTestHeadRE  = regexp.MustCompile(`^---- (\S+) stdout ----$`)
	rustBtFrameRE   = regexp.MustCompile(`^\s*\d+: (?:0x[0-9a-f]+ - )?(.*)$`)
	rustBtLocRE     = regexp.MustCompile(`^\s+at (.*?):(\d+)(?::(\d+))?$`)
	rustPanicEndsRE = regexp.MustCompile(`^(note: run with |note: Some details are omitted|stack backtrace:|---- |failures:$|error: test failed)`)
)

// parseRustPanic handles a Rust panic: the "thread … panicked at" line,
// the message lines after it (an assertion's left/right go to Details), and
// the RUST_BACKTRACE frames. The location is the one Rust prints (the
// caller of unwrap/expect, thanks to #[track_caller]) unless the backtrace
// shows a deeper frame of the user's code. Inside cargo test output the
// test name (from "---- tests::x stdout ----") goes to Details.
func parseRustPanic(s *scanner) bool {
	line := s.lines[s.i]
	if !strings.HasPrefix(line, "thread '") && !strings.HasPrefix(line, "---- ") {
		return false
	}
	if m := rustTestHeadRE.FindStringSubmatch(line); m != nil {
		s.rustTest = m[1]
		s.i++
		return true
	}
	m := rustPanicRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	e := Error{Tool: "rust panic", Language: "rust", Code: "panic", Message: m[2],
		File: s.rel(strings.TrimPrefix(m[3], "./")), Line: atoi(m[4]), Column: atoi(m[5])}
	if s.rustTest != "" && s.rustTest == m[1] {
		e.Details = append(e.Details, "test: "+m[1])
	} else {
		e.Details = append(e.Details, "thread: "+m[1])
	}
	s.i++
	var msg []string
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if strings.TrimSpace(l) == "" || rustPanicEndsRE.MatchString(l) || rustPanicRE.MatchString(l) {
			break
		}
		msg = append(msg, strings.TrimSpace(l))
		s.i++
	}
	if e.Message == "" && len(msg) > 0 {
		e.Message, msg = msg[0], msg[1:]
	}
	e.Details = append(e.Details, msg...)
	if strings.HasPrefix(s.peek(s.i), "note: run with ") {
		s.i++
	}
	if strings.TrimSpace(s.peek(s.i)) == "stack backtrace:" {
		s.i++
		for s.i < len(s.lines) {
			fm := rustBtFrameRE.FindStringSubmatch(s.lines[s.i])
			if fm == nil {
				break
			}
			f := Frame{Func: fm[1]}
			s.i++
			if lm := rustBtLocRE.FindStringSubmatch(s.peek(s.i)); lm != nil {
				file := strings.TrimPrefix(lm[1], "./")
				f.Line, f.Column = atoi(lm[2]), atoi(lm[3])
				f.InWorkspace = !rustLibraryPath(file) && s.underWorkspace(file)
				f.File = s.rel(file)
				s.i++
			}
			e.Frames = append(e.Frames, f)
		}
		if strings.HasPrefix(s.peek(s.i), "note: Some details are omitted") {
			s.i++
		}
	}
	if len(e.Frames) > 0 && !slices.ContainsFunc(e.Frames, func(f Frame) bool { return f.InWorkspace }) {
		// Only library frames (or none with a file): keep Rust's own
		// location, which is where the user's code called in.
		e.Frames = nil
	}
	s.add(e)
	return true
}

// rustLibraryPath reports the standard library (/rustc/<hash>/library/…),
// crates from the registry or git, and the toolchain's own sources.
func rustLibraryPath(p string) bool {
	return strings.HasPrefix(p, "/rustc/") || dependencyPath(p) || strings.Contains(p, "/.cargo/git/") ||
		strings.Contains(p, "/.rustup/toolchains/") || strings.Contains(p, "/cargo/registry/")
}
