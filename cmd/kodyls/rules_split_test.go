package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const splitAgentsMD = "# AGENTS.md\n## Setup\n- Install deps with `go mod download`.\n- Run `make test` before you open a PR.\n" +
	"## Code style\n- Never use fmt.Println in production code; use the logger.\n- Every exported function must have a doc comment.\n" +
	"- Wrap errors with %w and context.\n## Commit messages\n- Use Conventional Commits.\n"

// TestRulesListWithModelSplit: `kodyls rules list` with a model configured
// shows AGENTS.md as its three code rules, on their lines and marked as
// the model's split, the setup and commit steps gone; the next run costs
// no split call, an edited file is split again, and offline the list is
// the file's sections as before.
func TestRulesListWithModelSplit(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"AGENTS.md": splitAgentsMD, "main.go": "package main\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	split := fake.On(llmtest.SchemaName(workspace.SchemaRuleSplit), llmtest.JSON(map[string]any{"rules": []map[string]any{
		{"title": "No fmt.Println in production code", "text": "Never use fmt.Println in production code; use the logger.", "startLine": 6, "endLine": 6},
		{"title": "Doc comment on exported functions", "text": "Every exported function must have a doc comment.", "startLine": 7, "endLine": 7},
		{"title": "Wrap errors", "text": "Wrap errors with %w and context.", "startLine": 8, "endLine": 8},
	}}))
	env := testEnv(t)
	withModel := append(slices.Clone(env), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")

	list := func(env []string) []string {
		t.Helper()
		out, errOut, code := runBin(t, env, repo.Dir, "rules", "list", "--json")
		if code != 0 {
			t.Fatalf("rules list: exit %d\n%s%s", code, out, errOut)
		}
		var l struct {
			Rules []struct {
				UUID, Title, File string
				Line              int
				Split             bool
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var got []string
		for _, r := range l.Rules {
			got = append(got, fmt.Sprintf("%s %s:%d split=%v", r.UUID, r.File, r.Line, r.Split))
		}
		return got
	}
	refined := []string{
		"agents:AGENTS.md#no-fmt-println-in-production-code AGENTS.md:6 split=true",
		"agents:AGENTS.md#doc-comment-on-exported-functions AGENTS.md:7 split=true",
		"agents:AGENTS.md#wrap-errors AGENTS.md:8 split=true",
	}
	sections := []string{
		"agents:AGENTS.md#setup AGENTS.md:2 split=false",
		"agents:AGENTS.md#code-style AGENTS.md:5 split=false",
		"agents:AGENTS.md#commit-messages AGENTS.md:9 split=false",
	}
	if got := list(env); !slices.Equal(got, sections) {
		t.Fatalf("offline:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(sections, "\n  "))
	}
	if got := list(withModel); !slices.Equal(got, refined) || split.Times() != 1 {
		t.Fatalf("with a model (%d split calls):\n  %s\nwant:\n  %s", split.Times(), strings.Join(got, "\n  "), strings.Join(refined, "\n  "))
	}
	out, _, _ := runBin(t, withModel, repo.Dir, "rules", "list")
	if !strings.Contains(out, "agents (model split)") || strings.Contains(out, "#setup") {
		t.Errorf("the table does not mark the model's split:\n%s", out)
	}
	if got := list(withModel); !slices.Equal(got, refined) || split.Times() != 1 {
		t.Fatalf("the next runs made %d split calls in all, want 1 (cached): %v", split.Times(), got)
	}
	if got := list(env); !slices.Equal(got, sections) {
		t.Fatalf("offline after a split:\n  %s", strings.Join(got, "\n  "))
	}
	edited := strings.Replace(splitAgentsMD, "# AGENTS.md\n", "# AGENTS.md\nRead this first.\n", 1)
	if err := os.WriteFile(filepath.Join(repo.Dir, "AGENTS.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	// The lines moved by one, so the old answer's lines no longer hold
	// the rules; the split is asked again either way.
	list(withModel)
	if split.Times() != 2 {
		t.Fatalf("edited file: %d split calls, want 2", split.Times())
	}
}
