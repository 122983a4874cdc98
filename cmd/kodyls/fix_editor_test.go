package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestFixThisErrorInTheEditor: a build-on-save error offers "Fix this
// error"; running it makes the server send a workspace/applyEdit whose
// edits need confirmation, for the buffer's version; the editor (one that
// previews such edits, as VS Code does) applies and saves it, the build
// passes and the diagnostic goes away. The server never writes the file.
func TestFixThisErrorInTheEditor(t *testing.T) {
	s, action := fixSession(t, lsptest.InitOptions{ChangeAnnotations: true})
	if action.Command.Command != contract.CommandFixError {
		t.Fatalf("Fix this error runs %q", action.Command.Command)
	}
	version := s.Version("main.go")
	var res contract.FixResult
	if err := s.ExecuteCommand(action.Command.Command, json.RawMessage(action.Command.Arguments[0]), &res); err != nil {
		t.Fatalf("kodyls.fixError: %v", err)
	}
	if !res.Verified || !res.Applied || res.Verification != "passed" || res.Rounds != 1 || len(res.Files) != 1 || res.Files[0] != "main.go" {
		t.Fatalf("result %+v", res)
	}
	// The server did not write the file: the editor holds the change.
	if data, _ := os.ReadFile(s.Path("main.go")); string(data) != typeErrorGo {
		t.Fatalf("the server wrote main.go:\n%s", data)
	}
	edits := s.AppliedEdits()
	if len(edits) != 1 || edits[0].Failure != "" {
		t.Fatalf("applyEdit requests %+v", edits)
	}
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct {
					Version *int32 `json:"version"`
				} `json:"textDocument"`
				Edits []struct {
					AnnotationID string `json:"annotationId"`
				} `json:"edits"`
			} `json:"documentChanges"`
			ChangeAnnotations map[string]struct {
				NeedsConfirmation bool `json:"needsConfirmation"`
			} `json:"changeAnnotations"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(edits[0].Raw, &p); err != nil {
		t.Fatal(err)
	}
	dc := p.Edit.DocumentChanges
	if len(dc) != 1 || dc[0].TextDocument.Version == nil || *dc[0].TextDocument.Version != version || len(dc[0].Edits) != 1 ||
		!p.Edit.ChangeAnnotations[dc[0].Edits[0].AnnotationID].NeedsConfirmation {
		t.Fatalf("workspace edit %s", edits[0].Raw)
	}
	if !strings.Contains(s.Text("main.go"), "\treturn \"42\"\n") {
		t.Fatalf("buffer after the edit:\n%s", s.Text("main.go"))
	}
	if p := s.Prompts(); len(p) != 0 {
		t.Fatalf("an editor that previews edits was asked first: %+v", p)
	}
	var progress []string
	for _, pr := range s.Progress() {
		progress = append(progress, pr.Value.Title+pr.Value.Message)
	}
	if all := strings.Join(progress, "\n"); !strings.Contains(all, "Fixing the error") || !strings.Contains(all, "plan created") || !strings.Contains(all, "fix passed") {
		t.Errorf("progress:\n%s", all)
	}
	s.Save("main.go")
	s.AwaitDiagnostics("main.go", lsptest.Empty)
	s.Shutdown()
}

// TestFailedFixOffersNoEdit: a fix whose plan failed (here the build
// still fails, though the reflection calls it complete) comes back with
// no edit for the editor to offer, and nothing is sent to apply.
func TestFailedFixOffersNoEdit(t *testing.T) {
	s, action := fixSessionWith(t, lsptest.InitOptions{ChangeAnnotations: true},
		editPlan("\treturn 42\n", "\treturn 42.5\n"), `{"assessment":"complete","reasoning":"the type is right now","adjustments":[]}`)
	var res contract.FixResult
	if err := s.ExecuteCommand(action.Command.Command, json.RawMessage(action.Command.Arguments[0]), &res); err != nil {
		t.Fatalf("kodyls.fixError: %v", err)
	}
	if res.Verified || res.Applied || len(res.Edits) != 0 || len(res.Files) != 0 || res.Note == "" {
		t.Fatalf("a failed fix offers %+v", res)
	}
	if edits := s.AppliedEdits(); len(edits) != 0 {
		t.Fatalf("applyEdit sent for a failed fix: %+v", edits)
	}
	s.Shutdown()
}

// TestFixIsConfirmedInEditorsWithoutPreview: an editor that would apply a
// workspace edit as it comes (no changeAnnotationSupport: Neovim, Helix,
// eglot) is asked first, with the fix's diff; a discarded fix is not sent,
// an accepted one is.
func TestFixIsConfirmedInEditorsWithoutPreview(t *testing.T) {
	s, action := fixSession(t, lsptest.InitOptions{Generic: true})
	run := func() contract.FixResult {
		t.Helper()
		var res contract.FixResult
		if err := s.ExecuteCommand(action.Command.Command, json.RawMessage(action.Command.Arguments[0]), &res); err != nil {
			t.Fatalf("kodyls.fixError: %v", err)
		}
		return res
	}

	s.AnswerPrompts("Discard")
	res := run()
	if res.Applied || !res.Verified || !strings.Contains(res.Note, "discarded") {
		t.Fatalf("discarded fix: %+v", res)
	}
	if n := len(s.AppliedEdits()); n != 0 {
		t.Fatalf("a discarded fix was sent to the editor (%d applyEdit)", n)
	}
	if s.Text("main.go") != typeErrorGo {
		t.Fatalf("the buffer changed after a discarded fix:\n%s", s.Text("main.go"))
	}
	prompts := s.Prompts()
	if len(prompts) != 1 || !strings.Contains(prompts[0].Message, "main.go") || !strings.Contains(prompts[0].Message, "+\treturn \"42\"") ||
		len(prompts[0].Actions) != 2 || prompts[0].Actions[0].Title != "Apply fix" {
		t.Fatalf("the prompt must show the diff and offer Apply fix: %+v", prompts)
	}

	// An editor that cannot ask: nothing is sent, and the diff reaches the
	// user as a message, since such an editor may not show the result.
	s.RefusePrompts()
	res = run()
	if res.Applied || !strings.Contains(res.Note, "cannot ask") || len(s.AppliedEdits()) != 0 {
		t.Fatalf("fix in an editor that cannot ask: %+v, %d applyEdit", res, len(s.AppliedEdits()))
	}
	shown := false
	for _, m := range s.Messages() {
		shown = shown || strings.Contains(m, "not applied") && strings.Contains(m, "+\treturn \"42\"")
	}
	if !shown {
		t.Fatalf("the diff was not shown as a message: %q", s.Messages())
	}

	s.AnswerPrompts("Apply fix")
	if res := run(); !res.Applied {
		t.Fatalf("accepted fix: %+v", res)
	}
	if edits := s.AppliedEdits(); len(edits) != 1 || edits[0].Failure != "" {
		t.Fatalf("applyEdit requests %+v", edits)
	}
	if !strings.Contains(s.Text("main.go"), "\treturn \"42\"\n") {
		t.Fatalf("buffer after the accepted fix:\n%s", s.Text("main.go"))
	}
	s.Shutdown()
}

// fixSession starts the binary on the type-error repository with the fake
// model scripted to fix it, saves main.go so that the build reports the
// error, and returns the session and the error's "Fix this error" action.
func fixSession(t *testing.T, o lsptest.InitOptions) (*lsptest.Session, *protocol.CodeAction) {
	t.Helper()
	return fixSessionWith(t, o, editPlan("\treturn 42\n", "\treturn \"42\"\n"), `{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`)
}

// fixSessionWith is fixSession with the model's plan and reflection.
func fixSessionWith(t *testing.T, o lsptest.InitOptions, plan, reflection string) (*lsptest.Session, *protocol.CodeAction) {
	t.Helper()
	repo := typeErrorRepo(t)
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(reflection))
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, fakeEnv(t, fake))
	o.InitializationOptions = map[string]any{
		"build":  map[string]any{"onSave": "go build ./..."},
		"review": map[string]any{"trigger": "manual"},
	}
	s.Initialize(o)
	s.OpenFile("main.go")
	s.Save("main.go")
	ds := s.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, _ := d.Source.Get(); src == "build" && d.Range.Start.Line == 5 {
				return true
			}
		}
		return false
	})
	for _, a := range s.CodeActions("main.go", ds[0].Range, ds) {
		if a.Title == "Fix this error" {
			return s, &a
		}
	}
	t.Fatalf("a build error must offer Fix this error: %+v", ds)
	return nil, nil
}

// TestFixTypeScriptErrorInTheEditor: "Fix this error" on a real tsc error
// reported by the build on save. The model's first edit does not compile
// (the real tsc says so on the scratch copy), the reflection adjusts it,
// and only the adjusted, verified edit reaches the editor, as a preview
// that needs confirmation; once saved, the build's error goes away.
func TestFixTypeScriptErrorInTheEditor(t *testing.T) {
	tsc := tscPath(t)
	const src = "export function total(prices: number[]): number {\n  let sum: number = \"0\";\n  for (const p of prices) sum += p;\n  return sum;\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{
		"tsconfig.json": `{"compilerOptions":{"strict":true,"noEmit":true,"target":"es2020"},"files":["index.ts"]}`,
		"index.ts":      src,
	})
	edit := func(newText string) string {
		e, _ := json.Marshal(map[string]any{"edits": []map[string]string{{"file": "index.ts", "oldText": `let sum: number = "0";`, "newText": newText}}})
		return string(e)
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	// The first plan keeps a string; the reflection, shown tsc's new
	// output, replaces the edit with a number.
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(`{"steps":[{"id":"edit","description":"quote-free sum","tool":"propose_edits","input":`+edit(`let sum: number = String(0);`)+`,"dependsOn":[]}]}`))
	reflect := fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"String(0) is still a string; start the sum at the number 0","adjustments":[
		{"type":"MODIFY","stepId":"edit","input":`+edit(`let sum: number = 0;`)+`,"reason":"a number literal"}]}`))
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, fakeEnv(t, fake))
	s.Initialize(lsptest.InitOptions{ChangeAnnotations: true, InitializationOptions: map[string]any{
		"build":  map[string]any{"onSave": tsc + " -p . --pretty false"},
		"review": map[string]any{"trigger": "manual"},
	}})
	s.OpenFile("index.ts")
	s.Save("index.ts")
	ds := s.AwaitDiagnostics("index.ts", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, _ := d.Source.Get(); src == "build" && d.Range.Start.Line == 1 && strings.Contains(lsptest.Message(d), "not assignable") {
				return true
			}
		}
		return false
	})
	var action *protocol.CodeAction
	for _, a := range s.CodeActions("index.ts", ds[0].Range, ds) {
		if a.Title == "Fix this error" {
			action = &a
		}
	}
	if action == nil {
		t.Fatalf("the tsc error offers no Fix this error: %s", lsptest.Describe(ds))
	}
	var res contract.FixResult
	if err := s.ExecuteCommand(action.Command.Command, json.RawMessage(action.Command.Arguments[0]), &res); err != nil {
		t.Fatalf("kodyls.fixError: %v", err)
	}
	if !res.Verified || !res.Applied || res.Rounds != 2 || len(res.Edits) != 1 || res.Edits[0].NewText != "let sum: number = 0;" {
		t.Fatalf("result %+v", res)
	}
	if reflect.Times() != 1 {
		t.Fatalf("%d reflections, want 1: the first edit's failed build", reflect.Times())
	}
	for _, r := range fake.ChatRequests() {
		if r.Chat.SchemaName() == "reflection" && !strings.Contains(r.Chat.Text(), "TS2322") {
			t.Error("the reflection did not see tsc's output for the first edit")
		}
	}
	if edits := s.AppliedEdits(); len(edits) != 1 || strings.Contains(string(edits[0].Raw), "String(0)") {
		t.Fatalf("applyEdit requests %+v: only the verified edit may reach the editor", edits)
	}
	if !strings.Contains(s.Text("index.ts"), "let sum: number = 0;") {
		t.Fatalf("buffer after the fix:\n%s", s.Text("index.ts"))
	}
	s.Save("index.ts")
	s.AwaitDiagnostics("index.ts", lsptest.Empty)
	s.Shutdown()
}
