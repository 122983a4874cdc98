package main

import (
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestPullRequestRuleEvidenceCutKeepsNoStartOfASecret: evidence longer
// than the judging prompt keeps of it is cut there; a GitHub token that
// straddles the cut is redacted first, so that no start of it, too short
// for the redaction of the prompt to recognise, reaches the model.
func TestPullRequestRuleEvidenceCutKeepsNoStartOfASecret(t *testing.T) {
	// The token starts 10 bytes before the cut at 4,000 bytes.
	pad := strings.Repeat(strings.Repeat("x", 69)+"\n", (review.PullRequestEvidenceChars-10)/70)
	const token = "ghp_STRADDLE0123456789abcdefghijklmnopqr"
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/handler-tests.md": "---\ntitle: API handlers change with their tests\nuuid: rule-handler-tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\n## Instructions\n\nA change to an API handler must come with a test.\n",
		"go.mod":                       "module example.com/shop\n\ngo 1.22\n",
		"api/handlers/users.go":        "package handlers\n\nfunc Users() []string { return nil }\n",
		"deploy/notes.txt":             pad + token + "\n" + pad,
	})
	repo.Write(map[string]string{"api/handlers/orders.go": "package handlers\n\nfunc Orders() []string { return nil }\n"})

	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []map[string]any{
		{"id": "E1", "tool": "read_file", "args": map[string]any{"path": "deploy/notes.txt"}, "reason": "the deployment notes"},
	}}))
	judged := fake.On(llmtest.All(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.PromptContains("#E1: read_file")), llmtest.JSON(map[string]any{"violations": []any{}}))
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []any{}}))

	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, repo.Dir, "review", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if judged.Times() != 1 {
		t.Fatalf("the rules were judged %d times with the evidence", judged.Times())
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() != review.SchemaPullRequestRules {
			continue
		}
		text := r.Chat.Text()
		if !strings.Contains(text, "…(truncated)") {
			t.Errorf("the evidence was not cut:\n%s", text)
		}
		if strings.Contains(text, "ghp_STRADD") {
			t.Errorf("the start of the token reached the model")
		}
	}
}
