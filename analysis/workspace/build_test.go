package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kodustech/kodyls/analysis/workspace"
)

// A build's output becomes errors; a build that fails with nothing
// kodyls can place says so with the end of its output instead of looking
// clean; a newer build cancels the running one.
func TestBuildOutcomes(t *testing.T) {
	svc := offlineServices(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := svc.Folder(dir)

	errs, err := f.StartBuild(context.Background(), `echo "./main.go:1:9: undefined: x" >&2; exit 1`, time.Minute).Wait()
	if err != nil || len(errs) != 1 || errs[0].Line != 1 || errs[0].Message != "undefined: x" {
		t.Fatalf("parsed build: %+v, %v", errs, err)
	}
	if errs, err := f.StartBuild(context.Background(), "true", time.Minute).Wait(); err != nil || len(errs) != 0 {
		t.Fatalf("passing build: %+v, %v", errs, err)
	}
	_, err = f.StartBuild(context.Background(), "echo 'sh: 1: gcc: not found' >&2; exit 127", time.Minute).Wait()
	if !errors.Is(err, workspace.ErrBuildUnrecognized) || !strings.Contains(err.Error(), "gcc: not found") {
		t.Fatalf("unrecognised failure: %v", err)
	}
	var bf *workspace.BuildFailure
	if !errors.As(err, &bf) || bf.Status != "exit status 127" || bf.LastLine != "sh: 1: gcc: not found" {
		t.Fatalf("unrecognised failure: %+v, want its exit status and last line", bf)
	}
	// The slow build says it is running through a FIFO; the newer build
	// starts only then, so it supersedes a running build, not a queued one.
	started := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	slow := f.StartBuild(context.Background(), "echo running > started; sleep 5", time.Minute)
	done := make(chan error, 1)
	go func() { _, err := slow.Wait(); done <- err }()
	if _, err := os.ReadFile(started); err != nil {
		t.Fatal(err)
	}
	f.StartBuild(context.Background(), "true", time.Minute)
	if err := <-done; !errors.Is(err, workspace.ErrBuildCancelled) {
		t.Fatalf("superseded build: %v", err)
	}
}
