package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorReportsTheErrorIndex: doctor shows the search index of the
// error history as every lookup sees it, a deleted one rebuilt from the
// history.
func TestDoctorReportsTheErrorIndex(t *testing.T) {
	repo := brokenGoRepo(t)
	data := filepath.Join(t.TempDir(), "data")
	env := append(testEnv(t), "KODYLS_DATA_DIR="+data)
	indexRow := func(step string) string {
		t.Helper()
		out, errOut, code := runBin(t, env, repo.Dir, "doctor")
		if code != 0 {
			t.Fatalf("%s: doctor code %d\n%s%s", step, code, out, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "error index ") {
				return line
			}
		}
		t.Fatalf("%s: doctor shows no error index:\n%s", step, out)
		return ""
	}
	path := filepath.Join(data, "errors.bleve")

	if row := indexRow("a new data directory"); !strings.HasSuffix(row, path+" (0 documents, 0 queued)") {
		t.Fatalf("a new data directory: %q, want an empty index at %s", row, path)
	}
	if out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline"); code != 0 {
		t.Fatalf("explain: code %d\n%s%s", code, out, errOut)
	}
	if row := indexRow("after an explanation"); !strings.HasSuffix(row, path+" (1 documents, 0 queued)") {
		t.Fatalf("after an explanation: %q, want the remembered error indexed", row)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if row := indexRow("after deleting the index"); !strings.HasSuffix(row, path+" (1 documents, 0 queued)") {
		t.Fatalf("after deleting the index: %q, want it rebuilt from the history", row)
	}
}
