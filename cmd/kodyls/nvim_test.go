package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// nvimPlugin is the Neovim plugin; its tests/ hold the Lua scripts the
// tests below run.
var nvimPlugin = filepath.Join("..", "..", "editors", "neovim")

// nvimScript runs a Lua test script of editors/neovim/tests in a real,
// headless Neovim against the kodyls binary, with the file main.go of repo,
// and returns its JSON result. CI installs Debian's neovim; elsewhere the
// test is skipped when nvim is missing.
func nvimScript(t *testing.T, script string, repo *lsptest.Repo, env ...string) []byte {
	t.Helper()
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nvim is not installed; .ci/run installs Debian's neovim")
		}
		t.Skip("nvim not installed")
	}
	plugin, _ := filepath.Abs(nvimPlugin)
	path := filepath.Join(plugin, "tests", script)
	out := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+path)
	cmd.Dir = repo.Dir
	cmd.Env = append(append(testEnv(t),
		"KODYLS_BIN="+lsptest.BuildBinary(t),
		"KODYLS_ROOT="+repo.Dir,
		"KODYLS_FILE="+filepath.Join(repo.Dir, "main.go"),
		"KODYLS_OUT="+out,
		"KODYLS_PLUGIN="+plugin,
		"XDG_STATE_HOME="+t.TempDir(),
		"XDG_CACHE_HOME="+t.TempDir(),
	), env...)
	output, err := cmd.CombinedOutput()
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("nvim wrote no result (%v): %v\n%s", err, rerr, output)
	}
	return data
}

type nvimResult struct {
	OK    bool `json:"ok"`
	Steps []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"steps"`
}

func (r nvimResult) check(t *testing.T, raw []byte) {
	t.Helper()
	for _, s := range r.Steps {
		if !s.OK {
			t.Errorf("step %q failed: %s", s.Name, s.Detail)
		}
	}
	if !r.OK {
		t.Fatalf("neovim run incomplete:\n%s", raw)
	}
}

// TestNeovimEndToEnd: type a violating line, see the rule diagnostic on it,
// delete it, see it cleared.
func TestNeovimEndToEnd(t *testing.T) {
	repo := fixtureRepo(t)
	data := nvimScript(t, "e2e.lua", repo)
	var res struct {
		nvimResult
		AfterTyping []struct {
			Lnum   int    `json:"lnum"`
			Source string `json:"source"`
			Code   string `json:"code"`
		} `json:"after_typing"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	res.check(t, data)
	if len(res.AfterTyping) != 1 || res.AfterTyping[0].Lnum != 6 || res.AfterTyping[0].Code != printlnRule {
		t.Fatalf("diagnostics after typing: %+v", res.AfterTyping)
	}
}

// TestNeovimReviewQuickFix: save a change, see the review diagnostic, apply
// its quick fix with Neovim's own workspace-edit code.
func TestNeovimReviewQuickFix(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
	data := nvimScript(t, "review.lua", repo, "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	var res nvimResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	res.check(t, data)
}
