package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const printlnRule = "11111111-2222-4333-8444-555555555555"

const mainGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Print(\"hi\")\n}\n"

func fixtureRepo(t testing.TB) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"main.go":                   mainGo,
	})
}

// testEnv is a clean environment: no LLM, a private data dir.
func testEnv(t testing.TB) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"KODYLS_DATA_DIR=" + filepath.Join(t.TempDir(), "data"),
	}
}

func runBin(t *testing.T, env []string, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestVersionCommand(t *testing.T) {
	out, _, code := runBin(t, testEnv(t), t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "kodyls ") {
		t.Fatalf("version: code %d out %q", code, out)
	}
}

func TestUnknownCommandFailsClearly(t *testing.T) {
	_, errOut, code := runBin(t, testEnv(t), t.TempDir(), "reviw")
	if code != 2 || !strings.Contains(errOut, `unknown command "reviw"`) {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

func TestDoctor(t *testing.T) {
	repo := fixtureRepo(t)
	// A rule without a detector needs a model: with none configured the
	// doctor lists it as not checked, which is no problem.
	repo.Write(map[string]string{".kody/rules/validate-input.md": "---\ntitle: Handlers validate their input\nseverity: high\n---\nEvery handler validates its decoded input before using it.\n"})
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor on a healthy workspace: code %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"workspace", repo.Dir, "git version", "from KODYLS_DATA_DIR", "schema v", "2 loaded", "No fmt.Println", "not configured", "no problems found"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	for title, want := range map[string]string{
		"Handlers validate their input": "not checked offline: no detector, no model configured",
		"No fmt.Println":                "regex detector",
	} {
		if line := lineWith(out, title); !strings.Contains(line, want) {
			t.Errorf("doctor's line of rule %q lacks %q: %q", title, want, line)
		}
	}

	repo.Write(map[string]string{".kody/rules/bad.md": "---\ntitle: Bad\nseverity: urgent\n---\n"})
	env = append(env, "KODYLS_LLM_BASE_URL=localhost:11434")
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 {
		t.Fatalf("doctor with a broken rule and a bad URL: code %d, want 1\n%s", code, out)
	}
	for _, want := range []string{".kody/rules/bad.md:3", "urgent", "llm.baseUrl", "2 problem(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// lineWith returns the first line of out that contains s, or "".
func lineWith(out, s string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

func TestDoctorWithLLMConfigured(t *testing.T) {
	repo := fixtureRepo(t)
	env := append(testEnv(t), "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "OPENAI_API_KEY=sk-test-secretsecretsecret", "KODYLS_LLM_MODEL=m1")
	out, _, _ := runBin(t, env, repo.Dir, "doctor")
	if !strings.Contains(out, "http://127.0.0.1:9/v1 model m1") || strings.Contains(out, "secretsecret") {
		t.Fatalf("doctor must show the endpoint and never the key:\n%s", out)
	}
}

// TestServeOverStdio drives the real binary: the first vertical slice end
// to end, then the exit code after shutdown.
func TestServeOverStdio(t *testing.T) {
	repo := fixtureRepo(t)
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, testEnv(t))
	res := s.Initialize(lsptest.InitOptions{})
	if res.ServerInfo.Name != "kodyls" {
		t.Fatalf("serverInfo %+v", res.ServerInfo)
	}
	s.OpenFile("main.go")
	s.Insert("main.go", s.EndOfLine("main.go", `fmt.Print\(`), "\n\tfmt.Println(\"typed\")")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 6))
	s.Insert("main.go", protocol.Position{Line: 0, Character: 0}, "// header\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 7))
	s.EditBuffer("main.go", lsptest.Edit{Range: s.RegexpRange("main.go", `\tfmt.Println\("typed"\)\n`), Text: ""})
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	var v contract.RuleViolations
	if err := s.ExecuteCommand(contract.CommandRuleViolations, nil, &v); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	if code, err := s.Wait(2 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit code %d (%v), want 0", code, err)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	repo := fixtureRepo(t)
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, testEnv(t))
	s.Initialize(lsptest.InitOptions{})
	s.Notify(protocol.MethodExit, nil)
	if code, err := s.Wait(2 * time.Second); err != nil || code != 1 {
		t.Fatalf("exit code %d (%v), want 1", code, err)
	}
}

// TestBinaryMalformedFramesAndStdoutHygiene sends garbage over the real
// stdio; every byte on stdout must be a well-formed frame.
func TestBinaryMalformedFramesAndStdoutHygiene(t *testing.T) {
	repo := fixtureRepo(t)
	cmd, raw, stderr := startRaw(t, repo.Dir, "--log-level", "debug")
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	raw.Send(`{"jsonrpc":"2.0","id":2,"method":`)
	if m := raw.Response("null"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("parse error reply: %+v", m.Error)
	}
	raw.Request(3, "kodyls/nothing", nil)
	if m := raw.Response("3"); m.Error == nil || m.Error.Code != -32601 {
		t.Fatalf("unknown method reply: %+v", m.Error)
	}
	raw.Send(`{"jsonrpc":"2.0","id":4,"method":"textDocument/codeAction","params":{"textDocument":{"uri":5},"range":"x"}}`)
	if m := raw.Response("4"); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("wrong types reply: %+v", m.Error)
	}
	raw.Request(5, "shutdown", nil)
	raw.Response("5")
	raw.Notify("exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "rejected malformed JSON-RPC frame") {
		t.Errorf("the bad frame is not logged on stderr:\n%s", stderr.String())
	}
}

// TestBinaryBurstOfEdits sends 2,000 didChange notifications as fast as the
// pipe takes them; the final diagnostics must match the editor's text.
func TestBinaryBurstOfEdits(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/xy.md": lsptest.RuleFile("No XY", "xy", "high", "**/*.txt", `XY`),
	})
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, testEnv(t))
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("burst.txt", "")
	rng := rand.New(rand.NewSource(11))
	alphabet := []string{"X", "Y", "a", "é", "😀", "\n"}
	for i := 0; i < 2000; i++ {
		text := s.Text("burst.txt")
		runes := []rune(text)
		off := len(string(runes[:rng.Intn(len(runes)+1)]))
		s.Insert("burst.txt", lsptest.PositionUTF16(text, off), alphabet[rng.Intn(len(alphabet))])
	}
	final := s.Text("burst.txt")
	var want []string
	for _, loc := range regexp.MustCompile(`XY`).FindAllStringIndex(final, -1) {
		p := lsptest.PositionUTF16(final, loc[0])
		want = append(want, fmt.Sprintf("%d:%d", p.Line, p.Character))
	}
	s.AwaitDiagnostics("burst.txt", func(ds []protocol.Diagnostic) bool {
		if len(ds) != len(want) {
			return false
		}
		for i, d := range ds {
			if fmt.Sprintf("%d:%d", d.Range.Start.Line, d.Range.Start.Character) != want[i] {
				return false
			}
		}
		return true
	})
	s.Shutdown()
}

// TestServerAndCLIShareTheDataDir runs a server and doctor commands on the
// same data directory at once: neither may hang or fail on a lock.
func TestServerAndCLIShareTheDataDir(t *testing.T) {
	repo := fixtureRepo(t)
	env := testEnv(t)
	var wg sync.WaitGroup
	sessions := make([]*lsptest.Session, 2)
	for i := range sessions {
		sessions[i] = lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
		sessions[i].Initialize(lsptest.InitOptions{})
	}
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, code := runBin(t, env, repo.Dir, "doctor")
			if code != 0 {
				errs <- out + errOut
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("doctor beside running servers failed:\n%s", e)
	}
	for _, s := range sessions {
		s.Shutdown()
		if code, err := s.Wait(2 * time.Second); code != 0 || err != nil {
			t.Errorf("server exit %d %v", code, err)
		}
	}
	out, _, _ := runBin(t, env, repo.Dir, "doctor")
	if !strings.Contains(out, "1 workspaces seen") {
		t.Errorf("the servers did not record the workspace:\n%s", out)
	}
}

// TestLogFile: with --log-file the server logs there, and stdout carries
// only protocol frames (the raw reader fails on anything else).
func TestLogFile(t *testing.T) {
	repo := fixtureRepo(t)
	logPath := filepath.Join(t.TempDir(), "kodyls.log")
	cmd, raw, stderr := startRaw(t, repo.Dir, "--log-file", logPath, "--log-level", "debug", "serve")
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Notify("initialized", map[string]any{})
	raw.Request(2, "shutdown", nil)
	raw.Response("2")
	raw.Notify("exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "msg=initialize") || !strings.Contains(string(data), "loaded Kody Rules") {
		t.Errorf("log file lacks the session:\n%s", data)
	}
	if stderr.Len() != 0 {
		t.Errorf("with --log-file, stderr should stay empty; got:\n%s", stderr.String())
	}
}

func TestBadLogLevel(t *testing.T) {
	_, errOut, code := runBin(t, testEnv(t), t.TempDir(), "--log-level", "loud", "version")
	if code != 2 || !strings.Contains(errOut, "use debug, info, warn or error") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

// startRaw starts the binary with args and a raw protocol reader on its
// stdout; stderr is collected.
func startRaw(t *testing.T, dir string, args ...string) (*exec.Cmd, *lsptest.Raw, *bytes.Buffer) {
	t.Helper()
	return startRawEnv(t, dir, nil, args...)
}

// startRawEnv is startRaw with extra environment variables.
func startRawEnv(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *lsptest.Raw, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Env, cmd.Dir = append(testEnv(t), env...), dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
	})
	return cmd, lsptest.NewRaw(t, stdin, stdout), stderr
}

// readmeBlock is the first fenced block of language lang in the README
// section whose heading starts with heading: the snippet a user copies, so
// the editor tests run exactly what the README documents.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+heading)
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("README.md's %q section has no %s block", heading, lang)
	}
	return m[1]
}
