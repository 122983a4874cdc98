package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestNeovimEndToEnd drives kodyls from a real, headless Neovim. CI installs
// Debian's neovim; elsewhere the test is skipped when nvim is missing.
func TestNeovimEndToEnd(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nvim is not installed; .ci/run installs Debian's neovim")
		}
		t.Skip("nvim not installed")
	}
	repo := workspace(t)
	script, _ := filepath.Abs("testdata/nvim_e2e.lua")
	out := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = repo.Dir
	cmd.Env = append(testEnv(t),
		"KODYLS_BIN="+lsptest.BuildBinary(t),
		"KODYLS_ROOT="+repo.Dir,
		"KODYLS_FILE="+filepath.Join(repo.Dir, "main.go"),
		"KODYLS_OUT="+out,
		"XDG_STATE_HOME="+t.TempDir(),
		"XDG_CACHE_HOME="+t.TempDir(),
	)
	output, err := cmd.CombinedOutput()
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("nvim wrote no result (%v): %v\n%s", err, rerr, output)
	}
	var res struct {
		OK    bool `json:"ok"`
		Steps []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"steps"`
		AfterTyping []struct {
			Lnum   int    `json:"lnum"`
			Source string `json:"source"`
			Code   string `json:"code"`
		} `json:"after_typing"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	for _, s := range res.Steps {
		if !s.OK {
			t.Errorf("step %q failed: %s", s.Name, s.Detail)
		}
	}
	if !res.OK {
		t.Fatalf("neovim run incomplete:\n%s", data)
	}
	if len(res.AfterTyping) != 1 || res.AfterTyping[0].Lnum != 6 || res.AfterTyping[0].Code != printlnRule {
		t.Fatalf("diagnostics after typing: %+v", res.AfterTyping)
	}
}
