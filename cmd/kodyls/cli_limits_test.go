package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestExplainReadsALongOutputToTheEnd: an error printed after 9 MiB of
// other output is found, the tool writing the output is not cut off (no
// broken pipe), and stderr says what was left out.
func TestExplainReadsALongOutputToTheEnd(t *testing.T) {
	repo := brokenGoRepo(t)
	line := "ok  \texample.com/broken/pkg\t0.012s\n"
	output := strings.Repeat(line, 9<<20/len(line)+1) + buildOutput(t, repo)
	cmd := exec.Command(lsptest.BuildBinary(t), "explain", "--offline", "--json")
	cmd.Env, cmd.Dir = testEnv(t), repo.Dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := stdin.Write([]byte(output))
		stdin.Close()
		wrote <- err
	}()
	_ = cmd.Wait()
	if err := <-wrote; err != nil {
		t.Errorf("the writer was cut off: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d; the error at the end was not found\n%s", code, errb.String())
	}
	rep, _ := explainPrimary(t, out.String())
	if e := rep.Errors[rep.Primary]; e.File != "./main.go" || e.Line != 4 {
		t.Errorf("primary error %+v", e)
	}
	if !strings.Contains(errb.String(), "kodyls explain: the output is longer than 8 MiB: its first and last 4 MiB are kept") {
		t.Errorf("stderr does not say the output was cut:\n%s", errb.String())
	}
}

// TestFixApplyWritesNothingWhenAFileCannotBeWritten: --apply of a fix
// that edits two files, one of which cannot be written (its temporary
// file's name is taken by a directory, which stops root too), writes
// neither, says so and exits 3.
func TestFixApplyWritesNothingWhenAFileCannotBeWritten(t *testing.T) {
	repo := typeErrorRepo(t)
	repo.Write(map[string]string{"sub/b.go": "package sub // old\n"})
	output, _ := goBuild(t, repo.Dir)
	if err := os.Mkdir(filepath.Join(repo.Dir, "sub", "b.go.kodyls-fix.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{
		{"file": "main.go", "oldText": "\treturn 42\n", "newText": "\treturn \"42\"\n"},
		{"file": "sub/b.go", "oldText": "// old", "newText": "// new"},
	}})
	plan := `{"steps":[{"id":"edit","description":"fix both","tool":"propose_edits","input":` + string(edits) + `,"dependsOn":[]}]}`
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply")
	if code != 3 || !strings.Contains(errOut, "kodyls fix: nothing written: write sub/b.go") {
		t.Errorf("exit %d, want 3 and nothing written\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
		t.Errorf("main.go was written although the fix was not:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "main.go.kodyls-fix.tmp")); !os.IsNotExist(err) {
		t.Errorf("a temporary file was left: %v", err)
	}
}

// TestRulesTestOutsideARepositorySaysWhy: `rules test` without FILEs
// outside a git repository says that, not a --base it does not have.
func TestRulesTestOutsideARepositorySaysWhy(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".kody", "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	rule := lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`)
	if err := os.WriteFile(filepath.Join(dir, ".kody", "rules", "no-println.md"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runBin(t, testEnv(t), dir, "rules", "test", printlnRule)
	if code != 2 || !strings.Contains(errOut, "is not inside a git repository; give the FILEs to test") || strings.Contains(errOut, "--base") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestDoctorTellsAnUnservedModelOnce: a model the endpoint neither lists
// nor answers for is one problem, with the endpoint's own words.
func TestDoctorTellsAnUnservedModelOnce(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.SetModels("real-model")
	fake.RequireKnownModel(true)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=gpt-9")
	out, _, code := runBin(t, env, t.TempDir(), "doctor")
	if code != 1 || strings.Count(out, `model "gpt-9" is not served`) != 1 || !strings.Contains(out, "1 problem(s)") || !strings.Contains(out, "(404: ") {
		t.Errorf("exit %d, want 1 and the model told once:\n%s", code, out)
	}
}

// TestEvalWithTheEndpointDown: an endpoint that never answers (the
// connection refused) measures nothing: exit 2, why on stderr, no table.
func TestEvalWithTheEndpointDown(t *testing.T) {
	fake := llmtest.NewServer()
	url := fake.URL
	fake.Close() // nothing listens there now
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+url, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, t.TempDir(), "eval", "rca", "--strategy", "react")
	if code != 2 || !strings.Contains(errOut, "kodyls eval rca: LLM endpoint "+url+" never answered (connection refused)") {
		t.Errorf("exit %d, want 2 and why\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "pass rate") {
		t.Errorf("a table of cases the endpoint never answered:\n%s", out)
	}
}

// TestEvalCountsOnlyCallsThatReachedTheEndpoint: once the endpoint fails
// and the circuit breaker opens, the calls it refuses without a request
// are no model calls of their cases.
func TestEvalCountsOnlyCallsThatReachedTheEndpoint(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	final := served(llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"the variable is declared and not used","fixGuidelines":["remove it or use it"],"confidence":0.7}`}))
	fake.On(llmtest.Any(), final, llmtest.ServerError())
	out, errOut, code := runBin(t, fakeEnv(t, fake), t.TempDir(), "eval", "rca", "--strategy", "react", "--json")
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Strategies) != 1 {
		t.Fatalf("exit %d, json %v\n%s\n%s", code, err, out, errOut)
	}
	refused := 0
	for _, c := range rep.Strategies[0].Cases {
		if strings.Contains(c.Reason, "llm endpoint unavailable") {
			refused++
			if c.ModelCalls != 0 {
				t.Errorf("%s: %d model calls, but the breaker refused them without a request: %s", c.Name, c.ModelCalls, c.Reason)
			}
		}
	}
	if refused == 0 {
		t.Fatalf("no case met the open breaker:\n%s", out)
	}
}

// TestGlobalFlagsAfterTheCommand: --log-file and --log-level may follow
// the command, as its own flags do.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	repo := brokenGoRepo(t)
	logPath := filepath.Join(t.TempDir(), "kodyls.log")
	out, errOut, code := runBinStdin(t, testEnv(t), repo.Dir, buildOutput(t, repo), "explain", "--offline", "--log-file", logPath, "--log-level=debug")
	if code != 0 || !strings.Contains(out, "declared and not used") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Errorf("no log file: %v", err)
	}
	if _, errOut, code := runBin(t, testEnv(t), t.TempDir(), "version", "--log-level"); code != 2 || !strings.Contains(errOut, "flag needs an argument: -log-level") {
		t.Errorf("--log-level without a level: exit %d, stderr %q", code, errOut)
	}
	cmd, raw, stderr := startRaw(t, repo.Dir, "serve", "--log-file", logPath, "--log-level", "debug")
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + repo.Dir, "capabilities": map[string]any{}})
	raw.Response("1")
	raw.Request(2, "shutdown", nil)
	raw.Response("2")
	raw.Notify("exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve --log-file: %v\n%s", err, stderr)
	}
	if data, _ := os.ReadFile(logPath); !strings.Contains(string(data), "msg=initialize") || stderr.Len() != 0 {
		t.Errorf("the server did not log to the file:\n%s\nstderr:\n%s", data, stderr)
	}
	// fix's usage line names every flag.
	help, _, _ := runBin(t, testEnv(t), t.TempDir(), "fix", "-h")
	if !strings.Contains(help, "[--rounds N] [--timeout D]") {
		t.Errorf("fix -h:\n%s", help)
	}
}

// TestKeepEnds: an output up to twice the half is kept whole; a longer
// one keeps whole lines of its start and its end around a line that says
// how much was left out.
func TestKeepEnds(t *testing.T) {
	for _, in := range []string{"", "a\n", "0123456789", "0123456789\nabcdefgh\n"} {
		got, omitted, err := keepEnds(strings.NewReader(in), 10)
		if err != nil || string(got) != in || omitted != 0 {
			t.Errorf("%q: got %q, omitted %d, %v", in, got, omitted, err)
		}
	}
	in := "line1\nline2\nmiddle1\nmiddle2\nmiddle3\nline8\nerror: the end\n"
	got, omitted, err := keepEnds(strings.NewReader(in), 16)
	want := "line1\nline2\n[kodyls: 30 bytes of output left out here]\nerror: the end\n"
	if err != nil || string(got) != want || omitted != 30 {
		t.Errorf("got %q, omitted %d, %v; want %q", got, omitted, err, want)
	}
	if kept := len("line1\nline2\n") + len("error: the end\n"); int(omitted)+kept != len(in) {
		t.Errorf("omitted %d + kept %d != %d", omitted, kept, len(in))
	}
	// Lines that end or start at the cut are kept.
	got, omitted, _ = keepEnds(strings.NewReader("0123456789\nabcdefghi\n"), 10)
	if want := "0123456789\n[kodyls: 1 byte of output left out here]\nabcdefghi\n"; string(got) != want || omitted != 1 {
		t.Errorf("got %q, omitted %d; want %q", got, omitted, want)
	}
}
