package redact

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// False positives are measured as findings per 1,000 lines of ordinary
// text. The ceilings, and what they were when they were set:
//
//	input                                           ceiling   measured
//	our own code (lsp, index, analysis, cmd)         0.1       0   (20,000 lines)
//	hashes, digests, UUIDs, commit ids               0         0   (209 lines)
//	Go net/http                                      0.5       0   (10,465 lines)
//	Go crypto test files                             3.5       2.7 (8,538 lines)
//	GOROOT/src/crypto, whole (TestStdlib…)           1         0.23 (138,089 lines)
//	GOROOT/src/net/http, whole (TestStdlib…)         1         0.13 (77,823 lines)
//
// All 23 findings in the crypto tests are test-vector key material
// assigned to secret names (PrivateKey: "7d7d…", serverHandshakeTraffic
// Secret := fromHex("…"), pkcs8P256PrivateKeyHex = `3081…`): a literal
// private key in code is exactly what the generic rule is for, and text
// cannot tell a published test vector from a real key. In the whole
// trees, the password rule's 7 findings are test passwords in code
// (password: []byte("asdf"), const password = "@/?!"), net/http's 8
// url-password findings are test URLs with credentials (gopher:go@) and
// its basic-auth finding a test header ("Basic Zm9vOmJhcg==", foo:bar),
// judged as the same credentials in a URI would be.
var cleanCeilings = map[string]float64{
	"kodyls_lsp.go.txt":                0.1,
	"kodyls_index_analysis_cmd.go.txt": 0.1,
	"hashes_ids.txt":                   0,
	"stdlib_net_http.go.txt":           0.5,
	"stdlib_crypto.go.txt":             3.5,
}

func TestCleanCorpus(t *testing.T) {
	for name, ceiling := range cleanCeilings {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "clean", name))
			if err != nil {
				t.Fatal(err)
			}
			lines, findings, byRule := measure(t, string(data), name)
			rate := float64(findings) * 1000 / float64(lines)
			t.Logf("%s: %d lines, %d findings, %.3f per 1,000 lines %v", name, lines, findings, rate, byRule)
			if rate > ceiling {
				t.Errorf("%.3f findings per 1,000 lines, ceiling %.3f", rate, ceiling)
			}
		})
	}
}

// measure redacts text, reports each finding with its line when -v is
// given, and returns the counts.
func measure(t *testing.T, text, name string) (lines, findings int, byRule map[string]int) {
	t.Helper()
	_, fs := Default().Redact(text)
	byRule = map[string]int{}
	for _, f := range fs {
		byRule[f.Rule]++
		if testing.Verbose() {
			ls := strings.LastIndexByte(text[:f.Start], '\n') + 1
			le := strings.IndexByte(text[f.Start:], '\n')
			if le < 0 {
				le = len(text) - f.Start
			}
			line := text[ls : f.Start+le]
			if len(line) > 160 {
				line = line[:160] + "…"
			}
			t.Logf("  %s %s: %s", name, f.Rule, strings.TrimSpace(line))
		}
	}
	return strings.Count(text, "\n"), len(fs), byRule
}

// TestStdlibFalsePositives measures the installed Go tree's crypto and
// net/http packages, which are larger than the copies in testdata. It
// reports the rate and fails only past a loose ceiling, since the tree
// changes with each Go release.
func TestStdlibFalsePositives(t *testing.T) {
	if testing.Short() {
		t.Skip("walks GOROOT")
	}
	for _, dir := range []string{"crypto", "net/http"} {
		root := filepath.Join(build.Default.GOROOT, "src", filepath.FromSlash(dir))
		if _, err := os.Stat(root); err != nil {
			t.Logf("skipping %s: %v", root, err)
			continue
		}
		lines, findings := 0, 0
		byRule := map[string]int{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			l, f, br := measure(t, string(data), rel)
			lines += l
			findings += f
			for k, v := range br {
				byRule[k] += v
			}
			return nil
		})
		rate := float64(findings) * 1000 / float64(max(lines, 1))
		t.Logf("GOROOT/src/%s: %d lines, %d findings, %.3f per 1,000 lines %v", dir, lines, findings, rate, byRule)
		if rate > 1 {
			t.Errorf("%s: %.3f findings per 1,000 lines, ceiling 1", dir, rate)
		}
	}
}
