package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestQuitRightAfterInitialize: an editor that starts the server and
// quits as soon as initialize is answered (a probe, a window closed right
// away) ends the session's start-up work; that is no fault, so the log
// warns of nothing, and shutdown then exit, sent back to back, end the
// process with 0.
func TestQuitRightAfterInitialize(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"main.go": "package main\n"})
	frame := func(v any) []byte {
		b, _ := json.Marshal(v)
		return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	env := testEnv(t)
	for i := range 6 {
		cmd := exec.Command(lsptest.BuildBinary(t), "--log-level=warn")
		cmd.Env, cmd.Dir = env, repo.Dir
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		in.Write(frame(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"processId": nil, "rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}}}))
		// The initialize reply, as an editor waits for it.
		r := bufio.NewReader(out)
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("run %d: no initialize reply: %v\n%s", i, err, errOut.String())
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
			if strings.TrimSpace(line) == "" && n > 0 {
				break
			}
		}
		if _, err := io.ReadFull(r, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		in.Write(frame(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}}))
		in.Write(frame(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
		in.Write(frame(map[string]any{"jsonrpc": "2.0", "method": "exit"}))
		in.Close()
		go io.Copy(io.Discard, r)
		err := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(errOut.String(), "WARN") {
			t.Fatalf("run %d: exit %d (%v), stderr:\n%s", i, code, err, errOut.String())
		}
	}
}
