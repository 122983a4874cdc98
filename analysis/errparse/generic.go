package errparse

import (
	"regexp"
	"strings"
)

// The last resort: "path.ext:line:col: message", the form most linters and
// many other tools print, taken only when no parser above recognised the
// line.

var (
	// The path has an extension that starts with a letter and no colon
	// (so no URL, "host:port" or time of day), the line and the column
	// are numbers, and the message follows ": ".
	genericRE = regexp.MustCompile(`^((?:[A-Za-z]:[\\/])?[^\s:]*[^\s:./\\]\.([A-Za-z][A-Za-z0-9_+-]{0,9})):(\d+):(\d+): (\S.*)$`)
	// A severity word (and a code) at the start of the message:
	// "error[E0425]: …", "warning: …", yamllint's "[error] …".
	genericSevRE = regexp.MustCompile(`^(?:(fatal error|error|warning|note|info|hint|style)(?:\[([\w-]+)\])?:|\[(error|warning|info)\]) (.*)$`)
	// Names that are hosts, not files: "example.com:443:1: …".
	genericHostRE = regexp.MustCompile(`(?i)^[\w-]+(\.[\w-]+)*\.(com|org|net|io|dev|local|internal|lan|localdomain|localhost)$`)
)

// parseGeneric handles a "path.ext:line:col: message" line that no other
// parser took. Tool is "lint" (the tool is not known), Language the
// file's, Severity "error" unless the message starts with a severity word.
// These errors are added after all the others (see scanner.run).
func parseGeneric(s *scanner) bool {
	m := genericRE.FindStringSubmatch(s.lines[s.i])
	if m == nil || !strings.ContainsAny(m[1], `/\`) && genericHostRE.MatchString(m[1]) {
		return false
	}
	e := Error{Tool: "lint", Language: LanguageOf(m[1]), File: s.rel(m[1]), Line: atoi(m[3]), Column: atoi(m[4]), Message: m[5]}
	if sm := genericSevRE.FindStringSubmatch(m[5]); sm != nil {
		sev := sm[1] + sm[3]
		switch sev {
		case "fatal error":
			sev = "error"
		case "info", "hint", "style":
			sev = "note"
		}
		e.Severity, e.Code, e.Message = sev, sm[2], sm[4]
	}
	s.generic = append(s.generic, e)
	s.i++
	return true
}
