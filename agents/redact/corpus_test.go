package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The secrets corpus (testdata/secrets/*.txt) holds realistic snippets in
// many languages. The secrets in them are written as templates such as
// {{ghp}} or {{b62:32}} and generated here from a per-case seed: they have
// the right alphabet, length and prefix, are fake by construction, and the
// repository never contains a string that a secret scanner would report.
// Every generated value must be gone after Redact.
//
// File format:
//
//	=== <language>: <title>
//	--- rules: <rule>[, <rule>…]   exactly the rules of the findings
//	--- keep: <text>               text that must survive (repeatable)
//	<snippet lines>                up to the next "===" line
//
// {{lit:TEXT}} marks a literal secret (a human password, a value that must
// have a precise shape).

type corpusCase struct {
	file, lang, title string
	rules             []string
	keep              []string
	raw               string // the snippet with templates
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "secrets", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var cases []corpusCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *corpusCase
		var body []string
		flush := func() {
			if cur != nil {
				cur.raw = strings.Join(body, "\n") + "\n"
				cases = append(cases, *cur)
			}
			body = nil
		}
		for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "=== "):
				flush()
				lang, title, ok := strings.Cut(strings.TrimPrefix(line, "=== "), ": ")
				if !ok {
					t.Fatalf("%s:%d: want \"=== lang: title\"", f, i+1)
				}
				cur = &corpusCase{file: filepath.Base(f), lang: lang, title: title}
			case cur == nil:
				// Preamble comments before the first case.
			case len(body) == 0 && strings.HasPrefix(line, "--- rules: "):
				for _, r := range strings.Split(strings.TrimPrefix(line, "--- rules: "), ",") {
					cur.rules = append(cur.rules, strings.TrimSpace(r))
				}
			case len(body) == 0 && strings.HasPrefix(line, "--- keep: "):
				cur.keep = append(cur.keep, strings.TrimPrefix(line, "--- keep: "))
			default:
				body = append(body, line)
			}
		}
		flush()
	}
	return cases
}

var templateRE = regexp.MustCompile(`\{\{([a-z0-9-]+)(?::([^}]*))?\}\}`)

// expand replaces the templates of a snippet with generated values and
// returns them; the seed comes from the case title so that adding a case
// changes no other.
func (c corpusCase) expand() (string, []string) {
	h := fnv.New64a()
	h.Write([]byte(c.file + "\x00" + c.title))
	g := gen{rand.New(rand.NewPCG(h.Sum64(), 0x6b6f6479))}
	memo := map[string]string{}
	var secrets []string
	out := templateRE.ReplaceAllStringFunc(c.raw, func(m string) string {
		sub := templateRE.FindStringSubmatch(m)
		// "{{name#2}}"-style reuse is spelt "{{same:KEY}}": the value
		// generated for the template text KEY earlier in the snippet.
		if sub[1] == "same" {
			return memo[sub[2]]
		}
		v, ok := g.make(sub[1], sub[2])
		if !ok {
			return m // not ours: "{{ .Values.x }}" and the like
		}
		memo[strings.Trim(m, "{}")] = v
		secrets = append(secrets, v)
		return v
	})
	return out, secrets
}

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	b62    = upper + lower + digits
	b64url = b62 + "-_"
	b64std = b62 + "+/"
	hexLow = "0123456789abcdef"
)

type gen struct{ r *rand.Rand }

func (g gen) str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// random draws a string that has all three of upper, lower and digit, as
// real keys of these lengths have with overwhelming probability.
func (g gen) random(alphabet string, n int) string {
	for {
		s := g.str(alphabet, n)
		if n < 20 || !strings.ContainsAny(alphabet, upper) || !strings.ContainsAny(alphabet, digits) || mixed3(s) {
			return s
		}
	}
}

func (g gen) digits(lo, hi int) string { return g.str(digits, lo+g.r.IntN(hi-lo+1)) }

func (g gen) make(kind, arg string) (string, bool) {
	n := 0
	fmt.Sscan(arg, &n)
	switch kind {
	case "lit":
		return arg, true
	case "b62":
		return g.random(b62, n), true
	case "b64":
		return g.random(b64std, n), true
	case "b64url":
		return g.random(b64url, n), true
	case "hex":
		return g.str(hexLow, n), true
	case "pw":
		// A strong human-made password: letters, digits and a symbol.
		for {
			s := g.str(b62, 11) + g.str("!#^+", 1) + g.str(b62, 4)
			if mixed3(s) {
				return s, true
			}
		}
	case "upw":
		return g.userPassword(arg), true
	case "scan":
		// The alphabet of gitleaks' generated database-password samples:
		// letters, digits and the symbols people add to meet a policy.
		return g.random(b62+":;<@=},!$?^", n), true
	case "openai":
		// Legacy shape: 20 + "T3BlbkFJ" ("OpenAI" in base64) + 20.
		return "sk-" + g.random(b62, 20) + "T3BlbkFJ" + g.random(b62, 20), true
	case "openai-proj":
		return "sk-proj-" + g.random(b64url, 156), true
	case "anthropic":
		return "sk-ant-api03-" + g.random(b64url, 93) + "AA", true
	case "aws-id":
		return "AKIA" + g.str(upper+"234567", 16), true
	case "aws-sts-id":
		return "ASIA" + g.str(upper+"234567", 16), true
	case "aws-secret":
		return g.random(b64std, 40), true
	case "ghp", "gho", "ghu", "ghs", "ghr":
		return kind + "_" + g.random(b62, 36), true
	case "github-pat":
		return "github_pat_" + g.random(b62, 22) + "_" + g.random(b62, 59), true
	case "glpat":
		return "glpat-" + g.random(b62+"-_", 20), true
	case "xoxb", "xoxp":
		return kind + "-" + g.digits(10, 13) + "-" + g.digits(10, 13) + "-" + g.random(b62, 24), true
	case "slack-hook":
		return "T" + g.str(upper+digits, 8) + "/B" + g.str(upper+digits, 10) + "/" + g.random(b62, 24), true
	case "discord-hook":
		return g.digits(18, 19) + "/" + g.random(b64url, 68), true
	case "stripe-live":
		return "sk_live_" + g.random(b62, 99), true
	case "stripe-test":
		return "sk_test_" + g.random(b62, 24), true
	case "stripe-rk":
		return "rk_live_" + g.random(b62, 24), true
	case "whsec":
		return "whsec_" + g.random(b62, 32), true
	case "google":
		return "AIza" + g.random(b64url, 35), true
	case "gocspx":
		return "GOCSPX-" + g.random(b64url, 28), true
	case "ya29":
		return "ya29." + g.random(b64url, 120), true
	case "twilio":
		return "SK" + g.str(hexLow, 32), true
	case "sendgrid":
		return "SG." + g.random(b64url, 22) + "." + g.random(b64url, 43), true
	case "npm":
		return "npm_" + g.random(b62, 36), true
	case "pypi":
		return "pypi-AgEIcHlwaS5vcmc" + g.random(b64url, 140), true
	case "hf":
		return "hf_" + g.random(upper+lower, 34), true
	case "groq":
		return "gsk_" + g.random(b62, 52), true
	case "dop":
		return "dop_v1_" + g.str(hexLow, 64), true
	case "shpat":
		return "shpat_" + g.str(hexLow, 32), true
	case "age":
		return "AGE-SECRET-KEY-1" + g.str("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), true
	case "jwt":
		enc := base64.RawURLEncoding.EncodeToString
		hdr, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
		claims, _ := json.Marshal(map[string]any{"sub": g.digits(6, 9), "name": "Ana Souza", "iat": 1716239022})
		return enc(hdr) + "." + enc(claims) + "." + g.random(b64url, 43), true
	case "azure-key":
		return g.random(b64std, 86) + "==", true
	case "sas-sig":
		return g.random(b62, 43) + "%3D", true
	case "basic":
		return base64.StdEncoding.EncodeToString([]byte(arg + ":" + g.random(b62, 14))), true
	case "basic-upw":
		// HTTP Basic credentials with a user password of the class.
		return base64.StdEncoding.EncodeToString([]byte("svc:" + g.userPassword(arg))), true
	case "pem", "pem-open", "pem-json":
		label := arg
		if label == "" {
			label = "RSA PRIVATE KEY"
		}
		var lines []string
		for range 12 {
			lines = append(lines, g.random(b64std, 64))
		}
		lines = append(lines, g.random(b64std, 24)+"==")
		body := "-----BEGIN " + label + "-----\n" + strings.Join(lines, "\n") + "\n"
		switch kind {
		case "pem-open":
			return body, true
		case "pem-json":
			return strings.ReplaceAll(body+"-----END "+label+"-----\n", "\n", `\n`), true
		}
		return body + "-----END " + label + "-----", true
	}
	return "", false
}

func TestSecretsCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 60 {
		t.Errorf("corpus has %d cases, want at least 60", len(cases))
	}
	langs := map[string]int{}
	for _, c := range cases {
		langs[c.lang]++
		t.Run(c.file+"/"+c.title, func(t *testing.T) {
			in, secrets := c.expand()
			if len(secrets) == 0 {
				t.Fatal("case has no {{…}} secret")
			}
			out, findings := Default().Redact(in)
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret survived: %q\noutput:\n%s", s, out)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("lost %q that must stay\noutput:\n%s", k, out)
				}
			}
			var got []string
			for _, f := range findings {
				if !slices.Contains(got, f.Rule) {
					got = append(got, f.Rule)
				}
			}
			want := slices.Clone(c.rules)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("rules %v, want %v\noutput:\n%s", got, want, out)
			}
			if again := Default().String(out); again != out {
				t.Errorf("second Redact changed the output:\n%s", again)
			}
		})
	}
	t.Logf("%d cases in %d languages: %v", len(cases), len(langs), langs)
}

// passwordWords are the words of human passwords: the ones seen in
// breached-password lists and in DSNs that real users commit.
var passwordWords = []string{"admin", "root", "guest", "summer", "dragon", "monkey", "sunshine", "very",
	"secret", "master", "welcome", "orders", "shadow", "football", "prod", "winter", "letme", "in", "super"}

// commonPasswords are whole passwords of breached-password lists that
// people really put in configuration, many with "password" in them once
// '@', '0' and '$' are read as letters. They are concatenated so that no
// line reads as a credential. Like the other classes they have 8 bytes
// or more and none of them holds 8 bytes of a sample's text or of a
// "[REDACTED:…]" marker ("password1", "admin" for the user admin),
// which the leak check could not tell from the password; "admin:admin"
// is pinned by TestHeadersAndURLs instead.
var commonPasswords = []string{"P@ss" + "w0rd!", "MyPa$$" + "word2024!", "Passw0" + "rd#1", "P@ss" + "word1", "P@55" + "w0rd",
	"Welc" + "ome1!", "letm" + "ein123", "Admin" + "@123", "adm" + "in1234", "qwe" + "rty123", "te" + "st1234",
	"Summer" + "2024!", "ilove" + "you1"}

// userPassword makes a password of the given class, the way users write
// them in connection URIs and strings, unescaped unless the class is pct:
// plain (base62), hash, bang, at (one to three '@'), pct (%-escapes),
// slash, colon, mixed (several of them), word (words and digits, as
// "verysecret" or "summer2024") and common (commonPasswords).
func (g gen) userPassword(class string) string {
	chunk := func() string { return g.random(b62, 3+g.r.IntN(5)) }
	join := func(seps ...string) string {
		s := chunk()
		for i := 0; i < 2+g.r.IntN(2); i++ {
			s += seps[g.r.IntN(len(seps))] + chunk()
		}
		return s
	}
	switch class {
	case "hash":
		return join("#", "##")
	case "bang":
		return join("!", "!!")
	case "at":
		return join("@")
	case "pct":
		return join("%40", "%23", "%2F", "%3A", "%21", "%25", "%3F", "%26")
	case "slash":
		return join("/")
	case "colon":
		return join(":")
	case "mixed":
		return join("#", "!", "@", "/", "%40", ":", "?", "$", "&", "*", "(", ")", "+", "=", ",", "~", "^")
	case "common":
		return commonPasswords[g.r.IntN(len(commonPasswords))]
	case "word":
		var s string
		for s == "" || len(s) < 8 {
			s += passwordWords[g.r.IntN(len(passwordWords))]
		}
		if g.r.IntN(2) == 0 {
			s += g.digits(1, 4)
		}
		return s
	}
	return g.random(b62, 10+g.r.IntN(10))
}
