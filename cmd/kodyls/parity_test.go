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
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review"
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
		rep := reviewReport(t, env, repo.Dir)
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

// TestEditorAndCLIJudgeThePullRequestTheSame: a pull-request rule's
// violation has the same id on the same line in `kodyls review` and in
// the editor's workspace review, whether the panel lists it (the file is
// not open) or the open buffer shows it as a diagnostic.
func TestEditorAndCLIJudgeThePullRequestTheSame(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/handler-tests.md": "---\ntitle: API handlers change with their tests\nuuid: handler-tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\n## Instructions\nA change to an API handler comes with a change to its test.\n",
		"api/orders.go":                "package api\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n",
	})
	repo.Write(map[string]string{"api/orders.go": "package api\n\nfunc Orders() string {\n\treturn \"all orders\"\n}\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("No plan: the diff is enough."))
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []map[string]any{{
		"rule": 1, "file": "api/orders.go", "reason": "Orders changed and its test did not.",
		"suggestionContent": "Test the change in api/orders_test.go.", "existingCode": "return \"all orders\"", "improvedCode": "return \"all orders\"",
		"oneSentenceSummary": "test the change to Orders", "relevantLinesStart": 4, "relevantLinesEnd": 4,
	}}}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

	rep := reviewReport(t, env, repo.Dir)
	var fromCLI []string
	for _, f := range rep.Findings {
		if f.RuleID == "handler-tests" {
			fromCLI = append(fromCLI, fmt.Sprintf("%s %s line %d", f.File, f.ID, f.StartLine))
		}
	}
	if len(fromCLI) != 1 {
		t.Fatalf("kodyls review found %v, want the pull-request rule's violation once (notes %v)", fromCLI, rep.Notes)
	}

	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"review": map[string]any{"trigger": "manual"}}})
	s.AwaitIdle("")
	panel := func() []string {
		t.Helper()
		s.AwaitIdle("")
		var v contract.RuleViolations
		if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range v.Groups {
			for _, vi := range g.Violations {
				if g.Rule.UUID == "handler-tests" && vi.URI == s.URI("api/orders.go") {
					got = append(got, fmt.Sprintf("api/orders.go %s line %d", vi.ID, vi.Range.Start.Line+1))
				}
			}
		}
		return got
	}
	var sums []contract.ReviewSummary
	if err := s.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
		t.Fatal(err)
	}
	if got := panel(); !slices.Equal(got, fromCLI) {
		t.Fatalf("file not open: the panel lists %v, kodyls review %v", got, fromCLI)
	}

	s.OpenFile("api/orders.go")
	if err := s.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
		t.Fatal(err)
	}
	s.AwaitIdle("")
	shown := ruleDiagnostics(s, "api/orders.go", "handler-tests", "api/orders.go ")
	if !slices.Equal(shown, fromCLI) {
		t.Fatalf("file open: the buffer shows %v, kodyls review %v", shown, fromCLI)
	}
	if got := panel(); !slices.Equal(got, fromCLI) {
		t.Fatalf("file open: the panel lists %v, kodyls review %v", got, fromCLI)
	}
	s.Shutdown()
}

// TestTheSameViolationTwiceIsTwoFindings: the same code breaking the same
// rule on two lines is two findings, with ids of their own, in `kodyls
// review` and in the editor alike; the model naming one line twice is
// still one.
func TestTheSameViolationTwiceIsTwoFindings(t *testing.T) {
	const before = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Print(\"start\")\n}\n\nfunc stop() {\n\tfmt.Print(\"stop\")\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/logger.md": modelRule, "main.go": before})
	after := strings.ReplaceAll(strings.ReplaceAll(before, `fmt.Print("start")`, `fmt.Println("debug")`), `fmt.Print("stop")`, `fmt.Println("debug")`)
	repo.Write(map[string]string{"main.go": after})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	v := func(line int) reviewtest.RuleViolation {
		return reviewtest.RuleViolation{Rule: 1, Reason: "main prints with fmt.", ExistingCode: `fmt.Println("debug")`, ImprovedCode: `log.Print("debug")`,
			OneSentenceSummary: "print through the logger", RelevantLinesStart: line, RelevantLinesEnd: line}
	}
	reviewtest.Rules(fake, nil, v(6), v(10), v(6))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

	rep := reviewReport(t, env, repo.Dir)
	var fromCLI []string
	ids, lines := map[string]bool{}, map[int]bool{}
	for _, f := range rep.Findings {
		if f.RuleID == "print-through-logger" {
			fromCLI = append(fromCLI, fmt.Sprintf("%s line %d", f.ID, f.StartLine))
			ids[f.ID], lines[f.StartLine] = true, true
		}
	}
	slices.Sort(fromCLI)
	if len(fromCLI) != 2 || len(ids) != 2 || !lines[6] || !lines[10] {
		t.Fatalf("kodyls review found %v, want the violation on lines 6 and 10 with two ids", fromCLI)
	}

	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.Save("main.go")
	s.AwaitIdle("")
	fromEditor := ruleDiagnostics(s, "main.go", "print-through-logger", "")
	if !slices.Equal(fromEditor, fromCLI) {
		t.Fatalf("the editor shows %v, kodyls review %v", fromEditor, fromCLI)
	}
	s.Shutdown()
}

// reviewReport runs `kodyls review --format json [paths]` in dir and
// returns its report; anything but exit 0 fails the test.
func reviewReport(t *testing.T, env []string, dir string, paths ...string) report.Report {
	t.Helper()
	out, errOut, code := runBin(t, env, dir, append([]string{"review", "--format", "json"}, paths...)...)
	if code != 0 {
		t.Fatalf("kodyls review: code %d\n%s%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("review JSON: %v\n%s", err, out)
	}
	return rep
}

// ruleDiagnostics lists, sorted, the editor's diagnostics of the rule
// ruleID in file as prefix + "<data.id> line <n>".
func ruleDiagnostics(s *lsptest.Session, file, ruleID, prefix string) []string {
	var out []string
	for _, d := range s.Diagnostics(file) {
		var data struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(d.Data, &data) == nil && d.Code == protocol.String(ruleID) {
			out = append(out, fmt.Sprintf("%s%s line %d", prefix, data.ID, d.Range.Start.Line+1))
		}
	}
	slices.Sort(out)
	return out
}

// funcsGo is a Go file of ten small functions, so that changes to f1 and
// f8 are two hunks.
func funcsGo() string {
	var b strings.Builder
	b.WriteString("package main\n\n")
	for i := range 10 {
		fmt.Fprintf(&b, "func f%d() int {\n\treturn %d\n}\n\n", i, i)
	}
	return b.String()
}

// marked changes the return of f<n> to a value carrying mark, which the
// scripted analysis looks for in its prompt.
func marked(text string, n int, mark string) string {
	return strings.Replace(text, fmt.Sprintf("\treturn %d\n", n), fmt.Sprintf("\treturn %d%d // %s\n", n, n, mark), 1)
}

// markedFinding is the analysis' finding on the line marked carries.
func markedFinding(n int, mark, summary, severity string, line int) reviewtest.Suggestion {
	return reviewtest.Suggestion{SuggestionContent: summary + ".", ExistingCode: fmt.Sprintf("return %d%d // %s", n, n, mark),
		ImprovedCode: fmt.Sprintf("return %d", n), OneSentenceSummary: summary, RelevantLinesStart: line, RelevantLinesEnd: line,
		Label: "bug", Severity: severity}
}

// shownIn lists, sorted, the review findings `kodyls review` reports in
// files and those the editor shows, as "file id line [repeat|primary]".
func shownIn(t *testing.T, rep report.Report, s *lsptest.Session, files []string) (cli, editor []string) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Source != report.SourceReview {
			continue
		}
		role := ""
		switch {
		case f.DuplicateOf != "":
			role = " repeat"
		case len(f.Duplicates) > 0:
			role = " primary"
		}
		cli = append(cli, fmt.Sprintf("%s %s line %d%s", f.File, f.ID, f.StartLine, role))
	}
	for _, file := range files {
		for _, d := range s.Diagnostics(file) {
			var data contract.DiagnosticData
			if err := json.Unmarshal(d.Data, &data); err != nil || data.Kind != contract.DiagnosticKindReview {
				continue
			}
			role := ""
			switch {
			case strings.Contains(lsptest.Message(d), "The same suggestion is reported elsewhere"):
				role = " repeat"
			case len(d.RelatedInformation) > 0:
				role = " primary"
			}
			editor = append(editor, fmt.Sprintf("%s %s line %d%s", file, data.ID, d.Range.Start.Line+1, role))
		}
	}
	slices.Sort(cli)
	slices.Sort(editor)
	return cli, editor
}

// TestEditorAndCLICapAndClusterTheSame: kodus-config.yml's maxSuggestions
// and the clustering of repeated findings give the same findings in
// `kodyls review` and in the editor. Per file, a review whose hunks come
// partly from the cache shows what the editor, reviewing them all at once,
// shows: the most severe finding. Per change (limitationType pr, the
// default), the most severe findings of every file are kept, and a
// critical finding repeated by a low one is the one shown, and fails
// --fail-on critical.
func TestEditorAndCLICapAndClusterTheSame(t *testing.T) {
	t.Run("per file, with the cache", func(t *testing.T) {
		base := funcsGo()
		repo := lsptest.NewRepo(t, map[string]string{
			"main.go":          base,
			"kodus-config.yml": "suggestionControl:\n  limitationType: file\n  maxSuggestions: 1\n",
		})
		lowA := markedFinding(1, "MARK_A", "f1 returns the wrong value", "low", 8)
		highB := markedFinding(8, "MARK_B", "f8 overflows", "high", 36)
		fake := llmtest.NewServer()
		defer fake.Close()
		reviewtest.ScriptAnswers(fake,
			reviewtest.Answer{When: llmtest.All(llmtest.PromptContains("MARK_A"), llmtest.PromptContains("MARK_B")), Suggestions: []reviewtest.Suggestion{lowA, highB}},
			reviewtest.Answer{When: llmtest.PromptContains("MARK_A"), Suggestions: []reviewtest.Suggestion{lowA}},
			reviewtest.Answer{When: llmtest.PromptContains("MARK_B"), Suggestions: []reviewtest.Suggestion{highB}},
		)
		env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

		// f1 changed and reviewed, then f8 too: f1's hunk comes from the
		// cache.
		repo.Write(map[string]string{"main.go": marked(base, 1, "MARK_A")})
		if rep := reviewReport(t, env, repo.Dir); len(rep.Findings) != 1 {
			t.Fatalf("f1 changed: %+v", rep.Findings)
		}
		repo.Write(map[string]string{"main.go": marked(marked(base, 1, "MARK_A"), 8, "MARK_B")})
		rep := reviewReport(t, env, repo.Dir)
		if rep.Files[0].CachedHunks != 1 {
			t.Fatalf("f1's hunk not from the cache: %+v", rep.Files)
		}

		s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, testEnvWith(t, env))
		s.Initialize(lsptest.InitOptions{})
		s.OpenFile("main.go")
		s.Save("main.go")
		s.AwaitIdle("")
		cli, editor := shownIn(t, rep, s, []string{"main.go"})
		s.Shutdown()
		if len(cli) != 1 || !strings.Contains(cli[0], "line 36") || !slices.Equal(cli, editor) {
			t.Fatalf("want f8's high finding alone in both\nCLI (f1 from the cache):\n  %s\neditor (no cache):\n  %s", strings.Join(cli, "\n  "), strings.Join(editor, "\n  "))
		}
	})

	t.Run("per change, clustered", func(t *testing.T) {
		base := funcsGo()
		files := []string{"a.go", "b.go", "c.go", "d.go"}
		initial := map[string]string{"kodus-config.yml": "suggestionControl:\n  maxSuggestions: 3\n"}
		changed := map[string]string{}
		var answers []reviewtest.Answer
		for i, f := range files {
			initial[f] = base
			mark := "MARK_" + strings.ToUpper(f[:1])
			changed[f] = marked(base, 1, mark)
			sev := []string{"low", "critical", "medium", "low"}[i]
			summary := "f1 ignores an error"
			if f == "c.go" || f == "d.go" {
				summary = "f1 in " + f + " is slow"
			}
			answers = append(answers, reviewtest.Answer{When: llmtest.PromptContains(mark), Suggestions: []reviewtest.Suggestion{markedFinding(1, mark, summary, sev, 8)}})
		}
		repo := lsptest.NewRepo(t, initial)
		repo.Write(changed)
		fake := llmtest.NewServer()
		defer fake.Close()
		reviewtest.ScriptAnswers(fake, answers...)
		// The model lists the low finding of a.go first and b.go's
		// critical one as its repeat.
		fake.On(llmtest.SchemaName(review.SchemaCluster), llmtest.JSON(map[string]any{"clusters": []map[string]any{{"primary": 1, "duplicates": []int{2}}}}))
		env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

		rep := reviewReport(t, env, repo.Dir)
		if out, errOut, code := runBin(t, env, repo.Dir, "review", "--fail-on", "critical"); code != 1 {
			t.Fatalf("--fail-on critical with a critical finding clustered under a low one: exit %d, want 1\n%s%s", code, out, errOut)
		}

		s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, testEnvWith(t, env))
		s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{"review": map[string]any{"trigger": "manual"}}})
		for _, f := range files {
			s.OpenFile(f)
		}
		var sums []contract.ReviewSummary
		if err := s.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
			t.Fatal(err)
		}
		s.AwaitIdle("")
		cli, editor := shownIn(t, rep, s, files)
		s.Shutdown()
		counted := 0
		for _, sum := range sums {
			counted += sum.Findings
		}
		if counted != 3 {
			t.Errorf("the workspace review's summaries count %d findings, want the 3 shown: %+v", counted, sums)
		}
		want := []string{"a.go", "b.go", "c.go"}
		var got []string
		for _, c := range cli {
			got = append(got, strings.Fields(c)[0])
		}
		if !slices.Equal(got, want) || !strings.HasSuffix(cli[0], "repeat") || !strings.HasSuffix(cli[1], "primary") || !slices.Equal(cli, editor) {
			t.Fatalf("want a.go's low finding as the repeat of b.go's critical one, c.go's medium one, and d.go's low one capped away, in both\nCLI:\n  %s\neditor:\n  %s", strings.Join(cli, "\n  "), strings.Join(editor, "\n  "))
		}
	})
}

// testEnvWith is env with a data directory of its own, so that an editor
// started with it finds nothing `kodyls review` cached.
func testEnvWith(t *testing.T, env []string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if strings.HasPrefix(kv, "KODYLS_DATA_DIR=") {
			out[i] = "KODYLS_DATA_DIR=" + filepath.Join(t.TempDir(), "editor-data")
		}
	}
	return out
}
