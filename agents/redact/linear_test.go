package redact

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLinearTime feeds Redact 512 KiB inputs built to defeat each scanner
// (one separator after another with nothing between, unclosed quotes,
// thousands of distinct secrets to propagate, existing markers). Every
// scan is bounded, so each takes milliseconds; the limit is generous for
// the race detector and slow CI machines, while a quadratic path would
// take minutes.
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	const size = 512 << 10
	rep := func(s string) string { return strings.Repeat(s, size/len(s)) }
	var many strings.Builder
	for i := 0; many.Len() < size; i++ {
		fmt.Fprintf(&many, "password = \"%s\"\n", tok(fmt.Sprint(i), b62, 20))
	}
	inputs := map[string]string{
		"distinct secrets":       many.String(),
		"separators, no blanks":  rep("token="),
		"unclosed quotes":        rep(`token="`),
		"url schemes":            rep("a://"),
		"url userinfo and hosts": rep("a://b:c@d,e@f,"),
		"query passwords":        rep("?password=a&"),
		"connection strings":     rep("Server=a;Password=b;"),
		"lone password pairs":    rep("password=b "),
		"bearer words":           rep("bearer x"),
		"existing markers":       rep("[REDACTED:x] token=Ab3dE5fG7hI9jK1l "),
		"pem headers":            rep("-----BEGIN RSA PRIVATE KEY-----\n"),
		"xml tags":               rep("<password>"),
		"curl -u":                rep(" -u a:"),
		"aws ids":                rep(tok("AKIA", upper, 16) + " "),
		"yaml keys":              rep("secret: "),
		"flags":                  rep("--token "),
		"one long value":         "token=" + rep("aB3"),
	}
	for name, in := range inputs {
		start := time.Now()
		_, fs := Default().Redact(in)
		d := time.Since(start)
		t.Logf("%-22s %7d bytes %6d findings %v", name, len(in), len(fs), d)
		if d > 10*time.Second {
			t.Errorf("%s: %v for %d bytes", name, d, len(in))
		}
	}
}
