package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// modelRule is a Kody Rule without a detector: only the model checks it.
const modelRule = "---\ntitle: Print through the logger\nuuid: print-through-logger\nseverity: high\npath: \"**/*.go\"\n---\n## Instructions\nCommands print through the logger, never with fmt.\n"

// TestEditorAndCLIFindTheSame: for the same change, rules and scripted
// endpoint, `kodyls review` and the editor report the same findings — the
// same ids on the same lines, whether a rule's detector, the model's review
// or the model's check of a rule found them — and a suggestion dismissed in
// the editor is gone from both.
func TestEditorAndCLIFindTheSame(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	reviewtest.Rules(fake, llmtest.PromptContains("main.go"), reviewtest.RuleViolation{
		Rule: 1, Reason: "main prints with fmt.", ExistingCode: "fmt.Println(total(nil))", ImprovedCode: "log.Print(total(nil))",
		OneSentenceSummary: "print through the logger", RelevantLinesStart: 14, RelevantLinesEnd: 14,
	})
	reviewtest.Rules(fake, nil)
	repo := changedRepo(t)
	repo.Write(map[string]string{".kody/rules/logger.md": modelRule})
	// An untracked file is checked whole by both.
	repo.Write(map[string]string{"extra.go": "package main\n\nimport \"fmt\"\n\nfunc extra() {\n\tfmt.Println(\"é\", 1)\n}\n"})
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KODYLS_DATA_DIR=" + dataDir,
		"KODYLS_LLM_BASE_URL=" + fake.URL, "KODYLS_LLM_MODEL=fake-model"}
	files := []string{"extra.go", "main.go"}

	cli := func() []string {
		t.Helper()
		out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json")
		if code != 0 {
			t.Fatalf("kodyls review: code %d\n%s%s", code, out, errOut)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("review JSON: %v\n%s", err, out)
		}
		var got []string
		for _, f := range rep.Findings {
			if slices.Contains(files, f.File) {
				got = append(got, fmt.Sprintf("%s %s lines %d-%d col %d", f.File, f.ID, f.StartLine, f.EndLine, f.StartColumn))
			}
		}
		slices.Sort(got)
		return got
	}
	fromCLI := cli()
	if len(fromCLI) != 5 {
		t.Fatalf("kodyls review found %d findings in %v, want 5 (a detector violation and a review finding in each, the model rule's violation in main.go):\n%s", len(fromCLI), files, strings.Join(fromCLI, "\n"))
	}

	// The editor, with its own store so that nothing comes from the CLI's
	// cache: its findings come from its own calls to the endpoint.
	editorEnv := append(slices.Clone(env[:2]), "KODYLS_DATA_DIR="+filepath.Join(t.TempDir(), "editor-data"), env[3], env[4])
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, editorEnv)
	s.Initialize(lsptest.InitOptions{})
	for _, f := range files {
		s.OpenFile(f)
		s.Save(f)
	}
	s.AwaitIdle("")
	editor := func() ([]string, map[string]protocol.Diagnostic) {
		var got []string
		byID := map[string]protocol.Diagnostic{} // main.go's, by data.id
		for _, f := range files {
			for _, d := range s.Diagnostics(f) {
				var data struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(d.Data, &data); err != nil || data.ID == "" {
					t.Fatalf("diagnostic without data.id: %+v", d)
				}
				if f == "main.go" {
					byID[data.ID] = d
				}
				endLine := d.Range.End.Line + 1
				if d.Range.End.Character == 0 && d.Range.End.Line > d.Range.Start.Line {
					endLine-- // a span ending at a line start ends on the line before
				}
				got = append(got, fmt.Sprintf("%s %s lines %d-%d col %d", f, data.ID, d.Range.Start.Line+1, endLine, d.Range.Start.Character+1))
			}
		}
		slices.Sort(got)
		return got, byID
	}
	fromEditor, byID := editor()
	if !slices.Equal(fromCLI, fromEditor) {
		t.Fatalf("the editor and kodyls review disagree\nCLI:\n  %s\neditor:\n  %s", strings.Join(fromCLI, "\n  "), strings.Join(fromEditor, "\n  "))
	}

	// The model's violation of the rule is a Kody Rule diagnostic (code the
	// rule's id) and is listed in the violations panel with the detector's.
	var ruleDiag *protocol.Diagnostic
	for _, d := range byID {
		if d.Code == protocol.String("print-through-logger") {
			ruleDiag = &d
		}
	}
	if ruleDiag == nil {
		t.Fatalf("no diagnostic with code print-through-logger in main.go: %v", fromEditor)
	}
	var panel contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &panel); err != nil {
		t.Fatal(err)
	}
	checkedBy := map[string]string{}
	for _, g := range panel.Groups {
		for _, v := range g.Violations {
			if strings.HasSuffix(string(v.URI), "/main.go") {
				checkedBy[g.Rule.UUID] = v.CheckedBy
			}
		}
	}
	if checkedBy["print-through-logger"] != contract.CheckedByModel || checkedBy[printlnRule] != contract.CheckedByDetector {
		t.Fatalf("violations panel for main.go: %+v", panel.Groups)
	}
	// The panel was told to refresh after the review found the model's
	// violation, not only after the detector's.
	told := 0
	for _, n := range s.ViolationsChanged() {
		for _, u := range n.URIs {
			if u == s.URI("main.go") {
				told++
			}
		}
	}
	if told < 2 {
		t.Fatalf("main.go's violations changed twice (detector on open, model on save) but the editor was told %d times", told)
	}

	// Dismiss the review finding in the editor: it goes away there, and
	// `kodyls review` on the same store no longer reports it either.
	var reviewID string
	for id, d := range byID {
		if d.Code == protocol.String(offByOne.Label) {
			reviewID = id
		}
	}
	if reviewID == "" {
		t.Fatalf("no review finding among %v", fromEditor)
	}
	var res contract.DismissResult
	if err := s.ExecuteCommand(contract.CommandDismissSuggestion, contract.DismissArgs{ID: reviewID, URI: s.URI("main.go")}, &res); err != nil || res.Dismissed != 1 {
		t.Fatalf("dismiss: %v %+v", err, res)
	}
	s.AwaitIdle("main.go")
	afterEditor, _ := editor()
	s.Shutdown()
	env[2] = editorEnv[2] // the editor's store, where the dismissal is
	afterCLI := cli()
	if len(afterEditor) != 4 || !slices.Equal(afterCLI, afterEditor) {
		t.Fatalf("after dismissing %s\nCLI:\n  %s\neditor:\n  %s", reviewID, strings.Join(afterCLI, "\n  "), strings.Join(afterEditor, "\n  "))
	}
}
