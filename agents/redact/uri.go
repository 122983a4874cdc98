package redact

import (
	"slices"
	"strings"
)

// Credentials in URIs and connection strings. Here the position alone says
// that a value is a password: whatever sits between "user:" and the '@'
// of a URI, or after "Password=" in a connection string, is redacted
// unless it is a template, a reference, a mask or the bare name of the
// field (literalCredential). Randomness is not required, because the
// passwords people put in DSNs are often words ("admin", "verysecret").

// maxAuthority bounds the text read after "://" when looking for the '@'
// that ends the userinfo.
const maxAuthority = 512

// maxConnLine bounds how far around a password key scanConnPasswords
// looks for the other keys of a connection string.
const maxConnLine = 1024

// isURLStop reports whether c cannot be part of a URI as it is written in
// code, configuration or logs: blanks, quotes and angle brackets end it.
// Everything else may occur unescaped in a password ('#', '!', '@', '/',
// '?', '%', ':', ';', ',', parentheses and brackets).
func isURLStop(c byte) bool {
	return isSpace(c) || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\'
}

// urlSeparators are "://" and its JSON-escaped form, ":\/\/", as a URI
// reads inside a JSON string written by an encoder that escapes '/'.
var urlSeparators = [...]string{"://", `:\/\/`}

// scanURLPasswords redacts the password of "scheme://user:password@host…"
// (postgres, mysql, mongodb+srv, redis, amqp, http basic auth…), keeping
// scheme, user, host, port, path and query. A token used as the user
// name ("https://<token>@dev.azure.com/…", "https://<token>:x-oauth-basic@
// github.com/…") goes too: see tokenUser.
func scanURLPasswords(s *sink) {
	text := s.text
	for _, sep := range urlSeparators {
		escaped := sep != "://"
		for k := range indexAll(text, sep) {
			if k == 0 || !isAlpha(text[k-1]) {
				continue
			}
			a := k + len(sep)
			if strings.IndexByte(text[a:min(len(text), a+maxAuthority)], '@') < 0 {
				continue
			}
			end := a
			for end < len(text) && end-a < maxAuthority {
				if escaped && text[end] == '\\' && byteAt(text, end+1) == '/' {
					end += 2 // an escaped '/' in a JSON string
					continue
				}
				if isURLStop(text[end]) {
					break
				}
				end++
			}
			urlUserinfo(s, a, end)
		}
	}
}

// urlUserinfo redacts the credentials of the URI whose authority is
// [a, end).
func urlUserinfo(s *sink, a, end int) {
	text := s.text
	at := userinfoEnd(text, a, end)
	if at < 0 {
		return
	}
	c := strings.IndexByte(text[a:at], ':')
	if c < 0 {
		if tokenUser(text[a:at]) {
			s.add("url-password", prioURLPassword, a, at)
		}
		return
	}
	c += a
	// A user name has no '/', '?' or '#': with one, the ':' is that of
	// a port or of a path ("host:8080/maps/@40.7,-74.0").
	if strings.ContainsAny(text[a:c], "/?#") || isPortAndPath(text[c+1:at]) {
		return
	}
	pw := text[c+1 : at]
	if tokenPassword(pw) || !literalCredential(pw) {
		// "<token>:x-oauth-basic@", "<token>:@": the user is the secret.
		if tokenUser(text[a:c]) {
			s.add("url-password", prioURLPassword, a, c)
		}
		return
	}
	s.add("url-password", prioURLPassword, c+1, at)
}

// tokenPasswords are the fixed passwords that hosts accept beside a token
// given as the user name.
var tokenPasswords = []string{"x-oauth-basic", "x-access-token", "x-token-auth", "x-oauth-token"}

func tokenPassword(pw string) bool {
	for _, w := range tokenPasswords {
		if strings.EqualFold(pw, w) {
			return true
		}
	}
	return false
}

// tokenUser reports whether a URI's user name is a token (a personal
// access token used as the user, as Azure DevOps and GitHub accept)
// rather than a person's or service's name: 20 or more letters and
// digits (and '-', '_'), random-looking, with short words or, from 32
// bytes on, few vowels; or the shape of an Azure DevOps token, 52
// lower-case base32 characters, whose long runs of letters read as words
// otherwise. "admin", "git", "deploy", "ci-bot" and "john.smith2024" are
// names.
func tokenUser(u string) bool {
	if len(u) < 20 || !onlyBytes(u, "-_") || isPlaceholder(u) {
		return false
	}
	if len(u) == 52 && isBase32Lower(u) && hasDigit(u) && notFiller(u) {
		return true
	}
	return (meanWordLen(u) < 4 || len(u) >= 32 && vowelRatio(u) < 0.3) && looksRandom(u, DefaultEntropyThreshold)
}

// isBase32Lower reports whether s is made of RFC 4648 base32 characters
// in lower case (a-z, 2-7).
func isBase32Lower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// userinfoEnd returns the offset of the '@' that ends the userinfo of the
// URI whose authority starts at a, or -1. The '@' must be followed by a
// host (name, IPv4 or [IPv6], optional port, optionally a comma-separated
// list as in MongoDB) and the end of the authority.
//
// Passwords may hold unescaped '@'s, and paths and queries may too
// ("?notify=ops@example.com", "/@scope/pkg"), so the choice is made left
// to right: a later '@' replaces the current one only when the current
// "host" is no real host (no dot, no port, not localhost: "ss" of
// "p@ss/w0rd@db") and no query parameter or '@'-segment lies between
// them.
func userinfoEnd(text string, a, end int) int {
	chosen, strong := -1, false
	for i := a; i < end; i++ {
		if text[i] != '@' {
			continue
		}
		ok, st := hostAfter(text, i+1, end)
		if !ok {
			continue
		}
		if chosen >= 0 && (strong || text[i-1] == '/' || hasQuery(text[chosen:i])) {
			break
		}
		chosen, strong = i, st
	}
	return chosen
}

// hasQuery reports whether s has a query parameter: a '?' and, after it,
// an '='. A '?' alone may be part of a password.
func hasQuery(s string) bool {
	q := strings.IndexByte(s, '?')
	return q >= 0 && strings.IndexByte(s[q:], '=') >= 0
}

// hostAfter reports whether a host list and the end of an authority start
// at p, and whether the host is certainly one (a dotted name, an IP
// literal, localhost, or with a port) rather than a word that happens to
// follow an '@' inside a password.
func hostAfter(text string, p, end int) (ok, strong bool) {
	for {
		if p < end && text[p] == '[' {
			q := strings.IndexByte(text[p:end], ']')
			if q < 0 {
				return false, false
			}
			p += q + 1
			strong = true
		} else {
			h := p
			for p < end && (isAlnum(text[p]) || text[p] == '.' || text[p] == '-' || text[p] == '_' || text[p] == '%') {
				p++
			}
			if p == h {
				return false, false
			}
			if name := text[h:p]; strings.IndexByte(name, '.') >= 0 || strings.EqualFold(name, "localhost") {
				strong = true
			}
		}
		if p < end && text[p] == ':' {
			d := p + 1
			for d < end && isDigit(text[d]) {
				d++
			}
			if d == p+1 || d-p-1 > 5 {
				return false, false
			}
			p = d
			strong = true
		}
		// Several hosts: mongodb://u:p@h1:27017,h2:27017/db.
		if p+1 < end && text[p] == ',' && (isAlnum(text[p+1]) || text[p+1] == '[') {
			p++
			continue
		}
		break
	}
	return p == end || strings.IndexByte("/?#,;)]}|&", text[p]) >= 0 || isURLStop(text[p]), strong
}

// isPortAndPath reports whether what sits between ':' and '@' is a port,
// alone or followed by a path or JDBC parameters: "host:8080@…",
// "host:8080/path/@user", "host:1433;password=p@ss".
func isPortAndPath(v string) bool {
	d := 0
	for d < len(v) && isDigit(v[d]) {
		d++
	}
	return d > 0 && d <= 5 && (d == len(v) || strings.IndexByte("/;?", v[d]) >= 0)
}

// literalCredential reports whether a value in a credential position (a
// URI's userinfo, a connection string's password key) is a literal
// password rather than a template or reference ("${DB_PASS}", "$PASS",
// "{{ .Values.pw }}", "<password>", "%s", "{}"), a mask ("****", "xxx",
// "[REDACTED]") or the bare name of the field ("password", "pwd").
func literalCredential(v string) bool {
	return v != "" && !isTemplate(v) && !isMask(v) && !isFieldWord(v)
}

// isTemplate recognises the placeholders of shells, template engines and
// format functions.
func isTemplate(v string) bool {
	for _, w := range [...]string{"${", "$(", "{{", "}}", "#{", "<%", "%>"} {
		if strings.Contains(v, w) {
			return true
		}
	}
	if n := len(v); n >= 2 {
		last, inner := v[n-1], v[1:n-1]
		switch {
		case v[0] == '<' && last == '>',
			// "{}", "{0}", "{password}", "{quote_plus(pw)}": format fields.
			v[0] == '{' && last == '}' && isFormatField(inner),
			// "[password]", "[REDACTED:url-password]", "[FILTERED]".
			v[0] == '[' && last == ']' && onlyBytes(inner, "_:- "),
			// Windows "%DB_PASS%".
			v[0] == '%' && last == '%' && n > 3 && isAlpha(v[1]) && onlyBytes(inner, "_"):
			return true
		}
	}
	switch v[0] {
	case '$':
		// "$PASS", "$dbPassword", PowerShell "$env:DB_PASS".
		return len(v) > 1 && (isAlpha(v[1]) || v[1] == '_') && onlyBytes(v[1:], "_:")
	case '%':
		return isFormatVerb(v)
	case ':':
		// Bind parameters and symbols: ":password".
		return len(v) > 1 && isAlpha(v[1]) && onlyBytes(v[1:], "_")
	}
	return false
}

// isFormatField reports whether the text between braces is a format
// field or an interpolated expression ("", "0", "pw", "password",
// "db_pass", "cfg.Password", "quote_plus(pw)") rather than a password
// that ODBC quoting put in braces ("{Xk9#q}", "{summer2024}").
func isFormatField(inner string) bool {
	if !onlyBytes(inner, "_.()[]'\"") {
		return false
	}
	if len(inner) <= 2 || allDigits(inner) || strings.ContainsAny(inner, ".([") {
		return true
	}
	for _, w := range [...]string{"pass", "pwd"} {
		if containsFold(inner, w) {
			return true
		}
	}
	l := strings.ToLower(inner)
	return strings.HasSuffix(l, "pw") || strings.HasSuffix(l, "secret")
}

// onlyBytes reports whether s consists of letters, digits and the bytes
// of extra.
func onlyBytes(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

// isFormatVerb matches a whole printf-style verb: "%s", "%v", "%-10s",
// "%(password)s". Percent-escapes ("%40", "%2F") are not verbs: the verb
// letter must be one that format functions use for strings and values.
func isFormatVerb(v string) bool {
	i := 1
	if i < len(v) && v[i] == '(' {
		j := strings.IndexByte(v, ')')
		if j < 0 {
			return false
		}
		i = j + 1
	}
	for i < len(v) && strings.IndexByte("-+# 0123456789.", v[i]) >= 0 {
		i++
	}
	return i == len(v)-1 && strings.IndexByte("svqdr", v[i]) >= 0
}

// isMask recognises values already hidden: "****", "xxxxxx", "...",
// "••••", or one character repeated.
func isMask(v string) bool {
	if strings.Trim(v, "*xX.•#-_") == "" {
		return true
	}
	return len(v) >= 3 && strings.Count(v, v[:1]) == len(v)
}

// fieldWords are the values that name the field instead of filling it,
// as in documentation ("postgres://user:password@host/db") and in masked
// logs ("password=REDACTED"). Matched whole, ignoring case.
var fieldWords = []string{
	"password", "passwd", "pass", "pwd", "pw", "pword", "passphrase", "secret",
	"yourpassword", "your_password", "your-password", "yourpass", "your_pass",
	"mypassword", "my_password", "my-password", "userpassword", "user_password",
	"dbpassword", "db_password", "db-password", "dbpass", "db_pass",
	"changeme", "change_me", "change-me",
	"redacted", "filtered", "masked", "hidden", "removed",
}

func isFieldWord(v string) bool {
	for _, w := range fieldWords {
		if strings.EqualFold(v, w) {
			return true
		}
	}
	return false
}

// connKeys are the keys, other than the password's, that make a line a
// connection string (ADO.NET, ODBC, JDBC properties, libpq keyword/value).
var connKeys = []string{
	"server", "data source", "datasource", "host", "hostaddr", "hostname", "database", "dbname",
	"initial catalog", "user id", "userid", "uid", "user", "username", "driver", "dsn", "port",
	"sslmode", "provider", "address", "addr", "network address", "trusted_connection",
	"integrated security", "encrypt", "databasename",
}

// connPasswordKeywords trigger scanConnPasswords (see prefilter.go); the
// scanner itself matches the keys without regard to case.
var connPasswordKeywords = []string{"assword=", "ASSWORD=", "assWord=", "wd=", "WD=", "Wd="}

// scanConnPasswords redacts the value of password=, pwd= and passwd= in a
// URI's query or parameters (jdbc:postgresql://db/app?user=u&password=p,
// jdbc:sqlserver://db;user=u;password=p) and in key=value connection
// strings: ADO.NET "Server=x;User Id=u;Password=p;", ODBC "Pwd={p}",
// libpq "host=db user=u password=p". A lone "password=p" line is not a
// connection string; the generic-secret rule judges it.
func scanConnPasswords(s *sink) {
	text := s.text
	var keys connKeyIndex
	for _, kw := range connPasswordKeywords {
		for k := range indexAll(text, kw) {
			eq := k + len(kw) - 1
			ks := eq
			for ks > 0 && eq-ks < len("password") && isAlpha(text[ks-1]) {
				ks--
			}
			if ks > 0 && isWord(text[ks-1]) {
				continue
			}
			switch strings.ToLower(text[ks:eq]) {
			case "password", "passwd", "pwd":
			default:
				continue
			}
			connPassword(s, &keys, ks, eq)
		}
	}
}

// connPassword handles one password key at [ks, eq) with its '=' at eq.
func connPassword(s *sink, keys *connKeyIndex, ks, eq int) {
	text := s.text
	lo, hi := max(0, ks-maxConnLine), min(len(text), eq+maxConnLine)
	ls := lo
	if i := strings.LastIndexByte(text[lo:ks], '\n'); i >= 0 {
		ls = lo + i + 1
	}
	le := hi
	if i := strings.IndexByte(text[eq:hi], '\n'); i >= 0 {
		le = eq + i
	}
	d := byteAt(text, ks-1)
	if ks == ls {
		d = '\n'
	}
	// Inside a URI: the key follows '?', '&' or ';' and the run of URI
	// characters before it has a scheme.
	if d == '?' || d == '&' || d == ';' {
		t := ks - 1
		for t > max(ls, ks-maxAuthority) && !isURLStop(text[t-1]) {
			t--
		}
		tok := text[t:ks]
		uri := strings.Contains(tok, "://") || len(tok) > 5 && strings.EqualFold(tok[:5], "jdbc:")
		// A query or form body without a scheme: "/report?user=u&pwd=p",
		// curl -d "user=u&password=p".
		if d == '?' || d == '&' && strings.IndexByte(tok, '=') >= 0 {
			uri = true
		}
		if uri {
			mode := inQuery
			if d == ';' {
				mode = inParams
			}
			if vs, ve, ok := connValue(text, eq+1, le, mode); ok {
				s.add("url-password", prioURLPassword, vs, ve)
			}
			return
		}
	}
	// A key=value connection string: the key starts the line or a string,
	// or follows ';' or a blank, and another connection key is near.
	semi := d == ';'
	if d == ' ' || d == '\t' {
		p := ks - 1
		for p > ls && (text[p-1] == ' ' || text[p-1] == '\t') {
			p--
		}
		semi = byteAt(text, p-1) == ';'
	} else if !semi && d != '\n' && !isQuote(d) {
		return
	}
	if !keys.within(text, ls, le) {
		return
	}
	mode := inSemi
	if !semi {
		mode = inBlank
	}
	if vs, ve, ok := connValue(text, eq+1, le, mode); ok {
		s.add("dsn-password", prioURLPassword, vs, ve)
	}
}

// Value syntaxes of connValue.
const (
	inQuery  = iota // a URI's query: up to '&'
	inParams        // a JDBC URI's ;-parameters: up to ';'
	inSemi          // ADO.NET/ODBC pairs after ';': up to ';', blanks allowed
	inBlank         // libpq pairs, or the first pair: up to ';' or a blank
)

// connValue reads a password value at p, before the end of its line le:
// a braced ODBC/JDBC value ("{p;w}}d}", '}}' escapes '}'), a quoted one
// ('p w', or "p;w" in ADO.NET, a doubled quote escapes it), or an unquoted
// run. It reports the span to redact and whether the value is a literal
// credential.
func connValue(text string, p, le, mode int) (int, int, bool) {
	if p >= le {
		return 0, 0, false
	}
	line := text[:le]
	switch c := line[p]; {
	case c == '{' && !isTemplateAt(line, p):
		for e := p + 1; e < le; e++ {
			if line[e] != '}' {
				continue
			}
			if e+1 < le && line[e+1] == '}' {
				e++
				continue
			}
			return p + 1, e, literalCredential(strings.ReplaceAll(line[p+1:e], "}}", "}"))
		}
		return 0, 0, false
	case c == '\'' && mode >= inSemi || c == '"' && mode == inSemi:
		for e := p + 1; e < le; e++ {
			switch line[e] {
			case '\\':
				e++
			case c:
				if e+1 < le && line[e+1] == c {
					e++
					continue
				}
				// The quote must close the value: a ';', a blank, the end
				// of the line or of the enclosing string follows.
				if n := byteAt(line, e+1); n != 0 && n != ';' && !isSpace(n) && !isQuote(n) {
					return 0, 0, false
				}
				return p + 1, e, e > p+1 && literalCredential(line[p+1:e])
			}
		}
		return 0, 0, false
	case isQuote(c):
		return 0, 0, false
	}
	e := p
	for ; e < le; e++ {
		c := line[e]
		if isQuote(c) || c == '\r' || c == '\\' || c == ';' && mode != inQuery || c == '&' && mode == inQuery ||
			mode <= inParams && isURLStop(c) || mode == inBlank && isSpace(c) {
			break
		}
	}
	for e > p && (line[e-1] == ' ' || line[e-1] == '\t') {
		e--
	}
	if mode == inBlank && e > p+1 && (line[e-1] == ',' || line[e-1] == ')') && isAlpha(line[p]) &&
		onlyBytes(line[p:e-1], "_.") {
		// Keyword arguments in code: connect(host=host, password=db_pass).
		return 0, 0, false
	}
	return p, e, e > p && literalCredential(line[p:e])
}

// isTemplateAt reports whether the braced value at p is a format field
// ("{0}", "{password}") rather than ODBC quoting.
func isTemplateAt(line string, p int) bool {
	e := strings.IndexByte(line[p:], '}')
	return e > 0 && isTemplate(line[p:p+e+1])
}

// connKeyIndex holds the offsets of the connection-string keys of a
// text ("Server=", "host=", "User Id=" at the start of a pair), found in
// one pass per key the first time a password key asks, so that many
// password keys on a long line cost no more than one.
type connKeyIndex struct {
	done bool
	pos  []int
}

// within reports whether a connection key starts in [lo, hi).
func (c *connKeyIndex) within(text string, lo, hi int) bool {
	if !c.done {
		c.pos = connKeyOffsets(text)
		c.done = true
	}
	i, _ := slices.BinarySearch(c.pos, lo)
	return i < len(c.pos) && c.pos[i] < hi
}

// connKeyOffsets returns the sorted offsets of the connKeys in text.
func connKeyOffsets(text string) []int {
	var pos []int
	for _, k := range connKeys {
		for off := 0; off < len(text); {
			i := indexFold(text[off:], k)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			if byteAt(text, skipBlank(text, i+len(k))) != '=' {
				continue
			}
			if b := byteAt(text, i-1); i == 0 || b == ';' || b == '?' || b == '&' || b == '(' || isSpace(b) || isQuote(b) {
				pos = append(pos, i)
			}
		}
	}
	slices.Sort(pos)
	return pos
}

// indexFold is strings.Index ignoring ASCII case, for a lower-case needle.
func indexFold(s, lowerSub string) int {
	n := len(lowerSub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && lowerASCII(s[i+j]) == lowerSub[j] {
			j++
		}
		if j == n {
			return i
		}
	}
	return -1
}

// dsnKeywords trigger scanDSNUserinfo.
var dsnKeywords = []string{"@tcp(", "@unix(", "oracle:thin:"}

// scanDSNUserinfo redacts the password of connection strings that carry
// "user:password@" or "user/password@" without a "://": Go's MySQL driver
// ("app:pw@tcp(db:3306)/orders") and Oracle's thin JDBC URL
// ("jdbc:oracle:thin:scott/pw@//db:1521/orcl").
func scanDSNUserinfo(s *sink) {
	text := s.text
	for _, kw := range dsnKeywords[:2] {
		for at := range indexAll(text, kw) {
			t := at
			for t > 0 && at-t < maxAuthority && !isURLStop(text[t-1]) && text[t-1] != '=' && text[t-1] != '(' && text[t-1] != ',' {
				t--
			}
			ui := text[t:at]
			if i := strings.Index(ui, "://"); i >= 0 {
				t += i + 3
				ui = text[t:at]
			}
			c := strings.IndexByte(ui, ':')
			if c < 0 {
				continue
			}
			if pw := ui[c+1:]; literalCredential(pw) {
				s.add("dsn-password", prioURLPassword, t+c+1, at)
			}
		}
	}
	for k := range indexAll(text, dsnKeywords[2]) {
		a := k + len(dsnKeywords[2])
		e := a
		for e < len(text) && e-a < maxAuthority && !isURLStop(text[e]) {
			e++
		}
		tok := text[a:e]
		at := strings.Index(tok, "@//")
		if at < 0 {
			at = strings.IndexByte(tok, '@')
		}
		sl := strings.IndexByte(tok[:max(at, 0)], '/')
		if at <= 0 || sl < 0 {
			continue
		}
		if pw := tok[sl+1 : at]; literalCredential(pw) {
			s.add("dsn-password", prioURLPassword, a+sl+1, a+at)
		}
	}
}
