package errparse

import (
	"encoding/json"
	"regexp"
	"strings"
)

// rustc and cargo, human and JSON.

var (
	rustHeadRE  = regexp.MustCompile(`^(error|warning|note|help)(?:\[([A-Za-z]*\d+|[a-z_:]+)\])?: (.*)$`)
	rustArrowRE = regexp.MustCompile(`^\s*--> (.*?):(\d+):(\d+)$`)
	rustSubRE   = regexp.MustCompile(`^(?:\s*= )?(note|help|warning|suggestion)(?:\[\w+\])?: (.*)$`)
	rustLintRE  = regexp.MustCompile(`#\[(?:warn|deny|forbid)\(([\w:]+)\)\]`)
	// Lines that summarise rather than report.
	rustSummaryRE = regexp.MustCompile(`^(aborting due to|could not compile |build failed|Some errors have detailed explanations|For more information about|` + "`" + `[^` + "`" + `]+` + "`" + ` \([^)]*\) generated \d+ warning|\d+ warnings? emitted|unused manifest key)`)
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
