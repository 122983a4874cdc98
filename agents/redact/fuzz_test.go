package redact

import (
	"strings"
	"testing"
)

// FuzzRedact checks the promises of Redact on any input: no panic,
// findings that are sorted, disjoint and inside the text, no finding's
// text left in the output (for secrets of propagateMin bytes or more,
// which are redacted wherever they occur), and a fixed point.
func FuzzRedact(f *testing.F) {
	for _, c := range loadCorpus(f) {
		in, _ := c.expand()
		f.Add(in)
	}
	for _, c := range sampleCategories {
		for _, tpl := range c.tps {
			in, _ := expandSample(tpl, "mixed", 0)
			f.Add(in)
		}
		for _, fp := range c.fps {
			f.Add(fp)
		}
	}
	f.Add("")
	f.Add("password = \"[REDACTED:generic-secret]\"")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Add("token=" + tok("ghp_", b62, 36) + tok("AKIA", upper, 16))
	f.Fuzz(func(t *testing.T, in string) {
		out, fs := Default().Redact(in)
		if len(fs) == 0 && out != in {
			t.Fatalf("changed without findings: %q -> %q", in, out)
		}
		prev := 0
		for _, x := range fs {
			if x.Start < prev || x.End <= x.Start || x.End > len(in) || x.Rule == "" {
				t.Fatalf("bad finding %+v in %d bytes (previous end %d)", x, len(in), prev)
			}
			prev = x.End
		}
		// Markers are our own text; a secret that happens to be part of
		// "[REDACTED:generic-secret]" is not a leak.
		plain := markerRE.ReplaceAllString(out, "\x00")
		for _, x := range fs {
			if secret := in[x.Start:x.End]; len(secret) >= propagateMin && strings.Contains(plain, secret) {
				t.Fatalf("output keeps %q (rule %s)\nin:  %q\nout: %q", secret, x.Rule, in, out)
			}
		}
		if again := Default().String(out); again != out {
			t.Fatalf("not idempotent:\nin:    %q\nonce:  %q\ntwice: %q", in, out, again)
		}
	})
}
