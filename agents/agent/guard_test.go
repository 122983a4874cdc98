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
