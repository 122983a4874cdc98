package planexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/agents/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// answer is the final answer of the tests, shaped like the RCA's.
type answer struct {
	RootCause     string   `json:"rootCause"`
	FixGuidelines []string `json:"fixGuidelines"`
	Confidence    float64  `json:"confidence"`
}

func (a *answer) Check() error {
	if strings.TrimSpace(a.RootCause) == "" {
		return errors.New("rootCause is missing or empty")
	}
	return nil
}

func (a answer) String() string { return a.RootCause }

const goodAnswer = `{"rootCause":"the map m is nil when main writes to it","fixGuidelines":["initialise m with make"],"confidence":0.9}`

func setup(t testing.TB) (*llmtest.Server, *llm.Gateway) { return llmtest.Start(t) }

// workspace is a real directory with the workspace tools on it; calls
// counts the tool runs.
func workspace(t *testing.T, calls *atomic.Int32) []agent.Tool {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"main.go":       "package main\n\nvar m map[string]int\n\nfunc main() {\n\tm[\"a\"] = 1\n}\n",
		"store/db.go":   "package store\n\nfunc Open() {}\n",
		"docs/ABOUT.md": "about\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := tools.Workspace{Root: dir}
	ts := []agent.Tool{ws.ReadFile(), ws.SearchWorkspace(), ws.ListFiles()}
	for i := range ts {
		run := ts[i].Run
		ts[i].Run = func(ctx context.Context, args json.RawMessage) (string, error) {
			calls.Add(1)
			return run(ctx, args)
		}
	}
	return ts
}

func planReply(steps ...map[string]any) llmtest.Reply {
	return llmtest.JSON(map[string]any{"steps": steps})
}

func step(id, tool string, args map[string]any) map[string]any {
	return map[string]any{"id": id, "description": "find out " + id, "tool": tool, "args": args}
}

var (
	isPlan   = llmtest.All(llmtest.SchemaName(planexec.SchemaPlan), llmtest.Not(llmtest.PromptContains("A step of your plan failed")))
	isReplan = llmtest.All(llmtest.SchemaName(planexec.SchemaPlan), llmtest.PromptContains("A step of your plan failed"))
	// The answer call offers final_answer alone; ReAct offers the tools too.
	isAnswer = llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("read_file")))
	isReAct  = llmtest.HasTool("read_file")
)

func final(args string) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: args})
}

func task(g *llm.Gateway) agent.Task {
	return agent.Task{Gateway: g, System: "You explain errors.", User: "panic: assignment to entry in nil map at main.go:6", Feature: "rca"}
}

type events []agent.Event

func (es *events) emit(e agent.Event) { *es = append(*es, e) }

// kinds lists the strategy's own events (the engine's node events left
// out), with the node that emitted them.
func (es events) kinds() string {
	var k []string
	for _, e := range es {
		if e.Kind != graph.EventNodeStarted && e.Kind != graph.EventNodeFinished {
			k = append(k, e.Kind+"@"+e.Node)
		}
	}
	return strings.Join(k, " ")
}

func (es events) nodes() string {
	var k []string
	for _, e := range es {
		if e.Kind == graph.EventNodeStarted {
			k = append(k, e.Node)
		}
	}
	return strings.Join(k, ",")
}

func TestPlanStepsThenAnswer(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	plan := s.On(isPlan, planReply(
		step("1", "read_file", map[string]any{"path": "main.go", "line": 6}),
		step("2", "search_workspace", map[string]any{"query": "map[string]int"}),
	))
	ans := s.On(isAnswer, final(goodAnswer))
	var es events
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer.RootCause != "the map m is nil when main writes to it" || plan.Times() != 1 || ans.Times() != 1 || calls.Load() != 2 {
		t.Fatalf("answer %+v, %d plan calls, %d answer calls, %d tool runs", out.Answer, plan.Times(), ans.Times(), calls.Load())
	}
	want := "plan_created@plan action@execute observation@execute step_done@execute action@execute observation@execute step_done@execute done@answer"
	if es.kinds() != want {
		t.Fatalf("events\n%s\nwant\n%s", es.kinds(), want)
	}
	if es.nodes() != "plan,execute,execute,answer" || out.Iterations != 4 {
		t.Fatalf("nodes %s, iterations %d", es.nodes(), out.Iterations)
	}
	if strings.Join(out.ToolsUsed, ",") != "read_file,search_workspace" || out.Forced {
		t.Fatalf("outcome %+v", out)
	}
	// The plan is shown in its event, and the answer call sees what the
	// steps found: the code read and the search hit.
	if !strings.Contains(es[1].Text, "read_file") || !strings.Contains(es[1].Text, "search_workspace") {
		t.Fatalf("plan event %q", es[1].Text)
	}
	last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
	if !strings.Contains(last, `m["a"] = 1`) || !strings.Contains(last, "main.go:3:") {
		t.Fatalf("the answer call lacks the steps' results:\n%s", last)
	}
	// The plan request offered the tools with their schemas and limited
	// the tool names to them.
	req := s.ChatRequests()[0].Chat
	if !strings.Contains(req.Text(), `"path"`) || !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), "list_files") {
		t.Fatalf("plan request: %s", req.Text())
	}
}

func TestFailedStepIsReplanned(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(
		step("1", "read_file", map[string]any{"path": "mian.go"}),
		step("2", "list_files", map[string]any{"dir": "store"}),
	))
	replan := s.On(isReplan, planReply(step("1", "read_file", map[string]any{"path": "main.go"})))
	s.On(isAnswer, final(goodAnswer))
	var es events
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if replan.Times() != 1 || es.nodes() != "plan,execute,replan,execute,answer" {
		t.Fatalf("%d replans, nodes %s", replan.Times(), es.nodes())
	}
	// The replan saw the failure; the pending list_files step was replaced
	// by the revision, whose step ran.
	var replanReq string
	for _, r := range s.ChatRequests() {
		if isReplan(r.Chat) {
			replanReq = r.Chat.Text()
		}
	}
	if !strings.Contains(replanReq, "mian.go") || !strings.Contains(replanReq, "[pending] list_files") {
		t.Fatalf("replan request:\n%s", replanReq)
	}
	if calls.Load() != 2 || out.Answer.RootCause == "" {
		t.Fatalf("%d tool runs, answer %+v", calls.Load(), out.Answer)
	}
	var done []string
	for _, e := range es {
		if e.Kind == agent.EventStepDone {
			done = append(done, strings.SplitN(e.Text, ":", 2)[0])
		}
	}
	if strings.Join(done, ",") != "failed,done" {
		t.Fatalf("step results %v", done)
	}
}

// A replan that fails ends the plan: the answer is written from what was
// gathered, and says why the plan stopped.
func TestFailedReplanAnswersFromWhatWasGathered(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(
		step("1", "list_files", map[string]any{"dir": "store"}),
		step("2", "read_file", map[string]any{"path": "missing.go"}),
		step("3", "read_file", map[string]any{"path": "main.go"}),
	))
	replan := s.On(isReplan, llmtest.Text("I cannot revise this plan, sorry."))
	ans := s.On(isAnswer, final(goodAnswer))
	var es events
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if replan.Times() != 2 || ans.Times() != 1 || calls.Load() != 2 || out.Answer.Confidence != 0.9 {
		t.Fatalf("%d replan calls (one and its repair), %d answers, %d tool runs, %+v", replan.Times(), ans.Times(), calls.Load(), out.Answer)
	}
	last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
	for _, want := range []string{"store/db.go", "[skipped]", "could not be revised"} {
		if !strings.Contains(last, want) {
			t.Errorf("answer request lacks %q:\n%s", want, last)
		}
	}
	if !strings.Contains(es.kinds(), "guard@replan") {
		t.Fatalf("events %s", es.kinds())
	}
}

// Replans are bounded: a step that keeps failing does not loop.
func TestReplansAreBounded(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(step("1", "read_file", map[string]any{"path": "nope0.go"})))
	replan := s.On(isReplan,
		planReply(step("1", "read_file", map[string]any{"path": "nope1.go"})),
		planReply(step("1", "read_file", map[string]any{"path": "nope2.go"})),
		planReply(step("1", "read_file", map[string]any{"path": "nope3.go"})))
	s.On(isAnswer, final(goodAnswer))
	var es events
	if _, err := (planexec.Strategy[answer]{MaxReplans: 2}).Run(context.Background(), task(g), ts, es.emit); err != nil {
		t.Fatal(err)
	}
	if replan.Times() != 2 || calls.Load() != 3 {
		t.Fatalf("%d replans, %d tool runs; want 2 and 3", replan.Times(), calls.Load())
	}
	last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
	if !strings.Contains(last, "already revised 2 times") {
		t.Fatalf("answer request:\n%s", last)
	}
}

// A plan that fails validation is asked again with the problem; a second
// failure hands the task to ReAct, which answers.
func TestUnusablePlanFallsBackToReAct(t *testing.T) {
	for name, bad := range map[string]llmtest.Reply{
		"garbage":      llmtest.Text("Sure! First I will look around."),
		"unknown tool": planReply(step("1", "run_shell", map[string]any{"cmd": "rm -rf /"})),
		"bad args":     planReply(step("1", "read_file", map[string]any{"line": 3})),
		"too long":     planReply(step("1", "list_files", nil), step("2", "list_files", nil), step("3", "list_files", nil)),
	} {
		t.Run(name, func(t *testing.T) {
			s, g := setup(t)
			var calls atomic.Int32
			ts := workspace(t, &calls)
			plan := s.On(isPlan, bad)
			react := s.On(isReAct, final(goodAnswer))
			var es events
			out, err := (planexec.Strategy[answer]{MaxSteps: 2}).Run(context.Background(), task(g), ts, es.emit)
			if err != nil {
				t.Fatal(err)
			}
			if react.Times() != 1 || out.Answer.RootCause == "" || calls.Load() != 0 {
				t.Fatalf("react %d calls, answer %+v, %d tool runs", react.Times(), out.Answer, calls.Load())
			}
			if plan.Times() < 2 || !strings.HasPrefix(es.kinds(), "guard@plan") || !strings.Contains(es.kinds(), "done@") {
				t.Fatalf("%d plan calls, events %s", plan.Times(), es.kinds())
			}
			// The second attempt was told what was wrong with the first.
			var second string
			n := 0
			for _, r := range s.ChatRequests() {
				if isPlan(r.Chat) {
					if n++; n > 1 {
						second = r.Chat.Text()
					}
				}
			}
			if !strings.Contains(second, "The previous plan was not usable") {
				t.Fatalf("second plan request:\n%s", second)
			}
		})
	}
}

// The tool-call budget stops the plan; the answer is still written, and the
// outcome says a guard fired.
func TestToolBudgetStopsThePlan(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply(
		step("1", "list_files", map[string]any{"dir": "store"}),
		step("2", "read_file", map[string]any{"path": "main.go"}),
	))
	s.On(isAnswer, final(goodAnswer))
	tk := task(g)
	tk.Budget.MaxToolCalls = 1
	var es events
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), tk, ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Forced || out.Guard != agent.GuardMaxToolCalls || calls.Load() != 1 || out.Answer.RootCause == "" {
		t.Fatalf("outcome %+v after %d tool runs", out, calls.Load())
	}
}

// A malformed final answer gets one repair turn; a second one fails the
// run with agent.ErrMalformedAnswer.
func TestAnswerRepair(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	s.On(isPlan, planReply())
	ans := s.On(isAnswer, final(`{"rootCause":"","confidence":0.5}`), final(goodAnswer))
	out, err := planexec.Strategy[answer]{}.Run(context.Background(), task(g), ts, nil)
	if err != nil || ans.Times() != 2 || out.Answer.RootCause == "" {
		t.Fatalf("err %v, %d answer calls, %+v", err, ans.Times(), out.Answer)
	}
	last := s.ChatRequests()[len(s.ChatRequests())-1].Chat.Text()
	if !strings.Contains(last, "rootCause is missing or empty") {
		t.Fatalf("repair turn did not say what was wrong:\n%s", last)
	}

	s2, g2 := setup(t)
	s2.On(isPlan, planReply())
	s2.On(isAnswer, final(`{"rootCause":""}`))
	if _, err := (planexec.Strategy[answer]{}).Run(context.Background(), task(g2), ts, nil); !errors.Is(err, agent.ErrMalformedAnswer) {
		t.Fatalf("err %v, want ErrMalformedAnswer", err)
	}
}

// A run that fails at the answer resumes there from its checkpoint: the
// plan is not asked again and no tool runs twice.
func TestResumeFromCheckpoint(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	plan := s.On(isPlan, planReply(step("1", "read_file", map[string]any{"path": "main.go"})))
	s.On(isAnswer, llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "context too long"}, final(goodAnswer))
	cp := &graph.MemoryCheckpointer{}
	tk := task(g)
	tk.Thread, tk.Checkpoints = "explain-1", cp
	if _, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, ts, nil); err == nil {
		t.Fatal("no error from the failed answer call")
	}
	saved, ok, _ := cp.Get(context.Background(), "explain-1")
	if !ok || saved.Next != graph.NodeAnswer || saved.Done {
		t.Fatalf("checkpoint %+v", saved)
	}
	var es events
	out, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Times() != 1 || calls.Load() != 1 || out.Answer.RootCause == "" || es.nodes() != "answer" {
		t.Fatalf("%d plans, %d tool runs, nodes %s, answer %+v", plan.Times(), calls.Load(), es.nodes(), out.Answer)
	}
	if strings.Join(out.ToolsUsed, ",") != "read_file" {
		t.Fatalf("the resumed outcome lost the tools used: %v", out.ToolsUsed)
	}
}

// A step timeout bounds a tool that hangs; the step fails and the plan goes
// on to its replan.
func TestSlowToolTimesOut(t *testing.T) {
	s, g := setup(t)
	slow := agent.Tool{Name: "slow", Description: "waits", Parameters: struct{}{}, Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	s.On(isPlan, planReply(step("1", "slow", map[string]any{})))
	replan := s.On(isReplan, planReply())
	s.On(isAnswer, final(goodAnswer))
	tk := task(g)
	tk.Budget.StepTimeout = 50 * time.Millisecond
	var es events
	if _, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, []agent.Tool{slow}, es.emit); err != nil {
		t.Fatal(err)
	}
	if replan.Times() != 1 {
		t.Fatalf("the timed-out step was not replanned; events %s", es.kinds())
	}
}

// A run whose fallback ReAct fails mid-way resumes inside the fallback:
// the plan is not asked for again, the fallback's tool does not run
// again, and the parent's checkpoint and the fallback's live side by side.
func TestFallbackResumesFromItsCheckpoint(t *testing.T) {
	s, g := setup(t)
	var calls atomic.Int32
	ts := workspace(t, &calls)
	plan := s.On(isPlan, llmtest.Text("no plan today"))
	s.On(llmtest.All(isReAct, llmtest.ToolMessages(0)), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go"}`}))
	s.On(llmtest.All(isReAct, llmtest.ToolMessages(1)), llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "context too long"}, final(goodAnswer))
	cp := &graph.MemoryCheckpointer{}
	tk := task(g)
	tk.Thread, tk.Checkpoints = "explain-1", cp
	if _, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, ts, nil); err == nil {
		t.Fatal("no error from the failed fallback")
	}
	parent, ok, _ := cp.Get(context.Background(), "explain-1")
	if !ok || parent.Graph != planexec.Name || parent.Next != graph.NodeAnswer || parent.Done {
		t.Fatalf("the parent's checkpoint %+v", parent)
	}
	fb, ok, _ := cp.Get(context.Background(), "explain-1/fallback/react")
	if !ok || fb.Done {
		t.Fatalf("the fallback's checkpoint %+v (found %v)", fb, ok)
	}
	plans := plan.Times()
	var es events
	out, err := (planexec.Strategy[answer]{}).Run(context.Background(), tk, ts, es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Times() != plans || calls.Load() != 1 || out.Answer.RootCause == "" {
		t.Fatalf("%d plan calls (want the first run's %d), %d tool runs, answer %+v", plan.Times(), plans, calls.Load(), out.Answer)
	}
	// The parent continued at its answer node, the fallback at its
	// reason node.
	if got := es.kinds(); !strings.HasPrefix(got, "resumed@answer resumed@reason") {
		t.Fatalf("events %s", got)
	}
}
