package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
	"github.com/kodustech/kodyls/prompts"
)

// claudeSplit is a model's split of testdata/split/CLAUDE.md: its code
// rules, without the commands, the architecture notes, the git and
// release workflow.
var claudeSplit = []rules.SplitRule{
	{Title: "Handlers stay thin", Text: "Handlers stay thin: parse the request, call a service, write the response.", StartLine: 23, EndLine: 23},
	{Title: "No database calls from handlers", Text: "Never call the database from a handler; go through internal/store.", StartLine: 24, EndLine: 24},
	{Title: "Context first", Text: "Pass a context.Context as the first argument of every function that does I/O.", StartLine: 25, EndLine: 25},
	{Title: "Wrap errors", Text: "Wrap errors with fmt.Errorf(\"...: %w\", err) and say what failed.", StartLine: 26, EndLine: 26},
	{Title: "No panic", Text: "Never use panic outside main and tests.", StartLine: 27, EndLine: 27},
	{Title: "Log with the injected logger", Text: "Log with the injected *slog.Logger; never use fmt.Println or the log package.", StartLine: 28, EndLine: 28},
	{Title: "Doc comments", Text: "Exported identifiers have doc comments that start with their name.", StartLine: 29, EndLine: 29},
	{Title: "Amounts in integer cents", Text: "Amounts are integer cents (int64), never floats.", StartLine: 33, EndLine: 33},
	{Title: "Times in UTC", Text: "Store and compare times in UTC; convert to local time only for display.", StartLine: 34, EndLine: 34},
	{Title: "Parameterized queries", Text: "Use parameterized queries; never build SQL with string concatenation.", StartLine: 38, EndLine: 38},
	{Title: "Queries take a context", Text: "Every query takes a context and a timeout from the caller.", StartLine: 39, EndLine: 39},
	{Title: "Migrations are never edited", Text: "A migration is never edited once merged; add a new one.", StartLine: 40, EndLine: 40},
	{Title: "Table-driven tests", Text: "Table-driven tests, with t.Run per case.", StartLine: 44, EndLine: 44},
	{Title: "Tests do not sleep", Text: "Tests do not sleep; wait on channels or use a fake clock.", StartLine: 45, EndLine: 45},
}

const benchPatch = "## file: 'internal/api/orders.go'\n\n@@ -10,3 +10,6 @@ func (h *Handler) create(w http.ResponseWriter, r *http.Request) {\n" +
	"__new hunk__\n10 \tvar req createOrder\n11 +\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n" +
	"12 +\t\tfmt.Println(\"bad order\", err)\n13 +\t\tw.WriteHeader(400)\n14 +\t\treturn\n15 +\t}\n" +
	"__old hunk__\n \tvar req createOrder\n"

// checkTokens is the prompt of one Kody Rules check of a Go file with
// the folder's rules, in gpt-4o tokens, and how many rules it carries.
func checkTokens(b *testing.B, set *prompts.Set, rs []*rules.Rule) (tokens, n int) {
	sent := filereview.ModelRules(rs, "internal/api/orders.go", "go")
	r, err := set.Render("kodyrules_check", prompts.KodyRulesData{
		Language: "go", FileName: "internal/api/orders.go", Patch: benchPatch, Rules: filereview.RuleRefs(sent), ResponseLanguage: "en-US",
	})
	if err != nil {
		b.Fatal(err)
	}
	return llm.CountTokens("gpt-4o", r.Text), len(sent)
}

// BenchmarkRuleSplitPromptTokens measures what the model's split of an
// assistant's file saves on every file check: the prompt of one Kody
// Rules check with the file's sections (without a model) and with its
// split, for the AGENTS.md of the tests and a 58-line CLAUDE.md mixing
// commands, architecture notes and workflow with code rules. The timed
// part is a Reload that finds the split in the cache; the split's own
// prompt is paid once per content of the file.
func BenchmarkRuleSplitPromptTokens(b *testing.B) {
	claude, err := os.ReadFile(filepath.Join("testdata", "split", "CLAUDE.md"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, file, content string
		split               []rules.SplitRule
	}{
		{"AGENTS.md", "AGENTS.md", agentsMD, agentsSplit},
		{"CLAUDE.md", "CLAUDE.md", string(claude), claudeSplit},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fake := llmtest.NewServer()
			defer fake.Close()
			fake.On(llmtest.SchemaName(workspace.SchemaRuleSplit), splitReply(tc.split))
			repo := lsptest.NewRepo(b, map[string]string{tc.file: tc.content})
			svc := splitServices(b, fake, b.TempDir(), false)
			off := splitServices(b, fake, b.TempDir(), true)
			before, _ := off.Folder(repo.Dir).Reload(ctx)
			f := svc.Folder(repo.Dir)
			after, _ := f.ReloadAndSplit(ctx)
			if len(after) != len(tc.split) || !after[0].Split {
				b.Fatalf("the split was not applied: %d rules", len(after))
			}
			tb, nb := checkTokens(b, svc.Prompts, before)
			ta, na := checkTokens(b, svc.Prompts, after)
			sp, err := svc.Prompts.Render("kodyrules_split", prompts.RuleSplitData{FileName: tc.file, Content: tc.content})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				f.Reload(ctx)
			}
			b.ReportMetric(float64(tb), "tokens/check-sections")
			b.ReportMetric(float64(ta), "tokens/check-split")
			b.ReportMetric(float64(llm.CountTokens("gpt-4o", sp.Text)), "tokens/split-call")
			b.ReportMetric(float64(nb), "rules-sections")
			b.ReportMetric(float64(na), "rules-split")
		})
	}
}
