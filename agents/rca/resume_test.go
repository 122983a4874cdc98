package rca

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/prompts"
)

func gateway(t *testing.T, url string) *llm.Gateway {
	t.Helper()
	g, err := llm.New(llm.Config{BaseURL: url, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestExplanationResumesUntilTheCodeChanges: an explanation cut short
// resumes when the same error is explained again in the same code, saying
// so in its note; once the code changes the same error starts afresh.
func TestExplanationResumesUntilTheCodeChanges(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"x is never read","fixGuidelines":["use x"],"confidence":0.9}`})
	fake.On(llmtest.ToolMessages(0), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go"}`}))
	fake.On(llmtest.ToolMessages(1), llmtest.Reply{Hang: true}, final)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tx := 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := &graph.MemoryCheckpointer{}
	x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), Checkpoints: cp,
		Agent: agent.Budget{StepTimeout: 300 * time.Millisecond}}

	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil || !strings.Contains(rep.Note, "the configured model could not answer") {
		t.Fatalf("interrupted explanation: %v, note %q", err, rep.Note)
	}
	fake.WaitDisconnects(1, 2*time.Second)
	if n := fake.CountChat(); n != 2 {
		t.Fatalf("%d model calls before the interruption, want 2", n)
	}
	var events []string
	rep, err = x.Explain(context.Background(), goOutput, false, func(e agent.Event) { events = append(events, e.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	if n := fake.CountChat(); n != 3 {
		t.Errorf("%d model calls in all, want the first again not repeated (3)", n)
	}
	if rep.RCA.RootCause != "x is never read" || rep.RCA.Path != "react" || !strings.Contains(rep.Note, "resumed from step 2") {
		t.Errorf("resumed explanation %+v, note %q", rep.RCA, rep.Note)
	}
	if len(events) == 0 || events[0] != graph.EventResumed {
		t.Errorf("events %v, want the resume first", events)
	}
	md := rep.Markdown()
	if !strings.Contains(md, "path: react") || !strings.Contains(md, "resumed from step 2") {
		t.Errorf("markdown lacks the path or the resume:\n%s", md)
	}
	data, _ := json.Marshal(rep)
	if !strings.Contains(string(data), `"path":"react"`) {
		t.Errorf("JSON lacks the path: %s", data)
	}

	// The same error in changed code is another thread.
	hash, _ := x.contentHash(rep.Errors[0])
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tx := 2\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, _ := x.contentHash(rep.Errors[0]); x.thread(rep.Errors[0], hash) == x.thread(rep.Errors[0], changed) {
		t.Error("the thread did not change with the code")
	}
}

// TestRoutedStrategyEscalatesAnUnsureAnswer: with RoutedStrategy, an
// unsure ReAct answer is handed to the escalation target, and the
// explanation says which path answered.
func TestRoutedStrategyEscalatesAnUnsureAnswer(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"maybe x","fixGuidelines":[],"confidence":0.2}`}))
	planner := &fakeStrategy{}
	x := &Explainer{Workspace: t.TempDir(), Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), Strategy: RoutedStrategy(planner)}
	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RCA.RootCause != "x is never read" || rep.RCA.Path != "react → fake (low confidence 0.20)" {
		t.Errorf("answer %+v", rep.RCA)
	}
	if !strings.Contains(planner.task.User, "maybe x") || !strings.Contains(rep.Markdown(), "path: react → fake (low confidence 0.20)") {
		t.Errorf("the planner's task or the markdown lacks the hand-over:\n%s", planner.task.User)
	}
}

// explainAfterARead explains goOutput with a checkpointer, the model
// reading main.go first and then answering with then; it returns the
// report and whether the run's thread kept a checkpoint.
func explainAfterARead(t *testing.T, then llmtest.Reply) (*Report, bool) {
	t.Helper()
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.On(llmtest.ToolMessages(0), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go"}`}))
	fake.On(llmtest.Any(), then)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tx := 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := &graph.MemoryCheckpointer{}
	x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), Checkpoints: cp}
	rep, err := x.Explain(context.Background(), goOutput, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := x.contentHash(rep.Errors[0])
	_, kept, _ := cp.Get(context.Background(), x.thread(rep.Errors[0], hash))
	return rep, kept
}

// TestFailedExplanationStartsOverAndSaysWhy: a run the model fails (a
// final answer it cannot fix) is not continued the next time, unlike one
// cut short; and the note says the configured model failed, without
// asking to configure one.
func TestFailedExplanationStartsOverAndSaysWhy(t *testing.T) {
	rep, kept := explainAfterARead(t, llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":`}))
	if rep.RCA.Source != SourceOffline {
		t.Fatalf("explanation %+v; want the offline answer", rep.RCA)
	}
	if !strings.Contains(rep.Note, "the configured model could not answer") || strings.Contains(rep.Note, "KODYLS_LLM_BASE_URL") ||
		strings.Contains(rep.Note, "router:") || strings.Contains(rep.Note, "graph ") {
		t.Errorf("note %q", rep.Note)
	}
	if kept {
		t.Error("the failed run left a checkpoint to resume")
	}
}

// TestExplanationCutShortByTheEndpointResumes: a run stopped by the
// endpoint failing (HTTP 500 after the retries) is continued the next
// time, as the note's "try again later" promises.
func TestExplanationCutShortByTheEndpointResumes(t *testing.T) {
	rep, kept := explainAfterARead(t, llmtest.ServerError())
	if !strings.Contains(rep.Note, "try again later") {
		t.Fatalf("note %q", rep.Note)
	}
	if !kept {
		t.Error("the run the endpoint cut short left no checkpoint to resume")
	}
}

// TestRefusedSetupSaysFixNotWait: a model the endpoint does not serve is
// a set-up to fix, not a moment to wait for; the note says so.
func TestRefusedSetupSaysFixNotWait(t *testing.T) {
	rep, _ := explainAfterARead(t, llmtest.Reply{Status: 404})
	if rep.RCA.Source != SourceOffline {
		t.Fatalf("explanation %+v; want the offline answer", rep.RCA)
	}
	if strings.Contains(rep.Note, "try again later") || !strings.Contains(rep.Note, "fix the settings") || !strings.Contains(rep.Note, "404") {
		t.Errorf("note %q", rep.Note)
	}
}
