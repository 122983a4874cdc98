package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/prompts"
)

// handlerTestsRule is the pull-request rule of these tests.
var handlerTestsRule = prompts.RuleRef{
	UUID: "rule-handler-tests", Title: "API handlers change with their tests", Severity: "high",
	Instructions: "A change to an API handler under api/handlers must come with a test of that handler in api/handlers/*_test.go.",
}

// prWorkspace is a workspace with a tested handler and, in the change set,
// a new untested one.
func prWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range map[string]string{
		"api/handlers/users.go":      "package handlers\n\nfunc Users() {}\n",
		"api/handlers/users_test.go": "package handlers\n\nfunc TestUsersListsEveryone(t *testing.T) {}\n",
		"api/handlers/orders.go":     "package handlers\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n",
		".env":                       "API_TOKEN=very-secret-value\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var ordersChange = []ChangedFile{{
	Path: "api/handlers/orders.go", Language: "go",
	Patch: "## file: 'api/handlers/orders.go'\n\n@@ -0,0 +1,5 @@\n__new hunk__\n1 +package handlers\n2 +\n3 +func Orders() string {\n4 +\treturn \"orders\"\n5 +}\n",
}}

var ordersViolation = map[string]any{"violations": []map[string]any{{
	"rule": 1, "file": "api/handlers/orders.go", "reason": "Orders has no test: the test directory holds users_test.go only.",
	"suggestionContent": "Add api/handlers/orders_test.go.", "existingCode": "func Orders() string {", "improvedCode": "func Orders() string {",
	"oneSentenceSummary": "add a test for Orders", "relevantLinesStart": 3, "relevantLinesEnd": 3,
}}}

// The evidence is gathered before the judging call, which receives it;
// the judge names the violation only when it sees the test directory.
func TestPullRequestRulesGetWorkspaceEvidence(t *testing.T) {
	s := newServer(t)
	plan := s.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []map[string]any{
		{"id": "E1", "tool": "list_files", "args": map[string]any{"dir": "api/handlers", "pattern": "*_test.go"}, "reason": "the handlers' tests"},
		{"id": "E2", "tool": "read_file", "args": map[string]any{"path": "api/handlers/users_test.go"}, "reason": "what a handler test looks like"},
		{"id": "E3", "tool": "search_workspace", "args": map[string]any{"query": "func TestOrders"}, "reason": "a test of Orders anywhere"},
		{"id": "E4", "tool": "read_file", "args": map[string]any{"path": ".env"}, "reason": "configuration"},
	}}))
	judged := s.On(llmtest.All(llmtest.SchemaName(SchemaPullRequestRules), llmtest.PromptContains("TestUsersListsEveryone")), llmtest.JSON(ordersViolation))
	blind := s.On(llmtest.SchemaName(SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []any{}}))
	ig, _ := redact.NewIgnore(nil)
	p := New(newGateway(t, s.URL), Options{Workspace: prWorkspace(t), Ignore: ig.Match})
	got, err := p.CheckPullRequest(context.Background(), ordersChange, []prompts.RuleRef{handlerTestsRule})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Times() != 1 || judged.Times() != 1 || blind.Times() != 0 {
		t.Fatalf("%d plan calls, %d judged with evidence, %d without", plan.Times(), judged.Times(), blind.Times())
	}
	if len(got) != 1 || got[0].RelevantFile != "api/handlers/orders.go" || got[0].RuleID != "rule-handler-tests" {
		t.Fatalf("violations %+v", got)
	}
	var prompt string
	for _, r := range s.ChatRequests() {
		if r.Chat.SchemaName() == SchemaPullRequestRules {
			prompt = r.Chat.Text()
		}
	}
	for _, want := range []string{"## Evidence from the workspace", "#E1: list_files", "api/handlers/users_test.go", "#E3: search_workspace", "privacy list"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the judging prompt lacks %q", want)
		}
	}
	// A file on the privacy list is refused, never read into a prompt.
	if strings.Contains(prompt, "very-secret-value") {
		t.Fatal("the .env file reached the judging prompt")
	}
	// The plan asked about the change and the rule, with the tools.
	planReq := s.ChatRequests()[0].Chat.Text()
	if !strings.Contains(planReq, "API handlers change with their tests") || !strings.Contains(planReq, "list_files") {
		t.Fatalf("plan request:\n%s", planReq)
	}
}

// Without a usable plan, or without a workspace, the check runs as it
// always did: on the diff alone.
func TestPullRequestRulesWithoutEvidence(t *testing.T) {
	for name, withWorkspace := range map[string]bool{"garbage plan": true, "no workspace": false} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t)
			plan := s.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("I would look at the tests."))
			check := s.On(llmtest.SchemaName(SchemaPullRequestRules), llmtest.JSON(ordersViolation))
			o := Options{}
			if withWorkspace {
				o.Workspace = prWorkspace(t)
			}
			got, err := New(newGateway(t, s.URL), o).CheckPullRequest(context.Background(), ordersChange, []prompts.RuleRef{handlerTestsRule})
			if err != nil || len(got) != 1 || check.Times() != 1 {
				t.Fatalf("violations %+v err %v after %d checks", got, err, check.Times())
			}
			if withWorkspace != (plan.Times() > 0) {
				t.Fatalf("%d plan calls", plan.Times())
			}
			last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
			if strings.Contains(last, "Evidence from the workspace") {
				t.Fatal("evidence section without evidence")
			}
		})
	}
}
