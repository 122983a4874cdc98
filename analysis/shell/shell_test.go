package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunReturnsOutputAndExitStatus(t *testing.T) {
	out, err := Run(context.Background(), t.TempDir(), "echo out; echo err >&2; exit 3")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(out, "out") || !strings.Contains(out, "err") {
		t.Fatalf("out %q err %v", out, err)
	}
}

// Cancelling kills the whole group: a grandchild that would have run for
// 30 s, and that does not hold the command's output open, is killed with the
// shell. The test waits on the command, not the clock: the grandchild's pid
// arrives through a FIFO, and the cancel follows it.
func TestCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid := make(chan int, 1)
	go func() {
		defer cancel()
		data, err := os.ReadFile(fifo) // blocks until the shell writes
		if err != nil {
			t.Error(err)
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Errorf("pid %q: %v", data, err)
			return
		}
		pid <- n
	}()
	_, err := Run(ctx, dir, "sleep 30 >/dev/null 2>&1 & echo $! > pid; wait")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the cancellation", err)
	}
	grandchild := <-pid
	// SIGKILL is delivered at once, but the process ends when it is next
	// scheduled; allow for that, far less than the grandchild's 30 s.
	state := processState(t, grandchild)
	for end := time.Now().Add(2 * time.Second); state != "gone" && state != "Z" && time.Now().Before(end); {
		runtime.Gosched()
		state = processState(t, grandchild)
	}
	if state != "gone" && state != "Z" {
		t.Fatalf("the cancelled command's grandchild %d is still running (state %s)", grandchild, state)
	}
}

// processState is the state letter of pid in /proc, or "gone".
func processState(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "gone"
	}
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) == 0 {
		t.Fatalf("unexpected /proc/%d/stat: %q", pid, data)
	}
	return fields[0]
}
