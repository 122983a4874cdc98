package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReviewPullRequestRuleWithWorkspaceEvidence: a pull-request rule that
// needs files outside the diff ("a change to an API handler must come with
// a test"). `kodyls review` on a real repository lets the model plan the
// evidence — the test directory listed and a test read at the same time —
// and the judging call, which sees it, reports the violation.
func TestReviewPullRequestRuleWithWorkspaceEvidence(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/handler-tests.md": "---\ntitle: API handlers change with their tests\nuuid: rule-handler-tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\n## Instructions\n\nA change to an API handler under api/handlers must come with a test of that handler in api/handlers/*_test.go.\n",
		"go.mod":                       "module example.com/shop\n\ngo 1.22\n",
		"api/handlers/users.go":        "package handlers\n\nfunc Users() []string { return nil }\n",
		"api/handlers/users_test.go":   "package handlers\n\nimport \"testing\"\n\nfunc TestUsersListsEveryone(t *testing.T) {}\n",
	})
	repo.Write(map[string]string{"api/handlers/orders.go": "package handlers\n\n// Orders lists the orders.\nfunc Orders() []string {\n\treturn []string{\"o-1\"}\n}\n"})

	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	plan := fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []map[string]any{
		{"id": "E1", "tool": "list_files", "args": map[string]any{"dir": "api/handlers", "pattern": "*_test.go"}, "reason": "the handlers' tests"},
		{"id": "E2", "tool": "read_file", "args": map[string]any{"path": "api/handlers/users_test.go"}, "reason": "how handlers are tested"},
		{"id": "E3", "tool": "search_workspace", "args": map[string]any{"query": "func TestOrders"}, "reason": "a test of Orders anywhere"},
	}}))
	// The judge finds the violation only with the evidence before it.
	judged := fake.On(llmtest.All(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.PromptContains("TestUsersListsEveryone"), llmtest.PromptContains("#E3: search_workspace")),
		llmtest.JSON(map[string]any{"violations": []map[string]any{{
			"rule": 1, "file": "api/handlers/orders.go", "reason": "Orders is a new handler and api/handlers has no test of it (only users_test.go).",
			"suggestionContent": "Add api/handlers/orders_test.go with a test of Orders.", "existingCode": "func Orders() []string {", "improvedCode": "func Orders() []string {",
			"oneSentenceSummary": "Orders has no test", "relevantLinesStart": 4, "relevantLinesEnd": 4,
		}}}))
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []any{}}))

	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json", "--fail-on", "high")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a high finding)\n%s\n%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var found *report.Finding
	for i, f := range rep.Findings {
		if f.RuleID == "rule-handler-tests" {
			found = &rep.Findings[i]
		}
	}
	if found == nil || found.File != "api/handlers/orders.go" || found.StartLine != 4 || found.RuleTitle != "API handlers change with their tests" || !strings.Contains(found.Message, "users_test.go") {
		t.Fatalf("finding %+v in %+v (notes %v)", found, rep.Findings, rep.Notes)
	}
	if plan.Times() != 1 || judged.Times() != 1 {
		t.Fatalf("%d plans, %d judged with evidence", plan.Times(), judged.Times())
	}
}
