package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// A fix killed while the model reflects on its first plan version resumes
// there in the next run on the same data directory: the plan is not asked
// for again, the reflection's adjustment runs, and the fix is verified.
func TestFixResumesAfterACrash(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	plan := fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn strconv.Itoa(42)\n")))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Reply{Hang: true}, llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"strconv is not imported","adjustments":[
		{"type":"MODIFY","stepId":"edit","input":{"edits":[{"file":"main.go","oldText":"\treturn 42\n","newText":"\treturn \"42\"\n"}]},"reason":"no import needed"}]}`))
	env := fakeEnv(t, fake)
	args := []string{"fix", "--json", "--build", "go build ./..."}

	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Env, cmd.Dir, cmd.Stdin = env, repo.Dir, strings.NewReader(output)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitSchema("reflection", 1, 60*time.Second) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the first run never reflected:\n%s", stderr.String())
	}
	_ = cmd.Process.Kill() // SIGKILL: no clean-up runs
	_ = cmd.Wait()
	if plan.Times() != 1 {
		t.Fatalf("plan asked %d times before the crash", plan.Times())
	}

	out, errOut, code := runBinStdin(t, env, repo.Dir, output, args...)
	if code != 0 {
		t.Fatalf("resumed run: code %d\n%s\n%s", code, out, errOut)
	}
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if plan.Times() != 1 {
		t.Errorf("the resumed fix asked for a plan again (%d plan calls)", plan.Times())
	}
	if reflect.Times() != 2 {
		t.Errorf("reflections: %d, want the hung one and the resumed one", reflect.Times())
	}
	if !res.Verified || res.Rounds != 2 || len(res.Edits) != 1 || res.Edits[0].NewText != "\treturn \"42\"\n" {
		t.Errorf("resumed result %+v", res)
	}
	if got := strings.Join(res.Trail, " "); got != "plan execute reflect adjust execute reflect" {
		t.Errorf("trail %s", got)
	}
}

// TestFixResumesAfterServerCrash: "Fix this error" in the editor, the
// server killed (SIGKILL) while the model reflects on the first plan
// version; a new server on the same data directory, asked for the same
// fix, continues from the checkpoint (no second plan), tells the editor it
// resumed, verifies the adjusted edit and sends it for confirmation.
func TestFixResumesAfterServerCrash(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	// The compiler's message, as the build on save would show it.
	m := regexp.MustCompile(`(?m)main\.go:6:\d+: (.+)$`).FindStringSubmatch(output)
	if m == nil {
		t.Fatalf("unexpected go build output:\n%s", output)
	}
	message := m[1]
	fake := llmtest.NewServer()
	defer fake.Close()
	plan := fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn strconv.Itoa(42)\n")))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Reply{Hang: true}, llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"strconv is not imported","adjustments":[
		{"type":"MODIFY","stepId":"edit","input":{"edits":[{"file":"main.go","oldText":"\treturn 42\n","newText":"\treturn \"42\"\n"}]},"reason":"no import needed"}]}`))
	env := fakeEnv(t, fake)
	start := func() (*exec.Cmd, *lsptest.Raw, *bytes.Buffer) {
		cmd, raw, stderr := startRawEnv(t, repo.Dir, env, "serve")
		raw.Request(1, "initialize", map[string]any{
			"rootUri":               "file://" + repo.Dir,
			"capabilities":          map[string]any{"workspace": map[string]any{"workspaceEdit": map[string]any{"documentChanges": true, "changeAnnotationSupport": map[string]any{}}}},
			"initializationOptions": map[string]any{"build": map[string]any{"onSave": "go build ./..."}, "review": map[string]any{"trigger": "manual"}},
		})
		raw.Response("1")
		raw.Notify("initialized", map[string]any{})
		return cmd, raw, stderr
	}
	fix := func(raw *lsptest.Raw, id int) {
		raw.Request(id, "workspace/executeCommand", map[string]any{"command": "kodyls.fixError", "workDoneToken": "fix",
			"arguments": []any{map[string]any{"uri": "file://" + repo.Dir + "/main.go", "message": message, "source": "build",
				"range": map[string]any{"start": map[string]any{"line": 5, "character": 8}, "end": map[string]any{"line": 5, "character": 10}}}}})
	}

	cmd, raw, stderr := start()
	fix(raw, 2)
	if !fake.WaitSchema("reflection", 1, 60*time.Second) {
		_ = cmd.Process.Kill()
		t.Fatalf("the fix never reflected\n%s", stderr)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	_, raw, stderr = start()
	fix(raw, 2)
	var progress []string
	edits := 0
	var msg lsptest.RawMessage
	for {
		// Next answers the server's other requests with null; the edit is
		// taken here and accepted, as an editor whose user confirmed it.
		msg = raw.Next(func(m lsptest.RawMessage) bool {
			if m.Method == "$/progress" {
				progress = append(progress, string(m.Params))
			}
			return m.Method == "workspace/applyEdit" || m.Method == "" && string(m.ID) == "2"
		})
		if msg.Method != "workspace/applyEdit" {
			break
		}
		edits++
		if strings.Contains(string(msg.Params), "strconv") || !strings.Contains(string(msg.Params), `\"42\"`) {
			t.Errorf("the edit sent is not the adjusted one: %s", msg.Params)
		}
		raw.Send(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"applied":true}}`)
	}
	if msg.Error != nil {
		t.Fatalf("the fix after the restart: %+v\n%s", msg.Error, stderr)
	}
	var res struct {
		Applied, Verified bool
		Rounds            int
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		t.Fatalf("result %s: %v", msg.Result, err)
	}
	if !res.Applied || !res.Verified || res.Rounds != 2 || edits != 1 {
		t.Errorf("resumed fix: %+v, %d applyEdit requests; result %s\n%s", res, edits, msg.Result, stderr)
	}
	if plan.Times() != 1 || reflect.Times() != 2 {
		t.Errorf("plan asked %d times, reflection %d: the restart must resume at the reflection", plan.Times(), reflect.Times())
	}
	if !strings.Contains(strings.Join(progress, "\n"), "resuming") {
		t.Errorf("the editor saw no progress report of the resume:\n%s", strings.Join(progress, "\n"))
	}
}
