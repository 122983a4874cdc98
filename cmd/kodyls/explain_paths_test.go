package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The tests of this file run the compilers and interpreters for real and
// check what reaches the model: the code of the file the output names,
// wherever the tool ran and however the workspace is reached.

const (
	rootMarker = "ROOT-FILE-MARKER-5b1c"
	svcMainGo  = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(undefinedThing)\n}\n"
)

// monoRepo is a repository whose root holds an unrelated main.go and
// whose svc/ is a Go module that does not build.
func monoRepo(t *testing.T) (*lsptest.Repo, string) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":     "package main\n\n// " + rootMarker + "\nfunc main() {}\n",
		"svc/go.mod":  "module example.com/svc\n\ngo 1.22\n",
		"svc/main.go": svcMainGo,
	})
	svc := filepath.Join(repo.Dir, "svc")
	out, ok := goBuild(t, svc)
	if ok || !strings.Contains(out, "./main.go:6:14: undefined: undefinedThing") {
		t.Fatalf("svc must fail to build at ./main.go:6:14:\n%s", out)
	}
	return repo, out
}

// finalAnswer is the model's answer in the explain tests.
var finalAnswer = llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"the name is not declared","fixGuidelines":["declare it"],"confidence":0.8}`})

// sent is every chat request's text, and the request bodies, joined.
func sent(fake *llmtest.Server) (string, string) {
	var text, bodies strings.Builder
	for _, r := range fake.ChatRequests() {
		if r.Chat != nil {
			text.WriteString(r.Chat.Text() + "\n")
		}
		bodies.Write(r.Body)
	}
	return text.String(), bodies.String()
}

func explainPrimary(t *testing.T, out string) (explainJSON, string) {
	t.Helper()
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.Primary < 0 || rep.Primary >= len(rep.Errors) {
		t.Fatalf("no primary error: %s", out)
	}
	return rep, rep.Errors[rep.Primary].File
}

// TestExplainFromASubdirectory: `go build ./... | kodyls explain` run in
// a module below the repository's root names files relative to that
// module; the model is shown the module's main.go, not the root's.
func TestExplainFromASubdirectory(t *testing.T) {
	repo, output := monoRepo(t)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.LastMessageRole("tool"), finalAnswer)
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"svc/main.go","line":6}`}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, filepath.Join(repo.Dir, "svc"), output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if _, file := explainPrimary(t, out); file != "svc/main.go" {
		t.Errorf("the error is placed in %q, want svc/main.go", file)
	}
	text, _ := sent(fake)
	if !strings.Contains(text, "Location: svc/main.go:6:14") || !strings.Contains(text, "svc/main.go, from line 1") || !strings.Contains(text, "fmt.Println(undefinedThing)") {
		t.Errorf("the model was not shown svc/main.go:\n%s", text)
	}
	if strings.Contains(text, rootMarker) {
		t.Errorf("the model was shown the root's main.go:\n%s", text)
	}
}

// TestFixFromASubdirectory: `kodyls fix --build` run in a module below
// the repository's root shows the model the module's file, and verifies
// the edit by running the build there, in the scratch copy.
func TestFixFromASubdirectory(t *testing.T) {
	repo, output := monoRepo(t)
	fake := llmtest.NewServer()
	defer fake.Close()
	edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": "svc/main.go", "oldText": "fmt.Println(undefinedThing)", "newText": `fmt.Println("thing")`}}})
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[
 {"id":"read","description":"read main","tool":"read_file","input":{"path":"svc/main.go","line":6},"dependsOn":[]},
 {"id":"edit","description":"print a string","tool":"propose_edits","input":`+string(edits)+`,"dependsOn":["read"]}]}`))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"the build should have passed","adjustments":[]}`))
	svc := filepath.Join(repo.Dir, "svc")
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), svc, output, "fix", "--apply", "--build", "go build ./...")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Fixing go error at svc/main.go:6", "Verification: passed: go build ./... succeeds with the edits (1 round(s))", "Applied to: svc/main.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(svc, "main.go")); !strings.Contains(string(data), `fmt.Println("thing")`) {
		t.Errorf("svc/main.go was not fixed:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); !strings.Contains(string(data), rootMarker) {
		t.Errorf("the root's main.go changed:\n%s", data)
	}
	text, _ := sent(fake)
	if !strings.Contains(text, "fmt.Println(undefinedThing)") || strings.Contains(text, rootMarker) {
		t.Errorf("the plan was not shown svc/main.go alone:\n%s", text)
	}
}

// pythonTraceback runs python3 on script from dir and returns the
// traceback it prints.
func pythonTraceback(t *testing.T, dir, script string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	cmd := exec.Command("python3", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Traceback") {
		t.Fatalf("python3 %s must fail with a traceback: %v\n%s", script, err, out)
	}
	return string(out)
}

const appPy = "import sys\n\n# %s\ndef main():\n    raise ValueError('boom')\n\nmain()\n"

// TestExplainThroughASymlinkedWorkspace: a traceback naming the workspace
// through a link to it is placed in the workspace; the model gets the
// code, and once the code changes the stored answer is not reused.
func TestExplainThroughASymlinkedWorkspace(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link3")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	write := func(marker string) {
		if err := os.WriteFile(filepath.Join(ws, "app.py"), []byte(strings.Replace(appPy, "%s", marker, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("APP-MARKER-ONE")
	output := pythonTraceback(t, link, filepath.Join(link, "app.py"))
	if !strings.Contains(output, filepath.Join(link, "app.py")) {
		t.Fatalf("the traceback does not name the link:\n%s", output)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), finalAnswer)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, link, output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if _, file := explainPrimary(t, out); file != "app.py" {
		t.Errorf("the error is placed in %q, want app.py", file)
	}
	if text, _ := sent(fake); !strings.Contains(text, "APP-MARKER-ONE") {
		t.Errorf("the model was not shown app.py:\n%s", text)
	}

	write("APP-MARKER-TWO")
	calls := fake.CountChat()
	out, errOut, code = runBinStdin(t, env, link, output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	rep, _ := explainPrimary(t, out)
	if fake.CountChat() == calls || rep.RCA.Source != "model" {
		t.Fatalf("the changed code was answered from history: %+v %q", rep.RCA, rep.Note)
	}
	if text, _ := sent(fake); !strings.Contains(text, "APP-MARKER-TWO") {
		t.Errorf("the model was not shown the changed app.py:\n%s", text)
	}
}

// TestExplainNeverReusesAnAnswerForCodeItCannotRead: an error in a file
// outside the workspace is explained by the model each time: whether that
// code changed cannot be told.
func TestExplainNeverReusesAnAnswerForCodeItCannotRead(t *testing.T) {
	ws, other := t.TempDir(), t.TempDir()
	script := filepath.Join(other, "tool.py")
	if err := os.WriteFile(script, []byte(strings.Replace(appPy, "%s", "OUTSIDE", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	output := pythonTraceback(t, ws, script)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), finalAnswer)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	for i := range 2 {
		calls := fake.CountChat()
		out, errOut, code := runBinStdin(t, env, ws, output, "explain", "--json")
		if code != 0 {
			t.Fatalf("code %d\n%s%s", code, out, errOut)
		}
		rep, _ := explainPrimary(t, out)
		if fake.CountChat() == calls || rep.RCA.Source != "model" {
			t.Fatalf("explanation %d did not ask the model: %+v %q", i+1, rep.RCA, rep.Note)
		}
	}
	if text, _ := sent(fake); strings.Contains(text, "OUTSIDE") {
		t.Errorf("the file outside the workspace reached the model:\n%s", text)
	}
}

// TestExplainFollowsALinkThatStaysInside: a file that links with an
// absolute target to another file of the workspace is read, for the code
// around the error and for read_file.
func TestExplainFollowsALinkThatStaysInside(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const marker = "UTIL-MARKER-77"
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "util.c"), []byte("int f(void) {\n\treturn undeclared_thing;\n}\n/* "+marker+" */\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "src", "util.c"), filepath.Join(ws, "util.c")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", "-c", "-o", os.DevNull, "util.c")
	cmd.Dir = ws
	output, _ := cmd.CombinedOutput()
	if !strings.Contains(string(output), "util.c:2:") {
		t.Fatalf("gcc must fail at util.c:2:\n%s", output)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.LastMessageRole("tool"), finalAnswer)
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"util.c"}`}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, ws, string(output), "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	reqs := fake.ChatRequests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if first := reqs[0].Chat.Text(); !strings.Contains(first, marker) {
		t.Errorf("the code around the error was not shown:\n%s", first)
	}
	if tool := reqs[len(reqs)-1].Chat.LastMessage(); tool.Role != "tool" || !strings.Contains(tool.Content, marker) {
		t.Errorf("read_file did not read util.c: %+v", tool)
	}
	if text, _ := sent(fake); strings.Contains(text, "outside the workspace") {
		t.Errorf("the link was called a way out of the workspace:\n%s", text)
	}
}

// TestExplainLeavesABinaryFileOut: a source file that is binary past its
// first lines is not put into the prompt; only its name is.
func TestExplainLeavesABinaryFileOut(t *testing.T) {
	const marker = "BINARY-MARKER-31"
	blob := "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00" + strings.Repeat("\x00\x01\x02\x03\xfe\xff", 300) + marker + "\x00\n"
	repo := lsptest.NewRepo(t, map[string]string{
		"go.mod": "module example.com/bin\n\ngo 1.22\n",
		"bin.go": "package main\n\nfunc main() {}\n" + blob,
	})
	output, ok := goBuild(t, repo.Dir)
	if ok || !strings.Contains(output, "./bin.go:4:1: invalid character U+007F") {
		t.Fatalf("go build must fail at bin.go:4:1:\n%s", output)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), finalAnswer)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "explain", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	text, bodies := sent(fake)
	if strings.Contains(bodies, marker) || strings.Contains(bodies, "ELF") {
		t.Errorf("the binary file reached the model:\n%s", text)
	}
	if !strings.Contains(text, "## Code around the error\nNot available") {
		t.Errorf("the prompt does not say the code is not available:\n%s", text)
	}
}
