package workspace_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestModelSplitsUTF16AgentsFile: an AGENTS.md saved as UTF-16 is sent to
// the model as the text it holds, and split as the UTF-8 one is.
func TestModelSplitsUTF16AgentsFile(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(workspace.SchemaRuleSplit), splitReply(agentsSplit))
	units := utf16.Encode([]rune("\ufeff" + strings.ReplaceAll(agentsMD, "\n", "\r\n")))
	le := make([]byte, 2*len(units))
	for i, u := range units {
		le[2*i], le[2*i+1] = byte(u), byte(u>>8)
	}
	repo := lsptest.NewRepo(t, map[string]string{"AGENTS.md": string(le), "main.go": "package main\n"})

	f := splitServices(t, fake, t.TempDir(), false).Folder(repo.Dir)
	rs, errs := f.Reload(ctx)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	sameRules(t, "before the split", rs, agentsWithoutModel)
	if !f.SplitRules(ctx) {
		t.Fatal("SplitRules reported no new split")
	}
	rs, _ = f.Reload(ctx)
	sameRules(t, "after the split", rs, agentsRefined)
	reqs := fake.ChatRequests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), ` 6 | - Never use fmt.Println in production code`) || strings.Contains(string(reqs[0].Body), `\u0000`) {
		t.Fatalf("%d requests; the prompt lacks the decoded file:\n%s", len(reqs), reqs[0].Body)
	}
}
