package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
)

// TestGuardsSurviveACheckpoint: guards saved as JSON and restored after an
// interruption still see the calls made before it, so a loop that spans
// the interruption is caught and the budget is not reset.
func TestGuardsSurviveACheckpoint(t *testing.T) {
	call := func(name, args string) llm.ToolCall {
		return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	g := agent.NewGuards(3)
	g.Record(call("read_file", `{"path":"a.go"}`), true)
	g.Record(call("search", `{"q":"x"}`), false)

	data, err := json.Marshal(g.State())
	if err != nil {
		t.Fatal(err)
	}
	var saved agent.GuardState
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	r := agent.RestoreGuards(saved)
	if r.Calls() != 2 {
		t.Fatalf("restored guards count %d calls, want 2", r.Calls())
	}
	if guard, _ := r.Check(call("read_file", `{"path":"a.go"}`)); guard != agent.GuardAlternation {
		t.Errorf("A, B, A across the checkpoint: guard %q, want %q", guard, agent.GuardAlternation)
	}
	r.Record(call("list_files", `{}`), true)
	if guard, _ := r.Check(call("list_files", `{"dir":"."}`)); guard != agent.GuardMaxToolCalls {
		t.Errorf("fourth call after the restore: guard %q, want %q", guard, agent.GuardMaxToolCalls)
	}
	// The saved state is a copy: recording after the restore does not
	// change it.
	if len(saved.Actions) != 2 || len(g.State().Actions) != 2 {
		t.Errorf("saved state changed: %d and %d actions", len(saved.Actions), len(g.State().Actions))
	}
}

// TestFailedCallsStopARun: with StopAfterFailedCalls set, the failure that
// reaches it stops the run, also after a checkpoint; without it failures
// never do.
func TestFailedCallsStopARun(t *testing.T) {
	call := func(path string) llm.ToolCall {
		return llm.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}
	}
	g := agent.BudgetGuards(agent.Budget{MaxToolCalls: 20, StopAfterFailedCalls: 3})
	g.Record(call("a.go"), false)
	g.Record(call("b.go"), true)
	g.Record(call("c.go"), false)
	if guard, _ := g.Stop(); guard != "" {
		t.Fatalf("stopped after 2 failures: %q", guard)
	}
	data, _ := json.Marshal(g.State())
	var saved agent.GuardState
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	r := agent.RestoreGuards(saved)
	r.Record(call("d.go"), false)
	if guard, why := r.Stop(); guard != agent.GuardFailedCalls || why != "3 tool calls failed" {
		t.Errorf("third failure after a checkpoint: %q %q", guard, why)
	}
	n := agent.NewGuards(20)
	for _, p := range []string{"a", "b", "c", "d"} {
		n.Record(call(p), false)
	}
	if guard, _ := n.Stop(); guard != "" {
		t.Errorf("failures stopped a run without the limit: %q", guard)
	}
}
