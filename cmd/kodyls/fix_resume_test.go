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
