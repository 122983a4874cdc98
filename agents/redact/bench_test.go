package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchSource returns a realistic Go file of n lines: our own code, with
// the given secrets spread through it.
func benchSource(b *testing.B, n int, secrets []string) string {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "clean", "kodyls_lsp.go.txt"))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	for len(lines) < n {
		lines = append(lines, lines...)
	}
	lines = lines[:n]
	for i, s := range secrets {
		at := (i + 1) * n / (len(secrets) + 1)
		lines[at] = s + "\n"
	}
	return strings.Join(lines, "")
}

func benchRedact(b *testing.B, text string, wantFindings bool) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_, fs := Default().Redact(text)
		if (len(fs) > 0) != wantFindings {
			b.Fatalf("%d findings", len(fs))
		}
	}
}

func BenchmarkRedact2000Lines(b *testing.B) {
	secrets := []string{
		`	apiKey := "` + tok("sk-proj-", b64url, 120) + `"`,
		`	dsn := "postgres://app:` + tok("", b62, 20) + `@db.internal:5432/orders"`,
		`	const githubToken = "` + tok("ghp_", b62, 36) + `"`,
		`	req.Header.Set("Authorization", "Bearer ` + tok("", b64url, 40) + `")`,
		`	var dbPassword = "` + tok("", b62, 18) + `"`,
		`	awsID := "` + tok("AKIA", upper+"234567", 16) + `"`,
	}
	b.Run("secrets", func(b *testing.B) { benchRedact(b, benchSource(b, 2000, secrets), true) })
	b.Run("clean", func(b *testing.B) { benchRedact(b, benchSource(b, 2000, nil), false) })
}
