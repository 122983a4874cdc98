//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// started is the binary running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
}

// startBin starts the binary with stdin (nil: an empty one).
func startBin(t *testing.T, env []string, dir string, stdin io.Reader, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(lsptest.BuildBinary(t), args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd.Env, s.cmd.Dir, s.cmd.Stdin = env, dir, stdin
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// interrupt sends sig and returns the exit status, failing when the
// process does not end within bound.
func (s *started) interrupt(t *testing.T, sig syscall.Signal, bound time.Duration) int {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(bound):
		t.Fatalf("still running %v after %v; stderr:\n%s", sig, bound, s.stderr)
	}
	if st, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		t.Fatalf("killed by %v instead of exiting; stderr:\n%s", st.Signal(), s.stderr)
	}
	return s.cmd.ProcessState.ExitCode()
}

// waitFor waits until stderr holds want.
func (s *started) waitFor(t *testing.T, want string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !strings.Contains(s.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr never said %q:\n%s", want, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExplainAndFixInterruptedWhileReadingStdin: explain and fix waiting
// on a stdin that never ends stop at SIGINT and SIGTERM, say so, and exit
// 130 and 143 as a shell reports a process the signal ended.
func TestExplainAndFixInterruptedWhileReadingStdin(t *testing.T) {
	repo := brokenGoRepo(t)
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		code int
	}{
		{[]string{"explain", "--offline"}, syscall.SIGINT, 130},
		{[]string{"explain", "--offline", "--json"}, syscall.SIGTERM, 143},
		{[]string{"fix"}, syscall.SIGINT, 130},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		env := append(testEnv(t), "KODYLS_LLM_BASE_URL=http://127.0.0.1:9/v1", "KODYLS_LLM_MODEL=m")
		s := startBin(t, env, repo.Dir, r, tc.args...)
		r.Close()
		// The signal handling is in place once the process runs Go code;
		// a second is ample.
		time.Sleep(time.Second)
		code := s.interrupt(t, tc.sig, 5*time.Second)
		w.Close()
		name := tc.args[0]
		if code != tc.code || !strings.Contains(s.stderr.String(), "kodyls "+name+": interrupted") || s.stdout.String() != "" {
			t.Errorf("%v, %v: exit %d (want %d), stdout %q, stderr %q", tc.args, tc.sig, code, tc.code, s.stdout, s.stderr)
		}
	}
}

// TestExplainFromATerminalSaysWhatItWaitsFor: with stdin a terminal,
// explain says it reads compiler output from it and how to end it; Ctrl-C
// ends it.
func TestExplainFromATerminalSaysWhatItWaitsFor(t *testing.T) {
	master, tty := openPTY(t)
	defer master.Close()
	go func() { _, _ = io.Copy(io.Discard, master) }()
	s := startBin(t, testEnv(t), t.TempDir(), tty, "explain", "--offline")
	tty.Close()
	s.waitFor(t, "kodyls explain: reading compiler output from stdin; end with Ctrl-D", 10*time.Second)
	if code := s.interrupt(t, syscall.SIGINT, 5*time.Second); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr:\n%s", code, s.stderr)
	}
	// A pipe gets no such line.
	_, errOut, _ := runBinStdin(t, testEnv(t), t.TempDir(), "all good\n", "explain", "--offline")
	if strings.Contains(errOut, "reading compiler output") {
		t.Errorf("the terminal's hint with a pipe: %q", errOut)
	}
}

// openPTY returns a new pseudo-terminal's master and its terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock, n int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Skipf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	return master, tty
}

// TestReviewInterruptedSaysSo: a review stopped by a signal while the
// model works exits 130 or 143, says "interrupted" on stderr, and its
// report says it is incomplete in each format: "interrupted": true in
// JSON, an invocation that did not succeed in SARIF, the summary in text.
func TestReviewInterruptedSaysSo(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	for _, tc := range []struct {
		format string
		sig    syscall.Signal
		code   int
		check  func(out string) string
	}{
		{"json", syscall.SIGINT, 130, func(out string) string {
			var rep struct {
				Interrupted bool     `json:"interrupted"`
				Notes       []string `json:"notes"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				return err.Error()
			}
			if !rep.Interrupted || !strings.Contains(strings.Join(rep.Notes, "\n"), "interrupted") {
				return fmt.Sprintf("interrupted %v, notes %q", rep.Interrupted, rep.Notes)
			}
			return ""
		}},
		{"sarif", syscall.SIGTERM, 143, func(out string) string {
			var log struct {
				Runs []struct {
					Invocations []struct {
						ExecutionSuccessful bool `json:"executionSuccessful"`
					} `json:"invocations"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(out), &log); err != nil {
				return err.Error()
			}
			if len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 || log.Runs[0].Invocations[0].ExecutionSuccessful {
				return "the invocation is not marked as failed"
			}
			return ""
		}},
		{"text", syscall.SIGINT, 130, func(out string) string {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, "changed file") || !strings.Contains(last, "; interrupted") {
				return "the summary does not say interrupted: " + last
			}
			return ""
		}},
	} {
		asked := len(fake.Requests()) + 1
		s := startBin(t, env, repo.Dir, nil, "review", "--format", tc.format)
		if !fake.WaitRequests(asked, 20*time.Second) {
			t.Fatalf("%s: the review never asked the model; stderr:\n%s", tc.format, s.stderr)
		}
		code := s.interrupt(t, tc.sig, 10*time.Second)
		if code != tc.code || !strings.Contains(s.stderr.String(), "kodyls review: interrupted") {
			t.Errorf("%s: exit %d (want %d), stderr:\n%s", tc.format, code, tc.code, s.stderr)
		}
		if why := tc.check(s.stdout.String()); why != "" {
			t.Errorf("%s: %s\n%s", tc.format, why, s.stdout)
		}
	}
}

// TestFixInterruptedWritesNothing: a fix stopped while the model plans
// says "interrupted" (not the agent's "context canceled"), exits 130 and
// writes nothing even with --apply.
func TestFixInterruptedWritesNothing(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	s := startBin(t, fakeEnv(t, fake), repo.Dir, strings.NewReader(output), "fix", "--apply")
	if !fake.WaitRequests(1, 20*time.Second) {
		t.Fatalf("the fix never asked the model; stderr:\n%s", s.stderr)
	}
	code := s.interrupt(t, syscall.SIGINT, 10*time.Second)
	errOut := s.stderr.String()
	if code != 130 || !strings.Contains(errOut, "kodyls fix: interrupted") || strings.Contains(errOut, "context canceled") {
		t.Errorf("exit %d, want 130 and one line that says interrupted; stderr:\n%s", code, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
		t.Errorf("main.go was written:\n%s", data)
	}
}
