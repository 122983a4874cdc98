package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/react"
)

// answer is the final answer of the tests, shaped like the RCA's.
type answer struct {
	RootCause     string   `json:"rootCause"`
	FixGuidelines []string `json:"fixGuidelines"`
	Confidence    float64  `json:"confidence"`
}

// Check rejects an answer without a root cause and clamps the confidence,
// as agent.Checker wants.
func (a *answer) Check() error {
	if strings.TrimSpace(a.RootCause) == "" {
		return errors.New("rootCause is missing or empty")
	}
	a.Confidence = min(max(a.Confidence, 0), 1)
	return nil
}

func (a answer) String() string { return a.RootCause }

const goodAnswer = `{"rootCause":"nil map write in main.go","fixGuidelines":["initialise the map"],"confidence":0.9}`

func setup(t *testing.T) (*llmtest.Server, *llm.Gateway) { return llmtest.Start(t) }

type pathArgs struct {
	Path string `json:"path"`
}

// recorder collects the tools' calls and the run's events.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
	calls  []string
}

func (r *recorder) emit(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kinds() string {
	var k []string
	for _, e := range r.events {
		k = append(k, e.Kind)
	}
	return strings.Join(k, ",")
}

func (r *recorder) tools() []agent.Tool {
	mk := func(name string, fail bool) agent.Tool {
		return agent.Tool{Name: name, Description: "test tool " + name, Parameters: pathArgs{},
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				var a pathArgs
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				r.mu.Lock()
				r.calls = append(r.calls, name+" "+a.Path)
				r.mu.Unlock()
				if fail {
					return "", fmt.Errorf("no such file: %s", a.Path)
				}
				return "contents of " + a.Path, nil
			}}
	}
	return []agent.Tool{mk("read_file", false), mk("search", false), mk("broken", true)}
}

func call(name, path string) llmtest.ToolCall {
	return llmtest.ToolCall{Name: name, Arguments: fmt.Sprintf(`{"path":%q}`, path)}
}

func final(args string) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: args})
}

func run(t *testing.T, g *llm.Gateway, rec *recorder, cfg agent.Budget) (agent.Outcome[answer], error) {
	t.Helper()
	task := agent.Task{Gateway: g, System: "Find the root cause.", User: "panic: assignment to entry in nil map", Budget: cfg}
	return react.Strategy[answer]{}.Run(context.Background(), task, rec.tools(), rec.emit)
}

// assertForcedTurn checks that the last request offered only final_answer
// and forced it.
func assertForcedTurn(t *testing.T, s *llmtest.Server) {
	t.Helper()
	reqs := s.ChatRequests()
	last := reqs[len(reqs)-1].Chat
	if len(last.Tools) != 1 || last.Tools[0].Function.Name != "final_answer" {
		t.Errorf("forced turn tools = %+v, want only final_answer", last.Tools)
	}
	if !strings.Contains(string(last.ToolChoice), "final_answer") {
		t.Errorf("forced turn tool_choice = %s, want final_answer", last.ToolChoice)
	}
}

func TestCorrectRun(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.LastMessageRole("tool"),
		llmtest.Reply{Content: "Now the caller.", ToolCalls: []llmtest.ToolCall{call("search", "m[")}},
		final(goodAnswer))
	s.On(nil, llmtest.Reply{Content: "Read the file first.", ToolCalls: []llmtest.ToolCall{call("read_file", "main.go")}})
	rec := &recorder{}
	res, err := run(t, g, rec, agent.Budget{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Answer.RootCause != "nil map write in main.go" || res.Answer.Confidence != 0.9 || len(res.Answer.FixGuidelines) != 1 {
		t.Errorf("answer = %+v", res.Answer)
	}
	if res.Forced || res.Guard != "" || res.Iterations != 3 {
		t.Errorf("result = %+v, want 3 unforced iterations", res)
	}
	if fmt.Sprint(res.ToolsUsed) != "[read_file search]" {
		t.Errorf("ToolsUsed = %v", res.ToolsUsed)
	}
	want := "iteration,thought,action,observation,iteration,thought,action,observation,iteration,done"
	if got := rec.kinds(); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if e := rec.events[2]; e.Tool != "read_file" || e.Input != `{"path":"main.go"}` || e.Iteration != 1 {
		t.Errorf("first action = %+v", e)
	}
	if e := rec.events[3]; e.Text != "contents of main.go" {
		t.Errorf("first observation = %+v", e)
	}
	if len(s.ChatRequests()) != 3 {
		t.Errorf("%d requests, want 3", len(s.ChatRequests()))
	}
	// Every request offers the tools plus final_answer.
	if n := len(s.ChatRequests()[0].Chat.Tools); n != 4 {
		t.Errorf("first request has %d tools, want 4", n)
	}
}

func TestToolErrorBecomesObservation(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.LastMessageRole("tool"), final(goodAnswer))
	s.On(nil, llmtest.Tools(call("broken", "gone.go"), llmtest.ToolCall{Name: "no_such_tool", Arguments: `{}`}))
	rec := &recorder{}
	if _, err := run(t, g, rec, agent.Budget{}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	msgs := s.ChatRequests()[1].Chat.Messages
	var got []string
	for _, m := range msgs {
		if m.Role == "tool" {
			got = append(got, m.Content)
		}
	}
	if len(got) != 2 || got[0] != "error: no such file: gone.go" ||
		!strings.HasPrefix(got[1], `error: there is no tool named "no_such_tool"`) {
		t.Errorf("tool messages = %q", got)
	}
}

func TestGuards(t *testing.T) {
	tests := []struct {
		name    string
		cfg     agent.Budget
		replies []llmtest.Reply
		guard   string
		ran     int // tool calls that ran
	}{
		{"same action three times", agent.Budget{}, []llmtest.Reply{
			llmtest.Tools(call("broken", "a.go")), llmtest.Tools(call("broken", "a.go")), llmtest.Tools(call("broken", "a.go")),
		}, agent.GuardRepeatedAction, 2},
		{"alternation", agent.Budget{}, []llmtest.Reply{
			llmtest.Tools(call("broken", "a.go")), llmtest.Tools(call("search", "x")), llmtest.Tools(call("broken", "a.go")),
		}, agent.GuardAlternation, 2},
		{"same tool and input twice", agent.Budget{}, []llmtest.Reply{
			llmtest.Tools(call("read_file", "a.go")), llmtest.Tools(call("read_file", "b.go")),
			llmtest.Tools(call("search", "x")), llmtest.Tools(call("read_file", "a.go")),
		}, agent.GuardDuplicateCall, 3},
		{"duplicate with reordered keys", agent.Budget{}, []llmtest.Reply{
			llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"a.go","x":1}`}),
			llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{ "x": 1, "path": "a.go" }`}),
		}, agent.GuardDuplicateCall, 1},
		{"max iterations", agent.Budget{MaxIterations: 3}, []llmtest.Reply{
			llmtest.Tools(call("read_file", "1.go")), llmtest.Tools(call("read_file", "2.go")),
			llmtest.Tools(call("read_file", "3.go")), llmtest.Tools(call("read_file", "4.go")),
		}, agent.GuardMaxIterations, 3},
		{"max tool calls", agent.Budget{MaxToolCalls: 3}, []llmtest.Reply{
			llmtest.Tools(call("read_file", "1.go"), call("read_file", "2.go")),
			llmtest.Tools(call("read_file", "3.go"), call("read_file", "4.go")),
		}, agent.GuardMaxToolCalls, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, g := setup(t)
			s.On(llmtest.Not(llmtest.HasTool("read_file")), final(`{"rootCause":"forced cause","fixGuidelines":[],"confidence":0.4}`))
			s.On(nil, tc.replies...)
			rec := &recorder{}
			res, err := run(t, g, rec, tc.cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !res.Forced || res.Guard != tc.guard {
				t.Errorf("Forced=%v Guard=%q, want %q", res.Forced, res.Guard, tc.guard)
			}
			if res.Answer.RootCause != "forced cause" {
				t.Errorf("answer = %+v", res.Answer)
			}
			if len(rec.calls) != tc.ran {
				t.Errorf("tools ran %d times (%v), want %d", len(rec.calls), rec.calls, tc.ran)
			}
			assertForcedTurn(t, s)
			k := rec.kinds()
			if !strings.HasSuffix(k, ",guard,done") {
				t.Errorf("events = %s, want to end with guard,done", k)
			}
			var guard agent.Event
			for _, e := range rec.events {
				if e.Kind == agent.EventGuard {
					guard = e
				}
			}
			if !strings.HasPrefix(guard.Text, tc.guard+": ") {
				t.Errorf("guard event = %+v", guard)
			}
		})
	}
}

func TestMalformedFinalAnswerRepaired(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.PromptContains("was not usable"), final(`{"rootCause":"fixed","fixGuidelines":["a"],"confidence":7}`))
	s.On(nil, final(`{"rootCause":"","confidence":0.5}`))
	rec := &recorder{}
	res, err := run(t, g, rec, agent.Budget{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Answer.RootCause != "fixed" || res.Answer.Confidence != 1 {
		t.Errorf("answer = %+v, want repaired with confidence clamped to 1", res.Answer)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Chat.Messages
	tool, user := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if tool.Role != "tool" || !strings.Contains(tool.Content, "rootCause is missing") {
		t.Errorf("tool message = %+v", tool)
	}
	if user.Role != "user" || !strings.Contains(user.Content, "rootCause is missing") {
		t.Errorf("repair message = %+v", user)
	}
}

func TestMalformedFinalAnswerTwiceFails(t *testing.T) {
	s, g := setup(t)
	s.On(nil, final(`{"rootCause": "x", `), final(`{"confidence": 1}`))
	rec := &recorder{}
	_, err := run(t, g, rec, agent.Budget{})
	if !errors.Is(err, agent.ErrMalformedAnswer) {
		t.Fatalf("err = %v, want ErrMalformedAnswer", err)
	}
	if n := len(s.ChatRequests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestEmptyReplyCountsAsIteration(t *testing.T) {
	s, g := setup(t)
	s.On(nil, llmtest.Reply{}, llmtest.Text("thinking"), final(goodAnswer))
	rec := &recorder{}
	res, err := run(t, g, rec, agent.Budget{MaxIterations: 2})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Two iterations used up by the empty reply and the text; the third
	// reply arrives in the forced turn.
	if res.Iterations != 2 || res.Guard != agent.GuardMaxIterations {
		t.Errorf("result = %+v", res)
	}
}

func TestStepTimeout(t *testing.T) {
	s, g := setup(t)
	s.On(nil, llmtest.Reply{Hang: true})
	rec := &recorder{}
	start := time.Now()
	_, err := run(t, g, rec, agent.Budget{StepTimeout: 200 * time.Millisecond})
	if !errors.Is(err, agent.ErrStepTimeout) {
		t.Fatalf("err = %v, want ErrStepTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s, want about the step timeout", d)
	}
	if !s.WaitDisconnects(1, 2*time.Second) {
		t.Error("the hanging request was not abandoned")
	}
}

func TestTotalTimeout(t *testing.T) {
	s, g := setup(t)
	s.On(nil, llmtest.Reply{Hang: true})
	rec := &recorder{}
	_, err := run(t, g, rec, agent.Budget{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, agent.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	s.WaitDisconnects(1, 2*time.Second)
}

func TestReservedToolName(t *testing.T) {
	_, g := setup(t)
	tools := []agent.Tool{{Name: "final_answer", Run: func(context.Context, json.RawMessage) (string, error) { return "", nil }}}
	_, err := react.Strategy[answer]{}.Run(context.Background(), agent.Task{Gateway: g, User: "u"}, tools, nil)
	if err == nil {
		t.Fatal("a tool named final_answer was accepted")
	}
}

// TestPromptsReachTheModel: a feature words the loop in its own terms.
func TestPromptsReachTheModel(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.Not(llmtest.HasTool("read_file")), final(goodAnswer))
	s.On(nil, llmtest.Text("hmm"), llmtest.Text("hmm again"))
	p := react.Prompts{FinalAnswer: "Name the culprit.", Continue: "Keep digging.", Stop: "Name the culprit now."}
	task := agent.Task{Gateway: g, User: "who did it?", Budget: agent.Budget{MaxIterations: 2}}
	res, err := react.Strategy[answer]{Prompts: p}.Run(context.Background(), task, (&recorder{}).tools(), nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Guard != agent.GuardMaxIterations || res.Answer.RootCause != "nil map write in main.go" {
		t.Errorf("result = %+v", res)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if d := reqs[0].Chat.Tools[3].Function.Description; d != "Name the culprit." {
		t.Errorf("final_answer description = %q", d)
	}
	if text := reqs[1].Chat.Text(); !strings.Contains(text, "Keep digging.") {
		t.Errorf("second request lacks the Continue prompt:\n%s", text)
	}
	if text := reqs[2].Chat.Text(); !strings.Contains(text, "Stop investigating: the investigation reached its limit of 2 iterations. Name the culprit now.") {
		t.Errorf("forced turn lacks the Stop prompt:\n%s", text)
	}
}
