package rca

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

// openHistory opens an empty history in a temporary store.
func openHistory(t *testing.T) *index.LocalHistory {
	t.Helper()
	ctx := context.Background()
	st, err := index.OpenStore(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hist, err := index.OpenHistory(ctx, st, index.HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hist.Close() })
	return hist
}

// TestHistoryAnswersTheSameErrorOnly: two errors of one kind (one
// fingerprint) in one unchanged file are two errors. The second is not
// answered with the first one's explanation, from the cache or offline,
// and the first one's explanation reaches the model as a similar error
// with the message it was given for, not the second's.
func TestHistoryAnswersTheSameErrorOnly(t *testing.T) {
	pairs := []struct {
		name, file, text string
		a, b             errparse.Error
	}{
		{"python module", "app.py", "import requests\nimport numpy\n",
			errparse.Error{Tool: "python", Language: "python", Code: "ModuleNotFoundError", Line: 1, Message: "No module named 'requests'"},
			errparse.Error{Tool: "python", Language: "python", Code: "ModuleNotFoundError", Line: 2, Message: "No module named 'numpy'"}},
		{"go undefined", "main.go", "package main\n\nfunc main() {\n\tfoo()\n\tbar()\n}\n",
			errparse.Error{Tool: "go", Language: "go", Line: 4, Message: "undefined: foo"},
			errparse.Error{Tool: "go", Language: "go", Line: 5, Message: "undefined: bar"}},
		{"go unused variable", "main.go", "package main\n\nfunc main() {\n\tx := 1\n\tcount := 2\n}\n",
			errparse.Error{Tool: "go", Language: "go", Line: 4, Message: "declared and not used: x"},
			errparse.Error{Tool: "go", Language: "go", Line: 5, Message: "declared and not used: count"}},
		{"go unused import", "main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n",
			errparse.Error{Tool: "go", Language: "go", Line: 4, Message: `"fmt" imported and not used`},
			errparse.Error{Tool: "go", Language: "go", Line: 5, Message: `"os" imported and not used`}},
		{"python attribute", "app.py", "a = None\nb = []\na.x\nb.x\n",
			errparse.Error{Tool: "python", Language: "python", Code: "AttributeError", Line: 3, Message: "'NoneType' object has no attribute 'x'"},
			errparse.Error{Tool: "python", Language: "python", Code: "AttributeError", Line: 4, Message: "'list' object has no attribute 'x'"}},
		{"go cannot use", "main.go", "package main\n\nvar x int\nvar y string\nvar s string = x\nvar n int = y\n",
			errparse.Error{Tool: "go", Language: "go", Line: 5, Message: "cannot use x (variable of type int) as string value in variable declaration"},
			errparse.Error{Tool: "go", Language: "go", Line: 6, Message: "cannot use y (variable of type string) as int value in variable declaration"}},
		// One message, two tests: the line tells them apart.
		{"go test failure", "x_test.go", "package x\n\nfunc TestX(t *testing.T) { t.Errorf(\"got 3, want 4\") }\nfunc TestY(t *testing.T) { t.Errorf(\"got 3, want 4\") }\n",
			errparse.Error{Tool: "go test", Language: "go", Line: 3, Message: "got 3, want 4"},
			errparse.Error{Tool: "go test", Language: "go", Line: 4, Message: "got 3, want 4"}},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, p.file), []byte(p.text), 0o644); err != nil {
				t.Fatal(err)
			}
			a, b := p.a, p.b
			a.File, b.File = p.file, p.file
			a.Fingerprint, b.Fingerprint = errparse.Fingerprint(a), errparse.Fingerprint(b)
			if a.Fingerprint != b.Fingerprint {
				t.Fatalf("the two errors are of two kinds (%q, %q): the case proves nothing", errparse.Template(a), errparse.Template(b))
			}
			answer := func(root string) llmtest.Reply {
				return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"` + root + `","fixGuidelines":["fix ` + root + `"],"confidence":0.9}`})
			}
			fake := llmtest.NewServer()
			defer fake.Close()
			// The error being explained is the prompt's "Location"; a past
			// one only appears under "Similar errors".
			fake.On(llmtest.PromptContains(p.file+":"+strconv.Itoa(b.Line)+"\n"), answer("ROOT-B"))
			fake.On(llmtest.Any(), answer("ROOT-A"))
			x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), History: openHistory(t)}
			explain := func(e errparse.Error, offline bool) *Report {
				t.Helper()
				rep, err := x.ExplainError(ctx, e, e.File+":"+strconv.Itoa(e.Line)+": "+e.Message+"\n", offline, nil)
				if err != nil || rep.RCA == nil {
					t.Fatalf("explain %q: %v", e.Message, err)
				}
				return rep
			}

			if rep := explain(a, false); rep.RCA.Source != SourceModel || rep.RCA.RootCause != "ROOT-A" {
				t.Fatalf("first error: %+v", rep.RCA)
			}
			calls := fake.CountChat()
			rep := explain(b, false)
			if rep.RCA.Source != SourceModel || rep.RCA.RootCause != "ROOT-B" || fake.CountChat() == calls {
				t.Fatalf("second error answered %+v (%s), note %q, model calls %d → %d; want the model's ROOT-B",
					rep.RCA, rep.RCA.Source, rep.Note, calls, fake.CountChat())
			}
			// The model saw the first explanation as a similar error,
			// with the message it was given for.
			reqs := fake.ChatRequests()
			prompt := reqs[calls].Chat.Text()
			if !strings.Contains(prompt, "- Error: "+a.Message+" ("+a.File+")\n  Root cause found then: ROOT-A") {
				t.Errorf("the past explanation in the prompt is not paired with its own error:\n%s", prompt)
			}
			for _, s := range rep.Similar {
				if s.RootCause == "ROOT-A" && (s.Message != a.Message || s.Exact) {
					t.Errorf("similar error %+v: ROOT-A was given for %q, another error", s, a.Message)
				}
			}

			// Each error is answered from history with its own explanation.
			calls = fake.CountChat()
			for e, want := range map[*errparse.Error]string{&a: "ROOT-A", &b: "ROOT-B"} {
				rep := explain(*e, false)
				if rep.RCA.Source != SourceHistory || rep.RCA.RootCause != want {
					t.Errorf("%q again: %+v, want %s from history", e.Message, rep.RCA, want)
				}
				rep = explain(*e, true)
				if rep.RCA.Source != SourceHistory || rep.RCA.RootCause != want {
					t.Errorf("%q offline: %+v, want %s from history", e.Message, rep.RCA, want)
				}
			}
			if fake.CountChat() != calls {
				t.Errorf("%d model calls for errors explained before", fake.CountChat()-calls)
			}
			// The message of the second error on another line, offline:
			// another error, which no past explanation answered.
			c := b
			c.Line = 1
			if rep := explain(c, true); rep.RCA.Source == SourceHistory {
				t.Errorf("another error offline answered from history: %+v, note %q", rep.RCA, rep.Note)
			}
		})
	}
}

// TestAnotherErrorOfTheKindDoesNotResumeARun: an interrupted
// explanation is continued for the same error only, not for another of
// its kind in the same code.
func TestAnotherErrorOfTheKindDoesNotResumeARun(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"bar is not declared","fixGuidelines":["declare bar"],"confidence":0.9}`})
	fake.On(llmtest.ToolMessages(0), llmtest.Tools(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"main.go"}`}))
	fake.On(llmtest.ToolMessages(1), llmtest.Reply{Hang: true}, final)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tfoo()\n\tbar()\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), Checkpoints: &graph.MemoryCheckpointer{},
		Agent: agent.Budget{StepTimeout: 300 * time.Millisecond}}
	if rep, err := x.Explain(context.Background(), "./main.go:4:2: undefined: foo\n", false, nil); err != nil || !strings.Contains(rep.Note, "could not answer") {
		t.Fatalf("interrupted explanation: %v, %+v", err, rep)
	}
	fake.WaitDisconnects(1, 2*time.Second)
	rep, err := x.Explain(context.Background(), "./main.go:5:2: undefined: bar\n", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.Note, "resumed") {
		t.Errorf("undefined: bar continued the run of undefined: foo: note %q", rep.Note)
	}
}

// TestHistoryKeepsNoSecrets: the history, a file that outlives the
// session and that `kodyls history search` prints, holds error text with
// its secrets redacted; the same error with another password is still
// one error.
func TestHistoryKeepsNoSecrets(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "db.py"), []byte("import psycopg\npsycopg.connect(DSN)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := openHistory(t)
	x := &Explainer{Workspace: ws, Prompts: prompts.Builtin(), History: hist}
	secrets := []string{"Zq8-hunter2-Wx", "Pv3-swordfish-Lk"}
	fps := map[string]bool{}
	for _, pw := range secrets {
		e := errparse.Error{Tool: "python", Language: "python", Code: "OperationalError", File: "db.py", Line: 2,
			Message: "connection to postgres://admin:" + pw + "@db.internal:5432/app failed: password authentication failed"}
		e.Fingerprint = errparse.Fingerprint(e)
		fps[e.Fingerprint] = true
		raw := "Traceback (most recent call last):\n  File \"db.py\", line 2\npsycopg.OperationalError: " + e.Message + "\nDATABASE_URL=postgres://admin:" + pw + "@db.internal:5432/app\n"
		if _, err := x.ExplainError(ctx, e, raw, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(fps) != 1 {
		t.Errorf("the same error with two passwords has %d fingerprints", len(fps))
	}
	st, err := hist.Stats(ctx)
	if err != nil || st.Errors != 1 || st.Occurrences != 2 {
		t.Errorf("history holds %+v, %v; want one error seen twice", st, err)
	}
	found, err := hist.Search(ctx, "", "password authentication failed", 5)
	if err != nil || len(found) != 1 {
		t.Fatalf("search: %+v, %v", found, err)
	}
	h := found[0]
	for what, text := range map[string]string{"message": h.Message, "raw": h.Raw, "template": h.Template} {
		for _, pw := range secrets {
			if strings.Contains(text, pw) {
				t.Errorf("the stored %s holds the password: %q", what, text)
			}
		}
	}
	if !strings.Contains(h.Message, "[REDACTED") || !strings.Contains(h.Message, "password authentication failed") {
		t.Errorf("stored message %q: want the error with the secret redacted", h.Message)
	}
}
