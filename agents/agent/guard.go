package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kodustech/kodyls/agents/llm"
)

// Guard names reported in [Outcome.Guard] and guard events. Small and
// local models easily wander; a guard that fires does not fail the run but
// makes the strategy ask for the model's best answer with tools off.
const (
	GuardMaxIterations  = "max_iterations"
	GuardMaxToolCalls   = "max_tool_calls"
	GuardRepeatedAction = "repeated_action" // the same action three times in a row
	GuardAlternation    = "alternation"     // A, B, A
	GuardDuplicateCall  = "duplicate_call"  // a call whose answer the model already has
	GuardFailedCalls    = "failed_calls"    // Budget.StopAfterFailedCalls tool calls failed
)

// Guards applies the tool-call budget and the loop guards to the tool
// calls of one run. The zero value has no tool-call limit; use
// [NewGuards].
type Guards struct {
	maxCalls  int
	maxFailed int
	actions   []GuardAction
}

// GuardAction is one tool call as the loop detector sees it.
type GuardAction struct {
	Key string `json:"key"` // tool name and normalised arguments
	OK  bool   `json:"ok"`  // the call ran and did not fail
}

// GuardState is what the guards remember, in a form that survives a JSON
// round trip: a strategy saves it in its checkpoints and a resumed run
// restores it with [RestoreGuards], so a loop that began before an
// interruption is still recognised after it.
type GuardState struct {
	MaxCalls  int           `json:"maxCalls"`
	MaxFailed int           `json:"maxFailed,omitempty"`
	Actions   []GuardAction `json:"actions"`
}

// State returns a copy of what the guards remember.
func (g *Guards) State() GuardState {
	return GuardState{MaxCalls: g.maxCalls, MaxFailed: g.maxFailed, Actions: slices.Clone(g.actions)}
}

// RestoreGuards returns guards that continue from a saved state.
func RestoreGuards(s GuardState) *Guards {
	return &Guards{maxCalls: s.MaxCalls, maxFailed: s.MaxFailed, actions: slices.Clone(s.Actions)}
}

// NewGuards returns the guards of a run that may make maxToolCalls tool
// calls (<= 0: no limit).
func NewGuards(maxToolCalls int) *Guards {
	return &Guards{maxCalls: maxToolCalls}
}

// BudgetGuards returns the guards of a run with budget b: its tool-call
// limit and, when set, the failed calls that stop it.
func BudgetGuards(b Budget) *Guards {
	return &Guards{maxCalls: b.MaxToolCalls, maxFailed: max(b.StopAfterFailedCalls, 0)}
}

// Stop says whether the calls recorded so far end the investigation, as
// too many failed ones do; "" when it may go on.
func (g *Guards) Stop() (guard, why string) {
	if g.maxFailed <= 0 {
		return "", ""
	}
	if n := g.Failures(); n >= g.maxFailed {
		return GuardFailedCalls, fmt.Sprintf("%d tool calls failed", n)
	}
	return "", ""
}

// Failures is the number of failed tool calls recorded.
func (g *Guards) Failures() int {
	n := 0
	for _, a := range g.actions {
		if !a.OK {
			n++
		}
	}
	return n
}

// Check applies the budget and loop detection to the call about to run. It
// returns the guard that forbids it and why, or "" when it may run.
func (g *Guards) Check(c llm.ToolCall) (guard, why string) {
	if g.maxCalls > 0 && len(g.actions) >= g.maxCalls {
		return GuardMaxToolCalls, fmt.Sprintf("the investigation reached its limit of %d tool calls", g.maxCalls)
	}
	key := actionKey(c)
	n := len(g.actions)
	if n >= 2 && g.actions[n-1].Key == key && g.actions[n-2].Key == key {
		return GuardRepeatedAction, fmt.Sprintf("%s was called with the same arguments three times in a row", c.Name)
	}
	if n >= 2 && g.actions[n-2].Key == key && g.actions[n-1].Key != key {
		return GuardAlternation, fmt.Sprintf("the investigation alternates between the same two actions (%s again)", c.Name)
	}
	// A retry after a failure may succeed (a timeout, a typo fixed in a
	// file meanwhile), so only a call that already succeeded is a
	// duplicate: its answer is in the conversation.
	for _, a := range g.actions {
		if a.Key == key && a.OK {
			return GuardDuplicateCall, fmt.Sprintf("%s was already called with the same input and its result is above", c.Name)
		}
	}
	return "", ""
}

// Record notes that c ran; ok is false when it failed.
func (g *Guards) Record(c llm.ToolCall, ok bool) {
	g.actions = append(g.actions, GuardAction{Key: actionKey(c), OK: ok})
}

// Calls is the number of tool calls recorded.
func (g *Guards) Calls() int { return len(g.actions) }

// actionKey makes calls whose arguments differ only in key order or
// spacing compare equal.
func actionKey(c llm.ToolCall) string {
	var v any
	if err := json.Unmarshal(c.Arguments, &v); err != nil {
		return c.Name + " " + string(bytes.TrimSpace(c.Arguments))
	}
	b, err := json.Marshal(v) // map keys come out sorted
	if err != nil {
		return c.Name + " " + string(c.Arguments)
	}
	return c.Name + " " + string(b)
}
