package lsp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestExplanationProgressShowsEveryStep: while the agent explains an
// error, the editor's progress shows the tool calls, the escalation, and
// each node of the planning graph starting and finishing, one short
// message each, under the token of the command.
func TestExplanationProgressShowsEveryStep(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	// The ReAct fast path reads the code and answers unsure, so the
	// explanation escalates to plan-execute, whose graph runs as nodes.
	reactTurn := llmtest.All(llmtest.HasTool("final_answer"), llmtest.HasTool("read_file"))
	fake.On(llmtest.All(reactTurn, llmtest.LastMessageRole("tool")), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"something about fmt","fixGuidelines":["Look at it."],"confidence":0.2}`}))
	fake.On(reactTurn, llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go","line":6}`}))
	fake.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "1", "description": "read the call", "tool": "read_file", "args": map[string]any{"path": "main.go", "line": 6}},
	}}))
	fake.On(llmtest.HasTool("final_answer"), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"fmt has no Printx","fixGuidelines":["Call fmt.Print."],"confidence":0.9}`}))
	repo := newWorkspace(t)
	s := startExplaining(t, repo.Dir, fake.URL)
	s.AwaitIdle("")

	arg, _ := json.Marshal(contract.ExplainArgs{Text: "main.go:6:2: undefined: fmt.Printx"})
	var res contract.ExplainResult
	err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{
		WorkDoneProgressParams: protocol.WorkDoneProgressParams{WorkDoneToken: protocol.String("explain-1")},
		Command:                contract.CommandExplainError,
		Arguments:              []protocol.LSPAny{arg},
	}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Markdown, "fmt has no Printx") || fake.CountChat() != 4 {
		t.Fatalf("the explanation did not come from the escalated run (%d calls):\n%s", fake.CountChat(), res.Markdown)
	}
	var msgs []string
	for _, p := range s.Progress() {
		if string(p.Token) == `"explain-1"` && p.Value.Kind == "report" {
			msgs = append(msgs, p.Value.Message)
		}
	}
	all := strings.Join(msgs, "\n")
	var started, finished, called bool
	for _, m := range msgs {
		switch {
		case strings.HasSuffix(m, "…") && !strings.Contains(m, " "):
			started = true
		case strings.Contains(m, " finished ("):
			finished = true
		case strings.Contains(m, "calling read_file "):
			called = true
		}
		if strings.Contains(m, "\n") || len(m) > 200 {
			t.Errorf("a progress message is not one short line: %q", m)
		}
	}
	if !started || !finished || !called {
		t.Fatalf("progress lacks a node start (%v), a node finish (%v) or the tool call (%v):\n%s", started, finished, called, all)
	}
	s.Shutdown()
}

// startExplaining starts a server on dir with its own store and the model
// at url, failing fast on a model that does not answer.
func startExplaining(t *testing.T, dir, url string) *lsptest.Session {
	t.Helper()
	st, err := index.OpenStore(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := workspace.Open(context.Background(), workspace.Config{
		Getenv:    func(string) string { return "" },
		Store:     st,
		AdjustLLM: func(c *llm.Config) { c.MaxRetries, c.Timeout = -1, 5*time.Second },
	})
	t.Cleanup(svc.Close)
	s := lsptest.StartInProcess(t, dir, lsp.Options{Services: svc})
	s.Initialize(lsptest.InitOptions{InitializationOptions: map[string]any{
		"llm": map[string]any{"baseUrl": url, "model": "fake-model"},
	}})
	return s
}
