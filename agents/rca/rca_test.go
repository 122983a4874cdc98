package rca

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/prompts"
)

const goOutput = "./main.go:4:2: declared and not used: x\n"

// fakeStrategy answers without a model and remembers what it was given.
type fakeStrategy struct {
	task  agent.Task
	tools []string
}

func (f *fakeStrategy) Name() string { return "fake" }

func (f *fakeStrategy) Run(_ context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[ModelAnswer], error) {
	f.task = task
	for _, t := range tools {
		f.tools = append(f.tools, t.Name)
	}
	emit(agent.Event{Kind: agent.EventDone, Text: "planned"})
	return agent.Outcome[ModelAnswer]{
		Answer:     ModelAnswer{RootCause: "x is never read", FixGuidelines: []string{"use x"}, Confidence: 0.7},
		Iterations: 2, ToolsUsed: []string{"read_file"},
	}, nil
}

// TestExplainerUsesItsStrategy: an Explainer given another strategy
// answers with it, the workspace tools in hand, instead of ReAct.
func TestExplainerUsesItsStrategy(t *testing.T) {
	g, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1", Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := &fakeStrategy{}
	x := &Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin(), Strategy: s, Agent: agent.Budget{MaxIterations: 4}}
	var events []string
	rep, err := x.Explain(context.Background(), goOutput, false, func(e agent.Event) { events = append(events, e.Kind+" "+e.Text) })
	if err != nil {
		t.Fatal(err)
	}
	want := Answer{RootCause: "x is never read", FixGuidelines: []string{"use x"}, Confidence: 0.7, Iterations: 2, ToolsUsed: []string{"read_file"}, Source: SourceModel}
	if fmt.Sprint(*rep.RCA) != fmt.Sprint(want) {
		t.Errorf("answer = %+v, want %+v", *rep.RCA, want)
	}
	if fmt.Sprint(events) != "[done planned]" {
		t.Errorf("events = %v", events)
	}
	if s.task.Feature != "rca" || s.task.Budget.MaxIterations != 4 || !strings.Contains(s.task.User, "declared and not used") {
		t.Errorf("task = %+v", s.task)
	}
	for _, name := range []string{"read_file", "search_workspace", "similar_errors", "local_docs"} {
		if !slices.Contains(s.tools, name) {
			t.Errorf("tools %v lack %s", s.tools, name)
		}
	}
}

// TestDefaultStrategyAsksInRCATerms: without a strategy the Explainer runs
// ReAct, whose final_answer tool takes the RCA answer's schema and whose
// prompts speak of root causes.
func TestDefaultStrategyAsksInRCATerms(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.PromptContains("was not usable"), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":" x is never read ","fixGuidelines":["use x", " "],"confidence":85}`}))
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"fixGuidelines":[]}`}))
	g, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := &Explainer{Workspace: t.TempDir(), Gateway: g, Prompts: prompts.Builtin()}
	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.RCA; a.Source != SourceModel || a.RootCause != "x is never read" || fmt.Sprint(a.FixGuidelines) != "[use x]" || a.Confidence != 0.85 {
		t.Errorf("answer = %+v, want the repaired answer trimmed, its confidence of 85 read as 85%%", a)
	}
	reqs := fake.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the answer and its repair", len(reqs))
	}
	var final json.RawMessage
	for _, tool := range reqs[0].Chat.Tools {
		if tool.Function.Name == "final_answer" {
			final, _ = json.Marshal(tool.Function)
		}
	}
	for _, want := range []string{"the root cause of the error", `"rootCause"`, `"fixGuidelines"`, `"confidence"`} {
		if !strings.Contains(string(final), want) {
			t.Errorf("final_answer tool %s lacks %s", final, want)
		}
	}
	if text := reqs[1].Chat.Text(); !strings.Contains(text, "rootCause is missing") || !strings.Contains(text, `{"rootCause": non-empty string`) {
		t.Errorf("repair turn lacks the problem or the expected shape:\n%s", text)
	}
}
