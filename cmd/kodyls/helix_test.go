package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The Helix tests run the README's Helix set-up in a real Helix. Helix has
// no headless mode, so it runs in a detached tmux session of a fixed size:
// the test types with send-keys and reads the screen with capture-pane, and
// every step waits by polling the screen, with a bound. See
// editors/helix/README.md to run them.

// helixConfig is the Helix config.toml of the tests. Helix shows a
// diagnostic's message only in a popup by default; end-of-line diagnostics
// render it as text after the line, on the line's own row of the screen,
// where capture-pane sees it. Inline diagnostics (under the line) stay off
// so rows do not move.
const helixConfig = `[editor]
end-of-line-diagnostics = "hint"

[editor.inline-diagnostics]
cursor-line = "disable"
other-lines = "disable"
`

// helixGo is the fixture's main.go with a committed violation of the rule:
// with the snippet's rules.scope "changed" it is not reported, with "file"
// it is.
const helixGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Print(\"hi\")\n\tfmt.Println(\"committed\")\n}\n"

const (
	helixRuleTitle = "No fmt.Println"
	helixCommitted = `fmt.Println("committed")`
)

// helixBinary is the Helix to test in: KODYLS_HX (.ci/run unpacks Debian
// 13's hx with .ci/debian-unpack.sh), else hx on PATH. Without Helix or
// tmux the tests are skipped locally and fail in CI.
func helixBinary(t *testing.T) (hx, tmux string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it", what)
		}
		t.Skipf("%s not installed", what)
	}
	hx = os.Getenv("KODYLS_HX")
	if hx == "" {
		p, err := exec.LookPath("hx")
		if err != nil {
			missing("Helix (hx, or KODYLS_HX)")
		}
		hx = p
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		missing("tmux")
	}
	out, err := exec.Command(hx, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "helix ") {
		t.Fatalf("%s --version: %v %q", hx, err, out)
	}
	return hx, tmux
}

// helixSnippet is the TOML of the README's Helix section, as documented.
func helixSnippet(t *testing.T) string { return readmeBlock(t, "### Helix", "toml") }

// helixSession is one Helix running in its own tmux server.
type helixSession struct {
	t      *testing.T
	tmux   string
	socket string
	log    string   // Helix's log, kodyls's stderr included
	shots  string   // directory of the screen captures
	steps  []string // the steps' names, in order
}

// startHelix writes languages.toml (the snippet) and config.toml into a
// private configuration directory and opens main.go of repo in hx, with the
// directory of the kodyls under test first on PATH so that the snippet's
// `command = "kodyls"` starts it. Directories holding a gopls are left off
// PATH: the snippet lists gopls too, and Helix reports it missing and runs
// kodyls alone, which is what the screen checks rely on.
func startHelix(t *testing.T, hx, tmux, languages string, repo *lsptest.Repo) *helixSession {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "helix")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"languages.toml": languages, "config.toml": helixConfig} {
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := []string{filepath.Dir(lsptest.BuildBinary(t))}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gopls")); err != nil && dir != "" {
			path = append(path, dir)
		}
	}
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"KODYLS_DATA_DIR=" + filepath.Join(home, "kodyls-data"),
		"TERM=screen",
		"LANG=C.UTF-8",
	}

	// `hx --health go` reads the same configuration: the snippet parses,
	// and kodyls resolves to the binary under test.
	health := exec.Command(hx, "--health", "go")
	health.Env, health.Dir = env, repo.Dir
	raw, err := health.CombinedOutput()
	if err != nil {
		t.Fatalf("hx --health go: %v\n%s", err, raw)
	}
	out := ansiEscape.ReplaceAllString(string(raw), "")
	if !strings.Contains(out, "kodyls: "+lsptest.BuildBinary(t)) {
		t.Fatalf("hx --health go does not resolve kodyls to the binary under test:\n%s", out)
	}
	t.Logf("hx --health go:\n%s", out)

	// A short socket path: t.TempDir's can pass the 108-byte limit.
	sockDir, err := os.MkdirTemp("", "kodyls-hx-")
	if err != nil {
		t.Fatal(err)
	}
	// The screen of every step is saved; KODYLS_E2E_ARTIFACTS keeps them
	// (and Helix's log) after the run.
	shots := t.TempDir()
	if dir := os.Getenv("KODYLS_E2E_ARTIFACTS"); dir != "" {
		shots = filepath.Join(dir, "helix", strings.ReplaceAll(t.Name(), "/", "-"))
		_ = os.RemoveAll(shots) // a previous run's
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &helixSession{t: t, tmux: tmux, socket: filepath.Join(sockDir, "tmux"), log: filepath.Join(shots, "helix.log"), shots: shots}
	t.Cleanup(func() {
		_ = exec.Command(tmux, "-S", s.socket, "kill-server").Run()
		if t.Failed() {
			if log, err := os.ReadFile(s.log); err == nil {
				t.Logf("Helix log (%s), last 8 KB:\n%s", s.log, tail(log, 8<<10))
			}
			t.Logf("the steps' screens (the failing one is above): %s", strings.Join(s.steps, "; "))
			t.Logf("screen captures of each step in %s (kept with KODYLS_E2E_ARTIFACTS)", s.shots)
		}
		_ = os.RemoveAll(sockDir)
	})
	// env -i: the tmux server's own environment does not reach Helix.
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-S", s.socket, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "-c", repo.Dir,
		envBin, "-i"}, env...)
	args = append(args, hx, "-v", "--log", s.log, "main.go")
	if out, err := exec.Command(tmux, args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	s.await("Helix shows main.go in normal mode", 20*time.Second, func(screen string) bool {
		return strings.Contains(statusLine(screen), " NOR ") && strings.Contains(statusLine(screen), "main.go")
	})
	return s
}

// ansiEscape matches the colour codes of hx --health.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// screen is the text of the pane now.
func (s *helixSession) screen() string {
	out, err := exec.Command(s.tmux, "-S", s.socket, "capture-pane", "-p").Output()
	if err != nil {
		s.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// keys sends tmux key names (Escape, Enter, Space, x…).
func (s *helixSession) keys(keys ...string) {
	s.t.Helper()
	args := append([]string{"-S", s.socket, "send-keys"}, keys...)
	if out, err := exec.Command(s.tmux, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

// typeText sends text literally, as typed.
func (s *helixSession) typeText(text string) {
	s.t.Helper()
	if out, err := exec.Command(s.tmux, "-S", s.socket, "send-keys", "-l", text).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys -l %q: %v\n%s", text, err, out)
	}
}

// poll reads the screen until ok holds or the bound passes; it returns the
// last screen and whether ok held.
func (s *helixSession) poll(bound time.Duration, ok func(screen string) bool) (string, bool) {
	deadline := time.Now().Add(bound)
	for {
		screen := s.screen()
		if ok(screen) {
			return screen, true
		}
		if time.Now().After(deadline) {
			return screen, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// await is poll for one named step: the screen it ends on is saved, and the
// test stops when the step times out.
func (s *helixSession) await(step string, bound time.Duration, ok func(screen string) bool) string {
	s.t.Helper()
	screen, held := s.poll(bound, ok)
	s.save(step, screen)
	if !held {
		s.t.Fatalf("%s: not within %s; the screen:\n%s", step, bound, screen)
	}
	return screen
}

func (s *helixSession) save(step, screen string) {
	s.steps = append(s.steps, step)
	name := fmt.Sprintf("%02d-%s.txt", len(s.steps), strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(step)))
	_ = os.WriteFile(filepath.Join(s.shots, name), []byte(step+"\n\n"+screen), 0o644)
}

// normal leaves insert mode, a picker or a menu, and waits for normal mode
// with nothing open: a key sent right after Escape would reach Helix as
// Alt+key.
func (s *helixSession) normal(step string, gone ...string) {
	s.t.Helper()
	s.keys("Escape")
	s.await(step, 5*time.Second, func(screen string) bool {
		if !strings.Contains(statusLine(screen), " NOR ") {
			return false
		}
		for _, g := range gone {
			if strings.Contains(screen, g) {
				return false
			}
		}
		return true
	})
}

// statusLine is the line of the screen with the mode and the file name.
func statusLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " NOR ") || strings.Contains(l, " INS ") || strings.Contains(l, " SEL ") {
			return l
		}
	}
	return ""
}

// row is the screen line showing text in the buffer ("" when none does).
func row(screen, text string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// diagnosticAfter reports whether the row showing code also shows the
// rule's message after it, as end-of-line diagnostics render it.
func diagnosticAfter(screen, code string) bool {
	l := row(screen, code)
	i := strings.Index(l, code)
	return i >= 0 && strings.Contains(l[i+len(code):], helixRuleTitle)
}

// awaitServer waits until kodyls is running and initialized: Helix lists
// the server's commands in the :lsp-workspace-command picker only then.
func (s *helixSession) awaitServer() {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.keys(":lsp-workspace-command", "Enter")
		screen, ok := s.poll(time.Second, func(screen string) bool { return strings.Contains(screen, "kodyls.ruleViolations") })
		if ok {
			s.save("kodyls commands in the picker", screen)
			break
		}
		if time.Now().After(deadline) {
			s.save("kodyls commands in the picker", screen)
			s.t.Fatalf("kodyls's commands never listed by :lsp-workspace-command; the screen:\n%s", screen)
		}
		s.normal("no picker yet", "kodyls.ruleViolations")
	}
	s.normal("picker closed", "kodyls.ruleViolations")
}

// TestHelixEndToEnd runs the README's Helix snippet in Helix: kodyls starts
// (gopls, also listed, is missing), a typed line that breaks the Kody Rule
// shows the rule on its row, the code-action menu lists kodyls's actions,
// deleting the line clears it; the committed violation stays unreported
// (the snippet's rules.scope "changed"). It logs keystroke → diagnostic on
// screen latencies for the README's performance table.
func TestHelixEndToEnd(t *testing.T) {
	hx, tmux := helixBinary(t)
	snippet := helixSnippet(t)
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile(helixRuleTitle, printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"main.go":                   helixGo,
	})
	s := startHelix(t, hx, tmux, snippet, repo)
	s.awaitServer()

	// Type a violating line below `fmt.Print("hi")`, as a user would.
	const typed = `fmt.Println("typed in helix")`
	s.keys(":6", "Enter")
	s.await("on line 6", 5*time.Second, func(screen string) bool { return strings.Contains(statusLine(screen), " 6:") })
	s.keys("o")
	s.await("insert mode", 5*time.Second, func(screen string) bool { return strings.Contains(statusLine(screen), " INS ") })
	s.typeText(typed)
	screen := s.await("the rule on the typed line's row", 10*time.Second, func(screen string) bool { return diagnosticAfter(screen, typed) })
	// The server has checked this version of the whole buffer: the committed
	// violation is not reported, as the snippet's rules.scope "changed" says.
	if diagnosticAfter(screen, helixCommitted) {
		t.Errorf("the committed violation is reported with rules.scope \"changed\":\n%s", screen)
	}

	// The code-action menu on the line lists kodyls's actions. A rule
	// violation of severity high is a warning: no "Fix this error" (errors
	// only), and no dismissals (review findings only).
	s.normal("normal mode on the typed line")
	s.keys("x", "Space", "a")
	screen = s.await("code actions listed", 10*time.Second, func(screen string) bool {
		return strings.Contains(screen, "Explain this error") && strings.Contains(screen, "Show Kody Rule: "+helixRuleTitle)
	})
	if strings.Contains(screen, "Fix this error") {
		t.Errorf("\"Fix this error\" offered for a warning:\n%s", screen)
	}
	// "Explain this error": Helix drops a command's result, so kodyls opens
	// the explanation as a Markdown document (window/showDocument).
	// Helix lists quick fixes first: it is the second of the two entries.
	s.keys("Down", "Enter")
	screen = s.await("the explanation opened", 20*time.Second, func(screen string) bool {
		return strings.Contains(screen, "### Root cause") && strings.Contains(screen, "source: offline")
	})
	if !strings.Contains(statusLine(screen), ".md") {
		t.Errorf("the explanation is not a Markdown document:\n%s", screen)
	}
	s.keys(":buffer-close", "Enter")
	s.await("back in main.go", 5*time.Second, func(screen string) bool { return strings.Contains(statusLine(screen), "main.go") })
	s.normal("normal mode in main.go")
	// Back on the typed line with a one-character selection, whatever
	// selection Helix restored.
	s.keys(":7", "Enter")
	s.await("on line 7", 5*time.Second, func(screen string) bool {
		return strings.Contains(statusLine(screen), " 7:") && strings.Contains(statusLine(screen), "1 sel")
	})

	// Delete the line (`;` first: `x` on a whole-line selection would take
	// the next line too): the diagnostic goes away.
	s.keys(`\;`, "x", "d") // `\;`: a lone ; separates tmux commands
	screen = s.await("the rule gone with the line", 10*time.Second, func(screen string) bool {
		return row(screen, typed) == "" && !strings.Contains(screen, helixRuleTitle)
	})
	if row(screen, helixCommitted) == "" {
		t.Fatalf("deleting the typed line deleted the committed one too:\n%s", screen)
	}

	// Keystroke → diagnostic on screen: the `(` that completes the match is
	// sent, and the screen polled (capture-pane, a few ms a read) until the
	// rule shows on the row. Reported, not asserted.
	var samples []time.Duration
	for i := range 5 {
		// The detector matches "fmt.Println(": all but the `(` first.
		prefix := fmt.Sprintf("/*%d*/ fmt.Println", i)
		s.keys(":6", "Enter", "o")
		s.await(fmt.Sprintf("sample %d: insert mode", i), 5*time.Second, func(screen string) bool { return strings.Contains(statusLine(screen), " INS ") })
		s.typeText(prefix)
		s.await(fmt.Sprintf("sample %d: typed", i), 5*time.Second, func(screen string) bool { return row(screen, prefix) != "" })
		start := time.Now()
		s.typeText("(")
		s.await(fmt.Sprintf("sample %d: diagnostic", i), 10*time.Second, func(screen string) bool { return diagnosticAfter(screen, prefix+"(") })
		samples = append(samples, time.Since(start))
		s.normal(fmt.Sprintf("sample %d: normal mode", i))
		s.keys(`\;`, "x", "d") // `\;`: a lone ; separates tmux commands
		s.await(fmt.Sprintf("sample %d: cleared", i), 10*time.Second, func(screen string) bool {
			return row(screen, prefix) == "" && row(screen, helixCommitted) != "" && !strings.Contains(screen, helixRuleTitle)
		})
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	t.Logf("Helix: keystroke → diagnostic on screen, 5 samples: %v (min %v, median %v, max %v)", samples, sorted[0], sorted[2], sorted[4])
}

// TestHelixSnippetConfigReachesServer: the snippet's `config` is what Helix
// sends kodyls as initializationOptions. Its values are kodyls's defaults,
// so the same snippet with rules.scope set to "file" is run: the committed
// violation, unreported with "changed", shows on its row as soon as the
// file opens.
func TestHelixSnippetConfigReachesServer(t *testing.T) {
	hx, tmux := helixBinary(t)
	snippet := helixSnippet(t)
	const changed, file = `scope = "changed"`, `scope = "file"`
	if !strings.Contains(snippet, changed) {
		t.Fatalf("the README's Helix snippet no longer sets %s; update this test:\n%s", changed, snippet)
	}
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile(helixRuleTitle, printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"main.go":                   helixGo,
	})
	s := startHelix(t, hx, tmux, strings.Replace(snippet, changed, file, 1), repo)
	s.await("the committed violation on its row", 20*time.Second, func(screen string) bool { return diagnosticAfter(screen, helixCommitted) })
}
