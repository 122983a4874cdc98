package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/agents/react"
	"github.com/kodustech/kodyls/agents/router"
)

// anyFile is a read_file that reads every path, counting its runs.
func anyFile(runs *atomic.Int32) agent.Tool {
	type args struct {
		Path string `json:"path"`
	}
	return agent.Tool{Name: "read_file", Description: "read a file", Parameters: args{},
		Run: func(_ context.Context, raw json.RawMessage) (string, error) {
			runs.Add(1)
			var a args
			_ = json.Unmarshal(raw, &a)
			return "package main // " + a.Path, nil
		}}
}

// eightReads is a reply with eight read_file calls, each of a file no
// other reply reads, so that no loop guard fires.
func eightReads(turn int) llmtest.Reply {
	var calls []llmtest.ToolCall
	for i := range 8 {
		calls = append(calls, llmtest.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d_%d.go"}`, turn, i)})
	}
	return llmtest.Tools(calls...)
}

func routedPlanExecute() router.Strategy[rcaAnswer] {
	return router.Strategy[rcaAnswer]{Fast: react.Strategy[rcaAnswer]{}, Planner: planexec.Strategy[rcaAnswer]{}}
}

// handedOver matches the requests of the escalation (its plan, its
// fallback), whose task carries the fast path's hand-over.
var handedOver = llmtest.PromptContains("handed this task over")

// answerOnly matches the answer-only turn after a guard.
var answerOnly = llmtest.All(llmtest.HasTool("final_answer"), llmtest.Not(llmtest.HasTool("read_file")))

// TestOneBudgetForTheWholeRun: the escalation and the fallback it hands an
// unusable plan to work with what the fast path left of the task's tool
// calls and steps, not with a budget of their own each; the path names
// the fallback that answered.
func TestOneBudgetForTheWholeRun(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{}))
	s.On(llmtest.All(handedOver, answerOnly), finalAnswer("the fallback's cause", 0.9))
	fallback := s.On(handedOver, eightReads(10), eightReads(11), eightReads(12), eightReads(13))
	s.On(llmtest.LastMessageRole("tool"), finalAnswer("a guess", 0.2))
	s.On(nil, eightReads(0))
	var runs atomic.Int32
	res, err := routedPlanExecute().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{anyFile(&runs)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runs.Load(), int32(agent.DefaultMaxToolCalls); got != want || res.ToolCalls != int(want) {
		t.Errorf("%d tool runs (outcome says %d), want the task's %d in all", got, res.ToolCalls, want)
	}
	if fallback.Times() != 2 {
		t.Errorf("the fallback made %d tool-calling turns, want 2 (8 calls, then the 4 the fast path left)", fallback.Times())
	}
	if res.Iterations > agent.DefaultMaxIterations {
		t.Errorf("%d steps in all, more than the task's %d", res.Iterations, agent.DefaultMaxIterations)
	}
	if res.Answer.RootCause != "the fallback's cause" || res.Path != "react → plan-execute (low confidence 0.20) → react (plan unusable)" {
		t.Errorf("outcome %+v", res)
	}
}

// TestNoEscalationWithTheBudgetSpent: a fast path that used every tool
// call of the task is not escalated for more; its failure is the run's.
func TestNoEscalationWithTheBudgetSpent(t *testing.T) {
	s, g := setup(t)
	plans := s.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{}))
	s.On(nil, eightReads(0), eightReads(1), eightReads(2), eightReads(3), eightReads(4), eightReads(5), eightReads(6), eightReads(7))
	var runs atomic.Int32
	_, err := routedPlanExecute().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{anyFile(&runs)}, nil)
	if err == nil || !strings.Contains(err.Error(), "not escalated: all 20 tool calls of the budget are used") {
		t.Errorf("err = %v", err)
	}
	if runs.Load() != int32(agent.DefaultMaxToolCalls) || plans.Times() != 0 || len(s.ChatRequests()) != 5 {
		t.Errorf("%d tool runs, %d plans, %d model calls; want 20, none and 5 (3 turns, the answer-only turn and its repair)", runs.Load(), plans.Times(), len(s.ChatRequests()))
	}
}

// TestStepThresholdLeavesThePlannerRoom: a fast path that runs past its
// steps hands over with the rest of the task's steps, and the plan is
// asked to fit in them.
func TestStepThresholdLeavesThePlannerRoom(t *testing.T) {
	s, g := setup(t)
	plan := s.On(llmtest.SchemaName(planexec.SchemaPlan), llmtest.JSON(map[string]any{"steps": []any{
		map[string]any{"id": "1", "description": "read it", "tool": "read_file", "args": map[string]any{"path": "main.go"}},
		map[string]any{"id": "2", "description": "read the test", "tool": "read_file", "args": map[string]any{"path": "main_test.go"}},
	}}))
	s.On(llmtest.All(handedOver, answerOnly), finalAnswer("planned cause", 0.9))
	s.On(answerOnly, finalAnswer("hedged", 0.9))
	var replies []llmtest.Reply
	for i := range 10 {
		replies = append(replies, readCall(fmt.Sprintf("f%d.go", i)))
	}
	s.On(nil, replies...)
	var runs atomic.Int32
	res, err := routedPlanExecute().Run(context.Background(), agent.Task{Gateway: g, User: "x declared and not used"}, []agent.Tool{anyFile(&runs)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "react → plan-execute (ran past 6 steps)" || res.Answer.RootCause != "planned cause" || plan.Times() != 1 {
		t.Fatalf("outcome %+v after %d plans", res, plan.Times())
	}
	if res.Iterations != agent.DefaultMaxIterations || runs.Load() != 8 {
		t.Errorf("%d steps and %d tool runs: want the task's 10 steps (6 + plan, 2 steps, answer) and 8 calls", res.Iterations, runs.Load())
	}
	for _, r := range s.ChatRequests() {
		if r.Chat.ResponseFormat != nil && !strings.Contains(r.Chat.Text(), "At most 2 steps") {
			t.Errorf("the plan request does not ask for at most the 2 steps left:\n%s", r.Chat.Text())
		}
	}
}
