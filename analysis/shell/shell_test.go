package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Cancelling kills the whole group: a grandchild that would write a file
// after the cancellation never does.
func TestCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, dir, "(sleep 1; touch late) & wait")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Fatal("a process of the cancelled command survived and wrote its file")
	}
}
