package lsp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestExplainReadsTheUnsavedBuffer: "Explain this error" on a diagnostic
// of a buffer with unsaved lines above the error shows the model the
// buffer's code around the error, and the agent's read_file reads the
// buffer too: the diagnostic's line counts the buffer's lines, and the
// file on disk has other code there.
func TestExplainReadsTheUnsavedBuffer(t *testing.T) {
	var disk strings.Builder
	disk.WriteString("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printx(\"the-failing-call\")\n}\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&disk, "var onDisk%d = %d\n", i, i)
	}
	var unsaved strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&unsaved, "// unsaved line %d\n", i)
	}
	const errLine = 45 // 0-based: line 5 of the file, 40 lines lower

	fake := llmtest.NewServer()
	defer fake.Close()
	turn := llmtest.All(llmtest.HasTool("final_answer"), llmtest.HasTool("read_file"))
	fake.On(llmtest.All(turn, llmtest.LastMessageRole("tool")), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"fmt has no Printx","fixGuidelines":["Call fmt.Print."],"confidence":0.9}`}))
	fake.On(turn, llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"main.go","line":%d,"radius":1}`, errLine+1)}))

	repo := lsptest.NewRepo(t, map[string]string{"main.go": disk.String()})
	s := startExplaining(t, repo.Dir, fake.URL)
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 2, Character: 0}, unsaved.String())
	s.AwaitIdle("")
	if got := strings.Split(s.Text("main.go"), "\n")[errLine]; !strings.Contains(got, "the-failing-call") {
		t.Fatalf("line %d of the buffer is %q", errLine, got)
	}

	r := protocol.Range{Start: protocol.Position{Line: errLine, Character: 1}, End: protocol.Position{Line: errLine, Character: 11}}
	arg, _ := json.Marshal(contract.ExplainArgs{URI: s.URI("main.go"), Range: &r, Message: "undefined: fmt.Printx", Source: "compiler"})
	var res contract.ExplainResult
	if err := s.Call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{
		Command: contract.CommandExplainError, Arguments: []protocol.LSPAny{arg},
	}, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Markdown, "fmt has no Printx") {
		t.Fatalf("the explanation is not the model's:\n%s", res.Markdown)
	}
	reqs := fake.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to the model, want 2", len(reqs))
	}
	var prompt string
	for _, m := range reqs[0].Chat.Messages {
		if m.Role == "user" {
			prompt = m.Content
		}
	}
	_, code, _ := strings.Cut(prompt, "## Code around the error")
	code, _, _ = strings.Cut(code, "## Similar errors")
	if !strings.Contains(code, `fmt.Printx("the-failing-call")`) || !strings.Contains(code, "// unsaved line 39") {
		t.Fatalf("the code around the error is not the buffer's:\n%s", code)
	}
	var read string
	for _, m := range reqs[1].Chat.Messages {
		if m.Role == "tool" {
			read = m.Content
		}
	}
	if !strings.Contains(read, fmt.Sprintf("%d\t\tfmt.Printx(\"the-failing-call\")", errLine+1)) {
		t.Fatalf("read_file did not read the buffer:\n%s", read)
	}
	s.Shutdown()
}
