package rca

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/prompts"
)

// TestCodeAroundAnErrorInALinkToASecretIsNotSent: an error reported in
// a file that is a symbolic link to .env (or into a directory on the
// privacy list) does not put the secret's lines into the prompt as "code
// around the error", just as read_file refuses the link.
func TestCodeAroundAnErrorInALinkToASecretIsNotSent(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "DB=postgres\nAWS_MARKER=zz-env-line-not-for-models\n")
	write("main.go", "package main\n\nfunc main() {}\n")
	for link, target := range map[string]string{"config.txt": ".env", "keys": ".ssh"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	write(".ssh/config.go", "zz-key-line-not-for-models\n")

	for _, output := range []string{
		"config.txt:2:1: error: expected identifier\n",
		"keys/config.go:1:1: error: expected identifier\n",
	} {
		fake := llmtest.NewServer()
		fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
			Arguments: `{"rootCause":"a stray line","fixGuidelines":["remove it"],"confidence":60}`}))
		x := &Explainer{Workspace: ws, Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin(), Ignore: IgnoreList()}
		if _, err := x.Explain(context.Background(), output, false, nil); err != nil {
			t.Fatal(err)
		}
		if len(fake.ChatRequests()) == 0 {
			t.Fatalf("%q: the model was not asked", output)
		}
		for _, r := range fake.ChatRequests() {
			if text := r.Chat.Text(); strings.Contains(text, "not-for-models") {
				t.Errorf("%q: a line of a file on the privacy list reached the model:\n%s", output, text)
			}
		}
		fake.Close()
	}
}

// TestPastedOutputCutThroughASecretSendsNoPartOfIt: the pasted output is
// cut at 4,000 bytes for the prompt; a token across the cut is redacted
// before the cut, so no part of it reaches the model.
func TestPastedOutputCutThroughASecretSendsNoPartOfIt(t *testing.T) {
	const token = "ghp_HISTRVdD53X83RZJzzzzgEOzdmenCkhQ0x1y"
	output := goOutput + strings.Repeat("\tat a frame of the build log\n", 200)
	output = output[:3975] + "GITHUB_TOKEN=" + token + "\n" // the token starts at byte 3988
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"x is never read","fixGuidelines":["use x"],"confidence":60}`}))
	x := &Explainer{Workspace: t.TempDir(), Gateway: gateway(t, fake.URL), Prompts: prompts.Builtin()}
	if _, err := x.Explain(context.Background(), output, false, nil); err != nil {
		t.Fatal(err)
	}
	if len(fake.ChatRequests()) == 0 {
		t.Fatal("the model was not asked")
	}
	for _, r := range fake.ChatRequests() {
		if text := r.Chat.Text(); strings.Contains(text, token[:10]) {
			t.Errorf("part of the token reached the model:\n%s", text[max(0, strings.Index(text, token[:10])-100):])
		}
	}
}
