package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
)

// The default strategy through the binary, with a model that answers
// every request the same way.

// A confidence given as a percentage is shown as that percentage and
// escalates as unsure; when the planner's plan is unusable the path says
// that its ReAct fallback answered, in the text output and in the
// editor's markdown alike.
func TestExplainPercentConfidenceAndFallbackPath(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"maybe n is unused, not sure","fixGuidelines":["check"],"confidence":30}`}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--verbose")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	const path = "react → plan-execute (low confidence 0.30) → react (plan unusable)"
	if !strings.Contains(out, "Root cause (model, confidence 30%)") || !strings.Contains(out, "Agent path: "+path+"\n") {
		t.Errorf("a 30%% sure answer, escalated to a plan that was unusable:\n%s", out)
	}
	if !strings.Contains(errOut, "escalated: low confidence 0.30") || !strings.Contains(errOut, "plan_unusable") {
		t.Errorf("--verbose:\n%s", errOut)
	}
}

// "At most 10 steps and 20 tool calls" holds for the whole explanation: a
// model that only ever asks for more files is stopped at 20 tool calls in
// all, not 20 per strategy, and a fast path whose calls fail is stopped at
// the third failure.
func TestExplainBudgetIsPerExplanation(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		call       func(turn, i int) string
	}{
		{"searches", "search_workspace", func(turn, i int) string { return fmt.Sprintf(`{"query":"unused%d_%d"}`, turn, i) }},
		{"failing reads", "read_file", func(turn, i int) string { return fmt.Sprintf(`{"path":"../outside%d_%d.go"}`, turn, i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := llmtest.NewServer()
			defer fake.Close()
			var turns []llmtest.Reply
			for turn := range 12 {
				var calls []llmtest.ToolCall
				for i := range 8 {
					calls = append(calls, llmtest.ToolCall{Name: tc.tool, Arguments: tc.call(turn, i)})
				}
				turns = append(turns, llmtest.Tools(calls...))
			}
			fake.On(llmtest.Any(), turns...)
			repo := brokenGoRepo(t)
			env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
			out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--verbose", "--json")
			if code != 0 {
				t.Fatalf("code %d\n%s%s", code, out, errOut)
			}
			var rep explainJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			action := " action " + tc.tool + " "
			if n := strings.Count(errOut, action); n > 20 {
				t.Errorf("%d tool calls in one explanation, more than 20\n%s", n, errOut)
			}
			if tc.name == "failing reads" {
				// The fast path stops at the third failure and hands over
				// the rest.
				before, _, _ := strings.Cut(errOut, "agent: escalated: ")
				if n := strings.Count(before, action); n != 3 || !strings.Contains(errOut, "agent: escalated: ") {
					t.Errorf("the fast path made %d calls before escalating, want 3\n%s", n, errOut)
				}
			} else if strings.Contains(errOut, "agent: escalated: ") {
				t.Errorf("escalated with the budget's 20 tool calls used\n%s", errOut)
			}
		})
	}
}
