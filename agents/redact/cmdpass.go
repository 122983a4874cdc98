package redact

import (
	"path"
	"strings"
)

// The command-password rule: a password given on a command line with a
// short flag that only the command knows means a password: `mysql
// -pS3cret`, `docker login -p S3cret`, `sshpass -p S3cret ssh …`,
// `redis-cli -a S3cret`, `mongo -u bob -p S3cret`, `ldapsearch -w
// S3cret`. Long flags (--password S3cret) are the password-name rule's.

// cmdPassFlag is a command's password flag: attached (-pVALUE, mysql's
// only form: a bare -p prompts) or followed by its value.
type cmdPassFlag struct {
	flag     string
	attached bool
}

// cmdPassFlags maps a command's base name to its password flags. For
// "login" the command is the word before it (docker login, podman login).
var cmdPassFlags = map[string][]cmdPassFlag{
	"mysql": {{"-p", true}}, "mysqldump": {{"-p", true}}, "mysqladmin": {{"-p", true}},
	"mysqlimport": {{"-p", true}}, "mysqlshow": {{"-p", true}}, "mysqlcheck": {{"-p", true}},
	"mariadb": {{"-p", true}}, "mariadb-dump": {{"-p", true}}, "mariadb-admin": {{"-p", true}},
	"sshpass":   {{"-p", false}},
	"redis-cli": {{"-a", false}},
	"mongo":     {{"-p", false}}, "mongosh": {{"-p", false}}, "mongodump": {{"-p", false}}, "mongorestore": {{"-p", false}},
	"ldapsearch": {{"-w", false}}, "ldapadd": {{"-w", false}}, "ldapmodify": {{"-w", false}}, "ldapdelete": {{"-w", false}},
	"docker login": {{"-p", false}}, "podman login": {{"-p", false}}, "buildah login": {{"-p", false}},
	"skopeo login": {{"-p", false}}, "helm registry login": {{"-p", false}}, "oras login": {{"-p", false}},
}

// cmdPassKeywords trigger scanCommandPasswords (see prefilter.go).
var cmdPassKeywords = []string{"mysql", "mariadb", "sshpass", "redis-cli", "mongo", "ldap", " login"}

// scanCommandPasswords redacts the values of the password flags of the
// commands in cmdPassFlags, on each line that runs one.
func scanCommandPasswords(s *sink) {
	text := s.text
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		scanCommandLine(s, start, end)
		start = end + 1
	}
}

// cmdToken is a blank-separated word of a line and where it starts.
type cmdToken struct {
	text  string
	start int
}

func scanCommandLine(s *sink, lo, hi int) {
	var toks []cmdToken
	for p := lo; p < hi; {
		for p < hi && isSpace(s.text[p]) {
			p++
		}
		q := p
		for q < hi && !isSpace(s.text[q]) {
			q++
		}
		if q > p {
			toks = append(toks, cmdToken{s.text[p:q], p})
		}
		p = q
	}
	for i := 0; i < len(toks); i++ {
		flags := commandAt(toks, i)
		if flags == nil {
			continue
		}
		for j := i + 1; j < len(toks); j++ {
			t := toks[j].text
			if t == "|" || t == "&&" || t == "||" || t == ";" {
				break // the next command
			}
			for _, f := range flags {
				switch {
				case f.attached && strings.HasPrefix(t, f.flag) && len(t) > len(f.flag):
					addCommandPassword(s, toks[j].start+len(f.flag), t[len(f.flag):])
				case !f.attached && t == f.flag && j+1 < len(toks):
					addCommandPassword(s, toks[j+1].start, toks[j+1].text)
				case !f.attached && strings.HasPrefix(t, f.flag+"="):
					addCommandPassword(s, toks[j].start+len(f.flag)+1, t[len(f.flag)+1:])
				}
			}
		}
	}
}

// commandAt returns the password flags of the command whose name is
// toks[i] (a path's base name, or "docker login" and the like).
func commandAt(toks []cmdToken, i int) []cmdPassFlag {
	name := path.Base(strings.Trim(toks[i].text, `"'`))
	if name == "login" && i > 0 {
		name = path.Base(toks[i-1].text) + " login"
		if i > 1 && toks[i-2].text == "helm" {
			name = "helm registry login"
		}
	}
	return cmdPassFlags[name]
}

// addCommandPassword adds the value v starting at vs, quotes left out,
// when it is a literal password.
func addCommandPassword(s *sink, vs int, v string) {
	if q := v[0]; (q == '"' || q == '\'') && len(v) >= 2 && v[len(v)-1] == q {
		vs, v = vs+1, v[1:len(v)-1]
	}
	if len(v) < minPassword || strings.HasPrefix(v, "-") || strings.HasPrefix(v, "$") || !literalCredential(v) {
		return
	}
	s.add("command-password", prioCLI, vs, vs+len(v))
}
