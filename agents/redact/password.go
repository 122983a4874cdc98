package redact

import "strings"

// The password rule: a value under a name that is explicitly a password.
//
// The generic-secret rule asks the value to look random, which turns away
// what people actually type: "Welcome1", "Summer2024!", "letmein123". Under
// a name whose last word is a password word (DB_PASSWORD, PGPASSWORD,
// spring.datasource.password, MYSQL_PWD, dbPass, JWT_SECRET) the name
// already says what the value is, so any literal goes, whatever its shape.
// What stays is what is not a literal: templates, masks and field names
// (as for URIs), environment lookups and calls, keywords and type names,
// and identifiers in code. Code writes a literal in quotes, so an unquoted
// value is taken for a literal only where configuration files put it: an
// identifier that reads as code (dotted, camelCase, snake_case after a
// blank, Go's ":=", a JS object field followed by ',') is a reference, and
// an unquoted value must end its line unless it is a NAME=value prefix of
// a shell command.

// keyCtx describes the assignment a password value came from.
type keyCtx struct {
	// sep is the separator: '=', ':' or '!' for Go's ":=". 0 means a
	// command-line flag, an XML element or SQL, where a value is a
	// literal whatever its shape.
	sep byte
	// glued says that no blank separates the name from sep (NAME=v).
	glued bool
	// upperName says that the name is an environment variable's
	// (upper case, digits and '_').
	upperName bool
	// blank says that a blank separates sep from the value.
	blank bool
}

// minPassword is the shortest value taken for a password: shorter values
// under a password name are flags, counts and abbreviations.
const minPassword = 4

// addPassword adds [vs, ve) when it is a literal password.
func addPassword(s *sink, vs, ve int, kind valueKind, k keyCtx) {
	if kind == valArg {
		// r.FormValue("password"), cfg.Get("db_pass"): the argument
		// names a field.
		return
	}
	v := s.text[vs:ve]
	if !literalPassword(v) {
		return
	}
	if kind == valBare && k.sep != 0 && !bareLiteral(s.text, v, ve, k) {
		return
	}
	s.add("password", prioPassword, vs, ve)
}

// keyPlaceholderWords mark a value under a password name as documentation
// or a template. Unlike placeholderWords they leave out "password",
// "secret", "123456" and the like, which real human passwords contain.
var keyPlaceholderWords = []string{
	"xxx", "***", "...", "${", "{{", "}}", "your", "example", "changeme", "change_me", "change-me",
	"placeholder", "dummy", "redacted", "replace", "insert", "todo", "fixme", "getenv",
	"process.env", "environ", "[redacted:", "required",
}

// hasKeyPlaceholder reports whether v holds one of keyPlaceholderWords.
func hasKeyPlaceholder(v string) bool {
	for _, w := range keyPlaceholderWords {
		if containsFold(v, w) {
			return true
		}
	}
	return false
}

// valueKeywords are the values of a password field that are no password:
// null values, booleans and type names ("password: string",
// "password: Option<String>" is cut at '<').
var valueKeywords = []string{
	"null", "nil", "none", "true", "false", "undefined", "yes", "no", "on", "off", "string", "str",
	"bool", "boolean", "number", "int", "integer", "any", "bytes", "object", "optional", "text",
	"varchar", "unknown", "empty", "blank",
}

// literalPassword reports whether v, found under a password name, is a
// literal rather than a template, mask, field name, keyword or label.
func literalPassword(v string) bool {
	if len(v) < minPassword || strings.ContainsAny(v, " \t") || strings.Contains(v, "://") ||
		strings.Contains(v, `\u`) || strings.Contains(v, `\x`) {
		return false
	}
	if !literalCredential(v) || hasKeyPlaceholder(v) {
		return false
	}
	for _, w := range valueKeywords {
		if strings.EqualFold(v, w) {
			return false
		}
	}
	// Spring's "@db.password@" resource filtering.
	if len(v) > 2 && v[0] == '@' && v[len(v)-1] == '@' {
		return false
	}
	return !isLabel(v)
}

// isLabel reports whether v is a word of a user interface rather than a
// password: a capitalised word of letters ("Passwort", "Senha") or a word
// with non-ASCII letters and no digit ("contraseña"), as in translation
// files ("password": "Senha").
func isLabel(v string) bool {
	nonASCII, upperRest := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 0x80:
			nonASCII = true
		case c >= 'a' && c <= 'z':
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				upperRest = true
			}
		default:
			return false
		}
	}
	return nonASCII || !upperRest && v[0] >= 'A' && v[0] <= 'Z'
}

// codeWords are identifiers that code assigns to a password variable
// ("password = input", "pass = hashed").
var codeWords = []string{
	"value", "val", "input", "data", "result", "arg", "args", "param", "params", "req", "request",
	"res", "response", "body", "payload", "user", "username", "config", "cfg", "conf", "opts",
	"options", "settings", "env", "self", "this", "hash", "hashed", "encoded", "encrypted",
	"decrypted", "plain", "plaintext", "raw", "new", "old", "current", "creds", "credentials",
	"form", "field", "prompt", "default",
}

// bareLiteral reports whether an unquoted value v ending at ve is a
// literal in a configuration file rather than code or prose.
func bareLiteral(text, v string, ve int, k keyCtx) bool {
	if k.sep == '!' || strings.IndexByte("&*!%@#", v[0]) >= 0 {
		// Go's ":=" takes code; YAML anchors, aliases and tags,
		// format verbs.
		return false
	}
	if isNumber(v) && len(v) < 6 || isPath(v) {
		return false
	}
	ident := (isAlpha(v[0]) || v[0] == '_') && onlyBytes(v, "_.")
	if ident {
		switch {
		case k.sep == '=' && k.glued && !k.blank && !strings.Contains(v, "."):
			// name=value: a shell, env or properties file, where a
			// bare word is a literal (keyword arguments, "f(password=pw)",
			// end in ',' or ')', see below).
		case v[0] == '_', strings.Contains(v, "."), isCamel(v) && readsAsCode(v),
			k.blank && (strings.Contains(v, "_") || !hasLower(v)):
			// _private, cfg.Password, defaultPassword, default_password,
			// DEFAULT_PASSWORD.
			return false
		}
		for _, w := range codeWords {
			if strings.EqualFold(v, w) {
				return false
			}
		}
	}
	j := ve
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j >= len(text) || text[j] == '\n' || text[j] == '\r' || text[j] == '#' && j > ve {
		return true
	}
	switch text[j] {
	case ',':
		// {password: pw, …}: a JS object field.
		return !(ident && k.sep == ':')
	case ';', ')':
		// "password = pw;" in C-like code.
		return !(ident && k.blank)
	case '}', ']', '&', '"', '\'', '`':
		return true
	}
	// More words follow: prose ("password: must be at least …"), unless
	// it is an environment prefix of a command (PGPASSWORD=v psql …).
	return k.sep == '=' && k.glued && k.upperName && !k.blank
}

// extendBare extends an unquoted value that valueAt cut at a delimiter
// ("Ab3,x}9=z") to the next blank or the next key=value parameter
// (";encrypt=true"), unless the longer run reads as code: it ends with
// ',', ';', ')', '}' or ']' ("password=pw)", "{password: pw}"), or holds a
// quote (the end of a string) or '&' (a query's next parameter).
func extendBare(text string, vs, ve int) int {
	e := ve
	for e < len(text) && !isSpace(text[e]) && e-vs < maxValue {
		c := text[e]
		if isQuote(c) || c == '&' {
			return ve
		}
		if c == ';' && paramAt(text, e+1) {
			break
		}
		e++
	}
	if e == ve || e-vs >= maxValue || strings.IndexByte(",;)}]", text[e-1]) >= 0 {
		return ve
	}
	return e
}

// paramAt reports whether a key=value parameter starts at p.
func paramAt(text string, p int) bool {
	for i := p; i < len(text) && i-p < maxName; i++ {
		c := text[i]
		switch {
		case c == '=':
			return i > p
		case isWord(c) || c == ' ' && i > p:
		default:
			return false
		}
	}
	return false
}

// codeParts are parts of the names that code gives a password variable
// ("hashedPassword", "dbPw", "userSecret", "inputValue").
var codeParts = []string{"pass", "pw", "secret", "cred", "hash", "key", "tok", "val", "input", "default", "cfg",
	"conf", "env", "opt", "param", "arg"}

// readsAsCode reports whether a camelCase value is an identifier rather
// than a random mixed-case password: it names a password or a value, or
// is made of long words.
func readsAsCode(v string) bool {
	for _, w := range codeParts {
		if containsFold(v, w) {
			return true
		}
	}
	return meanWordLen(v) >= 4
}

// isCamel reports whether an identifier has a lower-case letter followed
// by an upper-case one, as camelCase code does.
func isCamel(v string) bool {
	for i := 1; i < len(v); i++ {
		if v[i] >= 'A' && v[i] <= 'Z' && v[i-1] >= 'a' && v[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// isEnvName reports whether name is an environment variable's: upper
// case, digits and '_', with a letter.
func isEnvName(name string) bool {
	letter := false
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'A' && c <= 'Z':
			letter = true
		case isDigit(c) || c == '_':
		default:
			return false
		}
	}
	return letter
}
