package errparse

import (
	"encoding/json"
	"regexp"
	"strings"
)

// tsc and ESLint.

var (
	tscRE       = regexp.MustCompile(`^(\S.*?)\((\d+),(\d+)\): (error|warning|message|suggestion) (TS\d+): (.*)$`)
	tscPrettyRE = regexp.MustCompile(`^(\S.*?):(\d+):(\d+) - (error|warning|message|suggestion) (TS\d+): (.*)$`)
	tscGlobalRE = regexp.MustCompile(`^(error|warning|message) (TS\d+): (.*)$`)

	eslintRowRE = regexp.MustCompile(`^\s+(\d+):(\d+)\s+(error|warning)\s+(.*)$`)
	eslintRule  = regexp.MustCompile(`^(@[\w.-]+/)?[\w.-]+(/[\w.-]+)*$`)
	spaces2RE   = regexp.MustCompile(`\s{2,}`)

	// ESLint's one-line formatters, which print no severity word where a
	// compiler does (-f unix, -f compact, -f visualstudio; the last is
	// MSBuild's canonical form, which other tools print too):
	//   /abs/a.js:2:9: 'x' is assigned a value but never used. [Error/no-unused-vars]
	//   /abs/a.js: line 2, col 9, Error - 'x' is assigned … (no-unused-vars)
	//   /abs/a.js(2,9): error no-unused-vars : 'x' is assigned …
	eslintUnixRE    = regexp.MustCompile(`^(\S.*?):(\d+):(\d+): (.*) \[(Error|Warning)(?:/([^\]\s]+))?\]$`)
	eslintCompactRE = regexp.MustCompile(`^(\S.*?): line (\d+), col (\d+), (Error|Warning) - (.*?)(?: \(([@\w./-]+)\))?$`)
	eslintVSRE      = regexp.MustCompile(`^(\S.*?)\((\d+)(?:,(\d+))?\): (error|warning)(?: ([@\w./-]+))? ?: (.*)$`)
)

// parseTSC handles both tsc forms; the indented lines right after the
// header are the rest of the message chain ("Type 'x' is not assignable…").
func parseTSC(s *scanner) bool {
	line := s.lines[s.i]
	var e Error
	if m := tscRE.FindStringSubmatch(line); m != nil {
		e = Error{File: m[1], Line: atoi(m[2]), Column: atoi(m[3]), Severity: m[4], Code: m[5], Message: m[6]}
	} else if m := tscPrettyRE.FindStringSubmatch(line); m != nil {
		e = Error{File: m[1], Line: atoi(m[2]), Column: atoi(m[3]), Severity: m[4], Code: m[5], Message: m[6]}
	} else if m := tscGlobalRE.FindStringSubmatch(line); m != nil {
		e = Error{Severity: m[1], Code: m[2], Message: m[3]}
	} else {
		return false
	}
	if e.Severity == "message" || e.Severity == "suggestion" {
		e.Severity = "note"
	}
	e.Tool, e.File = "tsc", s.rel(e.File)
	e.Language = LanguageOf(e.File)
	if e.Language == "" {
		e.Language = "typescript"
	}
	s.i++
	for s.i < len(s.lines) {
		l := s.lines[s.i]
		if !strings.HasPrefix(l, "  ") || strings.TrimSpace(l) == "" {
			break
		}
		e.Details = append(e.Details, strings.TrimSpace(l))
		s.i++
	}
	s.add(e)
	return true
}

// parseESLintStylish handles a file header line followed by rows
// "  3:7  error  message  rule-id".
func parseESLintStylish(s *scanner) bool {
	header := s.lines[s.i]
	if strings.HasPrefix(header, " ") || strings.HasPrefix(header, "\t") || !eslintRowRE.MatchString(s.peek(s.i+1)) {
		return false
	}
	file := strings.TrimSpace(header)
	s.i++
	for s.i < len(s.lines) {
		m := eslintRowRE.FindStringSubmatch(s.lines[s.i])
		if m == nil {
			break
		}
		e := Error{Tool: "eslint", File: s.rel(file), Line: atoi(m[1]), Column: atoi(m[2]), Severity: m[3]}
		// Message and rule are separated by two or more spaces; a parsing
		// error has no rule.
		parts := spaces2RE.Split(strings.TrimSpace(m[4]), -1)
		e.Message = strings.Join(parts, "  ")
		if len(parts) >= 2 && eslintRule.MatchString(parts[len(parts)-1]) {
			e.Code = parts[len(parts)-1]
			e.Message = strings.Join(parts[:len(parts)-1], "  ")
		}
		e.Language = eslintLanguage(file)
		s.add(e)
		s.i++
	}
	return true
}

// parseESLintLine handles ESLint's unix, compact and visualstudio formats
// (one finding per line). Code is the rule id. A visualstudio-form line
// of another language than JavaScript or TypeScript is another tool's
// (MSBuild's form): Tool "lint", Code the tool's code.
func parseESLintLine(s *scanner) bool {
	line := s.lines[s.i]
	// Cheap checks first: this runs on most lines nothing else took.
	unix, compact, vs := strings.HasSuffix(line, "]"), strings.Contains(line, ": line "), strings.Contains(line, "): ")
	if !unix && !compact && !vs {
		return false
	}
	var file, ln, col, sev, code, msg string
	if m := eslintUnixRE.FindStringSubmatch(line); unix && m != nil {
		file, ln, col, sev, msg, code = m[1], m[2], m[3], m[5], m[4], m[6]
	} else if m := eslintCompactRE.FindStringSubmatch(line); compact && m != nil {
		file, ln, col, sev, msg, code = m[1], m[2], m[3], m[4], m[5], m[6]
	} else if m := eslintVSRE.FindStringSubmatch(line); vs && m != nil {
		file, ln, col, sev, code, msg = m[1], m[2], m[3], m[4], m[5], m[6]
	} else {
		return false
	}
	if strings.ContainsAny(file, " \t") && !isAbs(file) {
		return false
	}
	e := Error{Tool: "eslint", Language: eslintLanguage(file), File: s.rel(file), Line: atoi(ln), Column: atoi(col),
		Severity: strings.ToLower(sev), Code: code, Message: msg}
	if l := LanguageOf(file); l != "javascript" && l != "typescript" && !strings.HasSuffix(file, ".vue") {
		e.Tool, e.Language = "lint", l
	}
	s.add(e)
	s.i++
	return true
}

func eslintLanguage(file string) string {
	if l := LanguageOf(file); l == "typescript" {
		return l
	}
	return "javascript"
}

// parseESLintJSON handles eslint -f json: one array of per-file results.
func parseESLintJSON(s *scanner, line string) bool {
	var results []struct {
		FilePath string `json:"filePath"`
		Messages []struct {
			RuleID   *string `json:"ruleId"`
			Severity int     `json:"severity"`
			Message  string  `json:"message"`
			Line     int     `json:"line"`
			Column   int     `json:"column"`
		} `json:"messages"`
	}
	if json.Unmarshal([]byte(line), &results) != nil {
		return false
	}
	for _, r := range results {
		for _, m := range r.Messages {
			e := Error{Tool: "eslint", Language: eslintLanguage(r.FilePath), File: s.rel(r.FilePath), Line: m.Line, Column: m.Column, Message: m.Message, Severity: "warning"}
			if m.Severity >= 2 {
				e.Severity = "error"
			}
			if m.RuleID != nil {
				e.Code = *m.RuleID
			}
			s.add(e)
		}
	}
	s.i++
	return true
}
