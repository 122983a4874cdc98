package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The Go program of the fix tests: greet returns an int where a string is
// declared, a type error `go build` reports at main.go:6.
const typeErrorGo = "package main\n\nimport \"fmt\"\n\nfunc greet() string {\n\treturn 42\n}\n\nfunc main() { fmt.Println(greet()) }\n"

func typeErrorRepo(t *testing.T) *lsptest.Repo {
	return lsptest.NewRepo(t, map[string]string{"go.mod": "module example.com/greet\n\ngo 1.22\n", "main.go": typeErrorGo})
}

// goBuild runs the real compiler in dir and returns its output and
// whether it passed.
func goBuild(t *testing.T, dir string) (string, bool) {
	t.Helper()
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// editPlan is a plan that reads the code and proposes one edit of main.go.
func editPlan(oldText, newText string) string {
	edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": "main.go", "oldText": oldText, "newText": newText}}})
	return `{"steps":[
 {"id":"read","description":"read greet","tool":"read_file","input":{"path":"main.go","line":6},"dependsOn":[]},
 {"id":"edit","description":"return a string","tool":"propose_edits","input":` + string(edits) + `,"dependsOn":["read"]}]}`
}

type fixJSON struct {
	Edits []struct {
		File, OldText, NewText string
	} `json:"edits"`
	Diff         string `json:"diff"`
	Verified     bool   `json:"verified"`
	Verification string `json:"verification"`
	Rounds       int    `json:"rounds"`
	Status       string `json:"status"`
	Plans        []struct {
		Version int    `json:"version"`
		Status  string `json:"status"`
		Steps   []struct {
			ID, Tool, Status, Result string
		} `json:"steps"`
	} `json:"plans"`
	Reflections []struct {
		Assessment string `json:"assessment"`
	} `json:"reflections"`
	Trail       []string `json:"trail"`
	BuildOutput string   `json:"buildOutput"`
	Note        string   `json:"note"`
	Applied     []string `json:"applied"`
}

// fakeEnv is testEnv with the fake endpoint, and Go's build cache of the
// machine: the private HOME would otherwise make every build compile the
// standard library from scratch.
func fakeEnv(t *testing.T, fake *llmtest.Server) []string {
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(out)))
	}
	return env
}

// TestFixGoTypeError: `kodyls fix --apply` on real `go build` output fixes
// the file and the build passes.
func TestFixGoTypeError(t *testing.T) {
	repo := typeErrorRepo(t)
	output, ok := goBuild(t, repo.Dir)
	if ok || !strings.Contains(output, "main.go:6") {
		t.Fatalf("the fixture must fail to build at main.go:6:\n%s", output)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	plan := fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn \"42\"\n")))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--build", "go build ./...")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Fixing go error at ./main.go:6", "plan v1 (completed)", "-\treturn 42", "+\treturn \"42\"", "Verification: passed: go build ./... succeeds with the edits (1 round(s))", "Applied to: main.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); !strings.Contains(string(data), "\treturn \"42\"\n") {
		t.Errorf("main.go was not fixed:\n%s", data)
	}
	if out, ok := goBuild(t, repo.Dir); !ok {
		t.Errorf("the build still fails after the fix:\n%s", out)
	}
	// The plan saw the code around the error; a passing build needs no
	// reflection from the model.
	if plan.Times() != 1 || reflect.Times() != 0 || !strings.Contains(fake.ChatRequests()[0].Chat.Text(), "return 42") {
		t.Errorf("plans %d reflections %d", plan.Times(), reflect.Times())
	}
}

// TestFixAdjustsAfterAFailedBuild: the first edit does not compile, the
// reflection sees the new build output and modifies the edit, and plan
// version 2 passes.
func TestFixAdjustsAfterAFailedBuild(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn strconv.Itoa(42)\n")))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"strconv is not imported; return a string literal instead","adjustments":[
		{"type":"MODIFY","stepId":"edit","input":{"edits":[{"file":"main.go","oldText":"\treturn 42\n","newText":"\treturn \"42\"\n"}]},"reason":"no new import needed"}]}`))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--json", "--verbose", "--build", "go build ./...")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got := strings.Join(res.Trail, " "); got != "plan execute reflect adjust execute reflect" {
		t.Errorf("trail %s", got)
	}
	if len(res.Plans) != 2 || res.Plans[0].Version != 1 || res.Plans[0].Status != "failed" || res.Plans[1].Version != 2 || res.Plans[1].Status != "completed" {
		t.Fatalf("plan versions %+v", res.Plans)
	}
	verify1 := res.Plans[0].Steps[len(res.Plans[0].Steps)-1]
	if verify1.Tool != "verify_build" || verify1.Status != "failed" || !strings.Contains(verify1.Result, "undefined: strconv") {
		t.Errorf("version 1's verification %+v", verify1)
	}
	if !res.Verified || res.Verification != "passed" || res.Rounds != 2 || res.Status != "completed" || len(res.Reflections) != 2 ||
		res.Reflections[0].Assessment != "needs_adjustment" || res.Reflections[1].Assessment != "complete" {
		t.Errorf("result %+v", res)
	}
	if len(res.Edits) != 1 || res.Edits[0].NewText != "\treturn \"42\"\n" || !strings.Contains(res.Diff, "+\treturn \"42\"") {
		t.Errorf("edits %+v diff %q", res.Edits, res.Diff)
	}
	// The reflection was shown the new build output.
	if reflect.Times() != 1 {
		t.Fatalf("reflections asked: %d", reflect.Times())
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), "undefined: strconv") {
			t.Error("the reflection did not see the failing build's output")
		}
	}
	// --verbose walked the same way, one line per event: the nodes, the
	// tool calls, and the plan versions with their states.
	var kinds []string
	for _, line := range strings.Split(errOut, "\n") {
		if rest, ok := strings.CutPrefix(line, "agent: "); ok {
			f := strings.Fields(strings.SplitN(rest, ":", 2)[0])
			kinds = append(kinds, strings.Join(f[:min(2, len(f))], " "))
		}
	}
	want := "plan node_started, plan plan_created, plan node_finished, " +
		"execute node_started, execute action, execute step_done, execute action, execute step_done, execute action, execute step_done, execute node_finished, " +
		"reflect node_started, reflect reflected, reflect node_finished, " +
		"adjust node_started, adjust adjusted, adjust node_finished, " +
		"execute node_started, execute action, execute step_done, execute action, execute step_done, execute node_finished, " +
		"reflect node_started, reflect reflected, reflect node_finished"
	if got := strings.Join(kinds, ", "); got != want {
		t.Errorf("events\n got %s\nwant %s\n%s", got, want, errOut)
	}
	assertInOrder(t, errOut,
		"agent: plan plan_created: plan v1 (approved)",
		"agent: execute action propose_edits",
		"agent: execute action verify_build",
		"agent: execute step_done verify_build: verify failed: ",
		"agent: reflect reflected: plan v1 (failed): needs_adjustment: strconv is not imported",
		"agent: adjust adjusted: MODIFY edit plan v2 (adjusted)",
		"agent: execute step_done verify_build: verify done",
		"agent: reflect reflected: plan v2 (completed): complete")
	assertOneLineEvents(t, errOut)
	// Without --apply nothing is written.
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
		t.Errorf("main.go changed without --apply:\n%s", data)
	}
}

// TestFixThatDidNotCompleteIsNotApplied: valid edits of a plan that
// failed are no fix. Without a build, a reflection that judges the plan
// failed leaves the file as it is (exit 3); with one, the model's
// "complete" does not stand against a build that still fails.
func TestFixThatDidNotCompleteIsNotApplied(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	run := func(plan, reflection string, args ...string) fixJSON {
		t.Helper()
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(reflection))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, append([]string{"fix", "--apply", "--json"}, args...)...)
		if code != 3 {
			t.Fatalf("%v: code %d, want 3 (no fix)\n%s\n%s", args, code, out, errOut)
		}
		var res fixJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		if len(res.Applied) != 0 || res.Status != "failed" {
			t.Errorf("%v: status %s, applied %v; want failed, nothing applied", args, res.Status, res.Applied)
		}
		if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
			t.Fatalf("%v: main.go was written:\n%s", args, data)
		}
		return res
	}
	// No build: the edit is valid, a later step fails, and the reflection
	// gives up.
	plan := strings.TrimSuffix(editPlan("\treturn 42\n", "\treturn \"42\"\n"), "]}") +
		`,{"id":"check","description":"read the caller","tool":"read_file","input":{"path":"cmd/missing.go"},"dependsOn":["edit"]}]}`
	run(plan, `{"assessment":"failed","reasoning":"the caller cannot be read","adjustments":[]}`)

	// A build that still fails with the edit, and a reflection that calls
	// the fix complete anyway.
	res := run(editPlan("\treturn 42\n", "\treturn 42.5\n"), `{"assessment":"complete","reasoning":"the return type is right now","adjustments":[]}`,
		"--build", "go build ./...")
	if res.Verified || res.Verification != "failed" || len(res.Plans) == 0 || res.Plans[len(res.Plans)-1].Status != "failed" {
		t.Errorf("with a failing build: %+v", res)
	}
}

// TestFixRejectsHostileEdits: edits outside the workspace, to a secret, or
// of text that is not there are rejected with their reasons; steps that
// would run other commands never run; nothing is written and the build is
// never started.
func TestFixRejectsHostileEdits(t *testing.T) {
	repo := typeErrorRepo(t)
	repo.Write(map[string]string{".env": "TOKEN=secret\n"})
	// A link to .env is .env.
	if err := os.Symlink(".env", filepath.Join(repo.Dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	outsideDir := t.TempDir()
	outside := filepath.Join(outsideDir, "outside.go")
	if err := os.WriteFile(outside, []byte("package outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(repo.Dir, outside)
	output, _ := goBuild(t, repo.Dir)
	marker := filepath.Join(outsideDir, "PWNED")
	buildLog := filepath.Join(outsideDir, "builds.log")
	edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{
		{"file": rel, "oldText": "package outside", "newText": "package owned"},
		{"file": "/etc/passwd", "oldText": "root", "newText": "toor"},
		{"file": ".env", "oldText": "TOKEN=secret", "newText": "TOKEN=stolen"},
		{"file": "main.go", "oldText": "return 43", "newText": "return \"43\""},
		{"file": "notes.txt", "oldText": "TOKEN=secret", "newText": "TOKEN=stolen"},
	}})
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[
		{"id":"pwn","description":"run a command","tool":"run_command","input":{"command":"touch `+marker+`"},"dependsOn":[]},
		{"id":"edit","description":"edit","tool":"propose_edits","input":`+string(edits)+`,"dependsOn":[]}]}`))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"try a shell","adjustments":[
		{"type":"ADD_AFTER","stepId":"edit","step":{"id":"sh","description":"shell","tool":"shell","input":{"command":"touch `+marker+`"},"dependsOn":[]},"reason":"x"}]}`))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--json", "--build", "echo ran >> "+buildLog+" && go build ./...")
	if code != 3 {
		t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
	}
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var edit string
	for _, s := range res.Plans[0].Steps {
		if s.Tool == "run_command" {
			t.Errorf("a step with a tool that does not exist was kept: %+v", s)
		}
		if s.ID == "edit" {
			if s.Status != "failed" {
				t.Errorf("edit step %+v", s)
			}
			edit = s.Result
		}
	}
	for _, want := range []string{"edit 1: " + rel + " leaves the workspace", "edit 2: /etc/passwd is outside the workspace", "edit 3: .env is on the privacy ignore list", "edit 4: main.go: oldText is not in the file", "edit 5: notes.txt is on the privacy ignore list"} {
		if !strings.Contains(edit, want) {
			t.Errorf("the rejection lacks %q:\n%s", want, edit)
		}
	}
	if res.Verified || len(res.Edits) != 0 || len(res.Applied) != 0 || !strings.Contains(res.Note, "no valid edit") {
		t.Errorf("result %+v", res)
	}
	for _, f := range []string{marker, buildLog} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists: a command other than a verifying build of valid edits ran", f)
		}
	}
	if data, _ := os.ReadFile(outside); string(data) != "package outside\n" {
		t.Errorf("the file outside changed: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, ".env")); string(data) != "TOKEN=secret\n" {
		t.Errorf(".env changed: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
		t.Errorf("main.go changed: %q", data)
	}
	if st := repo.Git("status", "--porcelain"); strings.TrimSpace(st) != "?? .env\n?? notes.txt" {
		t.Errorf("the repository changed:\n%s", st)
	}
}

// TestFixUsageErrors: budgets that cannot hold and a workspace that does
// not exist are usage errors (exit 2), found before the model is asked.
func TestFixUsageErrors(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	for args, want := range map[string]string{
		"--max-time -1ns":            "--max-time -1ns: give a positive duration",
		"--max-time 0s":              "--max-time 0s: give a positive duration",
		"--rounds 0":                 "--rounds 0: give at least 1",
		"--timeout -5s":              "--timeout -5s: give a positive duration",
		"--workspace /nonexistent/x": "--workspace /nonexistent/x: not a directory",
	} {
		_, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, append([]string{"fix"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("fix %s: code %d, stderr %q; want 2 and %q", args, code, errOut, want)
		}
	}
	if n := len(fake.ChatRequests()); n != 0 {
		t.Errorf("usage errors called the model %d times", n)
	}
}

func TestFixNeedsAModel(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	_, errOut, code := runBinStdin(t, testEnv(t), repo.Dir, output, "fix", "--build", "go build ./...")
	if code != 2 || !strings.Contains(errOut, "Fix this error needs a model: no LLM endpoint is configured: set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

// TestFixWithAModelTheEndpointRefuses: a model the endpoint does not
// serve is a set-up error like a missing model (exit 2, said on stderr),
// not a fix that was not found.
func TestFixWithAModelTheEndpointRefuses(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.RequireKnownModel(true)
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{"ok": true}))
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=gpt-9")
	_, errOut, code := runBinStdin(t, env, repo.Dir, output, "fix", "--build", "go build ./...")
	if code != 2 || !strings.Contains(errOut, `model "gpt-9"`) || !strings.Contains(errOut, "KODYLS_LLM_MODEL") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

// tscPath finds TypeScript's compiler on PATH or in the prefix .ci/run
// installs it into. On CI it must be there.
func tscPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tsc"); err == nil {
		return p
	}
	home, _ := os.UserHomeDir()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "kodyls-ci", "typescript", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("tsc is not installed (npm install --prefix %s typescript@5; .ci/run does it)", filepath.Dir(filepath.Dir(filepath.Dir(p))))
	}
	t.Skip("tsc not installed: npm install --prefix ~/.cache/kodyls-ci/typescript typescript@5")
	return ""
}

// TestFixTypeScriptError: the same flow on the real TypeScript compiler.
func TestFixTypeScriptError(t *testing.T) {
	tsc := tscPath(t)
	const src = "export function total(prices: number[]): number {\n  let sum: number = \"0\";\n  for (const p of prices) sum += p;\n  return sum;\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{
		"tsconfig.json": `{"compilerOptions":{"strict":true,"noEmit":true,"target":"es2020"},"files":["index.ts"]}`,
		"index.ts":      src,
	})
	build := tsc + " -p . --pretty false"
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = repo.Dir
	outb, err := cmd.CombinedOutput()
	output := string(outb)
	if err == nil || !strings.Contains(output, "TS2322") {
		t.Fatalf("tsc must report TS2322:\n%s", output)
	}
	edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": "index.ts", "oldText": `let sum: number = "0";`, "newText": "let sum: number = 0;"}}})
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[{"id":"edit","description":"start the sum at the number 0","tool":"propose_edits","input":`+string(edits)+`,"dependsOn":[]}]}`))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`))
	out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--json", "--build", build)
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if !res.Verified || len(res.Applied) != 1 || res.Applied[0] != "index.ts" {
		t.Fatalf("result %+v", res)
	}
	// The fixed workspace compiles.
	cmd = exec.Command("sh", "-c", build)
	cmd.Dir = repo.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("tsc still fails after the fix:\n%s", out)
	}
}

// TestFixRefusesEditsToTheBuildDefinition: with `--build make`, the model
// edits the Makefile's recipe to run a command of its own. Verification
// would run that recipe before the user saw it, so the edit is refused:
// the build never runs, nothing is reported verified, nothing is written,
// and the output shows the refused change and why.
func TestFixRefusesEditsToTheBuildDefinition(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	const makefile = "build:\n\tgo build ./...\n"
	repo := lsptest.NewRepo(t, map[string]string{"go.mod": "module example.com/greet\n\ngo 1.22\n", "main.go": typeErrorGo, "Makefile": makefile})
	output, _ := goBuild(t, repo.Dir)
	marker := filepath.Join(t.TempDir(), "PWNED")
	edits := func(file, oldText, newText string) string {
		b, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": file, "oldText": oldText, "newText": newText}}})
		return string(b)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[
		{"id":"edit","description":"return a string","tool":"propose_edits","input":`+edits("main.go", "\treturn 42\n", "\treturn \"42\"\n")+`,"dependsOn":[]},
		{"id":"make","description":"build differently","tool":"propose_edits","input":`+edits("Makefile", "\tgo build ./...\n", "\ttouch "+marker+"\n")+`,"dependsOn":[]}]}`))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"insist","adjustments":[
		{"type":"RETRY","stepId":"make","reason":"again"}]}`))
	env := fakeEnv(t, fake)
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "fix", "--apply", "--build", "make")
	if code != 3 {
		t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the model's Makefile recipe ran:\n%s", out)
	}
	for _, want := range []string{
		"Refused, because they change what the build runs (never applied, never built):",
		"Makefile: it defines the build (make)",
		"+\ttouch " + marker,
		"Verification: not run: the fix edits Makefile, which defines the build",
		"Note: the fix needs a change to Makefile, which defines the build",
		"Nothing was written.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Verification: passed") {
		t.Errorf("a fix that edits the build's definition was reported verified:\n%s", out)
	}
	// Every round the model insisted, and every round it was refused.
	if reflect.Times() == 0 {
		t.Error("the refusal was not shown to the reflection")
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), "edits to a file that defines the build are refused") {
			t.Error("the reflection was not told why the Makefile edit failed")
		}
	}
	for name, want := range map[string]string{"Makefile": makefile, "main.go": typeErrorGo} {
		if data, _ := os.ReadFile(filepath.Join(repo.Dir, name)); string(data) != want {
			t.Errorf("%s changed:\n%s", name, data)
		}
	}

	// The JSON result carries the refused edit, and verified stays false.
	out, _, code = runBinStdin(t, env, repo.Dir, output, "fix", "--json", "--build", "make")
	var res struct {
		fixJSON
		Refused []struct {
			File, NewText, Reason string
		} `json:"refused"`
		RefusedDiff string `json:"refusedDiff"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 3 {
		t.Fatalf("code %d json %v\n%s", code, err, out)
	}
	if res.Verified || res.Verification != "notRun" || len(res.Refused) != 1 || res.Refused[0].File != "Makefile" ||
		!strings.Contains(res.Refused[0].NewText, "touch") || !strings.Contains(res.RefusedDiff, "+\ttouch") {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the model's Makefile recipe ran")
	}
}

// readPlan is a plan of n steps that each read main.go.
func readPlan(n int) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"id":"r%d","description":"read","tool":"read_file","input":{"path":"main.go","line":%d},"dependsOn":[]}`, i+1, i%9+1)
	}
	return `{"steps":[` + strings.Join(steps, ",") + `]}`
}

// stepLines counts the step_done lines of --verbose output.
func stepLines(errOut string) int {
	return strings.Count(errOut, " step_done ")
}

// TestFixBudgetsHoldUnderAHostilePlan: a 300-step plan is rejected for
// the basic plan; a plan within the step limit whose reflection retries
// every step for ever stops at the tool-call budget; a build that never
// ends stops at --max-time.
func TestFixBudgetsHoldUnderAHostilePlan(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)

	t.Run("300 steps", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(readPlan(300)))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"give up","adjustments":[]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--json", "--verbose", "--build", "go build ./...")
		var res fixJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 3 {
			t.Fatalf("code %d json %v\n%s\n%s", code, err, out, errOut)
		}
		if n := stepLines(errOut); n != 1 || len(res.Plans) != 1 || len(res.Plans[0].Steps) != 1 || res.Plans[0].Steps[0].ID != "read" {
			t.Fatalf("%d steps ran; plans %+v\n%s", n, res.Plans, errOut)
		}
		if !strings.Contains(errOut, "plan v1 (approved): fallback plan: the model's plan is unusable: the plan has 300 steps; at most 19 are allowed") {
			t.Errorf("the plan's reason does not say why it was replaced:\n%s", errOut)
		}
	})

	t.Run("tool-call budget", func(t *testing.T) {
		var retry []string
		for i := 1; i <= 19; i++ {
			retry = append(retry, fmt.Sprintf(`{"type":"RETRY","stepId":"r%d","reason":"again"}`, i))
		}
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(readPlan(19)))
		reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"read it all again","adjustments":[`+strings.Join(retry, ",")+`]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--json", "--verbose", "--rounds", "50", "--build", "go build ./...")
		var res fixJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 3 {
			t.Fatalf("code %d json %v\n%s\n%s", code, err, out, errOut)
		}
		if n := stepLines(errOut); n != 20 {
			t.Errorf("%d steps ran, want the budget of 20 tool calls", n)
		}
		if reflect.Times() != 1 || res.Status != "failed" || !strings.Contains(out, "the budget of 20 tool calls is spent") {
			t.Errorf("%d reflections; status %s\n%s", reflect.Times(), res.Status, out)
		}
	})

	t.Run("max time", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn \"42\"\n")))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--max-time", "1s", "--build", "sleep 600")
		if code != 3 {
			t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{"Note: the fix did not finish within its time limit (1s)", "Nothing was written."} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "Verification: passed") {
			t.Errorf("an unfinished fix was reported verified:\n%s", out)
		}
	})
}

// TestFixKeepsFilesOutsideTheWorkspaceOutOfPrompts: the model tries to
// make the verifying build print a file outside the workspace. An edit
// that includes it by path is rejected before any build, with the reason;
// when the build command itself adds the outside directory to the include
// path, the build runs but its diagnostics about that file never reach
// the model, which is told lines were withheld. The file's content is in
// no request the endpoint received.
func TestFixKeepsFilesOutsideTheWorkspaceOutOfPrompts(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed")
	}
	const marker = "MARKER_SECRET_7311"
	outsideDir := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(outsideDir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outsideDir, "secret.txt")
	if err := os.WriteFile(secret, []byte(marker+" is the password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const mainC = "int main(void) {\n\treturn undefined_total;\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{"main.c": mainC})
	cmd := exec.Command("gcc", "-fsyntax-only", "main.c")
	cmd.Dir = repo.Dir
	outb, _ := cmd.CombinedOutput()
	output := string(outb)
	if !strings.Contains(output, "main.c:2") {
		t.Fatalf("gcc must report main.c:2:\n%s", output)
	}
	leaked := func(t *testing.T, fake *llmtest.Server) {
		t.Helper()
		for _, r := range fake.Requests() {
			if strings.Contains(string(r.Body), marker) {
				t.Errorf("the outside file's content was sent to the model:\n%s", r.Body)
			}
		}
	}
	plan := func(include string) string {
		edits, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": "main.c", "oldText": "int main(void) {\n\treturn undefined_total;\n", "newText": "#include \"" + include + "\"\nint main(void) {\n\treturn 0;\n"}}})
		return `{"steps":[{"id":"edit","description":"define the total","tool":"propose_edits","input":` + string(edits) + `,"dependsOn":[]}]}`
	}

	t.Run("include by path", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan(secret)))
		reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"the include was refused","adjustments":[]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--json", "--build", "gcc -fsyntax-only *.c")
		if code != 3 {
			t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
		}
		var res fixJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		why := "main.c: the new text makes the code read " + secret + ", which is outside the workspace"
		if res.Verified || len(res.Applied) != 0 || !strings.Contains(res.Note, why) {
			t.Errorf("the result does not explain the refusal: %+v", res)
		}
		if reflect.Times() != 1 {
			t.Fatalf("reflections asked: %d", reflect.Times())
		}
		for _, r := range fake.ChatRequests() {
			if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), why) {
				t.Error("the reflection was not told why the edit was rejected")
			}
		}
		leaked(t, fake)
		if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.c")); string(data) != mainC {
			t.Errorf("main.c changed:\n%s", data)
		}
	})

	t.Run("include path from the build command", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan("secret.txt")))
		reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"the build fails","adjustments":[]}`))
		build := "gcc -fsyntax-only -I" + outsideDir + " *.c"
		// The user's own build with that include shows the file.
		check := exec.Command("sh", "-c", build)
		check.Dir = t.TempDir()
		if err := os.WriteFile(filepath.Join(check.Dir, "main.c"), []byte("#include \"secret.txt\"\nint main(void) {\n\treturn 0;\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := check.CombinedOutput(); !strings.Contains(string(b), marker) {
			t.Fatalf("the fixture's build must print the outside file:\n%s", b)
		}
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--json", "--build", build)
		if code != 3 {
			t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
		}
		var res fixJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		if res.Verified || res.Verification != "failed" || !strings.Contains(res.BuildOutput, "about files outside the workspace were withheld") {
			t.Errorf("result %+v", res)
		}
		if reflect.Times() != 1 {
			t.Fatalf("reflections asked: %d", reflect.Times())
		}
		for _, r := range fake.ChatRequests() {
			if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), "line(s) of the build output about files outside the workspace were withheld") {
				t.Errorf("the reflection was not told lines were withheld:\n%s", r.Chat.Text())
			}
		}
		leaked(t, fake)
	})
}

// TestFixEditsTheSourceTheBuildCommandNames: a build command that names
// the erroring source (`gcc -fsyntax-only main.c`) lets the fix edit it,
// verify it and apply it; a script the command runs (`sh build.sh`) is
// still refused.
func TestFixEditsTheSourceTheBuildCommandNames(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed")
	}
	const mainC = "int main(void) {\n\treturn undefined_total;\n}\n"
	const buildSh = "gcc -fsyntax-only main.c\n"
	repo := lsptest.NewRepo(t, map[string]string{"main.c": mainC, "build.sh": buildSh})
	cmd := exec.Command("gcc", "-fsyntax-only", "main.c")
	cmd.Dir = repo.Dir
	outb, _ := cmd.CombinedOutput()
	output := string(outb)
	edit := func(file, oldText, newText string) string {
		b, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": file, "oldText": oldText, "newText": newText}}})
		return string(b)
	}
	fixMain := `{"id":"edit","description":"return zero","tool":"propose_edits","input":` + edit("main.c", "\treturn undefined_total;\n", "\treturn 0;\n") + `,"dependsOn":[]}`

	t.Run("source on the command line", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[`+fixMain+`]}`))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--build", "gcc -fsyntax-only main.c")
		if code != 0 || !strings.Contains(out, "Verification: passed: gcc -fsyntax-only main.c succeeds") || !strings.Contains(out, "Applied to: main.c") {
			t.Fatalf("code %d\n%s\n%s", code, out, errOut)
		}
		cmd := exec.Command("gcc", "-fsyntax-only", "main.c")
		cmd.Dir = repo.Dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("gcc still fails after the fix:\n%s", b)
		}
		repo.Write(map[string]string{"main.c": mainC})
	})

	t.Run("script the command runs", func(t *testing.T) {
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[`+fixMain+`,
			{"id":"script","description":"build differently","tool":"propose_edits","input":`+edit("build.sh", "gcc -fsyntax-only main.c\n", "true\n")+`,"dependsOn":[]}]}`))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"the script edit was refused","adjustments":[]}`))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--apply", "--build", "sh build.sh")
		if code != 3 {
			t.Fatalf("code %d, want 3\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{"build.sh: the build command \"sh build.sh\" runs it with sh", "Verification: not run: the fix edits build.sh", "Nothing was written."} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		for name, want := range map[string]string{"main.c": mainC, "build.sh": buildSh} {
			if data, _ := os.ReadFile(filepath.Join(repo.Dir, name)); string(data) != want {
				t.Errorf("%s changed:\n%s", name, data)
			}
		}
	})
}
