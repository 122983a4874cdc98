package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

func runBinStdin(t *testing.T, env []string, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// buildOutput is real `go build` output for the program below.
func buildOutput(t *testing.T, repo *lsptest.Repo) string {
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = repo.Dir
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "declared and not used") {
		t.Fatalf("unexpected go build output:\n%s", out)
	}
	return string(out)
}

func brokenGoRepo(t *testing.T) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{
		"go.mod":  "module example.com/broken\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tunused := 42\n}\n",
	})
}

type explainJSON struct {
	Errors []struct {
		Tool, Language, File, Severity, Message, Fingerprint string
		Line, Column                                         int
	} `json:"errors"`
	Primary int `json:"primary"`
	Similar []struct {
		Exact bool `json:"exact"`
		Count int  `json:"count"`
	} `json:"similar"`
	RCA struct {
		RootCause     string   `json:"rootCause"`
		FixGuidelines []string `json:"fixGuidelines"`
		Confidence    float64  `json:"confidence"`
		Iterations    int      `json:"iterations"`
		ToolsUsed     []string `json:"toolsUsed"`
		Source        string   `json:"source"`
	} `json:"rca"`
	Note string `json:"note"`
}

func TestExplainOffline(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	e := rep.Errors[rep.Primary]
	if e.Tool != "go" || e.File != "./main.go" || e.Line != 4 || e.Column != 2 || e.Fingerprint == "" {
		t.Errorf("primary error %+v", e)
	}
	if rep.RCA.Source != "offline" || !strings.Contains(rep.RCA.RootCause, "never read") || !strings.Contains(rep.Note, "no model was used") {
		t.Errorf("offline answer %+v note %q", rep.RCA, rep.Note)
	}
	// Text output says the same for people.
	out, _, _ = runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline")
	if !strings.Contains(out, "go error at ./main.go:4:2: declared and not used: unused") || !strings.Contains(out, "Note: no model was used") {
		t.Errorf("text output:\n%s", out)
	}
	// The error was recorded: the second time it is listed as seen before.
	out, _, _ = runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline", "--json")
	rep = explainJSON{}
	_ = json.Unmarshal([]byte(out), &rep)
	if len(rep.Similar) == 0 || !rep.Similar[0].Exact || rep.Similar[0].Count < 2 {
		t.Errorf("second explanation should list the same error seen before: %+v", rep.Similar)
	}
}

func TestExplainNothingRecognised(t *testing.T) {
	_, errOut, code := runBinStdin(t, testEnv(t), t.TempDir(), "all good\n", "explain", "--offline")
	if code != 1 || !strings.Contains(errOut, "no error found") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

func TestExplainWithAgentThenFromHistory(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable or use it."],"confidence":0.9}`})
	fake.On(llmtest.LastMessageRole("tool"), final)
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go","line":4}`}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	output := buildOutput(t, repo)
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.RCA.Source != "model" || rep.RCA.Confidence != 0.9 || rep.RCA.Iterations < 2 || len(rep.RCA.ToolsUsed) == 0 || rep.RCA.ToolsUsed[0] != "read_file" {
		t.Fatalf("agent answer %+v", rep.RCA)
	}
	// The agent saw the code around the error through read_file.
	saw := false
	for _, r := range fake.ChatRequests() {
		if strings.Contains(r.Chat.Text(), "unused := 42") {
			saw = true
		}
	}
	if !saw {
		t.Error("the code around the error never reached the model")
	}
	calls := fake.CountChat()
	out, _, _ = runBinStdin(t, env, repo.Dir, output, "explain", "--json")
	rep = explainJSON{}
	_ = json.Unmarshal([]byte(out), &rep)
	if fake.CountChat() != calls || rep.RCA.Source != "history" || rep.RCA.RootCause != "unused is assigned but never read in main" {
		t.Fatalf("second explanation: %d new calls, answer %+v", fake.CountChat()-calls, rep.RCA)
	}
}

// TestExplainErrorCancelledThroughTheBinary: an explanation waiting on a
// hanging endpoint does not hold up edits and diagnostics, and
// $/cancelRequest ends it with RequestCancelled within a second, aborting
// the HTTP request.
func TestExplainErrorCancelledThroughTheBinary(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	repo := fixtureRepo(t)
	cmd, raw, stderr := startRawEnv(t, repo.Dir, []string{"KODYLS_LLM_BASE_URL=" + fake.URL, "KODYLS_LLM_MODEL=fake-model"}, "serve")
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	uri := "file://" + repo.Dir + "/main.go"
	raw.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": mainGo}})
	raw.Request(2, "workspace/executeCommand", map[string]any{"command": "kodyls.explainError", "arguments": []any{map[string]any{
		"uri": uri, "range": map[string]any{"start": map[string]any{"line": 5, "character": 1}, "end": map[string]any{"line": 5, "character": 5}},
		"message": "undefined: fmt.Printx", "source": "compiler",
	}}})
	if !fake.WaitRequests(1, 5*time.Second) {
		t.Fatalf("the explanation never reached the endpoint\n%s", stderr)
	}
	// While it waits, an edit is handled and its diagnostics published.
	raw.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 6, "character": 0}, "end": map[string]any{"line": 6, "character": 0}}, "text": "\tfmt.Println(1)\n"}},
	})
	d := raw.Next(func(m lsptest.RawMessage) bool {
		return m.Method == "textDocument/publishDiagnostics" && strings.Contains(string(m.Params), printlnRule)
	})
	_ = d
	sent := time.Now()
	raw.Notify("$/cancelRequest", map[string]any{"id": 2})
	m := raw.Response("2")
	if m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("cancelled explanation: %+v", m.Error)
	}
	if el := time.Since(sent); el > time.Second {
		t.Errorf("cancellation took %v", el)
	}
	if !fake.WaitDisconnects(1, 2*time.Second) {
		t.Error("the endpoint did not see the request aborted")
	}
	raw.Request(3, "shutdown", nil)
	raw.Response("3")
	raw.Notify("exit", nil)
	_ = cmd.Wait()
}

// TestEvalRCAAgainstTheFake keeps the evaluation harness working: CI has no
// model, so the fake endpoint answers every case with one explanation.
func TestEvalRCAAgainstTheFake(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"the variable is declared and not used","fixGuidelines":["remove it or use it"],"confidence":0.7}`}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, t.TempDir(), "eval", "rca")
	if code != 0 || !strings.Contains(out, "pass rate: ") || !strings.Contains(out, "go ") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runBin(t, testEnv(t), t.TempDir(), "eval", "rca"); code != 2 || !strings.Contains(errOut, "KODYLS_LLM_BASE_URL") {
		t.Fatalf("without an endpoint: %d %q", code, errOut)
	}
	// An endpoint that refuses every call scores nothing: the built-in
	// guidance that still answers is not the model's.
	down := llmtest.NewServer()
	defer down.Close()
	down.On(llmtest.Any(), llmtest.Reply{Status: 400, ErrorMessage: "model not loaded"})
	env = append(testEnv(t), "KODYLS_LLM_BASE_URL="+down.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, _ = runBin(t, env, t.TempDir(), "eval", "rca")
	if !strings.Contains(out, "pass rate: 0/") || !strings.Contains(out, "not from the model") {
		t.Fatalf("with the endpoint refusing every call:\n%s%s", out, errOut)
	}
}

// TestExplainKeepsToTheWorkspacePrivacyList: a file under the ignorePaths
// of the workspace's kodus-config.yml is never read into a prompt, even
// when the model asks for it; the explanation goes on without it.
func TestExplainKeepsToTheWorkspacePrivacyList(t *testing.T) {
	const marker = "CUSTOMER-EXPORT-7f3a"
	fake := llmtest.NewServer()
	defer fake.Close()
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable."],"confidence":0.8}`})
	fake.On(llmtest.LastMessageRole("tool"), final)
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"customer-data/export.go"}`}))
	repo := brokenGoRepo(t)
	repo.Write(map[string]string{
		"kodus-config.yml":        "ignorePaths:\n  - \"customer-data/**\"\n",
		"customer-data/export.go": "package data\n\n// " + marker + "\n",
	})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.RCA.Source != "model" {
		t.Fatalf("answer %+v", rep.RCA)
	}
	toolAnswered := false
	for _, r := range fake.ChatRequests() {
		if strings.Contains(string(r.Body), marker) {
			t.Fatalf("the ignored file reached the model:\n%s", r.Body)
		}
		toolAnswered = toolAnswered || r.Chat.LastMessage().Role == "tool"
	}
	if !toolAnswered {
		t.Fatal("the model's read_file was never answered: the test did not exercise the refusal")
	}
}

// TestExplainWithoutToolsSaysNoneWasUsed: an agent that answers at once
// ran no tool, and the text says so instead of an empty list.
func TestExplainWithoutToolsSaysNoneWasUsed(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable or use it."],"confidence":0.9}`}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--strategy", "react")
	if code != 0 || !strings.Contains(out, "Root cause (model") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "tools used:") || !strings.Contains(out, "1 agent steps; no tool used\n") {
		t.Errorf("the agent steps line:\n%s", out)
	}
}
