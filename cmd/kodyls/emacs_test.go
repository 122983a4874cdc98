//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// emacsTests holds the Emacs Lisp scripts the tests below run.
var emacsTests = filepath.Join("..", "..", "editors", "emacs", "tests")

// emacsSnippet is the Lisp of the README's "### Emacs (eglot)" section.
func emacsSnippet(t *testing.T) string { return readmeBlock(t, "### Emacs (eglot)\n", "elisp") }

// emacsBinary is Emacs on PATH with Debian's eglot; without them the tests
// are skipped locally and fail in CI.
func emacsBinary(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; .ci/run installs Debian's emacs-nox, elpa-eglot and elpa-go-mode", what)
		}
		t.Skip(what)
	}
	p, err := exec.LookPath("emacs")
	if err != nil {
		missing("emacs not installed")
	}
	for _, pkg := range []string{"eglot", "go-mode"} {
		if m, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/" + pkg + "-*"); len(m) == 0 {
			missing("Debian's elpa-" + pkg + " is not installed")
		}
	}
	return p
}

// emacsResult is what the scripts write: their steps and what they saw.
type emacsResult struct {
	nvimResult
	AfterTyping []emacsDiagnostic `json:"after_typing"`
	Actions     []string          `json:"actions"`
	Explanation string            `json:"explanation"`
	Echo        string            `json:"echo"`
	LatencyMs   []float64         `json:"latency_ms"`
	IdleTime    float64           `json:"send_changes_idle_time"`
	Lines       []int             `json:"lines"`
	FixedLine   string            `json:"fixed_line"`
}

type emacsDiagnostic struct {
	Line   int    `json:"line"`
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source string `json:"source"`
	Code   string `json:"code"`
}

// emacsScript runs a script of editors/emacs/tests in a real Emacs, in a
// terminal (a pseudo-terminal) so that its command loop, and with it the
// idle timers eglot sends changes on, runs as for a user: in --batch no
// idle timer ever fires. The built kodyls is first on PATH, so the
// snippet's ("kodyls" "serve") starts it.
func emacsScript(t *testing.T, script string, repo *lsptest.Repo, env ...string) emacsResult {
	t.Helper()
	emacs := emacsBinary(t)
	tests, _ := filepath.Abs(emacsTests)
	tmp := t.TempDir()
	snippet := filepath.Join(tmp, "init.el")
	if err := os.WriteFile(snippet, []byte(emacsSnippet(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "-nw", "-Q", "-l", filepath.Join(tests, script))
	cmd.Dir = repo.Dir
	cmd.Env = append(append(testEnv(t),
		"PATH="+filepath.Dir(lsptest.BuildBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TERM=xterm",
		"KODYLS_SNIPPET="+snippet,
		"KODYLS_ROOT="+repo.Dir,
		"KODYLS_FILE="+filepath.Join(repo.Dir, "main.go"),
		"KODYLS_OUT="+out,
		"XDG_STATE_HOME="+t.TempDir(),
		"XDG_CACHE_HOME="+t.TempDir(),
	), env...)
	screen, err := runInTerminal(cmd)
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("emacs wrote no result (%v): %v\nlast screen output:\n%s", err, rerr, screen)
	}
	var res emacsResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	res.check(t, data)
	return res
}

func (r emacsResult) check(t *testing.T, raw []byte) {
	t.Helper()
	for _, s := range r.Steps {
		if !s.OK {
			t.Errorf("step %q failed: %s", s.Name, s.Detail)
		}
	}
	if !r.OK {
		t.Fatalf("emacs run incomplete:\n%s", raw)
	}
}

// runInTerminal runs cmd with a new pseudo-terminal of 100×40 as its
// controlling terminal and stdin, stdout and stderr, and returns the tail
// of what it drew.
func runInTerminal(cmd *exec.Cmd) (string, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer master.Close()
	var unlock, n int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		return "", fmt.Errorf("unlock pty: %w", err)
	}
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		return "", fmt.Errorf("pty number: %w", err)
	}
	size := struct{ rows, cols, x, y uint16 }{40, 100, 0, 0}
	if err := ioctl(master, syscall.TIOCSWINSZ, unsafe.Pointer(&size)); err != nil {
		return "", fmt.Errorf("pty size: %w", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	tty.Close()
	if err != nil {
		return "", err
	}
	// Drain the screen, or Emacs blocks once the terminal's buffer fills,
	// and type what the script asks for.
	var screen tailBuffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&keyboard{screen: &screen, tty: master}, master); close(copied) }()
	err = cmd.Wait()
	master.Close()
	<-copied
	return screen.String(), err
}

// keyboard types on the terminal what a script asks for: a script writes
// ESC ] 5379 ; <base64 of the keys> BEL to the terminal and gets the keys
// as input, one by one as a person types them (with eglot's idle time
// counted from the last one, which keys run from a keyboard macro do not
// give).
type keyboard struct {
	screen  io.Writer
	tty     io.Writer
	pending []byte
}

const typeRequest = "\x1b]5379;"

func (k *keyboard) Write(p []byte) (int, error) {
	_, _ = k.screen.Write(p)
	k.pending = append(k.pending, p...)
	for {
		i := bytes.Index(k.pending, []byte(typeRequest))
		if i < 0 {
			// Keep what may be the start of a request split across writes.
			if n := len(k.pending); n > len(typeRequest) {
				k.pending = k.pending[n-len(typeRequest):]
			}
			return len(p), nil
		}
		j := bytes.IndexByte(k.pending[i:], '\a')
		if j < 0 {
			k.pending = k.pending[i:]
			return len(p), nil
		}
		keys, err := base64.StdEncoding.DecodeString(string(k.pending[i+len(typeRequest) : i+j]))
		k.pending = k.pending[i+j+1:]
		if err != nil {
			return len(p), fmt.Errorf("type request: %w", err)
		}
		if _, err := k.tty.Write(keys); err != nil {
			return len(p), err
		}
	}
}

func ioctl(f *os.File, req uint, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// tailBuffer keeps the last 4 KB written to it.
type tailBuffer struct{ bytes.Buffer }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.Buffer.Write(p)
	if b.Len() > 8192 {
		b.Next(b.Len() - 4096)
	}
	return len(p), nil
}

// TestEmacsEglotEndToEnd: the README's eglot set-up in Emacs with
// Debian's eglot: a typed line that breaks a Kody Rule gets flymake's
// diagnostic on its line, eglot's code actions there offer "Explain this
// error" and running it shows the offline explanation in the echo area
// (eglot drops the command's result), deleting the line clears the
// diagnostic.
func TestEmacsEglotEndToEnd(t *testing.T) {
	repo := fixtureRepo(t)
	res := emacsScript(t, "e2e.el", repo)
	if len(res.AfterTyping) != 1 {
		t.Fatalf("diagnostics after typing: %+v", res.AfterTyping)
	}
	d := res.AfterTyping[0]
	if d.Line != 7 || d.Source != "kody" || d.Code != printlnRule || !strings.Contains(d.Text, "No fmt.Println") {
		t.Errorf("diagnostic after typing: %+v", d)
	}
	t.Logf("code actions: %q", res.Actions)
	if !strings.Contains(res.Explanation, "### Root cause") || !strings.Contains(res.Explanation, "source: offline") {
		t.Errorf("explanation:\n%s", res.Explanation)
	}
	if !strings.Contains(res.Echo, "Root cause: ") || !strings.Contains(res.Echo, "source: offline") {
		t.Errorf("the echo area does not show the explanation:\n%s", res.Echo)
	}
	if len(res.LatencyMs) != 5 {
		t.Errorf("latency samples: %v", res.LatencyMs)
	}
	// Reported, not asserted: the README quotes it.
	t.Logf("Emacs (eglot-send-changes-idle-time %.1f s): keystroke → diagnostic %s ms", res.IdleTime, fmt.Sprint(res.LatencyMs))
}

// TestEmacsEglotWorkspaceConfiguration: the snippet's
// eglot-workspace-configuration reaches kodyls. The server starts with
// rules.scope "file", which flags a committed violation; the snippet's
// rules.scope "changed", answered to workspace/configuration, leaves only
// the newly typed one. Without the snippet's settings both are flagged.
func TestEmacsEglotWorkspaceConfiguration(t *testing.T) {
	committed := strings.Replace(mainGo, `fmt.Print("hi")`, `fmt.Println("committed")`, 1)
	for _, tc := range []struct {
		name  string
		env   []string
		lines []int
	}{
		{"snippet", nil, []int{7}},
		{"without the snippet's settings", []string{"KODYLS_EMACS_CONFIG=none"}, []int{6, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := lsptest.NewRepo(t, map[string]string{
				".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
				"main.go":                   committed,
			})
			res := emacsScript(t, "config.el", repo, append(tc.env, `KODYLS_SETTINGS={"rules":{"scope":"file"}}`)...)
			if !slices.Equal(res.Lines, tc.lines) {
				t.Fatalf("lines with a kody diagnostic: %v, want %v", res.Lines, tc.lines)
			}
		})
	}
}

// TestEmacsEglotReviewQuickFix: save a change, see the review's finding
// in flymake, apply its quick fix from M-x eglot-code-actions.
func TestEmacsEglotReviewQuickFix(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
	res := emacsScript(t, "review.el", repo, "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if res.FixedLine != "\tfor _, it := range items {" {
		t.Fatalf("line 7 after the fix: %q", res.FixedLine)
	}
}
