package redact

import "strings"

// The generic-secret rule: a value assigned to a secret-sounding name.
//
// Rather than one large case-insensitive regular expression (which Go's
// regexp would run over every byte), the scanner stops at the separators an
// assignment needs ('=', ':', '>' of an XML tag, "--" of a flag), reads the
// name to their left and only then the value to their right. Code has about
// one separator per line, and the name test rejects nearly all of them
// after looking at a few bytes.

// maxName bounds the names looked at; longer "names" are prose or data.
const maxName = 64

// maxWords bounds the words of a name that are examined.
const maxWords = 16

// maxValue bounds the values read: longer runs are data, not a credential
// (PEM blocks have their own rule), and every scan of the text stays
// linear.
const maxValue = 4096

func (r *Redactor) scanAssignments(s *sink) {
	text := s.text
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '=':
			prev, next := byteAt(text, i-1), byteAt(text, i+1)
			// Comparisons and compound operators are not assignments; ":="
			// is handled at its ':'. "=>" (PHP, Ruby hashes) and "?="
			// (Makefiles) are.
			switch prev {
			case '=', '!', '<', '>', ':', '+', '-', '*', '/', '%', '|', '&', '^', '~':
				continue
			}
			if next == '=' {
				continue
			}
			valAt := i + 1
			if next == '>' {
				valAt++
			}
			r.assignment(s, i, valAt, true)
		case ':':
			prev, next := byteAt(text, i-1), byteAt(text, i+1)
			if prev == ':' || next == ':' {
				continue // C++/Rust paths
			}
			valAt := i + 1
			if next == '=' {
				valAt++
			}
			r.assignment(s, i, valAt, next == '=')
		case '>':
			r.xmlElement(s, i)
		case '-':
			if byteAt(text, i+1) == '-' && (i == 0 || isSpace(text[i-1])) {
				r.flag(s, i)
			}
		}
	}
}

func byteAt(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

// assignment handles a separator at sep whose value starts at valAt.
// typed says that the separator can follow a declaration with a type
// ("var apiKey string =", "String password ="), so that the word before
// the type is a name too.
func (r *Redactor) assignment(s *sink, sep, valAt int, typed bool) {
	text := s.text
	ns, ne, ok := nameBefore(text, sep)
	if !ok {
		return
	}
	name := text[ns:ne]
	match, aws, pw := secretName(name)
	if !match && typed && ns > 0 && (text[ns-1] == ' ' || text[ns-1] == '\t') {
		// "var apiKey string = …": name is the type; try the word before.
		j := ns - 1
		for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
			j--
		}
		if ps, pe, ok := identBefore(text, j); ok {
			match, aws, pw = secretName(text[ps:pe])
		}
	}
	if !match {
		return
	}
	// "PWD="+dir: the name sits at the start of a string literal and the
	// quote after the separator closes that string; there is no value.
	if ns > 0 && isQuote(text[ns-1]) && (ne >= len(text) || text[ne] != text[ns-1]) && byteAt(text, valAt) == text[ns-1] {
		return
	}
	vs, ve, kind, ok := valueAt(text, valAt, text[sep] == ':')
	if !ok {
		return
	}
	if pw && text[sep] == ':' && strings.EqualFold(name, "pass") {
		pw = false // test reports, not a password: "PASS: tests/basic.sh"
	}
	k := keyCtx{sep: text[sep], glued: ne == sep, upperName: isEnvName(name)}
	if text[sep] == ':' && byteAt(text, sep+1) == '=' {
		k.sep = '!' // Go's ":=": a literal would be quoted.
	}
	if text[sep] == '=' && ne == sep && name[0] == '-' && (ns == 0 || isSpace(text[ns-1]) || isQuote(text[ns-1])) {
		// A command-line flag (--password=v, -Dapp.password=v): its value
		// is a literal whatever follows it on the line.
		k.sep = 0
	}
	k.blank = vs > 0 && isSpace(text[vs-1])
	if pw && kind == valBare && k.sep != '!' {
		// Under a password name an unquoted value runs to the next
		// blank: env files, YAML and properties keep ',', ';', '}' and
		// '=' in it.
		ve = extendBare(text, vs, ve)
	}
	form := formCode
	if kind != valBare {
		form = formQuoted
	} else if configLine(text, ns, ne, sep, vs, ve) {
		form = formConfig
	}
	if r.addValue(s, text[vs:ve], vs, ve, form, aws) || !pw {
		return
	}
	addPassword(s, vs, ve, kind, k)
}

// valueForm says how a value was written, which decides whether an
// unquoted identifier may be code.
type valueForm int

const (
	formCode   valueForm = iota // unquoted, where code may name a variable: "token = cfg.Token"
	formConfig                  // unquoted on a configuration line: NAME=v, "key: v", "Header: v"
	formQuoted                  // a string literal, an XML element, a flag's value
)

// configLine reports whether an unquoted value [vs, ve) after the name
// [ns, ne) and the separator at sep is written as configuration rather
// than code: an env or properties line (NAME=v, glued, the value ending
// the line or followed by a blank: "TOKEN=v cmd"), a YAML key or a
// header at the start of a line ("vault_token: v", "X-Vault-Token: v")
// whose value ends the line, or "Name: v" filling a whole string
// ("-H 'X-Vault-Token: v'"). There a dotted value is a literal
// ("hvs.CAES…", a Discord token): code would write "cfg.Token" with
// blanks around '=' or a ',' after it.
func configLine(text string, ns, ne, sep, vs, ve int) bool {
	switch text[sep] {
	case '=':
		if ne != sep || vs != sep+1 {
			return false
		}
		c := byteAt(text, ve)
		return ve == len(text) || isSpace(c)
	case ':':
		if vs == sep+1 || byteAt(text, sep+1) == '=' {
			return false
		}
		q := byteAt(text, ns-1)
		if isQuote(q) {
			// "Name: v" as a whole string, or a quoted YAML key.
			if byteAt(text, ve) == q && ne < len(text) && text[ne] != q {
				return true
			}
			ns--
		}
		return startsLine(text, ns) && endsLine(text, ve)
	}
	return false
}

// startsLine reports whether only indentation (and a YAML "- ") comes
// before p on its line.
func startsLine(text string, p int) bool {
	for p > 0 && (text[p-1] == ' ' || text[p-1] == '\t') {
		p--
	}
	if p > 0 && text[p-1] == '-' {
		p--
		for p > 0 && (text[p-1] == ' ' || text[p-1] == '\t') {
			p--
		}
	}
	return p == 0 || text[p-1] == '\n'
}

// endsLine reports whether only blanks or a comment follow p on its line.
func endsLine(text string, p int) bool {
	q := skipBlank(text, p)
	return q == len(text) || text[q] == '\n' || text[q] == '\r' || text[q] == '#' && q > p
}

// addValue adds [vs, ve) when the value looks like a literal secret, and
// reports whether it did.
func (r *Redactor) addValue(s *sink, v string, vs, ve int, form valueForm, aws bool) bool {
	// Sentences, URLs (their passwords are url-password's) and escaped
	// text ("\u3299") are not secrets of this rule.
	if isPlaceholder(v) || strings.ContainsAny(v, " \t") || strings.Contains(v, "://") ||
		strings.Contains(v, `\u`) || strings.Contains(v, `\x`) {
		return false
	}
	if form != formQuoted && isNumber(v) {
		return false
	}
	if aws && isAWSSecret(v) {
		s.add("aws-secret-key", prioAWSSecret, vs, ve)
		return true
	}
	if form != formQuoted && isReference(v, form == formConfig) || isPath(v) || !looksRandom(v, r.entropy) || encodesPlaceholder(v) {
		return false
	}
	s.add("generic-secret", prioGeneric, vs, ve)
	return true
}

// isAWSSecret matches the shape of an AWS secret access key: 40 characters
// of base64 without padding.
func isAWSSecret(v string) bool {
	if len(v) != 40 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '/' && c != '+' {
			return false
		}
	}
	return entropy(v) >= 3.5
}

// isReference reports whether an unquoted value is code rather than a
// literal: an identifier or a dotted path ("cfg.Token", "defaultApiKey",
// "settings.SECRET_KEY"). Env files write literals unquoted too, but their
// values are random strings, whose words are short (see meanWordLen). On
// a configuration line (config) a dotted value is no path but a token
// with dots ("hvs.CAES…", "<id>.<time>.<hmac>").
func isReference(v string, config bool) bool {
	if v == "" || !isAlpha(v[0]) && v[0] != '_' {
		return false
	}
	if v[0] == '_' {
		return true // "__ccgo_fp_xAuth", "_token": private names
	}
	dots := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '.' {
			dots++
			if i+1 >= len(v) || !isAlpha(v[i+1]) && v[i+1] != '_' {
				return false
			}
			continue
		}
		if !isWord(c) {
			return false
		}
	}
	if dots > 0 {
		return !config
	}
	return meanWordLen(v) >= 3
}

// isNumber reports whether an unquoted value is a numeric literal
// ("0xc0506617", "1_000"). A 0x-prefixed value longer than 64 bits is no
// integer but key material (an Ethereum private key in an .env file).
func isNumber(v string) bool {
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		if len(v) > 2+16 {
			return false
		}
		for i := 2; i < len(v); i++ {
			if c := v[i]; !isDigit(c) && !(c|0x20 >= 'a' && c|0x20 <= 'f') && c != '_' {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isPath reports whether v is a file path; "PWD=/home/me" is no secret.
func isPath(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		strings.HasPrefix(v, "~/") || len(v) > 2 && isAlpha(v[0]) && v[1] == ':' && v[2] == '\\'
}

// nameBefore finds the name left of a separator: an identifier
// ("dbPassword", "spring.datasource.password", "--token", "$secret"), a
// quoted key ("\"client_secret\"", 'api-key', escaped \"token\" inside a
// string) or an index expression (config["password"]).
func nameBefore(text string, sep int) (int, int, bool) {
	j := sep
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	if j == 0 {
		return 0, 0, false
	}
	c := text[j-1]
	if c == ']' && j >= 2 {
		j--
		c = text[j-1]
		if c != '"' && c != '\'' {
			return 0, 0, false
		}
	}
	if c == '"' || c == '\'' || c == '`' {
		end := j - 1
		escaped := end > 0 && text[end-1] == '\\'
		if escaped {
			end--
		}
		k := end
		for k > 0 && end-k < maxName && isNameChar(text[k-1]) {
			k--
		}
		if k == end || k == 0 || text[k-1] != c {
			return 0, 0, false
		}
		if escaped && (k < 2 || text[k-2] != '\\') {
			return 0, 0, false
		}
		return k, end, true
	}
	return identBefore(text, j)
}

// identBefore returns the identifier that ends at j.
func identBefore(text string, j int) (int, int, bool) {
	k := j
	for k > 0 && j-k < maxName && (isNameChar(text[k-1]) || text[k-1] == '$') {
		k--
	}
	if k == j || k > 0 && isNameChar(text[k-1]) {
		return 0, 0, false
	}
	return k, j, true
}

func isNameChar(c byte) bool { return isWord(c) || c == '-' || c == '.' }

// Name words. A name matches when one of its words is a secret word, or
// ends with one ("dbpassword", "GITHUBTOKEN"), or two of them make one
// ("api key", "access_key", "privateKey"). Whole words only: "author",
// "tokenizer" and "maxTokens" are not secrets.
//
// The word functions take lower-case bytes: switch string(b) compiles to
// comparisons without allocating, which keeps Redact allocation-free on
// text without secrets.
func isSecretWord(w []byte) bool {
	switch string(w) {
	case "secret", "token", "password", "passwd", "pwd", "pass", "passphrase",
		"apikey", "auth", "credential", "credentials", "secretkey", "accesskey",
		"privatekey", "apisecret":
		return true
	}
	for _, k := range [...]string{"password", "passwd", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey"} {
		if len(w) > len(k) && string(w[len(w)-len(k):]) == k {
			return true
		}
	}
	return false
}

// isKeyQualifier reports whether w followed by "key" names a secret.
func isKeyQualifier(w []byte) bool {
	switch string(w) {
	case "api", "access", "private", "secret", "signing", "encryption", "master", "app", "client":
		return true
	}
	return false
}

// isDenyWord reports whether w says the value is about a secret but is
// not the secret: its name, file, length, hash, public half, or a
// pagination cursor.
func isDenyWord(w []byte) bool {
	switch string(w) {
	case "name", "names", "id", "ids", "uuid", "file", "filename", "path", "dir", "url", "uri", "endpoint",
		"host", "type", "len", "length", "size", "count", "max", "min", "ttl", "expiry", "expires",
		"expiration", "exp", "timeout", "field", "header", "env", "var", "ref", "hash", "hashed", "sha",
		"sha1", "sha256", "sha512", "md5", "digest", "checksum", "fingerprint", "label", "prefix",
		"suffix", "policy", "hint", "regex", "pattern", "format", "kind", "mode", "limit", "index",
		"version", "public", "publishable", "page", "cursor", "cancel", "cancellation", "prompt",
		"placeholder", "message", "msg", "error", "err", "text", "title", "column", "table", "provider",
		"location", "enabled", "required", "usage", "kid", "source", "method", "scheme", "strategy",
		"rotation", "manager", "store", "service", "reset", "input", "form", "param", "params",
		"template", "test":
		return true
	}
	return false
}

// secretName reports whether name sounds like it holds a secret, whether
// it is an AWS name (for the aws-secret-key rule), and whether it is
// explicitly a password: its last word is a password word (see
// isPasswordWord), as in DB_PASSWORD, spring.datasource.password,
// PGPASSWORD, MYSQL_PWD, dbPass or JWT_SECRET, or it ends in "secret key"
// (SECRET_KEY, secretKey).
func secretName(name string) (match, aws, pw bool) {
	if len(name) > maxName {
		return false, false, false
	}
	var (
		spans [maxWords][2]int
		buf   [maxName]byte
	)
	for i := 0; i < len(name); i++ {
		buf[i] = lowerASCII(name[i])
	}
	n := splitWords(name, spans[:])
	word := func(i int) []byte { return buf[spans[i][0]:spans[i][1]] }
	for i := range n {
		if isSecretWord(word(i)) || i+1 < n && string(word(i+1)) == "key" && isKeyQualifier(word(i)) {
			match = true
			break
		}
	}
	if !match {
		return false, false, false
	}
	secretAccess := 0
	pw = isPasswordWord(word(n-1)) || string(word(n-1)) == "secretkey" ||
		n > 1 && string(word(n-1)) == "key" && string(word(n-2)) == "secret"
	for i := range n {
		w := word(i)
		if isDenyWord(w) {
			return false, false, false
		}
		switch string(w) {
		case "aws":
			aws = true
		case "secret", "access":
			secretAccess++
		case "existing", "from", "secrets", "k8s", "kube", "vault":
			// Helm's existingSecret and friends name a Secret object.
			pw = false
		}
	}
	return true, aws || secretAccess == 2, pw
}

// isPasswordWord reports whether the last word of a name makes it a
// password key: password, passwd, pwd, pass, passphrase, secret, or a
// word that ends with password, passwd or secret (PGPASSWORD, dbpassword).
func isPasswordWord(w []byte) bool {
	switch string(w) {
	case "password", "passwd", "pwd", "pass", "passphrase", "secret":
		return true
	}
	for _, k := range [...]string{"password", "passwd", "secret"} {
		if len(w) > len(k) && string(w[len(w)-len(k):]) == k {
			return true
		}
	}
	return false
}

// splitWords splits an identifier at '_', '-', '.', '$' and camelCase
// boundaries ("dbPassword" → db, Password; "HTTPToken" → HTTP, Token) and
// returns the words' byte ranges.
func splitWords(name string, out [][2]int) int {
	n := 0
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start && n < len(out) {
			out[n] = [2]int{start, end}
			n++
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := name[i-1]
		upper := c >= 'A' && c <= 'Z'
		switch {
		case upper && p >= 'a' && p <= 'z', upper && isDigit(p):
			flush(i)
			start = i
		case c >= 'a' && c <= 'z' && p >= 'A' && p <= 'Z' && i-start > 1:
			// "HTTPToken": the capital before this lower-case letter
			// starts the next word.
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(name))
	return n
}

// valueKind says where valueAt found a value.
type valueKind int

const (
	valBare   valueKind = iota // an unquoted run: a literal or an identifier
	valString                  // a string literal, or a literal default of an environment lookup
	valArg                     // the first string argument of a call: a literal or the name of a field
)

// valueAt reads the value that starts at p (after blanks): a quoted string
// (with Python/C# prefixes and \"escaped\" quotes inside strings), or an
// unquoted run up to a delimiter. After ':' a type annotation may come
// first ("token: string = …", "api_key: &str = …"); the value is then the
// one after its '='. A call's first string argument is taken as the value
// ([]byte("…"), SecretStr("…")) unless the callee reads the environment.
// kind says which of these it was.
func valueAt(text string, p int, colon bool) (vs, ve int, kind valueKind, ok bool) {
	p = skipBlank(text, p)
	if p >= len(text) {
		return 0, 0, valBare, false
	}
	// String prefixes: b"", r"", f"", u"", rb"", @"" …
	q := p
	for q < len(text) && q-p < 2 && strings.IndexByte("bBrRuUfF@", text[q]) >= 0 {
		q++
	}
	if q < len(text) && isQuote(text[q]) {
		p = q
	}
	if vs, ve, ok := quotedAt(text, p); ok {
		return vs, ve, valString, true
	}
	// Go conversions: []byte("…"), []rune("…").
	if strings.HasPrefix(text[p:], "[]byte(") || strings.HasPrefix(text[p:], "[]rune(") {
		if vs, ve, ok := quotedAt(text, skipBlank(text, p+7)); ok {
			return vs, ve, valString, true
		}
		return 0, 0, valBare, false
	}
	if colon {
		if t := typeAnnotationEnd(text, p); t > p {
			return valueAt(text, t, false)
		}
		// YAML needs a blank after ':'; "user:password:uid" field lists
		// and JS "{password:pw}" shorthand have none and hold no literal.
		if p > 0 && text[p-1] == ':' {
			return 0, 0, valBare, false
		}
	}
	switch text[p] {
	case '[', '{', '(', '<', '\n', '\r', ',', ';', ')', '}', ']', '-', '|', '>':
		return 0, 0, valBare, false
	}
	e := p
	for e < len(text) && e-p <= maxValue && !isSpace(text[e]) && strings.IndexByte("\"'`,;(){}[]<>&|", text[e]) < 0 {
		// '=' inside an unquoted value starts the next key=value pair
		// ("a=1,b=2", a flag string); only base64 padding ends a value
		// with '='.
		if text[e] == '=' && !paddingAt(text, e) {
			break
		}
		e++
	}
	if e == p || e-p > maxValue {
		return 0, 0, valBare, false
	}
	if e < len(text) && text[e] == '(' {
		vs, ve, ok := quotedAt(text, skipBlank(text, e+1))
		if !ok {
			return 0, 0, valBare, false
		}
		if !containsFold(text[p:e], "env") {
			return vs, ve, valArg, true
		}
		// os.environ.get("NAME", "fallback"), env('KEY', '…'): the first
		// argument names a variable, a literal second one is a default
		// value that ships with the code.
		a := skipBlank(text, min(len(text), ve+1))
		if a >= len(text) || text[a] != ',' {
			return 0, 0, valBare, false
		}
		if vs, ve, ok := quotedAt(text, skipBlank(text, a+1)); ok {
			return vs, ve, valString, true
		}
		return 0, 0, valBare, false
	}
	return p, e, valBare, true
}

// paddingAt reports whether the '=' at i is base64 padding: one or two
// '=' that end the value.
func paddingAt(text string, i int) bool {
	j := i
	for j < len(text) && text[j] == '=' && j-i < 2 {
		j++
	}
	return j == len(text) || isSpace(text[j]) || strings.IndexByte("\"'`,;)}]&|", text[j]) >= 0
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// quotedAt reads a string literal starting at p (a quote, or a backslash
// and a quote inside another string). An unterminated string runs to the
// end of the line: text cut in the middle of a secret still loses it.
// Strings longer than maxValue are not values of an assignment (and
// reading them from every separator would make the scan quadratic).
func quotedAt(text string, p int) (int, int, bool) {
	if p >= len(text) {
		return 0, 0, false
	}
	text = text[:min(len(text), p+2+maxValue)]
	c := text[p]
	if c == '\\' && p+1 < len(text) && isQuote(text[p+1]) {
		q := text[p+1]
		start := p + 2
		for e := start; e < len(text); e++ {
			if text[e] == '\n' {
				return start, e, true
			}
			if text[e] == '\\' && e+1 < len(text) && text[e+1] == q {
				return start, e, true
			}
		}
		return start, len(text), true
	}
	if !isQuote(c) {
		return 0, 0, false
	}
	start := p + 1
	for e := start; e < len(text); e++ {
		switch text[e] {
		case '\\':
			e++
		case c:
			return start, e, true
		case '\n':
			if c != '`' {
				end := e
				if end > start && text[end-1] == '\r' {
					end--
				}
				return start, end, true
			}
		}
	}
	return start, len(text), true
}

// typeAnnotationEnd returns the offset after the '=' that ends a type
// annotation starting at p ("string = ", "&str = ", "Optional[str] = "),
// or -1. The '=' must have a blank before it, which keeps base64 padding
// and "a=b" values out.
func typeAnnotationEnd(text string, p int) int {
	letters := false
	for e := p; e < min(len(text), p+maxName); e++ {
		c := text[e]
		switch {
		case isAlpha(c):
			letters = true
		case isWord(c) || strings.IndexByte("&<>[]'.*?|, \t", c) >= 0:
		case c == '=':
			if !letters || e == p || !(text[e-1] == ' ' || text[e-1] == '\t') {
				return -1
			}
			if n := byteAt(text, e+1); n == '=' || n == '>' {
				return -1
			}
			return e + 1
		default:
			return -1
		}
	}
	return -1
}

// xmlElement handles '>' closing an opening tag: <password>value</password>
// (Maven settings.xml, .NET configs).
func (r *Redactor) xmlElement(s *sink, gt int) {
	text := s.text
	if gt == 0 || text[gt-1] == '/' || text[gt-1] == '-' || text[gt-1] == '=' {
		return
	}
	lo := max(0, gt-maxName-1)
	lt := strings.LastIndexByte(text[lo:gt], '<')
	if lt < 0 {
		return
	}
	lt += lo
	tag := text[lt+1 : gt]
	if tag == "" || !isAlpha(tag[0]) {
		return
	}
	for i := 0; i < len(tag); i++ {
		if !isNameChar(tag[i]) && tag[i] != ':' {
			return
		}
	}
	match, _, pw := secretName(tag)
	if !match {
		return
	}
	vs := gt + 1
	end := strings.IndexAny(text[vs:min(len(text), vs+4096)], "<\n")
	if end < 0 || !strings.HasPrefix(text[vs+end:], "</") {
		return
	}
	ve := vs + end
	for vs < ve && (text[vs] == ' ' || text[vs] == '\t') {
		vs++
	}
	for ve > vs && (text[ve-1] == ' ' || text[ve-1] == '\t') {
		ve--
	}
	if !r.addValue(s, text[vs:ve], vs, ve, formQuoted, false) && pw {
		addPassword(s, vs, ve, valString, keyCtx{})
	}
}

// flag handles "--password value"; "--password=value" is an assignment.
func (r *Redactor) flag(s *sink, i int) {
	text := s.text
	e := i + 2
	for e < len(text) && e-i < maxName && isNameChar(text[e]) {
		e++
	}
	if e == i+2 || e >= len(text) || text[e] != ' ' && text[e] != '\t' {
		return
	}
	match, _, pw := secretName(text[i+2 : e])
	if !match {
		return
	}
	p := skipBlank(text, e)
	if p >= len(text) || text[p] == '-' || text[p] == '\\' {
		return
	}
	vs, ve, kind, ok := valueAt(text, p, false)
	if !ok {
		return
	}
	// Command lines have no identifiers: an unquoted value is a literal.
	if !r.addValue(s, text[vs:ve], vs, ve, formQuoted, false) && pw && kind != valArg {
		addPassword(s, vs, ve, valString, keyCtx{})
	}
}

var sqlKeywords = []string{"PASSWORD '", "password '", "IDENTIFIED BY '", "identified by '"}

// scanSQLPasswords finds SQL's "PASSWORD 'v'" (CREATE/ALTER USER … WITH
// PASSWORD) and "IDENTIFIED BY 'v'" (MySQL, Oracle), in upper or lower
// case, where no separator marks an assignment.
func (r *Redactor) scanSQLPasswords(s *sink) {
	text := s.text
	for _, kw := range sqlKeywords {
		for k := range indexAll(text, kw) {
			if k > 0 && isWord(text[k-1]) {
				continue
			}
			if vs, ve, ok := quotedAt(text, k+len(kw)-1); ok && !r.addValue(s, text[vs:ve], vs, ve, formQuoted, false) {
				addPassword(s, vs, ve, valString, keyCtx{})
			}
		}
	}
}
