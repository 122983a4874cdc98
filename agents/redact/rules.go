package redact

import (
	"encoding/base64"
	"iter"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Rule priorities: when findings overlap, the merged span takes the name of
// the most specific rule, so that "password: ghp_…" reads as a GitHub token
// rather than a generic secret.
const (
	prioPrivateKey = iota
	prioProvider
	prioJWT
	prioConnString
	prioURLPassword
	prioCLI
	prioScheme
	prioAuthHeader
	prioAWSSecret
	prioExtra
	prioGeneric
	prioPassword
)

// tokenRule is a secret with a recognisable shape, found by a regular
// expression. The expression runs only when one of the keywords occurs in
// the text: strings.Contains is an order of magnitude cheaper than a regexp
// scan, and most text contains none of them.
type tokenRule struct {
	name     string
	prio     int
	keywords []string
	re       *regexp.Regexp
	group    int  // submatch to redact; 0 = the whole match
	boundary bool // the match must not touch a letter, digit or '_' on either side
	valid    func(secret string) bool
}

// scan runs the rule; detect has checked the keywords (keywordScan).
func (t *tokenRule) scan(s *sink) {
	for _, m := range t.re.FindAllStringSubmatchIndex(s.text, -1) {
		if t.boundary && (m[0] > 0 && isWord(s.text[m[0]-1]) || m[1] < len(s.text) && isWord(s.text[m[1]])) {
			continue
		}
		start, end := m[2*t.group], m[2*t.group+1]
		if start < 0 || start == end {
			continue
		}
		if t.valid != nil && !t.valid(s.text[start:end]) {
			continue
		}
		s.add(t.name, t.prio, start, end)
	}
}

func provider(name, expr string, keywords ...string) tokenRule {
	return tokenRule{name: name, prio: prioProvider, keywords: keywords, re: regexp.MustCompile(expr), boundary: true, valid: notFiller}
}

// builtinRules are the secrets recognised by shape alone. The shapes are
// the documented ones of each provider; each rule also requires the random
// part to look random (notFiller), so that documentation placeholders such
// as "ghp_XXXXXXXX…" are left alone.
var builtinRules = []tokenRule{
	// Anthropic before OpenAI: both start with "sk-"; equal spans take the
	// higher-priority name and the order of the table breaks the tie.
	{name: "anthropic-key", prio: prioProvider, keywords: []string{"sk-ant-"},
		re: regexp.MustCompile(`sk-ant-[a-z]{2,8}[0-9]{0,3}-[A-Za-z0-9_-]{32,}`), boundary: true, valid: notFiller},
	// OpenAI: "sk-" + 48 base62 (legacy), "sk-proj-"/"sk-svcacct-"/
	// "sk-admin-" + a long base64url tail. Requiring upper, lower and digit
	// keeps out kebab-case words that happen to follow "sk-".
	{name: "openai-key", prio: prioProvider, keywords: []string{"sk-"},
		re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{32,}`), boundary: true,
		valid: func(s string) bool { return !strings.HasPrefix(s, "sk-ant-") && mixed3(s[3:]) && notFiller(s) }},
	provider("aws-access-key-id", `(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`, "AKIA", "ASIA", "ABIA", "ACCA"),
	provider("github-token", `gh[pousr]_[A-Za-z0-9]{36,251}`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	provider("github-token", `github_pat_[A-Za-z0-9_]{40,}`, "github_pat_"),
	provider("gitlab-token", `gl(?:pat|dt|rt|ptt|soat|oas)-[A-Za-z0-9_-]{20,}`, "glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "gloas-"),
	provider("slack-token", `xox[abposre]-[0-9A-Za-z-]{10,}`, "xox"),
	provider("slack-token", `xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]{20,}`, "xapp-"),
	{name: "slack-webhook", prio: prioProvider, keywords: []string{"hooks.slack.com/"},
		re: regexp.MustCompile(`hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9_/+-]{16,})`), group: 1},
	{name: "discord-webhook", prio: prioProvider, keywords: []string{"/api/webhooks/"},
		re: regexp.MustCompile(`discord(?:app)?\.com/api/webhooks/([0-9]{15,22}/[A-Za-z0-9_-]{40,})`), group: 1},
	provider("stripe-key", `(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}`, "k_live_", "k_test_"),
	provider("stripe-webhook-secret", `whsec_[A-Za-z0-9+/=]{24,}`, "whsec_"),
	provider("google-api-key", `AIza[0-9A-Za-z_-]{35}`, "AIza"),
	provider("google-oauth-secret", `GOCSPX-[0-9A-Za-z_-]{28}`, "GOCSPX-"),
	provider("google-oauth-token", `ya29\.[0-9A-Za-z_-]{30,}`, "ya29."),
	// Twilio API key SIDs ("SK" + 32 hex) come with their secret; the
	// account SID ("AC…") is an identifier and is left alone.
	provider("twilio-api-key", `SK[0-9a-f]{32}`, "SK"),
	provider("sendgrid-key", `SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}`, "SG."),
	provider("npm-token", `npm_[A-Za-z0-9]{36}`, "npm_"),
	// PyPI tokens are macaroons: "pypi-" + base64 of a header that always
	// starts with the same bytes ("AgE").
	provider("pypi-token", `pypi-AgE[A-Za-z0-9_-]{50,}`, "pypi-AgE"),
	{name: "huggingface-token", prio: prioProvider, keywords: []string{"hf_"},
		re: regexp.MustCompile(`hf_[A-Za-z0-9]{34,40}`), boundary: true,
		valid: func(s string) bool { return hasUpper(s) && hasLower(s[3:]) && notFiller(s) }},
	provider("groq-key", `gsk_[A-Za-z0-9]{48,}`, "gsk_"),
	provider("digitalocean-token", `do[por]_v1_[a-f0-9]{64}`, "_v1_"),
	provider("shopify-token", `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, "shp"),
	provider("age-secret-key", `AGE-SECRET-KEY-1[0-9A-Z]{58}`, "AGE-SECRET-KEY-1"),
	// Notion integration tokens: "ntn_" + 11 digits + 35 base62, and the
	// older "secret_" + 43 base62. Those need upper, lower and digits, so
	// that an identifier after "secret_" is no token. The keywords leave
	// out the first letters: "nt" and "se" start a pair on most lines of
	// code, "tn" and "cr" seldom (see keywordScan).
	provider("notion-token", `ntn_[0-9]{11}[A-Za-z0-9]{35}`, "tn_"),
	{name: "notion-token", prio: prioProvider, keywords: []string{"cret_"},
		re: regexp.MustCompile(`secret_[A-Za-z0-9]{43}`), boundary: true,
		valid: func(s string) bool { return mixed3(s[7:]) && notFiller(s) }},
	// Doppler: personal, service (with an optional environment slug),
	// CLI, service-account, SCIM and audit tokens.
	provider("doppler-token", `dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}`, "dp."),
	// Atlassian (Jira, Confluence, Bitbucket) API tokens.
	provider("atlassian-token", `ATATT3[A-Za-z0-9_=-]{186}`, "ATATT3"),
	// Firebase Cloud Messaging legacy server key: "AAAA" + 7, ':' and
	// "APA91b" + 134. Device registration tokens share the second half but
	// not the "AAAA" sender part, and are no credential.
	provider("fcm-server-key", `AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{134}`, "APA91b"),
	provider("pulumi-token", `pul-[a-f0-9]{40}`, "pul-"),
	// JWT: base64url header and payload of JSON objects ("{\"" encodes as
	// "eyJ") and a signature. Unsigned tokens carry no credential.
	{name: "jwt", prio: prioJWT, keywords: []string{"eyJ"},
		re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}`), boundary: true},
	// Azure storage / Service Bus connection strings and SAS signatures:
	// only the key is redacted, the account and endpoint stay readable.
	{name: "azure-key", prio: prioConnString, keywords: []string{"AccountKey=", "AccessKey="},
		re: regexp.MustCompile(`(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`), group: 1},
	{name: "azure-key", prio: prioConnString, keywords: []string{"sig="},
		re: regexp.MustCompile(`[?&;]sig=([A-Za-z0-9%+/]{30,}(?:%3[Dd]|=){0,2})`), group: 1},
}

// scanPEM finds PEM private key blocks ("-----BEGIN … PRIVATE KEY-----",
// including OpenSSH, encrypted PKCS#8 and PGP "PRIVATE KEY BLOCK") and
// redacts the whole block with its markers. A block without its END line
// (a truncated hunk) is redacted to the end of the text. The header alone
// is not enough: a base64 body must follow, so code that merely names the
// block type ("-----BEGIN RSA PRIVATE KEY-----" as a constant) is left as
// it is.
func scanPEM(s *sink) {
	text := s.text
	for off := 0; ; {
		k := strings.Index(text[off:], "-----BEGIN ")
		if k < 0 {
			return
		}
		start := off + k
		off = start + len("-----BEGIN ")
		h := strings.Index(text[off:min(len(text), off+64)], "-----")
		if h < 0 {
			continue
		}
		label := text[off : off+h]
		if !strings.Contains(label, "PRIVATE KEY") {
			continue
		}
		body := off + h + len("-----")
		if !pemBodyFollows(text[body:min(len(text), body+512)]) {
			continue
		}
		end := len(text)
		if e := strings.Index(text[body:], "-----END "); e >= 0 {
			e += body + len("-----END ")
			if t := strings.Index(text[e:min(len(text), e+64)], "-----"); t >= 0 {
				end = e + t + len("-----")
			}
		}
		s.add("private-key", prioPrivateKey, start, end)
		off = end
	}
}

// pemBodyFollows reports whether a run of 40+ base64 characters (a PEM line
// is 64) comes before the next "-----" marker.
func pemBodyFollows(s string) bool {
	if e := strings.Index(s, "-----"); e >= 0 {
		s = s[:e]
	}
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || c == '+' || c == '/' {
			run++
			if run >= 40 {
				return true
			}
			continue
		}
		// Escaped line breaks in JSON or code strings: the letter of "\n"
		// would otherwise join the run.
		if c == '\\' && i+1 < len(s) {
			i++
		}
		run = 0
	}
	return false
}

// indexAll yields the index of every occurrence of kw in text, left to
// right. The search resumes after each occurrence, so they do not overlap.
func indexAll(text, kw string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for off := 0; ; {
			k := strings.Index(text[off:], kw)
			if k < 0 || !yield(off+k) {
				return
			}
			off += k + len(kw)
		}
	}
}

// scanSchemes finds "Bearer <token>" and "Basic <base64>" in headers and
// code strings, in any letter case. Bearer tokens must look random (16+
// characters, mixed classes, enough entropy); Basic credentials must
// decode to "user:password", which prose ("basic configuration") never
// does.
func scanSchemes(s *sink) {
	text := s.text
	for _, kw := range [...]string{"earer", "EARER", "asic", "ASIC"} {
		bearer := kw[0]|0x20 == 'e'
		for k := range indexAll(text, kw) {
			off := k + len(kw)
			if k == 0 || text[k-1]|0x20 != 'b' || k > 1 && isAlnum(text[k-2]) {
				continue
			}
			p := off
			for p < len(text) && (text[p] == ' ' || text[p] == '\t') {
				p++
			}
			if p == off {
				continue
			}
			if bearer {
				e := tokenEnd(text, p)
				if tok := text[p:e]; len(tok) >= 16 && tokenLooksRandom(tok) && (e == len(text) || !isWord(text[e])) {
					s.add("bearer-token", prioScheme, p, e)
				}
				continue
			}
			e := p
			for e < len(text) && e-p < maxValue && (isAlnum(text[e]) || text[e] == '+' || text[e] == '/') {
				e++
			}
			for n := 0; n < 2 && e < len(text) && text[e] == '='; n++ {
				e++
			}
			if e-p >= 8 && isBasicCredential(text[p:e]) {
				s.add("basic-auth", prioScheme, p, e)
			}
		}
	}
}

// isBasicCredential reports whether b64 decodes to printable "user:pass"
// whose password is a literal credential, judged as in a URI's userinfo:
// "admin:admin" and "svc:P@ssw0rd!" go, "user:password", "<user>:<pass>"
// and "x:****" are documentation. RFC 7617's own example stays too.
func isBasicCredential(b64 string) bool {
	raw := strings.TrimRight(b64, "=")
	dec, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || !utf8.Valid(dec) {
		return false
	}
	c := strings.IndexByte(string(dec), ':')
	if pw := string(dec[c+1:]); c < 0 || !literalCredential(pw) || hasKeyPlaceholder(pw) || string(dec) == "Aladdin:open sesame" {
		return false
	}
	for _, ch := range string(dec) {
		if ch < 0x20 || ch == 0x7f {
			return false
		}
	}
	return true
}

// scanAuthHeaders finds Authorization headers with other schemes or none
// ("Authorization: token …", "authorization=…"). Bearer and Basic are left
// to scanSchemes; the value must look random.
func scanAuthHeaders(s *sink) {
	text := s.text
	for _, kw := range [...]string{"uthorization", "UTHORIZATION"} {
		for k := range indexAll(text, kw) {
			if k == 0 || text[k-1]|0x20 != 'a' || k > 1 && isAlnum(text[k-2]) {
				continue
			}
			p := k + len(kw)
			if p < len(text) && (text[p] == '"' || text[p] == '\'') {
				p++
			}
			p = skipBlank(text, p)
			if p >= len(text) || text[p] != ':' && text[p] != '=' {
				continue
			}
			p = skipBlank(text, p+1)
			if p < len(text) && (text[p] == '"' || text[p] == '\'') {
				p++
			}
			// Optional scheme word: "token", "Bot", "Key", "Digest"…
			w := p
			for w < len(text) && w-p < maxName && isAlpha(text[w]) {
				w++
			}
			if w < len(text) && w > p && (text[w] == ' ' || text[w] == '\t') {
				if scheme := strings.ToLower(text[p:w]); scheme == "bearer" || scheme == "basic" {
					continue
				}
				p = skipBlank(text, w)
			}
			e := tokenEnd(text, p)
			if tok := text[p:e]; len(tok) >= 16 && tokenLooksRandom(tok) {
				s.add("auth-header", prioAuthHeader, p, e)
			}
		}
	}
}

// scanCLICredentials redacts the password of "-u user:password" and
// "--user user:password" (curl, httpie and friends), keeping the user.
// The password is judged as in a URI: any literal of 4 or more bytes
// goes ("admin", "P@ssw0rd!"), templates, masks, field names and
// documentation words stay. Container runners take "-u user:group"
// instead, and their lines are skipped.
func scanCLICredentials(s *sink) {
	text := s.text
	for _, flag := range [...]string{"-u", "--user"} {
		for k := range indexAll(text, flag) {
			off := k + len(flag)
			if k > 0 && !isSpace(text[k-1]) || off >= len(text) || text[off] != ' ' && text[off] != '=' {
				continue
			}
			if runsContainer(text, k) {
				continue
			}
			p := skipBlank(text, off+1)
			if p < len(text) && (text[p] == '"' || text[p] == '\'') {
				p++
			}
			u := p
			for u < len(text) && u-p < maxName && !isSpace(text[u]) && text[u] != ':' && text[u] != '"' && text[u] != '\'' {
				u++
			}
			if u == p || u >= len(text) || text[u] != ':' {
				continue
			}
			e := u + 1
			for e < len(text) && e-u <= maxValue && !isSpace(text[e]) && text[e] != '"' && text[e] != '\'' {
				e++
			}
			pw := text[u+1 : e]
			// "-u http://…" is a URL (ragel, not curl), not user:password.
			if len(pw) < minPassword || allDigits(pw) || strings.HasPrefix(pw, "//") || !literalCredential(pw) ||
				hasKeyPlaceholder(pw) {
				continue
			}
			s.add("cli-credentials", prioCLI, u+1, e)
		}
	}
}

// containerCommands take "-u user:group" or "--user uid:gid".
var containerCommands = []string{"docker", "podman", "nerdctl", "buildah", "kubectl", "chroot", "gosu", "su-exec"}

// runsContainer reports whether the command line that holds the flag at
// k runs one of containerCommands before it.
func runsContainer(text string, k int) bool {
	lo := max(0, k-maxAuthority)
	if i := strings.LastIndexByte(text[lo:k], '\n'); i >= 0 {
		lo += i + 1
	}
	line := text[lo:k]
	for _, c := range containerCommands {
		for off := 0; ; {
			i := strings.Index(line[off:], c)
			if i < 0 {
				break
			}
			i += off
			off = i + len(c)
			if (i == 0 || !isWord(line[i-1]) && line[i-1] != '-') && (off == len(line) || isSpace(line[off])) {
				return true
			}
		}
	}
	return false
}

// awsPairWindow is how far from an access key id scanAWSPairs looks for
// its secret: the two travel together (one call, one config block).
const awsPairWindow = 300

// scanAWSPairs finds AWS secret access keys that carry no telling name,
// as in NewStaticCredentials("AKIA…", "<secret>", ""): a 40-character
// base64 run near an access key id that the same scan found.
func scanAWSPairs(s *sink) {
	text := s.text
	n := len(s.cands)
	for i := 0; i < n; i++ {
		c := s.cands[i]
		if c.rule != "aws-access-key-id" {
			continue
		}
		lo, hi := max(0, c.start-awsPairWindow), min(len(text), c.end+awsPairWindow)
		for p := lo; p < hi; {
			if !isB64(text[p]) {
				p++
				continue
			}
			e := p
			for e < len(text) && isB64(text[e]) {
				e++
			}
			if e-p == 40 && (e == len(text) || text[e] != '=') && isAWSSecret(text[p:e]) && mixed3(text[p:e]) {
				s.add("aws-secret-key", prioAWSSecret, p, e)
			}
			p = e
		}
	}
}

func isB64(c byte) bool { return isAlnum(c) || c == '+' || c == '/' }

func skipBlank(text string, p int) int {
	for p < len(text) && (text[p] == ' ' || text[p] == '\t') {
		p++
	}
	return p
}

// tokenEnd returns the end of the run of token characters at p, at most
// maxValue long.
func tokenEnd(text string, p int) int {
	e := p
	for e < len(text) && e-p < maxValue && isTokenChar(text[e]) {
		e++
	}
	return e
}

func isTokenChar(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
}
