package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/react"
	"github.com/kodustech/kodyls/agents/router"
)

// rcaAnswer is the final answer of the real ReAct runs.
type rcaAnswer struct {
	RootCause  string  `json:"rootCause"`
	Confidence float64 `json:"confidence"`
}

func (a rcaAnswer) ConfidenceScore() float64 { return a.Confidence }
func (a rcaAnswer) String() string           { return a.RootCause }

// plannerFinal words the escalation target's final_answer so that the fake
// endpoint can tell its requests from the fast path's.
const plannerFinal = "Planner: give the final answer after working through your plan."

func isPlanner(r *llmtest.ChatRequest) bool {
	for _, t := range r.Tools {
		if t.Function.Name == "final_answer" && t.Function.Description == plannerFinal {
			return true
		}
	}
	return false
}

func setup(t *testing.T) (*llmtest.Server, *llm.Gateway) { return llmtest.Start(t) }

func readFile(t *testing.T) agent.Tool {
	type args struct {
		Path string `json:"path"`
	}
	return agent.Tool{Name: "read_file", Description: "read a file", Parameters: args{},
		Run: func(_ context.Context, raw json.RawMessage) (string, error) {
			var a args
			_ = json.Unmarshal(raw, &a)
			if a.Path == "main.go" {
				return "package main\nfunc main() { x := 1 }", nil
			}
			return "", errors.New("no such file: " + a.Path)
		}}
}

func finalAnswer(cause string, conf float64) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: fmt.Sprintf(`{"rootCause":%q,"confidence":%v}`, cause, conf)})
}

func readCall(path string) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, path)})
}

func routed() router.Strategy[rcaAnswer] {
	return router.Strategy[rcaAnswer]{
		Fast:    react.Strategy[rcaAnswer]{},
		Planner: react.Strategy[rcaAnswer]{Prompts: react.Prompts{FinalAnswer: plannerFinal}},
	}
}

// TestReActQuickConfidentAnswerStays: a model that reads one file and
// answers confidently is answered by ReAct alone.
func TestReActQuickConfidentAnswerStays(t *testing.T) {
	s, g := setup(t)
	s.On(isPlanner, finalAnswer("planner cause", 0.9))
	s.On(llmtest.LastMessageRole("tool"), finalAnswer("x is never used", 0.9))
	s.On(nil, readCall("main.go"))
	var kinds []string
	res, err := routed().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{readFile(t)},
		func(e agent.Event) { kinds = append(kinds, e.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer.RootCause != "x is never used" || res.Path != "react" || res.Iterations != 2 {
		t.Errorf("outcome = %+v", res)
	}
	if n := len(s.ChatRequests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
	for _, k := range kinds {
		if k == agent.EventEscalated {
			t.Error("a quick confident answer was escalated")
		}
	}
}

// TestReActFailingToolsEscalate: a fast path whose calls keep failing is
// stopped at the failure one past the threshold, not at the end of its
// steps, and hands over to the planner, which learns what failed and
// answers.
func TestReActFailingToolsEscalate(t *testing.T) {
	s, g := setup(t)
	s.On(isPlanner, finalAnswer("planner cause", 0.8))
	// The answer-only turn after a guard.
	forced := s.On(llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("read_file"))), finalAnswer("fast guess", 0.9))
	reads := s.On(nil, readCall("a.go"), readCall("b.go"), readCall("c.go"), readCall("d.go"), readCall("e.go"), finalAnswer("fast guess", 0.9))
	var escalated []string
	res, err := routed().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{readFile(t)},
		func(e agent.Event) {
			if e.Kind == agent.EventEscalated {
				escalated = append(escalated, e.Text)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer.RootCause != "planner cause" || res.Path != "react → react (3 failed tool calls)" || res.Iterations != 4 || res.ToolCalls != 3 {
		t.Errorf("outcome = %+v", res)
	}
	if reads.Times() != 3 || forced.Times() != 1 {
		t.Errorf("the fast path went on after the third failure: %d tool-calling turns, %d answer-only turns", reads.Times(), forced.Times())
	}
	if fmt.Sprint(escalated) != "[3 failed tool calls]" {
		t.Errorf("escalation events %v", escalated)
	}
	reqs := s.ChatRequests()
	last := reqs[len(reqs)-1].Chat
	if !isPlanner(last) || !strings.Contains(last.Text(), "error: no such file: c.go") || !strings.Contains(last.Text(), "fast guess") {
		t.Errorf("the planner did not get what the fast path found:\n%s", last.Text())
	}
}

// TestReActLowConfidenceEscalatesAndPlannerFailureKeepsIt: an unsure fast
// answer goes to the planner; when the planner fails, the fast answer
// stands, and the planner is never routed back.
func TestReActLowConfidenceEscalatesAndPlannerFailureKeepsIt(t *testing.T) {
	s, g := setup(t)
	s.On(isPlanner, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause": `}))
	s.On(nil, finalAnswer("fast guess", 0.2))
	res, err := routed().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{readFile(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer.RootCause != "fast guess" || !strings.HasPrefix(res.Path, "react → react (low confidence 0.20; it failed") {
		t.Errorf("outcome = %+v", res)
	}
	planner := 0
	for _, r := range s.ChatRequests() {
		if isPlanner(r.Chat) {
			planner++
		}
	}
	if n := len(s.ChatRequests()); n != 3 || planner != 2 {
		t.Errorf("%d model calls (%d by the planner), want the fast answer, the planner's answer and its repair", n, planner)
	}
}
