package lsp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// splitAgentsMD holds a code rule the review's fixture breaks (the loop
// over an index) among workflow steps, in one section.
const splitAgentsMD = "# AGENTS.md\n## Working here\n- Run `make test` before you open a PR.\n" +
	"- Walk slices with for-range, never with an index.\n- Use Conventional Commits.\n## Docs\n- Keep the README current.\n"

// TestModelSplitOfAgentsFileInTheEditor: with a model configured, the
// server loads AGENTS.md's sections at once and has the model split the
// file in the background; startup does not wait for it (the sections are
// the rules while the split is pending). Once it is in, the rules are the
// split's and a save is checked against the code rule alone, shown with
// its own id on the loop, and "Show Kody Rule" opens its line.
func TestModelSplitOfAgentsFileInTheEditor(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo, "AGENTS.md": splitAgentsMD})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	release := make(chan struct{})
	split := fake.On(llmtest.All(llmtest.SchemaName(workspace.SchemaRuleSplit), func(*llmtest.ChatRequest) bool {
		<-release // the model takes its time
		return true
	}), llmtest.JSON(map[string]any{"rules": []map[string]any{
		{"title": "Walk slices with for-range", "text": "Walk slices with for-range, never with an index.", "startLine": 4, "endLine": 4},
	}}))
	scripts := reviewtest.Rules(fake, llmtest.PromptContains("Walk slices with for-range"), reviewtest.RuleViolation{
		Rule: 1, Reason: "The loop indexes the slice.", ExistingCode: "for i := 0; i <= len(items); i++ {",
		ImprovedCode: "for _, it := range items {", OneSentenceSummary: "range over items", RelevantLinesStart: 7, RelevantLinesEnd: 7,
	})
	e := startReviewing(t, repo, fake, t.TempDir(), "save")

	// The split is asked for only once the sections are loaded: they are
	// the rules until it answers.
	if !fake.WaitSchema(workspace.SchemaRuleSplit, 1, 10*time.Second) {
		close(release)
		t.Fatal("the server never asked the model to split AGENTS.md")
	}
	var loc protocol.Location
	err := e.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: "agents:AGENTS.md#working-here"}, &loc)
	close(release)
	if err != nil {
		t.Fatalf("while the split is pending, the section is not a rule: %v", err)
	}
	e.AwaitIdle("")
	if split.Times() != 1 {
		t.Fatalf("%d split calls, want 1", split.Times())
	}
	const id = "agents:AGENTS.md#walk-slices-with-for-range"
	if err := e.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: "agents:AGENTS.md#working-here"}, &loc); err == nil {
		t.Fatal("the section is still a rule after the split")
	}
	if err := e.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: id}, &loc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(loc.URI), "/AGENTS.md") || loc.Range.Start.Line != 3 {
		t.Fatalf("Show Kody Rule opens %s line %d, want AGENTS.md line 3 (0-based)", loc.URI, loc.Range.Start.Line)
	}

	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	e.AwaitIdle("")
	if scripts.Check.Times() != 1 {
		t.Fatalf("%d rule checks carrying the split rule, want 1", scripts.Check.Times())
	}
	check := lastRuleCheck(fake)
	for _, workflow := range []string{"make test", "Conventional Commits", "README"} {
		if strings.Contains(check, workflow) {
			t.Errorf("the rule check carries the workflow step %q", workflow)
		}
	}
	found := false
	for _, d := range e.Diagnostics("main.go") {
		if lsptest.Code(d) == id && d.Range.Start.Line == 6 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no diagnostic of %s on the loop: %+v", id, e.Diagnostics("main.go"))
	}
	if split.Times() != 1 {
		t.Fatalf("%d split calls after the save, want 1", split.Times())
	}
}

// TestModelConfiguredLaterSplitsAgentsFile: kodyls starts without a model,
// so AGENTS.md's sections are the rules; once the editor's settings name an
// endpoint and a model, the rules are reloaded and split by the model
// without a restart.
func TestModelConfiguredLaterSplitsAgentsFile(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo, "AGENTS.md": splitAgentsMD})
	fake := llmtest.NewServer()
	defer fake.Close()
	split := fake.On(llmtest.SchemaName(workspace.SchemaRuleSplit), llmtest.JSON(map[string]any{"rules": []map[string]any{
		{"title": "Walk slices with for-range", "text": "Walk slices with for-range, never with an index.", "startLine": 4, "endLine": 4},
	}}))
	svc := workspace.Open(context.Background(), workspace.Config{Getenv: func(string) string { return "" }, NoStore: true})
	t.Cleanup(svc.Close)
	s := lsptest.StartInProcess(t, repo.Dir, lsp.Options{Services: svc})
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	var loc protocol.Location
	if err := s.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: "agents:AGENTS.md#working-here"}, &loc); err != nil {
		t.Fatalf("offline, the section is not a rule: %v", err)
	}

	s.Settings = map[string]any{"llm": map[string]any{"baseUrl": fake.URL, "model": "fake-model"}}
	s.Notify(protocol.MethodWorkspaceDidChangeConfiguration, &protocol.DidChangeConfigurationParams{Settings: protocol.LSPAny(`null`)})
	s.AwaitIdle("")
	if split.Times() != 1 {
		t.Fatalf("%d split calls after the model was configured, want 1", split.Times())
	}
	if err := s.ExecuteCommand(contract.CommandShowRule, contract.ShowRuleArgs{UUID: "agents:AGENTS.md#walk-slices-with-for-range"}, &loc); err != nil {
		t.Fatalf("the split rule is not loaded: %v", err)
	}
	s.Shutdown()
}
