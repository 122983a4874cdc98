package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The agent strategies through the real binary: `kodyls explain --strategy`
// with the fake endpoint scripted for each strategy's calls, `--verbose`
// showing the steps on stderr, and `kodyls eval rca --strategy` comparing
// them.

const strategyAnswer = `{"rootCause":"unused is assigned on main.go:4 but never read","fixGuidelines":["Remove the variable or use it."],"confidence":0.85,"evidence":["E1"]}`

// onlyFinal matches the answer turn of the planning strategies, which
// offers final_answer alone.
var onlyFinal = llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("read_file")))

func TestExplainUnknownStrategy(t *testing.T) {
	_, errOut, code := runBinStdin(t, testEnv(t), t.TempDir(), "x.go:1:1: boom\n", "explain", "--strategy", "tree-of-thought")
	if code != 2 || !strings.Contains(errOut, `unknown strategy "tree-of-thought"`) || !strings.Contains(errOut, "plan-execute, react, rewoo, routed") {
		t.Fatalf("code %d stderr %q", code, errOut)
	}
}

func TestExplainWithPlanExecute(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	plan := fake.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "1", "description": "read the code around the error", "tool": "read_file", "args": map[string]any{"path": "main.go", "line": 4}},
		map[string]any{"id": "2", "description": "find other uses of the variable", "tool": "find_references", "args": map[string]any{"identifier": "unused"}},
	}}))
	answer := fake.On(onlyFinal, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: strategyAnswer}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--strategy", "plan-execute", "--verbose", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.RCA.Source != "model" || rep.RCA.Confidence != 0.85 || rep.RCA.Iterations != 4 ||
		strings.Join(rep.RCA.ToolsUsed, ",") != "read_file,find_references" {
		t.Fatalf("answer %+v", rep.RCA)
	}
	if plan.Times() != 1 || answer.Times() != 1 || fake.CountChat() != 2 {
		t.Fatalf("%d plan, %d answer, %d calls in all", plan.Times(), answer.Times(), fake.CountChat())
	}
	// The answer call saw what the steps found.
	last := fake.ChatRequests()[1].Chat.Text()
	if !strings.Contains(last, "unused := 42") || !strings.Contains(last, "main.go:4:") {
		t.Fatalf("answer request lacks the steps' results:\n%s", last)
	}
	// --verbose walks plan → steps → answer on stderr, one line per event
	// (nodes, tool calls, plan events), and stdout stays JSON.
	assertInOrder(t, errOut,
		"agent: plan node_started",
		"agent: plan plan_created: 1. read_file",
		"agent: plan node_finished: ",
		"agent: execute node_started",
		"agent: execute action read_file",
		"agent: execute step_done read_file: done",
		"agent: execute action find_references",
		"agent: execute step_done find_references: done",
		"agent: execute node_finished: ",
		"agent: answer node_started",
		"agent: answer done: unused is assigned",
		"agent: answer node_finished: ")
	assertOneLineEvents(t, errOut)
}

func TestExplainWithReWoo(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "E1", "tool": "read_file", "args": map[string]any{"path": "main.go", "line": 4}, "reason": "the code at the error"},
		map[string]any{"id": "E2", "tool": "find_references", "args": map[string]any{"identifier": "unused"}, "reason": "other uses"},
		map[string]any{"id": "E3", "tool": "list_files", "args": map[string]any{}, "reason": "the package's files"},
	}}))
	solve := fake.On(onlyFinal, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: strategyAnswer}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--strategy", "rewoo", "--verbose", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep explainJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.RCA.Source != "model" || rep.RCA.Iterations != 3 || len(rep.RCA.ToolsUsed) != 3 || solve.Times() != 1 || fake.CountChat() != 2 {
		t.Fatalf("answer %+v after %d calls", rep.RCA, fake.CountChat())
	}
	last := fake.ChatRequests()[1].Chat.Text()
	for _, want := range []string{"#E1: read_file", "unused := 42", "#E3: list_files", "go.mod"} {
		if !strings.Contains(last, want) {
			t.Errorf("solve request lacks %q", want)
		}
	}
	// --verbose walks plan → work → solve, citing E1. The order of these
	// lines says nothing about concurrency (a sequential run prints them
	// too); TestReWooToolCallsOverlap measures that.
	assertInOrder(t, errOut,
		"agent: plan plan_created: E1 = read_file",
		"agent: work action read_file",
		"agent: work step_done read_file: E1 done",
		"agent: work action find_references",
		"agent: work action list_files",
		"agent: work step_done list_files: E3 done",
		"agent: solve done: unused is assigned on main.go:4 but never read [E1]")
	assertOneLineEvents(t, errOut)
}

// TestReWooToolCallsOverlap measures, through the binary, that ReWoo's
// independent tool calls run at the same time: each reads a FIFO, whose
// read blocks until the test writes to it. The test holds the first
// FIFO's writing end open without writing and waits for the second to
// get a reader; a sequential run never opens the second while the first
// read is blocked.
func TestReWooToolCallsOverlap(t *testing.T) {
	repo := brokenGoRepo(t)
	fifos := []string{"slow1.txt", "slow2.txt"}
	for _, f := range fifos {
		if err := syscall.Mkfifo(filepath.Join(repo.Dir, f), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "E1", "tool": "read_file", "args": map[string]any{"path": fifos[0]}, "reason": "the first file"},
		map[string]any{"id": "E2", "tool": "read_file", "args": map[string]any{"path": fifos[1]}, "reason": "the second file"},
	}}))
	fake.On(onlyFinal, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: strategyAnswer}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	input := buildOutput(t, repo)
	cmd := exec.Command(lsptest.BuildBinary(t), "explain", "--strategy", "rewoo", "--verbose", "--json")
	cmd.Env, cmd.Dir, cmd.Stdin = env, repo.Dir, strings.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Open each FIFO's writing end as soon as a reader has it open (a
	// non-blocking open fails until then), and write nothing yet.
	writers := make([]*os.File, len(fifos))
	deadline := time.Now().Add(30 * time.Second)
	for open := 0; open < len(fifos); {
		for i, f := range fifos {
			if writers[i] != nil {
				continue
			}
			w, err := os.OpenFile(filepath.Join(repo.Dir, f), os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				writers[i] = w
				open++
			}
		}
		if open == len(fifos) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("kodyls exited (%v) before both reads were running at once\n%s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			for _, w := range writers {
				if w != nil {
					w.Close()
				}
			}
			<-done
			t.Fatalf("the second read never started while the first was blocked: the tool calls ran one at a time\n%s", errOut.String())
		}
	}
	// Both reads are in flight at once; let them finish.
	for i, w := range writers {
		fmt.Fprintf(w, "contents of file %d\n", i+1)
		w.Close()
	}
	if err := <-done; err != nil {
		t.Fatalf("kodyls: %v\n%s%s", err, out.String(), errOut.String())
	}
	var rep explainJSON
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.RCA.Source != "model" {
		t.Fatalf("json %v: %s", err, out.String())
	}
	// Both reads came back to the solve call (a FIFO cannot be read
	// around a line, so each reports that; what matters is that both ran).
	solve := fake.ChatRequests()[len(fake.ChatRequests())-1].Chat.Text()
	if !strings.Contains(solve, "#E1: read_file") || !strings.Contains(solve, "#E2: read_file") {
		t.Errorf("the solve request lacks the reads:\n%s", solve)
	}
}

// assertOneLineEvents checks that every line of --verbose output is one
// short event line, not a tool's output or a plan dumped over many lines.
func assertOneLineEvents(t *testing.T, errOut string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !strings.HasPrefix(line, "agent: ") || len(line) > 300 {
			t.Errorf("not a one-line event: %q", line)
		}
	}
}

func assertInOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}

func TestEvalCompareStrategies(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{}}))
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{}}))
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"the variable is declared and not used","fixGuidelines":["remove it or use it"],"confidence":0.7,"evidence":[]}`}))
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBin(t, env, t.TempDir(), "eval", "rca", "--strategy", "all", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		Strategies []struct {
			Name               string
			Passed, Total      int
			StepsPerCase       float64
			Tokens, ModelCalls int
			LatencyMsPerCase   float64
			AgentErrors        int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(rep.Strategies) != 4 {
		t.Fatalf("strategies %+v", rep.Strategies)
	}
	calls := map[string]int{}
	for _, s := range rep.Strategies {
		// The fake's one answer fits the Go case only.
		if s.Total < 8 || s.Passed != 1 || s.Tokens <= 0 || s.StepsPerCase < 1 || s.AgentErrors != 0 {
			t.Errorf("%s: %+v", s.Name, s)
		}
		calls[s.Name] = s.ModelCalls
	}
	// ReAct answers in one call a case; the planning strategies plan first.
	if calls["react"] >= calls["plan-execute"] || calls["react"] >= calls["rewoo"] {
		t.Errorf("model calls %v", calls)
	}
	// The fake answers confidently at once: the routed default stays on
	// the fast path and costs what ReAct costs.
	if calls["routed"] != calls["react"] {
		t.Errorf("routed escalated on a confident answer: model calls %v", calls)
	}
	text, _, code := runBin(t, env, t.TempDir(), "eval", "rca", "--strategy", "rewoo")
	if code != 0 || !strings.Contains(text, "== rewoo") || !strings.Contains(text, "latency/case") {
		t.Fatalf("text report (code %d):\n%s", code, text)
	}
	if _, errOut, code := runBin(t, env, t.TempDir(), "eval", "rca", "--strategy", "nope"); code != 2 || !strings.Contains(errOut, "plan-execute, react, rewoo, routed") {
		t.Fatalf("unknown strategy: %d %q", code, errOut)
	}
}

// The default strategy through the binary: a confident ReAct answer stands
// (one model call, path "react"); an unsure one escalates once to
// plan-execute, whose planner is told what the fast path found, and the
// answer says which path ran and why.
func TestExplainRoutedEscalatesOnlyWhenUnsure(t *testing.T) {
	reactTurn := llmtest.All(llmtest.HasTool("final_answer"), llmtest.HasTool("read_file"))
	for _, tc := range []struct {
		name, fastAnswer, wantPath string
		wantCalls                  int
	}{
		{"confident", `{"rootCause":"unused is never read","fixGuidelines":["Remove it."],"confidence":0.9}`, "react", 1},
		{"unsure", `{"rootCause":"something about a variable","fixGuidelines":["Look at it."],"confidence":0.2}`, "react → plan-execute (low confidence 0.20)", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			fake.On(reactTurn, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: tc.fastAnswer}))
			plan, rep, errOut := explainEscalated(t, fake)
			if rep.RCA.Path != tc.wantPath || fake.CountChat() != tc.wantCalls {
				t.Fatalf("path %q after %d model calls, want %q after %d\n%s", rep.RCA.Path, fake.CountChat(), tc.wantPath, tc.wantCalls, errOut)
			}
			if tc.name == "unsure" {
				if rep.RCA.Confidence != 0.85 || !strings.Contains(errOut, "escalated: low confidence 0.20") {
					t.Errorf("confidence %v\n%s", rep.RCA.Confidence, errOut)
				}
				if p := fake.ChatRequests()[1].Chat.Text(); plan.Times() != 1 || !strings.Contains(p, "something about a variable") {
					t.Errorf("the planner was not told what the fast path found:\n%s", p)
				}
			} else if plan.Times() != 0 || strings.Contains(errOut, "escalated") {
				t.Errorf("a confident answer escalated:\n%s", errOut)
			}
		})
	}
}

// The router's other triggers through the binary: a fast path that keeps
// reading past the step threshold, and one whose tool calls keep failing,
// each escalate once to plan-execute, and the answer says why.
func TestExplainRoutedEscalatesOnStepsAndFailures(t *testing.T) {
	reactTurn := llmtest.All(llmtest.HasTool("final_answer"), llmtest.HasTool("read_file"))
	read := func(path string, line int) llmtest.Reply {
		return llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q,"line":%d}`, path, line)})
	}
	confident := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is never read","fixGuidelines":["Remove it."],"confidence":0.9}`})
	var wandering, failing []llmtest.Reply
	for i := 1; i <= 20; i++ {
		// Each call differs, so no loop guard fires before the threshold.
		wandering = append(wandering, read("main.go", i))
	}
	for i := 1; i <= 3; i++ {
		failing = append(failing, read(fmt.Sprintf("missing%d.go", i), 1))
	}
	failing = append(failing, confident)
	for _, tc := range []struct {
		name     string
		fast     []llmtest.Reply
		wantPath string
	}{
		{"past the step threshold", wandering, "react → plan-execute (ran past 6 steps)"},
		{"repeated failed tool calls", failing, "react → plan-execute (3 failed tool calls)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			fast := fake.On(reactTurn, tc.fast...)
			plan, rep, errOut := explainEscalated(t, fake)
			if rep.RCA.Path != tc.wantPath || plan.Times() != 1 || rep.RCA.Confidence != 0.85 {
				t.Fatalf("path %q, %d plans, confidence %v; want %q after one plan\n%s", rep.RCA.Path, plan.Times(), rep.RCA.Confidence, tc.wantPath, errOut)
			}
			reason := strings.TrimSuffix(strings.SplitN(tc.wantPath, "(", 2)[1], ")")
			if !strings.Contains(errOut, "escalated: "+reason) {
				t.Errorf("--verbose does not show the escalation %q:\n%s", reason, errOut)
			}
			if tc.name == "past the step threshold" && fast.Times() != 6 {
				t.Errorf("the fast path made %d tool-calling turns, want the threshold of 6", fast.Times())
			}
		})
	}
}

// routedAnswer is what an escalated explanation printed: the path it took
// and its confidence.
type routedAnswer struct {
	RCA struct {
		Path       string
		Confidence float64
	}
}

// explainEscalated scripts fake's plan-execute answer (a plan reading the
// code, then the final answer), explains the broken repository's build
// output with --verbose --json, and returns the plan's script entry, the
// answer and stderr.
func explainEscalated(t *testing.T, fake *llmtest.Server) (*llmtest.Script, routedAnswer, string) {
	t.Helper()
	plan := fake.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "1", "description": "read the code around the error", "tool": "read_file", "args": map[string]any{"path": "main.go", "line": 4}},
	}}))
	fake.On(onlyFinal, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: strategyAnswer}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--verbose", "--json")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	var rep routedAnswer
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	return plan, rep, errOut
}
