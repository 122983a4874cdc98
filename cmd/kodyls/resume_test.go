package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// crashingEndpoint scripts an investigation of three model calls whose
// third hangs the first time it is asked (the server is killed while it
// waits) and answers the second time.
func crashingEndpoint(t *testing.T) *llmtest.Server {
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.On(llmtest.ToolMessages(0), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go","line":4}`}))
	fake.On(llmtest.ToolMessages(1), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"go.mod"}`}))
	fake.On(llmtest.ToolMessages(2), llmtest.Reply{Hang: true},
		llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable or use it."],"confidence":0.9}`}))
	return fake
}

// countSteps counts the model calls made at each step (index: tool
// results in the conversation).
func countSteps(fake *llmtest.Server) []int {
	steps := make([]int, 3)
	for _, r := range fake.ChatRequests() {
		for k := range steps {
			if llmtest.ToolMessages(k)(r.Chat) {
				steps[k]++
			}
		}
	}
	return steps
}

// TestExplanationResumesAfterServerCrash: the server is killed (SIGKILL)
// while the explanation's third model call is in flight; a new server on
// the same data dir, asked for the same explanation, continues from the
// checkpoint — the first two model calls are not sent again — and the
// editor is told it continued. Asked once more, the finished explanation
// is not resumed but answered from the history.
func TestExplanationResumesAfterServerCrash(t *testing.T) {
	fake := crashingEndpoint(t)
	repo := brokenGoRepo(t)
	output := buildOutput(t, repo)
	env := []string{"KODYLS_LLM_BASE_URL=" + fake.URL, "KODYLS_LLM_MODEL=fake-model", "KODYLS_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	explain := func(raw *lsptest.Raw, id int) {
		raw.Request(id, "workspace/executeCommand", map[string]any{"command": "kodyls.explainError", "workDoneToken": "explain",
			"arguments": []any{map[string]any{"text": output}}})
	}
	start := func() (*exec.Cmd, *lsptest.Raw, *bytes.Buffer) {
		cmd, raw, stderr := startRawEnv(t, repo.Dir, env, "serve")
		raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
		raw.Response("1")
		raw.Notify("initialized", map[string]any{})
		return cmd, raw, stderr
	}

	cmd, raw, stderr := start()
	explain(raw, 2)
	if !fake.WaitRequests(3, 20*time.Second) {
		t.Fatalf("the explanation never reached its third model call (%d calls)\n%s", fake.CountChat(), stderr)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := countSteps(fake); got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Fatalf("model calls per step before the crash %v, want [1 1 1]", got)
	}

	_, raw, stderr = start()
	explain(raw, 2)
	var progress []string
	m := raw.Next(func(m lsptest.RawMessage) bool {
		if m.Method == "$/progress" {
			progress = append(progress, string(m.Params))
		}
		return m.Method == "" && string(m.ID) == "2"
	})
	if m.Error != nil {
		t.Fatalf("explanation after the restart: %+v\n%s", m.Error, stderr)
	}
	var res struct {
		Markdown string `json:"markdown"`
		RCA      struct {
			RCA struct {
				RootCause, Source, Path string
				Iterations              int
			} `json:"rca"`
			Note string `json:"note"`
		} `json:"rca"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	if got := countSteps(fake); got[0] != 1 || got[1] != 1 || got[2] != 2 {
		t.Errorf("model calls per step %v, want the first two not sent again: [1 1 2]", got)
	}
	a := res.RCA.RCA
	if a.RootCause != "unused is assigned but never read in main" || a.Source != "model" || a.Path != "react" || a.Iterations != 3 {
		t.Errorf("answer after the restart: %+v", a)
	}
	if !strings.Contains(res.RCA.Note, "resumed from step 4") || !strings.Contains(res.Markdown, "resumed from step 4") || !strings.Contains(res.Markdown, "path: react") {
		t.Errorf("the explanation does not say it resumed:\nnote %q\n%s", res.RCA.Note, res.Markdown)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "resuming the interrupted run from step 4") {
		t.Errorf("the editor saw no progress report of the resume:\n%s", strings.Join(progress, "\n"))
	}

	// Finished: asking again neither resumes nor asks the model.
	calls := fake.CountChat()
	explain(raw, 3)
	m = raw.Response("3")
	res.RCA.RCA.Source, res.RCA.Note = "", ""
	_ = json.Unmarshal(m.Result, &res)
	if fake.CountChat() != calls || res.RCA.RCA.Source != "history" || strings.Contains(res.RCA.Note, "resumed") {
		t.Errorf("the finished explanation asked again: %d new calls, source %q, note %q", fake.CountChat()-calls, res.RCA.RCA.Source, res.RCA.Note)
	}
}

// TestExplainCommandResumesAfterCrash: `kodyls explain` killed during its
// third model call resumes from its checkpoint when run again.
func TestExplainCommandResumesAfterCrash(t *testing.T) {
	fake := crashingEndpoint(t)
	repo := brokenGoRepo(t)
	output := buildOutput(t, repo)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

	cmd := exec.Command(lsptest.BuildBinary(t), "explain", "--json")
	cmd.Env, cmd.Dir, cmd.Stdin = env, repo.Dir, strings.NewReader(output)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitRequests(3, 20*time.Second) {
		_ = cmd.Process.Kill()
		t.Fatalf("the explanation never reached its third model call\n%s", stderr.String())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got := countSteps(fake); got[0] != 1 || got[1] != 1 || got[2] != 2 {
		t.Errorf("model calls per step %v, want [1 1 2]", got)
	}
	if rep.RCA.Source != "model" || rep.RCA.Confidence != 0.9 || !strings.Contains(rep.Note, "resumed from step 4") {
		t.Errorf("resumed answer %+v, note %q", rep.RCA, rep.Note)
	}
}
