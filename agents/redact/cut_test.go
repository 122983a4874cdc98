package redact

import (
	"strings"
	"testing"
)

// TestCutNeverLeavesTheStartOfASecret: cutting a text at every offset
// through a secret leaves either the whole secret's marker or none of it,
// never a prefix the redactor would not recognise on its own.
func TestCutNeverLeavesTheStartOfASecret(t *testing.T) {
	secrets := map[string]string{
		"github token": "ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6",
		"uri password": "LongPassw0rdTr0ub4dor3xyzQ",
		"aws key":      "AKIAIOSFODNN7EXAMPL3",
	}
	lines := map[string]string{
		"github token": `	client := github.NewClient(nil).WithAuthToken("ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6") // used by the sync job`,
		"uri password": `	dsn := "postgres://appuser:LongPassw0rdTr0ub4dor3xyzQ@db.internal:5432/app?sslmode=disable"`,
		"aws key":      `aws_access_key_id = AKIAIOSFODNN7EXAMPL3`,
	}
	for name, line := range lines {
		secret := secrets[name]
		start := strings.Index(line, secret)
		// The first 6 bytes of a secret say too little to matter; any
		// longer prefix must not survive.
		for n := start + 6; n < len(line); n++ {
			got, _ := Cut(line, n)
			if len(got) > n {
				t.Fatalf("%s: Cut(_, %d) = %q, longer than the limit", name, n, got)
			}
			if strings.Contains(got, secret[:6]) {
				t.Errorf("%s: Cut(_, %d) keeps part of the secret: %q", name, n, got)
			}
		}
	}
}

func TestCutKeepsTextThatFits(t *testing.T) {
	line := `token := "ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6"`
	if got, cut := Cut(line, len(line)); cut || got != line {
		t.Errorf("Cut of a text that fits = %q, %v; the gateway redacts it whole", got, cut)
	}
	if got, cut := Cut("héllo wörld", 2); !cut || got != "h" {
		t.Errorf("Cut inside a rune = %q, %v", got, cut)
	}
}

// TestCutOfATextThatFitsOnceRedacted: a text over the limit only because
// of a secret fits once redacted; nothing is left out, and Cut says so
// (read_file must not send the model to read "the rest").
func TestCutOfATextThatFitsOnceRedacted(t *testing.T) {
	text := "const key = \"" + "ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6\" // end"
	got, cut := Cut(text, len(text)-10)
	if cut || !strings.HasSuffix(got, "// end") || strings.Contains(got, "ghp_") {
		t.Errorf("Cut = %q, %v; want the whole text redacted, nothing left out", got, cut)
	}
}
