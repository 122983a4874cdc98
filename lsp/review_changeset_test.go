package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const (
	handlerTestsRule = "---\ntitle: API handlers change with their tests\nuuid: handler-tests\nseverity: high\nscope: pull_request\npath: \"api/handlers/**\"\n---\n## Instructions\nA change to an API handler under api/handlers comes with a change to its test in api/handlers/*_test.go.\n"
	ordersGo         = "package handlers\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n"
	ordersTestGo     = "package handlers\n\nimport \"testing\"\n\nfunc TestOrders(t *testing.T) {}\n"
	ordersTestEdited = "package handlers\n\nimport \"testing\"\n\nfunc TestOrders(t *testing.T) {}\n\nfunc TestOrdersRejectsEmptyCart(t *testing.T) {}\n"
)

// prChecks are the bodies of the pull-request rules checks fake received.
func prChecks(fake *llmtest.Server) []string {
	var out []string
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == review.SchemaPullRequestRules {
			out = append(out, r.Chat.Text())
		}
	}
	return out
}

// changeSetFake is an endpoint that reviews with the scripted pipeline
// and plans no evidence for the pull-request rules.
func changeSetFake(t *testing.T) *llmtest.Server {
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	reviewtest.Script(fake, nil)
	reviewtest.Rules(fake, nil)
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("No plan: the diff is enough."))
	return fake
}

// ordersUntested is the pull-request check's answer that Orders changed
// without its test.
var ordersUntested = llmtest.JSON(map[string]any{"violations": []map[string]any{{
	"rule": 1, "file": "api/handlers/orders.go", "reason": "Orders changed and its test did not.",
	"suggestionContent": "Test the new behaviour in api/handlers/orders_test.go.", "existingCode": "func Orders() string {",
	"improvedCode": "func Orders() string {", "oneSentenceSummary": "test the change to Orders", "relevantLinesStart": 3, "relevantLinesEnd": 3,
}}})

// reviewWorkspace runs kodyls.reviewWorkspace over the one open file and
// waits until the server is idle.
func reviewWorkspace(t *testing.T, e *reviewEnv) {
	t.Helper()
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil || len(sums) != 1 {
		t.Fatalf("reviewWorkspace: %+v %v", sums, err)
	}
	e.AwaitIdle("")
}

// ordersRepo is a repository with the handler-tests rule, the orders
// handler and its test, and more files; orders.go then changes on disk to
// onDisk ("" keeps it).
func ordersRepo(t *testing.T, more map[string]string, onDisk string) *lsptest.Repo {
	files := map[string]string{
		".kody/rules/handler-tests.md": handlerTestsRule,
		"api/handlers/orders.go":       ordersGo,
		"api/handlers/orders_test.go":  ordersTestGo,
	}
	for name, text := range more {
		files[name] = text
	}
	repo := lsptest.NewRepo(t, files)
	if onDisk != "" {
		repo.Write(map[string]string{"api/handlers/orders.go": onDisk})
	}
	return repo
}

// ordersOnDisk is orders.go changed on disk.
var ordersOnDisk = strings.Replace(ordersGo, `"orders"`, `"all orders"`, 1)

// panelOrders returns the handler-tests violations the panel lists in
// orders.go.
func panelOrders(t *testing.T, e *reviewEnv) []contract.ViolationInfo {
	t.Helper()
	e.AwaitIdle("")
	var v contract.RuleViolations
	if err := e.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	var out []contract.ViolationInfo
	for _, g := range v.Groups {
		for _, vi := range g.Violations {
			if g.Rule.UUID == "handler-tests" && vi.URI == e.URI("api/handlers/orders.go") {
				out = append(out, vi)
			}
		}
	}
	return out
}

// notifiedAbout reports whether a ruleViolationsChanged notification after
// the first since named the file name.
func notifiedAbout(e *reviewEnv, since int, name string) bool {
	for _, p := range e.ViolationsChanged()[since:] {
		for _, u := range p.URIs {
			if u == e.URI(name) {
				return true
			}
		}
	}
	return false
}

func hasCode(code string) func([]protocol.Diagnostic) bool {
	return func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if lsptest.Code(d) == code {
				return true
			}
		}
		return false
	}
}

// TestReviewWorkspaceJudgesTheWholeChangeSet: the workspace review judges
// the pull-request rules over every file changed against the base, as
// `kodyls review` does, not over the open buffers alone. The changed
// handler is open with unsaved text; its changed test is not open. The
// model, scripted to see a violation unless the test is in the change set,
// first reports one (the test is unchanged), then none once the test is
// changed on disk, though it was never opened.
func TestReviewWorkspaceJudgesTheWholeChangeSet(t *testing.T) {
	fake := changeSetFake(t)
	complies := fake.On(llmtest.All(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.PromptContains("TestOrdersRejectsEmptyCart")),
		llmtest.JSON(map[string]any{"violations": []any{}}))
	untested := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), ordersUntested)
	// Saved on disk, then edited again in the buffer without saving: the
	// buffer's text is what the rule judges.
	repo := ordersRepo(t, nil, strings.Replace(ordersGo, `"orders"`, `"orders on disk"`, 1))
	e := startReviewing(t, repo, fake, t.TempDir(), "manual")
	e.AwaitIdle("")
	e.OpenFile("api/handlers/orders.go")
	e.EditBuffer("api/handlers/orders.go", lsptest.Edit{Range: e.RegexpRange("api/handlers/orders.go", `"orders on disk"`), Text: `"orders in the buffer"`})

	// The test is unchanged: the change set is the handler alone, and the
	// rule's violation is shown on it.
	reviewWorkspace(t, e)
	e.AwaitDiagnostics("api/handlers/orders.go", hasCode("handler-tests"))
	checks := prChecks(fake)
	if len(checks) != 1 || untested.Times() != 1 {
		t.Fatalf("%d pull-request checks, %d without the test", len(checks), untested.Times())
	}
	if !strings.Contains(checks[0], `"orders in the buffer"`) || strings.Contains(checks[0], "orders on disk") {
		t.Fatalf("the check does not judge the buffer's unsaved text:\n%s", checks[0])
	}

	// The test changes on disk; it is never opened. The next workspace
	// review sends both files and the model finds the rule kept.
	repo.Write(map[string]string{"api/handlers/orders_test.go": ordersTestEdited})
	e.EditBuffer("api/handlers/orders.go", lsptest.Edit{Range: e.RegexpRange("api/handlers/orders.go", `"orders in the buffer"`), Text: `"orders, tested"`})
	reviewWorkspace(t, e)
	checks = prChecks(fake)
	if len(checks) != 2 || complies.Times() != 1 {
		t.Fatalf("%d pull-request checks, %d with the changed test", len(checks), complies.Times())
	}
	files, _, _ := strings.Cut(strings.SplitN(checks[1], "## Changed files\n", 2)[1], "\n\n")
	for _, want := range []string{"- api/handlers/orders.go", "- api/handlers/orders_test.go"} {
		if !strings.Contains(files, want) {
			t.Errorf("the changed files of the check lack %q:\n%s", want, files)
		}
	}
	if !strings.Contains(checks[1], `"orders, tested"`) {
		t.Errorf("the check does not judge the buffer's text:\n%s", checks[1])
	}
	if ds := e.Diagnostics("api/handlers/orders.go"); hasCode("handler-tests")(ds) {
		t.Fatalf("a violation is shown though the model found the rule kept: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}

// TestReviewWorkspacePanelListsClosedFiles: a pull-request rule's
// violation in a changed file that is not open has no buffer to show it,
// so the violations panel lists it (with a refresh notification), and it
// can be dismissed from there; the dismissal holds at the next review.
func TestReviewWorkspacePanelListsClosedFiles(t *testing.T) {
	fake := changeSetFake(t)
	untested := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), ordersUntested)
	usersGo := "package handlers\n\nfunc Users() string {\n\treturn \"users\"\n}\n"
	// orders.go changes on disk and is never opened; users.go is the
	// buffer being edited.
	repo := ordersRepo(t, map[string]string{"api/handlers/users.go": usersGo}, ordersOnDisk)
	e := startReviewing(t, repo, fake, t.TempDir(), "manual")
	e.AwaitIdle("")
	e.OpenFile("api/handlers/users.go")
	e.EditBuffer("api/handlers/users.go", lsptest.Edit{Range: e.RegexpRange("api/handlers/users.go", `"users"`), Text: `"all users"`})
	e.AwaitIdle("")
	notified := len(e.ViolationsChanged())

	closed := func() []contract.ViolationInfo { return panelOrders(t, e) }

	reviewWorkspace(t, e)
	if untested.Times() != 1 {
		t.Fatalf("%d pull-request checks answered with the violation, want 1", untested.Times())
	}
	got := closed()
	if len(got) != 1 {
		t.Fatalf("the panel lists %d violations in the closed orders.go, want 1: %+v", len(got), got)
	}
	v := got[0]
	if v.CheckedBy != contract.CheckedByModel || v.Version != 0 || v.Range.Start.Line != 2 || v.Match != "func Orders() string {" ||
		!strings.Contains(v.Message, "orders_test.go") || v.Fixable {
		t.Errorf("closed-file violation = %+v; want the model's, version 0, on line 3 (0-based 2), not fixable", v)
	}
	if !notifiedAbout(e, notified, "api/handlers/orders.go") {
		t.Error("no ruleViolationsChanged notification named the closed file")
	}
	if ds := e.Diagnostics("api/handlers/users.go"); hasCode("handler-tests")(ds) {
		t.Errorf("the violation of orders.go is shown on users.go: %s", lsptest.Describe(ds))
	}

	var res contract.DismissResult
	if err := e.ExecuteCommand(contract.CommandDismissSuggestion, contract.DismissArgs{ID: v.ID, URI: v.URI}, &res); err != nil || res.Dismissed != 1 {
		t.Fatalf("dismiss the closed-file violation: %+v, %v", res, err)
	}
	if got := closed(); len(got) != 0 {
		t.Fatalf("still listed after dismissing: %+v", got)
	}
	// The check's answer (cached: nothing changed) still names it; the
	// dismissal holds.
	reviewWorkspace(t, e)
	if got := closed(); len(got) != 0 {
		t.Errorf("listed again after the next review: %+v", got)
	}
	e.Shutdown()
}

// TestReviewWorkspaceWithNoFileOpen: the pull-request rules judge a
// workspace's change set even when none of its files is open, and the
// panel lists what they find.
func TestReviewWorkspaceWithNoFileOpen(t *testing.T) {
	fake := changeSetFake(t)
	untested := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), ordersUntested)
	e := startReviewing(t, ordersRepo(t, nil, ordersOnDisk), fake, t.TempDir(), "manual")
	e.AwaitIdle("")
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil || len(sums) != 0 {
		t.Fatalf("reviewWorkspace with no file open: %+v %v", sums, err)
	}
	e.AwaitIdle("")
	if untested.Times() != 1 {
		t.Fatalf("%d pull-request checks, want 1", untested.Times())
	}
	if got := panelOrders(t, e); len(got) != 1 {
		t.Fatalf("the panel lists %d handler-tests violations in orders.go, want 1: %+v", len(got), got)
	}
	e.Shutdown()
}

// TestPanelKeepsChangeSetViolationsAcrossOpenAndClose: a pull-request
// violation stays in the panel, once, whether its file is opened after
// the review, reviewed again while open (then its buffer shows it), or
// closed (its buffer's findings go; the panel keeps it, and says so).
func TestPanelKeepsChangeSetViolationsAcrossOpenAndClose(t *testing.T) {
	fake := changeSetFake(t)
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), ordersUntested)
	e := startReviewing(t, ordersRepo(t, nil, ordersOnDisk), fake, t.TempDir(), "manual")
	e.AwaitIdle("")
	listed := func(step string) {
		t.Helper()
		if got := panelOrders(t, e); len(got) != 1 || got[0].Range.Start.Line != 2 {
			t.Fatalf("%s: the panel lists %+v, want the violation once, on line 3", step, got)
		}
	}
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
		t.Fatal(err)
	}
	listed("file not open")

	e.OpenFile("api/handlers/orders.go")
	listed("file opened after the review")

	reviewWorkspace(t, e)
	e.AwaitDiagnostics("api/handlers/orders.go", hasCode("handler-tests"))
	listed("file reviewed while open")

	before := len(e.ViolationsChanged())
	e.Close("api/handlers/orders.go")
	listed("file closed")
	if !notifiedAbout(e, before, "api/handlers/orders.go") {
		t.Error("closing the file sent no ruleViolationsChanged for it")
	}
	e.Shutdown()
}

// TestNestedFolderViolationListedOnce: with a workspace folder nested in
// another, each with its pull-request rules, a changed file in the nested
// folder is judged by the nested folder's rules only, as its buffer is
// reviewed, and the panel lists its violation once, not once per folder.
func TestNestedFolderViolationListedOnce(t *testing.T) {
	fake := changeSetFake(t)
	// The outer folder's check, had it judged the nested folder's file.
	outer := fake.On(llmtest.All(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.PromptContains("api/handlers/orders.go")), ordersUntested)
	inner := fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []map[string]any{{
		"rule": 1, "file": "handlers/orders.go", "reason": "Orders changed and its test did not.",
		"suggestionContent": "Test the new behaviour in handlers/orders_test.go.", "existingCode": "func Orders() string {",
		"improvedCode": "func Orders() string {", "oneSentenceSummary": "test the change to Orders", "relevantLinesStart": 3, "relevantLinesEnd": 3,
	}}}))
	nestedRule := strings.Replace(handlerTestsRule, `path: "api/handlers/**"`, `path: "handlers/**"`, 1)
	repo := ordersRepo(t, map[string]string{"api/.kody/rules/handler-tests.md": nestedRule}, ordersOnDisk)
	e := startReviewingIn(t, repo, fake, t.TempDir(), "manual", nil, func(o *lsptest.InitOptions) { o.Folders = []string{"api"} })
	e.AwaitIdle("")
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
		t.Fatal(err)
	}
	got := panelOrders(t, e)
	if len(got) != 1 || got[0].Range.Start.Line != 2 {
		t.Fatalf("the panel lists %+v in orders.go, want the violation once, on line 3", got)
	}
	if outer.Times() != 0 || inner.Times() != 1 {
		t.Errorf("orders.go judged %d times by the outer folder's rules and %d by the nested folder's, want 0 and 1", outer.Times(), inner.Times())
	}
	e.Shutdown()
}

// TestWorkspaceThroughASymlinkKeepsItsPaths: a workspace opened through a
// symbolic link gets the panel's closed-file violations, their refresh
// notification and "Show rule" under the link's paths, the ones the
// editor knows, not under the link's target.
func TestWorkspaceThroughASymlinkKeepsItsPaths(t *testing.T) {
	fake := changeSetFake(t)
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), ordersUntested)
	repo := ordersRepo(t, nil, ordersOnDisk)
	link := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(repo.Dir, link); err != nil {
		t.Fatal(err)
	}
	linked := *repo
	linked.Dir = link
	e := startReviewing(t, &linked, fake, t.TempDir(), "manual")
	e.AwaitIdle("")
	notified := len(e.ViolationsChanged())
	var sums []contract.ReviewSummary
	if err := e.ExecuteCommand(contract.CommandReviewWorkspace, nil, &sums); err != nil {
		t.Fatal(err)
	}
	// panelOrders matches the URI under the link (e.URI).
	if got := panelOrders(t, e); len(got) != 1 {
		t.Fatalf("the panel lists %d violations under %s, want 1", len(got), e.URI("api/handlers/orders.go"))
	}
	if !notifiedAbout(e, notified, "api/handlers/orders.go") {
		t.Errorf("no ruleViolationsChanged named %s: %+v", e.URI("api/handlers/orders.go"), e.ViolationsChanged()[notified:])
	}
	var loc protocol.Location
	if err := e.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: "handler-tests"}, &loc); err != nil {
		t.Fatal(err)
	}
	if loc.URI != e.URI(".kody/rules/handler-tests.md") {
		t.Errorf("Show rule opens %s, want %s", loc.URI, e.URI(".kody/rules/handler-tests.md"))
	}
	e.Shutdown()
}
