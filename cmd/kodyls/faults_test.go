package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestStoreFaultFullDisk runs kodyls with a file-size limit of 8 KB
// (`ulimit -f`: every write past it fails, as on a full disk; Go ignores
// the SIGXFSZ that comes with it): the store cannot be created, kodyls
// says so, and the explanation is still given.
func TestStoreFaultFullDisk(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	bin := lsptest.BuildBinary(t)
	cmd := exec.Command("sh", "-c", "ulimit -f 16 && exec "+shQuote(bin)+" explain --offline --json")
	cmd.Env, cmd.Dir = env, repo.Dir
	cmd.Stdin = strings.NewReader(undefinedOutput("someName"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), `"source": "offline"`) {
		t.Fatalf("explain with a full disk: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "file too large") && !strings.Contains(errb.String(), "disk") && !strings.Contains(errb.String(), "full") {
		t.Errorf("no clear message about the store:\n%s", errb.String())
	}
}

// An endpoint that floods 50 MB or cuts its answer half-way costs a
// bounded time and memory and ends in a clear note: the explanation falls
// back to what kodyls knows without a model.
func TestEndpointFloodAndCutBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"50 MB", llmtest.Reply{HugeBody: 50 << 20}, "larger than 8 MB"},
		{"half a body", llmtest.Reply{CutBody: true, Content: "a root cause long enough to be cut in half"}, "malformed response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			fake.On(llmtest.Any(), tc.reply)
			repo := brokenGoRepo(t)
			env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
			cmd := exec.Command(lsptest.BuildBinary(t), "explain", "--json")
			cmd.Env, cmd.Dir = env, repo.Dir
			cmd.Stdin = strings.NewReader(buildOutput(t, repo))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("explain: %v\n%s\n%s", err, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "the model could not answer") || !strings.Contains(out.String(), tc.want) {
				t.Errorf("note lacks %q:\n%s", tc.want, out.String())
			}
			// Memory: the body is never read past the limit.
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 150<<10 {
				t.Errorf("peak RSS %d KB: the response was buffered", ru.Maxrss)
			}
			// A flood is not retried; a cut answer gets the gateway's three
			// retries (a dropped connection is often transient), and the
			// router does not hand a failing endpoint to a planner.
			if n := fake.CountChat(); n > 4 {
				t.Errorf("%d requests, want at most 4", n)
			}
		})
	}
}
