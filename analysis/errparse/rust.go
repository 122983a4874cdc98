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
		return false
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
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if strings.TrimSpace(l) == "" {
			break
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
	s.add(e)
	return true
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
