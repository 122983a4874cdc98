package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
)

type readFileArgs struct {
	Path string `json:"path" jsonschema:"file path relative to the repository root"`
}

type grepArgs struct {
	Pattern string `json:"pattern"`
	Limit   int    `json:"limit,omitempty"`
}

// testTools are a read_file that fails on missing.go, a grep that echoes
// its decoded arguments, a tool with no output and one that panics.
func testTools() []agent.Tool {
	return []agent.Tool{
		{Name: "read_file", Description: "Read a file", Parameters: readFileArgs{},
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				var a readFileArgs
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				if a.Path == "missing.go" {
					return "", errors.New("no such file: missing.go")
				}
				return "package main // " + a.Path, nil
			}},
		{Name: "grep", Description: "Search the repository", Parameters: grepArgs{},
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				var a grepArgs
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				return fmt.Sprintf("grep %s %d", a.Pattern, a.Limit), nil
			}},
		{Name: "quiet", Run: func(context.Context, json.RawMessage) (string, error) { return "", nil }},
		{Name: "boom", Run: func(context.Context, json.RawMessage) (string, error) { panic("bug") }},
	}
}

func TestExecutorObservations(t *testing.T) {
	var logged bytes.Buffer
	x, err := agent.NewExecutor(testTools(), slog.New(slog.NewTextHandler(&logged, nil)), "final_answer")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		want             string // the observation, or its prefix when it ends with "…"
		ok               bool
	}{
		{"runs the tool", "read_file", `{"path": "main.go"}`, "package main // main.go", true},
		{"coerces a string to the schema's integer", "grep", `{"pattern": "panic", "limit": "5"}`, "grep panic 5", true},
		{"extracts JSON wrapped in a fence", "grep", "```json\n{\"pattern\": \"x\"}\n```", "grep x 0", true},
		{"empty arguments are an empty object", "quiet", ``, "(no output)", true},
		{"tool error", "read_file", `{"path": "missing.go"}`, "error: no such file: missing.go", false},
		{"arguments that are not JSON", "grep", `{"pattern": "x"`, "error: the arguments for grep are not valid JSON…", false},
		{"arguments that miss a required field", "read_file", `{"file": "a.go"}`, "error: invalid arguments for read_file: …", false},
		{"unknown tool", "delete_repo", `{}`, `error: there is no tool named "delete_repo"; available tools: boom, final_answer, grep, quiet, read_file`, false},
		{"panic", "boom", `{}`, "error: tool boom failed unexpectedly", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obs, ok := x.Run(context.Background(), llm.ToolCall{ID: "c1", Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if prefix, cut := strings.CutSuffix(tc.want, "…"); cut {
				if !strings.HasPrefix(obs, prefix) {
					t.Errorf("observation = %q, want it to start with %q", obs, prefix)
				}
			} else if obs != tc.want {
				t.Errorf("observation = %q, want %q", obs, tc.want)
			}
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
		})
	}
	if !strings.Contains(logged.String(), "panic=bug") {
		t.Errorf("the panic was not logged: %q", logged.String())
	}
}

func TestExecutorTools(t *testing.T) {
	x, err := agent.NewExecutor(testTools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defs := x.Tools()
	if len(defs) != 4 || defs[0].Name != "read_file" || defs[1].Name != "grep" || defs[0].Description != "Read a file" {
		t.Errorf("definitions = %+v, want the tools in the order given", defs)
	}
	if !x.Has("grep") || x.Has("final_answer") {
		t.Error("Has does not match the tools given")
	}
	run := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	for _, bad := range [][]agent.Tool{
		{{Name: "final_answer", Run: run}},
		{{Name: "a", Run: run}, {Name: "a", Run: run}},
		{{Name: "a"}},
		{{Run: run}},
	} {
		if _, err := agent.NewExecutor(bad, nil, "final_answer"); err == nil {
			t.Errorf("NewExecutor(%+v) accepted", bad)
		}
	}
}

func TestGuards(t *testing.T) {
	call := func(name, args string) llm.ToolCall {
		return llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	g := agent.NewGuards(3)
	g.Record(call("read_file", `{"path":"a.go","x":1}`), true)
	if guard, _ := g.Check(call("read_file", `{ "x": 1, "path": "a.go" }`)); guard != agent.GuardDuplicateCall {
		t.Errorf("the same call with reordered keys: guard %q, want %q", guard, agent.GuardDuplicateCall)
	}
	g.Record(call("grep", `{}`), false)
	if guard, _ := g.Check(call("read_file", `{"path":"a.go","x":1}`)); guard != agent.GuardAlternation {
		t.Errorf("A, B, A: guard %q, want %q", guard, agent.GuardAlternation)
	}
	if guard, _ := g.Check(call("grep", `{}`)); guard != "" {
		t.Errorf("a retry of a failed call: guard %q, want none", guard)
	}
	g.Record(call("grep", `{}`), false)
	if guard, why := g.Check(call("search", `{}`)); guard != agent.GuardMaxToolCalls || !strings.Contains(why, "limit of 3 tool calls") {
		t.Errorf("fourth call: guard %q (%s), want %q", guard, why, agent.GuardMaxToolCalls)
	}
	if g.Calls() != 3 {
		t.Errorf("Calls = %d, want 3", g.Calls())
	}
}

func TestDecodeAnswer(t *testing.T) {
	type plain struct {
		N int `json:"n"`
	}
	if a, err := agent.DecodeAnswer[plain](json.RawMessage(` {"n": 2} `)); err != nil || a.N != 2 {
		t.Errorf("DecodeAnswer = %+v, %v", a, err)
	}
	if _, err := agent.DecodeAnswer[plain](json.RawMessage(`{"n": `)); err == nil || !strings.Contains(err.Error(), "not a valid JSON object") {
		t.Errorf("DecodeAnswer of broken JSON: %v", err)
	}
	if _, err := agent.DecodeAnswer[checked](json.RawMessage(`{"n": 0}`)); err == nil || err.Error() != "n must be positive" {
		t.Errorf("DecodeAnswer did not check the answer: %v", err)
	}
}

type checked struct {
	N int `json:"n"`
}

func (c *checked) Check() error {
	if c.N <= 0 {
		return errors.New("n must be positive")
	}
	return nil
}
