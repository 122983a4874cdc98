package main

import (
	"bufio"
	"encoding/json"
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

// demoHeading is the README section of the demo with the fake endpoint.
const demoHeading = "### Try it without a model server\n"

// readmeBlocks returns the fenced blocks of language lang in the README
// section whose heading starts with heading, up to the next heading.
func readmeBlocks(t *testing.T, heading, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+heading)
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)(?:^|\n)(```"+lang+"\n(.*?)```|#{1,6} )").FindAllStringSubmatch(section, -1) {
		if !strings.HasPrefix(m[1], "```") {
			break // the next heading
		}
		blocks = append(blocks, m[2])
	}
	return blocks
}

// startFakeLLM starts the fakellm command as the README's first block of
// the demo does, on a free port instead of the default one, and returns
// its URL and its log.
func startFakeLLM(t *testing.T, readme string) (string, func() string) {
	t.Helper()
	line := strings.TrimSpace(readme)
	args, ok := strings.CutPrefix(line, "go run ./agents/llmtest/fakellm ")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("the README's demo no longer starts fakellm with one `go run ./agents/llmtest/fakellm ...`; update this test:\n%s", readme)
	}
	bin := filepath.Join(t.TempDir(), "fakellm")
	if out, err := exec.Command("go", "build", "-o", bin, "../../agents/llmtest/fakellm").CombinedOutput(); err != nil {
		t.Fatalf("go build fakellm: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append(strings.Fields(args), "-addr", "127.0.0.1:0")...)
	cmd.Dir = filepath.Join("..", "..") // the README runs it from the clone's root
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	urlc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		urlc <- strings.TrimSpace(line)
	}()
	logged := func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	select {
	case url := <-urlc:
		if url == "" {
			t.Fatalf("fakellm printed no URL:\n%s", logged())
		}
		return url, logged
	case <-time.After(30 * time.Second):
		t.Fatalf("fakellm printed no URL within 30s:\n%s", logged())
		return "", nil
	}
}

// TestReadmeDemoWithFakeLLM runs the README's demo as written: fakellm
// with example.json, then the shell block in a fresh directory with the
// built kodyls first on PATH. The doctor passes, the review shows the
// model's finding on the right line with no stage degraded, and the
// explanation comes from the model; then an editor's kodyls, started on the
// same module with the same endpoint, shows the finding when main.go is
// saved and explains the build error with the model. Every request is
// answered by a specific entry of example.json, not its default one.
func TestReadmeDemoWithFakeLLM(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	blocks := readmeBlocks(t, demoHeading, "sh")
	if len(blocks) != 2 {
		t.Fatalf("the README's demo has %d sh blocks, want 2 (start fakellm; run the demo); update this test", len(blocks))
	}
	url, fakeLog := startFakeLLM(t, blocks[0])

	const defaultURL = "http://127.0.0.1:8089/v1"
	if !strings.Contains(blocks[1], "KODYLS_LLM_BASE_URL="+defaultURL) {
		t.Fatalf("the README's demo no longer exports KODYLS_LLM_BASE_URL=%s, fakellm's default; update this test:\n%s", defaultURL, blocks[1])
	}
	script := filepath.Join(t.TempDir(), "demo.sh")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(blocks[1], defaultURL, url)), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir() // mktemp -d makes the demo's directory here
	env := append(testEnv(t),
		"PATH="+filepath.Dir(lsptest.BuildBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+tmp, "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=")
	for _, v := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("bash", "-e", script)
	cmd.Env, cmd.Dir = env, t.TempDir()
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("the README's demo failed (%v):\n%s\nfakellm:\n%s", err, out, fakeLog())
	}
	for _, want := range []string{
		"structured output: json_schema accepted", "no problems found", // kodyls doctor
		"main.go:7:2: high bug: Handle the error returned by os.Remove", "1 finding in 2 changed files", // kodyls review
		"go error at ./main.go:11:2: declared and not used: n", "Root cause (model, confidence 90%)", "tools used: read_file", // kodyls explain
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "degraded") || strings.Contains(out, "offline") {
		t.Errorf("the demo's output reports a degraded or offline step:\n%s", out)
	}

	// The editor, on the module the demo made, with its own store so that
	// its answers come from its own calls.
	dirs, err := filepath.Glob(filepath.Join(tmp, "*", "go.mod"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("the demo's module in %s: %v %v", tmp, dirs, err)
	}
	demo := filepath.Dir(dirs[0])
	editorEnv := append(testEnv(t), "KODYLS_LLM_BASE_URL="+url, "KODYLS_LLM_MODEL=fake-model")
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), demo, editorEnv)
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, _ := d.Source.Get(); src == "kody" && d.Range.Start.Line == 6 && strings.Contains(lsptest.Message(d), "os.Remove") {
				return true
			}
		}
		return false
	})
	var res contract.ExplainResult
	if err := s.ExecuteCommand(contract.CommandExplainError, contract.ExplainArgs{
		URI: s.URI("main.go"), Message: "declared and not used: n", Source: "compiler",
		Range: &protocol.Range{Start: protocol.Position{Line: 10, Character: 1}, End: protocol.Position{Line: 10, Character: 2}},
	}, &res); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res.RCA)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		RCA *struct {
			Source    string `json:"source"`
			RootCause string `json:"rootCause"`
		} `json:"rca"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.RCA == nil || doc.RCA.Source != "model" || !strings.Contains(doc.RCA.RootCause, "never used") {
		t.Errorf("the editor's explanation is not the model's (%v): %s", err, raw)
	}
	s.AwaitIdle("")
	for _, st := range s.Statuses() {
		if st.State == contract.StateDegraded || st.State == contract.StateOffline || st.State == contract.StateEndpointDown {
			t.Errorf("the editor's status went %s: %s", st.State, st.Message)
		}
	}

	if log := fakeLog(); strings.Contains(log, "script=default") || strings.Contains(log, "script=- status=400") {
		t.Errorf("example.json answered a request of the demo with its default entry or not at all; script the request kodyls made:\n%s", log)
	}
}
