package redact

import "unicode/utf8"

// cutWindow bounds the text redacted before a cut: enough to hold whole
// any secret that starts before the cut (a PEM block of a 4096-bit key is
// about 3 KiB), without redacting megabytes to keep a few hundred bytes.
const cutWindow = 64 << 10

// Cut returns the first n bytes of s, at a rune boundary, and whether it
// left anything out: the text to use in place of s either way. When s is
// longer than n, its secrets are redacted first (and s may then fit
// whole, redacted, with nothing left out): a cut
// through a secret leaves a start the redactor no longer recognises (a
// GitHub token without its last characters, a URI password without its
// "@host"), which the gateway's redaction of the prompt would let through.
// Text that fits is returned as it is; the gateway redacts it whole.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	whole := len(s) <= n+cutWindow
	s = Default().String(s[:min(len(s), n+cutWindow)])
	if len(s) <= n {
		// Redaction shortened the text below the limit.
		return s, !whole
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
