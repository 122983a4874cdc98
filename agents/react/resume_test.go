package react_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/react"
)

func roles(r llmtest.Recorded) string {
	var out []string
	for _, m := range r.Chat.Messages {
		out = append(out, m.Role)
	}
	return strings.Join(out, ",")
}

// TestInterruptedRunResumes: a run whose third model call never returns
// leaves a checkpoint; the next run of the same thread continues from it
// without sending the first two model calls again or re-running their
// tools, with its guards remembering the calls made before the
// interruption, and a finished thread starts over.
func TestInterruptedRunResumes(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.Not(llmtest.HasTool("read_file")), final(goodAnswer))
	s.On(llmtest.ToolMessages(0), llmtest.Tools(call("read_file", "a.go"),
		// Arguments that are not JSON must survive the checkpoint as sent.
		llmtest.ToolCall{Name: "search", Arguments: `{"path": "x"`}))
	s.On(llmtest.ToolMessages(2), llmtest.Tools(call("search", "x")))
	// The third call hangs the first time; asked again, the model repeats
	// a call whose answer it already has.
	s.On(llmtest.ToolMessages(3), llmtest.Reply{Hang: true}, llmtest.Tools(call("read_file", "a.go")))

	cp := &graph.MemoryCheckpointer{}
	rec := &recorder{}
	task := agent.Task{Gateway: g, System: "Find the root cause.", User: "panic: assignment to entry in nil map",
		Budget: agent.Budget{StepTimeout: 300 * time.Millisecond}, Thread: "thread-1", Checkpoints: cp}
	_, err := react.Strategy[answer]{}.Run(context.Background(), task, rec.tools(), rec.emit)
	if !errors.Is(err, agent.ErrStepTimeout) {
		t.Fatalf("first run: err = %v, want the step timeout", err)
	}
	s.WaitDisconnects(1, 2*time.Second)
	saved, ok, _ := cp.Get(context.Background(), "thread-1")
	if !ok || saved.Done || saved.Next != graph.NodeReason || saved.Graph != react.GraphName {
		t.Fatalf("checkpoint after the interruption = %+v (ok %v), want an unfinished one before reason", saved, ok)
	}
	if !strings.Contains(string(saved.State), `"arguments":"{\"path\": \"x\""`) {
		t.Errorf("the malformed arguments were not kept as sent:\n%s", saved.State)
	}
	before := len(s.ChatRequests())
	if before != 3 {
		t.Fatalf("%d requests before the resume, want 3", before)
	}

	rec2 := &recorder{}
	res, err := react.Strategy[answer]{}.Run(context.Background(), task, rec.tools(), rec2.emit)
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests in all, want 3 + the third again + the forced answer", len(reqs))
	}
	if roles(reqs[3]) != roles(reqs[2]) {
		t.Errorf("the resumed run did not continue the conversation:\n got  %s\n want %s", roles(reqs[3]), roles(reqs[2]))
	}
	if fmt.Sprint(rec.calls) != "[read_file a.go search x]" {
		t.Errorf("tools ran %v, want each once across both runs", rec.calls)
	}
	if !res.Forced || res.Guard != agent.GuardDuplicateCall {
		t.Errorf("Forced=%v Guard=%q: the guards forgot the calls made before the interruption", res.Forced, res.Guard)
	}
	if res.Iterations != 3 || fmt.Sprint(res.ToolsUsed) != "[read_file search]" || res.Answer.RootCause != "nil map write in main.go" {
		t.Errorf("outcome = %+v", res)
	}
	if k := rec2.kinds(); !strings.HasPrefix(k, graph.EventResumed+",iteration,") || !strings.HasSuffix(k, ",guard,done") {
		t.Errorf("resumed run events = %s", k)
	}
	if e := rec2.events[0]; e.Node != graph.NodeReason || e.Iteration != saved.Step {
		t.Errorf("resume event = %+v, want the node and step it continued at", e)
	}
	if e := rec2.events[1]; e.Iteration != 3 || e.Node != graph.NodeReason {
		t.Errorf("first event after the resume = %+v, want iteration 3 at reason", e)
	}

	// The finished thread is not resumed: the next run starts over.
	if saved, _, _ := cp.Get(context.Background(), "thread-1"); !saved.Done {
		t.Fatalf("checkpoint after the answer = %+v, want done", saved)
	}
	rec3 := &recorder{}
	_, _ = react.Strategy[answer]{}.Run(context.Background(), task, rec3.tools(), rec3.emit)
	reqs = s.ChatRequests()
	if len(reqs) < 6 || roles(reqs[5]) != "system,user" {
		t.Errorf("a run of a finished thread did not start over (request 6: %v)", reqs[min(5, len(reqs)-1)].Chat.Messages)
	}
	if strings.HasPrefix(rec3.kinds(), graph.EventResumed) {
		t.Error("a finished thread was resumed")
	}
}

// TestNoThreadNoCheckpoint: without a thread nothing is saved, even with a
// checkpointer at hand.
func TestNoThreadNoCheckpoint(t *testing.T) {
	s, g := setup(t)
	s.On(nil, final(goodAnswer))
	cp := &graph.MemoryCheckpointer{}
	task := agent.Task{Gateway: g, User: "u", Checkpoints: cp}
	var strategy react.Strategy[answer]
	if _, err := strategy.Run(context.Background(), task, nil, nil); err != nil {
		t.Fatal(err)
	}
	if cp.Puts != 0 {
		t.Errorf("%d checkpoints saved without a thread", cp.Puts)
	}
}

// brokenCheckpointer fails every call, like a store that is locked or gone.
type brokenCheckpointer struct{}

func (brokenCheckpointer) Put(context.Context, agent.Checkpoint) error {
	return errors.New("disk full")
}
func (brokenCheckpointer) Get(context.Context, string) (agent.Checkpoint, bool, error) {
	return agent.Checkpoint{}, false, errors.New("database is locked")
}
func (brokenCheckpointer) Delete(context.Context, string) error { return errors.New("disk full") }

// TestBrokenCheckpointerLosesNothing: a checkpointer that fails does not
// fail the run; the answer arrives all the same.
func TestBrokenCheckpointerLosesNothing(t *testing.T) {
	s, g := setup(t)
	s.On(llmtest.LastMessageRole("tool"), final(goodAnswer))
	s.On(nil, llmtest.Tools(call("read_file", "a.go")))
	task := agent.Task{Gateway: g, User: "u", Thread: "t", Checkpoints: brokenCheckpointer{}}
	res, err := react.Strategy[answer]{}.Run(context.Background(), task, (&recorder{}).tools(), nil)
	if err != nil || res.Answer.RootCause != "nil map write in main.go" || res.Iterations != 2 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}
