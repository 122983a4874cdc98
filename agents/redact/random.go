package redact

import (
	"encoding/base64"
	"math"
	"strings"
)

// This file decides whether a string looks like a random secret or like
// something a person wrote: a word, an identifier, a placeholder.

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }
func isWord(c byte) bool  { return isAlnum(c) || c == '_' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// mixed3 reports whether s has upper case, lower case and digits, as any
// long base62 string does.
func mixed3(s string) bool { return hasUpper(s) && hasLower(s) && hasDigit(s) }

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// requiredEntropy scales the threshold down for short strings, whose
// entropy cannot exceed log2(n): 8 random characters score at most 3 bits.
func requiredEntropy(n int, threshold float64) float64 {
	return threshold * min(1, math.Log2(float64(n))/4)
}

// classes counts the character classes in s: lower, upper, digit and
// symbol. '_', '-', '.', '/' and spaces separate words and count as none,
// so "MY_SECRET_NAME" has a single class.
func classes(s string) int {
	var lower, upper, digit, sym int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case isDigit(c):
			digit = 1
		case c == '_' || c == '-' || c == '.' || c == '/' || c == ' ':
		default:
			sym = 1
		}
	}
	return lower + upper + digit + sym
}

// meanWordLen splits s into words the way a person writes identifiers
// (camelCase, snake_case, kebab-case, letters against digits) and returns
// the mean word length. Words and identifiers score 4 and more ("default",
// "Api", "Key"); random strings keep changing class and score about 2.
func meanWordLen(s string) float64 {
	words, chars := 0, 0
	prev := byte(0) // class of the previous character: 'l', 'u', 'd' or 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var cl byte
		switch {
		case c >= 'a' && c <= 'z':
			cl = 'l'
		case c >= 'A' && c <= 'Z':
			cl = 'u'
		case isDigit(c):
			cl = 'd'
		default:
			prev = 0
			continue
		}
		chars++
		// A capital followed by lower case continues its word ("Token").
		if cl != prev && !(prev == 'u' && cl == 'l') {
			words++
		}
		prev = cl
	}
	if words == 0 {
		return 0
	}
	return float64(chars) / float64(words)
}

// wordy reports whether s reads as words rather than noise: long runs of
// one class and pronounceable letters. Random letters are 23% vowels
// (counting y); English words about 40%. Either test alone would turn
// away many random strings: base36 keys have long letter runs, and short
// random strings often have a vowel-rich stretch.
func wordy(s string) bool { return meanWordLen(s) >= 4 && vowelRatio(s) >= 0.3 }

// vowelRatio is the share of vowels (a, e, i, o, u, y) among the letters.
func vowelRatio(s string) float64 {
	letters, vowels := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) {
			continue
		}
		letters++
		switch c | 0x20 {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			vowels++
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(vowels) / float64(letters)
}

// isHex reports whether s is made of hex digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && !(c|0x20 >= 'a' && c|0x20 <= 'f') {
			return false
		}
	}
	return s != ""
}

// notFiller accepts a provider token unless its body is filler, as in
// documentation ("ghp_xxxxxxxxxxxx…", "sk-...000000").
func notFiller(s string) bool { return entropy(s) >= 3 }

// tokenLooksRandom is the check for values found after a scheme word
// ("Bearer …") where no name tells us more.
func tokenLooksRandom(tok string) bool {
	return entropy(tok) >= 3 && classes(tok) >= 2 && !wordy(tok) && !isPlaceholder(tok)
}

// looksRandom is the generic-secret check for an assigned value.
func looksRandom(v string, threshold float64) bool {
	n := len(v)
	if n < 8 {
		return false
	}
	if classes(v) < 2 || wordy(v) {
		return false
	}
	if !hasDigit(v) && classes(v) == 2 && !lettersAlternate(v) && (n < 16 || vowelRatio(v) >= 0.3) {
		// Letters only: "PrivKeyVal" is CamelCase, not noise.
		return false
	}
	need := requiredEntropy(n, threshold)
	if isHex(v) {
		// Hex has 16 symbols: random hex of 16 characters averages 3.4
		// bits per character where base62 reaches 3.8.
		need *= 0.8
	}
	return entropy(v) >= need
}

// lettersAlternate reports whether a letters-only string is long and
// changes case often, as random mixed-case strings do (every other
// letter) and CamelCase words do not (once per word).
func lettersAlternate(v string) bool {
	if len(v) < 20 {
		return false
	}
	changes := 0
	for i := 1; i < len(v); i++ {
		if isAlpha(v[i]) && isAlpha(v[i-1]) && (v[i] < 'a') != (v[i-1] < 'a') {
			changes++
		}
	}
	return changes*3 >= len(v)
}

// encodesPlaceholder reports whether v is base64 of a placeholder, as in
// documentation: "bm90IG15IHJlYWwgcGFzc3dvcmQ=" is "not my real password".
func encodesPlaceholder(v string) bool {
	raw := strings.TrimRight(v, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		dec, err := enc.DecodeString(raw)
		if err != nil {
			continue
		}
		for _, c := range dec {
			if c < 0x20 || c > 0x7e {
				return false
			}
		}
		return isPlaceholder(string(dec))
	}
	return false
}

// placeholderWords mark template, example and documentation values. They
// are matched case-insensitively anywhere in the value; a random secret
// contains one of them with negligible probability.
var placeholderWords = []string{
	"xxx", "***", "...", "${", "{{", "}}",
	"your", "example", "changeme", "change_me", "change-me", "placeholder",
	"dummy", "redacted", "replace", "insert", "sample", "todo", "fixme",
	"password", "passwd", "secret", "token", "getenv", "process.env",
	"environ", "[redacted:",
	// Sequences typed by hand in fixtures; random text never has them.
	"abcdef", "123456", "qwerty",
}

// isPlaceholder reports whether v is a template, reference or example
// rather than a literal secret.
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	// Format verbs, YAML aliases and tags, Spring "@…@" filtering.
	case '%', '&', '*', '!', '@', '#':
		return true
	case '$':
		// Shell, PHP and PowerShell variables ("$DB_PASS", "$env:KEY",
		// "$this.secret"); a literal that merely starts with '$' has
		// other symbols too.
		if onlyBytes(v[1:], "_:.-") {
			return true
		}
	}
	// "<your-token>", "<%= key %>": a '<' closed by a '>'. A lone '<' is
	// one more symbol of a random value.
	if i := strings.IndexByte(v, '<'); i >= 0 && strings.IndexByte(v[i:], '>') >= 0 {
		return true
	}
	for _, w := range placeholderWords {
		if containsFold(v, w) {
			return true
		}
	}
	return isDocPassword(v)
}

// isDocPassword recognises the passwords of documentation and tests, also
// when spelt with '@' or '0' or percent-encoded: "p@ssw0rd", "pa%2Fssword",
// "foo:bar@", "pass".
func isDocPassword(v string) bool {
	var buf [64]byte
	n := 0
	for i := 0; i < len(v) && n < len(buf); i++ {
		c := lowerASCII(v[i])
		switch {
		case c == '%' && i+2 < len(v):
			i += 2 // an escaped separator
			continue
		case c == '@':
			c = 'a'
		case c == '0':
			c = 'o'
		case c == '$':
			c = 's'
		case c < 'a' || c > 'z':
			continue
		}
		buf[n] = c
		n++
	}
	w := string(buf[:n])
	switch w {
	case "pass", "pw", "pwd", "secret", "foo", "bar", "baz", "qux", "pa", "admin", "guest", "test", "user", "changeit",
		"opensesame": // RFC 7617's Basic example, Aladdin:open sesame
		return true
	}
	return strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "pasword") || strings.Contains(w, "pssword")
}

// containsFold is an allocation-free, ASCII case-insensitive
// strings.Contains for a lower-case needle.
func containsFold(s, lowerSub string) bool {
	n := len(lowerSub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && lowerASCII(s[i+j]) == lowerSub[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
