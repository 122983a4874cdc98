package lsptest

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/lsp"
)

// Session is a running server with its editor.
type Session struct {
	*Editor
	// Server is the in-process server (nil for a binary).
	Server *lsp.Server
	// Process is the binary's process (nil in process).
	Process *os.Process
	wait    func() (int, error)
	hangUp  func() error
}

// HangUp closes the editor's end of the connection without shutdown or
// exit, as an editor that crashed or was killed does.
func (s *Session) HangUp() {
	if err := s.hangUp(); err != nil {
		s.t.Fatalf("hang up: %v", err)
	}
}

// Wait waits for the server to end and returns its exit code.
func (s *Session) Wait(timeout time.Duration) (int, error) {
	type result struct {
		code int
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := s.wait()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.code, r.err
	case <-time.After(timeout):
		return -1, context.DeadlineExceeded
	}
}

// StartInProcess runs lsp.Server on an in-memory pipe.
func StartInProcess(t testing.TB, root string, opts lsp.Options) *Session {
	t.Helper()
	client, server := net.Pipe()
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" } // no LLM, no host settings
	}
	srv := lsp.New(opts)
	done := make(chan int, 1)
	go func() {
		done <- srv.Serve(context.Background(), server)
		_ = server.Close()
	}()
	var once sync.Once
	var code int
	s := &Session{Editor: NewEditor(t, client, root), Server: srv, hangUp: client.Close}
	s.wait = func() (int, error) {
		once.Do(func() { code = <-done })
		return code, nil
	}
	t.Cleanup(func() {
		_ = client.Close()
		_, _ = s.Wait(5 * time.Second)
	})
	return s
}

type procRWC struct {
	io.Reader
	io.WriteCloser
}

// StartBinary runs the kodyls binary at bin with `serve` over stdio. The
// server's stderr goes to the test log.
func StartBinary(t testing.TB, bin, root string, env []string) *Session {
	t.Helper()
	cmd := exec.Command(bin, "--log-level", "debug", "serve")
	cmd.Env = env
	cmd.Dir = root
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &testWriter{t: t}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s := &Session{Editor: NewEditor(t, procRWC{Reader: stdout, WriteCloser: stdin}, root), Process: cmd.Process, hangUp: stdin.Close}
	var once sync.Once
	var code int
	var werr error
	s.wait = func() (int, error) {
		once.Do(func() {
			werr = cmd.Wait()
			code = cmd.ProcessState.ExitCode()
			if _, ok := werr.(*exec.ExitError); ok {
				werr = nil
			}
		})
		return code, werr
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		if _, err := s.Wait(3 * time.Second); err != nil {
			_ = cmd.Process.Kill()
		}
	})
	return s
}

// testWriter sends the server's stderr to the test log.
type testWriter struct {
	t  testing.TB
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Logf("server: %s", p)
	return len(p), nil
}

// BuildBinary builds cmd/kodyls into a temp dir once per test binary and
// returns its path.
func BuildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kodyls-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "kodyls")
		_, file, _, _ := runtime.Caller(0)
		module := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/kodyls")
		cmd.Dir = module
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build kodyls: %v", buildErr)
	}
	return builtBin
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// RemoveBuiltBinary deletes what BuildBinary built; a test binary that
// calls BuildBinary calls it from TestMain once its tests ran, so that
// each `go test` run does not leave a binary behind in the temp dir.
func RemoveBuiltBinary() {
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
}
