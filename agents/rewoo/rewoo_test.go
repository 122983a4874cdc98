package rewoo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

func setup(t testing.TB) (*llmtest.Server, *llm.Gateway) { return llmtest.Start(t) }

// lab is a set of tools that take time and record when they ran: how many
// ran at once at most, and the order of starts and ends.
type lab struct {
	running, peak, seq atomic.Int32
	mu                 sync.Mutex
	start, end         map[string]int32 // by the tool's "key" argument
	args               map[string]string
}

type keyArgs struct {
	Key string `json:"key"`
}

func newLab() *lab {
	return &lab{start: map[string]int32{}, end: map[string]int32{}, args: map[string]string{}}
}

func (l *lab) tools(delay time.Duration) []agent.Tool {
	fetch := func(ctx context.Context, raw json.RawMessage) (string, error) {
		var a keyArgs
		_ = json.Unmarshal(raw, &a)
		n := l.running.Add(1)
		for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
		}
		l.mu.Lock()
		l.start[a.Key], l.args[a.Key] = l.seq.Add(1), a.Key
		l.mu.Unlock()
		defer l.running.Add(-1)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		l.mu.Lock()
		l.end[a.Key] = l.seq.Add(1)
		l.mu.Unlock()
		if strings.Contains(a.Key, "broken") {
			return "", errors.New("no such record")
		}
		return "record of " + a.Key, nil
	}
	return []agent.Tool{
		{Name: "fetch", Description: "fetch a record by key", Parameters: keyArgs{}, Run: fetch},
		{Name: "lookup", Description: "look a record up by key", Parameters: keyArgs{}, Run: fetch},
	}
}

func ev(id, tool, key string) map[string]any {
	return map[string]any{"id": id, "tool": tool, "args": map[string]any{"key": key}, "reason": "need " + key}
}

func planReply(steps ...map[string]any) llmtest.Reply {
	return llmtest.JSON(map[string]any{"steps": steps})
}

var (
	isPlan  = llmtest.SchemaName(rewoo.SchemaPlan)
	isSolve = llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("fetch")))
	isReAct = llmtest.HasTool("fetch")
)

func final(args string) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: args})
}

func task(g *llm.Gateway) agent.Task {
	return agent.Task{Gateway: g, User: "why does the order fail?", Feature: "rca"}
}

type events []agent.Event

func (es *events) emit(e agent.Event) { *es = append(*es, e) }

func (es events) kinds() string {
	var k []string
	for _, e := range es {
		if e.Kind != graph.EventNodeStarted && e.Kind != graph.EventNodeFinished {
			k = append(k, e.Kind+"@"+e.Node)
		}
	}
	return strings.Join(k, " ")
}

// Independent calls run at the same time, never more than the cap; a call
// that uses an earlier step's output runs after it, with the output in its
// arguments.
func TestWorkOverlapsUnderTheCapAndOrdersDependencies(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	s.On(isPlan, planReply(
		ev("E1", "fetch", "order"),
		ev("E2", "lookup", "customer"),
		ev("E3", "fetch", "stock"),
		ev("E4", "lookup", "price"),
		ev("E5", "fetch", "tax"),
		ev("E6", "lookup", "#E1 again"),
	))
	solve := s.On(isSolve, final(`{"rootCause":"the order lacks stock (#E3)","fixGuidelines":["restock"],"confidence":0.7,"evidence":["E1","E3"]}`))
	var es events
	res, err := (rewoo.Strategy[answer]{Concurrency: 3}).Solve(context.Background(), task(g), l.tools(40*time.Millisecond), es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if p := l.peak.Load(); p <= 1 || p > 3 {
		t.Fatalf("peak concurrency %d, want 2..3 (the cap)", p)
	}
	dep := "record of order again"
	if l.args[dep] == "" || l.start[dep] < l.end["order"] {
		t.Fatalf("E6 ran with %v before E1 ended (start %d, E1 end %d)", l.args, l.start[dep], l.end["order"])
	}
	if solve.Times() != 1 || s.CountChat() != 2 {
		t.Fatalf("%d model calls, want plan + solve", s.CountChat())
	}
	if strings.Join(res.Citations, ",") != "E1,E3" || res.Answer.RootCause == "" || len(res.Evidence) != 6 || res.Iterations != 3 {
		t.Fatalf("result %+v", res)
	}
	// The solve call sees every piece of evidence under its label.
	last := s.ChatRequests()[1].Chat.Text()
	for _, want := range []string{"#E1: fetch", "record of stock", "#E6: lookup", "record of order again"} {
		if !strings.Contains(last, want) {
			t.Errorf("solve request lacks %q", want)
		}
	}
	k := es.kinds()
	if !strings.HasPrefix(k, "plan_created@plan action@work") || !strings.HasSuffix(k, "done@solve") || strings.Count(k, "step_done@work") != 6 {
		t.Fatalf("events %s", k)
	}
	// Events of a wave come in plan order, whatever order the calls ended in.
	var inputs []string
	for _, e := range es {
		if e.Kind == agent.EventAction {
			inputs = append(inputs, e.Input)
		}
	}
	if !strings.Contains(inputs[0], "order") || !strings.Contains(inputs[4], "tax") || !strings.Contains(inputs[5], "record of order again") {
		t.Fatalf("action order %v", inputs)
	}
}

// A step whose input failed is not run; the others are.
func TestFailedInputSkipsItsDependents(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	s.On(isPlan, planReply(ev("E1", "fetch", "broken"), ev("E2", "lookup", "#E1"), ev("E3", "fetch", "tax")))
	s.On(isSolve, final(`{"rootCause":"the record is missing","fixGuidelines":[],"confidence":0.4,"evidence":["E1"]}`))
	res, err := rewoo.Strategy[answer]{}.Solve(context.Background(), task(g), l.tools(time.Millisecond), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.start) != 2 || !res.Evidence[0].Failed || !strings.Contains(res.Evidence[1].Text, "not run: its input #E1 failed") || res.Evidence[2].Failed {
		t.Fatalf("ran %v, evidence %+v", l.start, res.Evidence)
	}
}

// An unusable plan — garbage, an unknown tool, a reference to a later step
// — is asked again once, then the task goes to ReAct.
func TestUnusablePlanFallsBackToReAct(t *testing.T) {
	for name, bad := range map[string]llmtest.Reply{
		"garbage":       llmtest.Text("I will fetch things."),
		"unknown tool":  planReply(ev("E1", "delete", "order")),
		"forward ref":   planReply(ev("E1", "fetch", "#E2"), ev("E2", "fetch", "order")),
		"bad label":     planReply(ev("step-1", "fetch", "order")),
		"missing arg":   planReply(map[string]any{"id": "E1", "tool": "fetch", "args": map[string]any{"id": "order"}, "reason": "r"}),
		"too many step": planReply(ev("E1", "fetch", "a"), ev("E2", "fetch", "b"), ev("E3", "fetch", "c")),
	} {
		t.Run(name, func(t *testing.T) {
			s, g := setup(t)
			l := newLab()
			plan := s.On(isPlan, bad)
			react := s.On(isReAct, final(`{"rootCause":"from react","fixGuidelines":[],"confidence":0.5}`))
			var es events
			out, err := (rewoo.Strategy[answer]{MaxSteps: 2}).Run(context.Background(), task(g), l.tools(time.Millisecond), es.emit)
			if err != nil {
				t.Fatal(err)
			}
			if out.Answer.RootCause != "from react" || react.Times() != 1 || plan.Times() < 2 || len(l.start) != 0 {
				t.Fatalf("answer %+v, %d react calls, %d plan calls, ran %v", out.Answer, react.Times(), plan.Times(), l.start)
			}
			if !strings.HasPrefix(es.kinds(), "guard@plan") {
				t.Fatalf("events %s", es.kinds())
			}
			if out.Path != "rewoo → react (plan unusable)" {
				t.Errorf("path %q: the answer is react's", out.Path)
			}
		})
	}
}

// The fallback gets what the run left of the task's budget: its steps less
// the plan, the work and the solve node that runs it.
func TestFallbackWorksWithinTheBudget(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	s.On(isPlan, llmtest.Text("no plan"))
	s.On(isSolve, final(`{"rootCause":"from react","fixGuidelines":[],"confidence":0.5}`))
	var fetches []llmtest.Reply
	for i := range 10 {
		fetches = append(fetches, llmtest.Tools(llmtest.ToolCall{Name: "fetch", Arguments: fmt.Sprintf(`{"key":"k%d"}`, i)}))
	}
	s.On(isReAct, fetches...)
	tk := task(g)
	tk.Budget = agent.Budget{MaxIterations: 5}
	out, err := rewoo.Strategy[answer]{}.Run(context.Background(), tk, l.tools(time.Millisecond), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Iterations != 5 || len(l.start) != 2 || out.ToolCalls != 2 || out.Guard != agent.GuardMaxIterations {
		t.Errorf("outcome %+v after %d calls: want the task's 5 steps (plan, work, solve and 2 of react)", out, len(l.start))
	}
}

// Gather stops after the work: no solve call; without a plan it says so.
func TestGather(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	s.On(isPlan, planReply(ev("E1", "fetch", "order"), ev("E2", "lookup", "customer")))
	got, err := rewoo.Strategy[answer]{}.Gather(context.Background(), task(g), l.tools(time.Millisecond), nil)
	if err != nil || len(got) != 2 || got[1].Text != "record of customer" || s.CountChat() != 1 {
		t.Fatalf("evidence %+v err %v after %d calls", got, err, s.CountChat())
	}
	s2, g2 := setup(t)
	s2.On(isPlan, llmtest.Text("no"))
	if _, err := (rewoo.Strategy[answer]{}).Gather(context.Background(), task(g2), l.tools(time.Millisecond), nil); !errors.Is(err, rewoo.ErrUnusablePlan) {
		t.Fatalf("err %v, want ErrUnusablePlan", err)
	}
}

// A run that fails at the solve call resumes there: the tools do not run
// again.
func TestResumeAtSolve(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	s.On(isPlan, planReply(ev("E1", "fetch", "order")))
	s.On(isSolve, llmtest.Reply{Status: http.StatusBadRequest}, final(`{"rootCause":"x","fixGuidelines":[],"confidence":0.5,"evidence":["E1"]}`))
	tk := task(g)
	tk.Thread, tk.Checkpoints = "t", &graph.MemoryCheckpointer{}
	if _, err := (rewoo.Strategy[answer]{}).Run(context.Background(), tk, l.tools(time.Millisecond), nil); err == nil {
		t.Fatal("no error")
	}
	res, err := rewoo.Strategy[answer]{}.Solve(context.Background(), tk, l.tools(time.Millisecond), nil)
	if err != nil || len(l.start) != 1 || s.CountChat() != 3 || strings.Join(res.Citations, ",") != "E1" {
		t.Fatalf("err %v, tools ran %v, %d calls, citations %v", err, l.start, s.CountChat(), res.Citations)
	}
}

// A run whose fallback ReAct fails mid-way resumes inside the fallback:
// the plan is not asked for again and the fallback's tool does not run
// again.
func TestFallbackResumesFromItsCheckpoint(t *testing.T) {
	s, g := setup(t)
	l := newLab()
	plan := s.On(isPlan, llmtest.Text("no plan today"))
	s.On(llmtest.All(isReAct, llmtest.ToolMessages(0)), llmtest.Tools(llmtest.ToolCall{Name: "fetch", Arguments: `{"key":"order"}`}))
	s.On(llmtest.All(isReAct, llmtest.ToolMessages(1)), llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "context too long"},
		final(`{"rootCause":"from react","fixGuidelines":[],"confidence":0.5}`))
	cp := &graph.MemoryCheckpointer{}
	tk := task(g)
	tk.Thread, tk.Checkpoints = "review-1", cp
	if _, err := (rewoo.Strategy[answer]{}).Run(context.Background(), tk, l.tools(time.Millisecond), nil); err == nil {
		t.Fatal("no error from the failed fallback")
	}
	parent, ok, _ := cp.Get(context.Background(), "review-1")
	if !ok || parent.Graph != rewoo.Name || parent.Next != graph.NodeSolve || parent.Done {
		t.Fatalf("the parent's checkpoint: graph %s next %s done %v", parent.Graph, parent.Next, parent.Done)
	}
	if fb, ok, _ := cp.Get(context.Background(), "review-1/fallback/react"); !ok || fb.Done {
		t.Fatalf("the fallback's checkpoint %+v (found %v)", fb, ok)
	}
	plans := plan.Times()
	var es events
	out, err := (rewoo.Strategy[answer]{}).Run(context.Background(), tk, l.tools(time.Millisecond), es.emit)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Times() != plans || l.seq.Load() != 2 || out.Answer.RootCause != "from react" {
		t.Fatalf("%d plan calls (want the first run's %d), %d tool starts and ends, answer %+v", plan.Times(), plans, l.seq.Load(), out.Answer)
	}
	if got := es.kinds(); !strings.HasPrefix(got, "resumed@solve resumed@reason") {
		t.Fatalf("events %s", got)
	}
}
