package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// privateMarker is the text of the files a workspace keeps private: no
// request to the model may carry it.
const privateMarker = "CUSTOMER-LIST-4d2a"

// neverSent fails when a request the fake endpoint received carries the
// private marker.
func neverSent(t *testing.T, fake *llmtest.Server) {
	t.Helper()
	for _, rec := range fake.Requests() {
		if strings.Contains(string(rec.Body), privateMarker) {
			t.Fatalf("a private file reached the model:\n%s", rec.Body)
		}
	}
}

// TestReviewKeepsIgnorePathsWithANegation: a "!" pattern in ignorePaths,
// which kodyls does not support, is reported and left out; the patterns
// beside it still keep their files out of `kodyls review`.
func TestReviewKeepsIgnorePathsWithANegation(t *testing.T) {
	for name, cfg := range map[string]string{
		"negation": "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n",
		"root":     "ignorePaths:\n  - /\n  - private/**\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := lsptest.NewRepo(t, map[string]string{
				"kodus-config.yml":  cfg,
				"private/export.go": "package private\n",
				"main.go":           reviewGo,
			})
			repo.Write(map[string]string{
				"private/export.go": "package private\n\n// " + privateMarker + "\nfunc Export() {}\n",
				"main.go":           strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1),
			})
			fake := llmtest.NewServer()
			defer fake.Close()
			scripts := reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
			env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
			out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json")
			if code != 0 {
				t.Fatalf("code %d\n%s%s", code, out, errOut)
			}
			var rep report.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			skipped := map[string]string{}
			for _, f := range rep.Files {
				skipped[f.Path] = f.Skipped
			}
			if skipped["private/export.go"] != "ignored by kodus-config ignorePaths: private/**" || skipped["main.go"] != "" {
				t.Errorf("files %+v", rep.Files)
			}
			notes := strings.Join(rep.Notes, "\n")
			if !strings.Contains(notes, "kodus-config.yml:") || strings.Contains(notes, "default ignore list") {
				t.Errorf("notes:\n%s", notes)
			}
			if scripts.Calls() == 0 {
				t.Fatal("main.go was not reviewed")
			}
			neverSent(t, fake)
		})
	}
}
