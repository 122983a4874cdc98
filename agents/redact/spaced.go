package redact

import (
	"regexp"
	"strings"
)

// The spaced-password rule: two formats separate a password from its name
// with blanks alone, where the assignment rule finds no separator.
//
//   - .netrc and _netrc entries, on one line or several: "machine
//     api.example.com login deploy password hunter22". The entry starts a
//     line with "machine NAME", then "login" (and maybe
//     "account") come before the password, which may be quoted. Prose
//     ("the machine's password reset") and code that declares fields of
//     those names ("machine string", "password varchar(255),") are no
//     such entry: the login is required and a value that reads as code
//     (a dotted name, brackets, a trailing comma) is left.
//   - Dockerfile's legacy ENV form, "ENV DB_PASSWORD hunter22": one
//     variable, its value the rest of the line. The name decides, as for
//     an assignment.

var (
	netrcRE     = regexp.MustCompile(`(?m)^[ \t]*machine[ \t]+\S+(?:\s+(?:login|account)\s+\S+)+\s+password\s+("[^"\n]*"|'[^'\n]*'|\S+)`)
	dockerEnvRE = regexp.MustCompile(`(?m)^[ \t]*ENV[ \t]+([A-Za-z_][A-Za-z0-9_.-]*)[ \t]+(\S[^\r\n]*?)[ \t]*\r?$`)
)

// scanNetrc redacts the passwords of netrc entries.
func scanNetrc(s *sink) {
	for _, m := range netrcRE.FindAllStringSubmatchIndex(s.text, -1) {
		vs, ve := m[2], m[3]
		if v := s.text[vs:ve]; len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			// A quoted password may hold blanks; the quotes stay.
			if inner := v[1 : len(v)-1]; len(inner) >= minPassword && literalCredential(inner) && !isTemplate(inner) {
				s.add("password", prioPassword, vs+1, ve-1)
			}
			continue
		}
		if v := s.text[vs:ve]; literalPassword(v) && !(strings.Contains(v, ".") && isReference(v, false)) && !strings.ContainsAny(v, "(),;{}[]") {
			s.add("password", prioPassword, vs, ve)
		}
	}
}

// scanDockerEnv redacts the secret values of Dockerfile ENV instructions
// in the legacy NAME value form.
func (r *Redactor) scanDockerEnv(s *sink) {
	for _, m := range dockerEnvRE.FindAllStringSubmatchIndex(s.text, -1) {
		match, aws, pw := secretName(s.text[m[2]:m[3]])
		if !match {
			continue
		}
		vs, ve := m[4], m[5]
		quoted := false
		if v := s.text[vs:ve]; len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			vs, ve, quoted = vs+1, ve-1, true
		}
		v := s.text[vs:ve]
		form := formConfig
		if quoted {
			form = formQuoted
		}
		if r.addValue(s, v, vs, ve, form, aws) || !pw {
			continue
		}
		// The whole rest of the line is the value: a literal whatever its
		// shape, unless it is a template or a placeholder.
		if !strings.ContainsAny(v, " \t") && literalPassword(v) {
			s.add("password", prioPassword, vs, ve)
		}
	}
}
