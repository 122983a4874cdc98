package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestFixOffersApplyOnlyWhenItWouldWrite: a fix whose build still fails
// (the reflection's reply is not even a reflection) is no fix, so the
// output does not send the user to --apply, which would write nothing; a
// fix that passed does.
func TestFixOffersApplyOnlyWhenItWouldWrite(t *testing.T) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	const hint = "Run again with --apply to write the files."
	run := func(plan, reflection string) (string, int) {
		t.Helper()
		fake := llmtest.NewServer()
		defer fake.Close()
		fake.On(llmtest.SchemaName("plan"), llmtest.Text(plan))
		fake.On(llmtest.SchemaName("reflection"), llmtest.Text(reflection))
		out, errOut, code := runBinStdin(t, fakeEnv(t, fake), repo.Dir, output, "fix", "--build", "go build ./...")
		if data, _ := os.ReadFile(filepath.Join(repo.Dir, "main.go")); string(data) != typeErrorGo {
			t.Fatalf("main.go was written without --apply:\n%s", data)
		}
		return out + errOut, code
	}
	out, code := run(editPlan("\treturn 42\n", "\treturn 42.5\n"), `{"foo":"bar"}`)
	if code != 3 || !strings.Contains(out, "Verification: failed: go build ./... still fails") {
		t.Fatalf("a fix whose build fails: code %d\n%s", code, out)
	}
	if strings.Contains(out, hint) || strings.Contains(out, "--apply") {
		t.Errorf("a failed fix sends the user to --apply, which writes nothing:\n%s", out)
	}
	out, code = run(editPlan("\treturn 42\n", "\treturn \"42\"\n"), `{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`)
	if code != 0 || !strings.Contains(out, "Verification: passed") || !strings.Contains(out, hint) {
		t.Errorf("a fix found: code %d, want 0 and %q\n%s", code, hint, out)
	}
}

// secretEditPlan proposes only an edit of .env, which is on the privacy
// list: no edit is left for the build to verify.
const secretEditPlan = `{"steps":[{"id":"edit","description":"change the token","tool":"propose_edits","input":{"edits":[{"file":".env","oldText":"TOKEN=secret","newText":"TOKEN=other"}]},"dependsOn":[]}]}`

// TestFixWithNothingToBuildSaysTheBuildDidNotRun: when every edit was
// rejected, the build never runs; the verification says so ("notRun"),
// not that the build still fails.
func TestFixWithNothingToBuildSaysTheBuildDidNotRun(t *testing.T) {
	repo := typeErrorRepo(t)
	repo.Write(map[string]string{".env": "TOKEN=secret\n"})
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(secretEditPlan))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`))
	env := fakeEnv(t, fake)
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "fix", "--json", "--build", "go build ./...")
	var res fixJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 3 {
		t.Fatalf("code %d json %v\n%s\n%s", code, err, out, errOut)
	}
	if res.Verified || res.Verification != "notRun" || res.Rounds != 1 || res.BuildOutput != "" || !strings.Contains(res.Note, "no valid edit") {
		t.Errorf("verification %q, rounds %d, build output %q, note %q; want notRun after 1 round", res.Verification, res.Rounds, res.BuildOutput, res.Note)
	}
	out, _, code = runBinStdin(t, env, repo.Dir, output, "fix", "--build", "go build ./...")
	if code != 3 || !strings.Contains(out, "Verification: not run: no edit to verify after 1 round(s)") || strings.Contains(out, "still fails") {
		t.Errorf("code %d\n%s", code, out)
	}
}

// TestFixInTheEditorSaysWhyTheBuildDidNotRun: "Fix this error" tells, as
// kodyls fix does, that the build did not run because no edit was left
// to verify, or because the fix edits a file that defines the build (the
// go line of go.mod), rather than that the build still fails.
func TestFixInTheEditorSaysWhyTheBuildDidNotRun(t *testing.T) {
	goModPlan := `{"steps":[
 {"id":"edit","description":"return a string","tool":"propose_edits","input":{"edits":[{"file":"main.go","oldText":"\treturn 42\n","newText":"\treturn \"42\"\n"}]},"dependsOn":[]},
 {"id":"toolchain","description":"a newer Go","tool":"propose_edits","input":{"edits":[{"file":"go.mod","oldText":"go 1.22","newText":"go 1.23"}]},"dependsOn":[]}]}`
	for _, tc := range []struct{ name, plan, why string }{
		{"no edit", secretEditPlan, "`go build ./...` did not run: no edit to verify after 1 round(s)."},
		{"build definition", goModPlan, "`go build ./...` did not run: the fix edits go.mod, which defines the build."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, action := fixSessionWith(t, lsptest.InitOptions{ChangeAnnotations: true}, tc.plan, `{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`)
			var res contract.FixResult
			if err := s.ExecuteCommand(action.Command.Command, json.RawMessage(action.Command.Arguments[0]), &res); err != nil {
				t.Fatalf("kodyls.fixError: %v", err)
			}
			if res.Verified || res.Applied || res.Verification != "notRun" || res.Rounds != 1 || len(res.Edits) != 0 {
				t.Errorf("result %+v; want notRun after 1 round, no edit", res)
			}
			if !strings.Contains(res.Markdown, "**No verified fix**: "+tc.why) || strings.Contains(res.Markdown, "still fails") {
				t.Errorf("markdown lacks %q:\n%s", tc.why, res.Markdown)
			}
			if edits := s.AppliedEdits(); len(edits) != 0 {
				t.Errorf("applyEdit sent: %+v", edits)
			}
			s.Shutdown()
		})
	}
}
