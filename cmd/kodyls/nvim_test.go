package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// nvimPlugin is the Neovim plugin; its tests/ hold the Lua scripts the
// tests below run.
var nvimPlugin = filepath.Join("..", "..", "editors", "neovim")

// neovim is one Neovim the plugin's tests run in.
type neovim struct {
	path    string
	version string // "0.7.2"
}

var (
	neovimsOnce sync.Once
	neovimList  []neovim
	neovimsErr  error
)

// neovims lists the Neovims to test the plugin in: `nvim` on PATH (CI
// installs Debian 12's, 0.7) and those KODYLS_NVIMS names (a path list;
// .ci/run adds Debian 13's 0.10 and Debian testing's 0.12, fetched by
// .ci/debian-unpack.sh). Without any, the tests are skipped
// locally and fail in CI.
func neovims(t *testing.T) []neovim {
	t.Helper()
	neovimsOnce.Do(func() {
		var paths []string
		if p, err := exec.LookPath("nvim"); err == nil {
			paths = append(paths, p)
		}
		paths = append(paths, filepath.SplitList(os.Getenv("KODYLS_NVIMS"))...)
		for _, p := range paths {
			out, err := exec.Command(p, "--version").Output()
			if err != nil {
				neovimsErr = fmt.Errorf("%s --version: %v", p, err)
				return
			}
			first, _, _ := strings.Cut(string(out), "\n")
			v := strings.TrimPrefix(strings.TrimSpace(first), "NVIM v")
			if slices.ContainsFunc(neovimList, func(n neovim) bool { return n.version == v }) {
				continue
			}
			neovimList = append(neovimList, neovim{path: p, version: v})
		}
	})
	if neovimsErr != nil {
		t.Fatal(neovimsErr)
	}
	if len(neovimList) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("nvim is not installed; .ci/run installs Debian's neovim")
		}
		t.Skip("nvim not installed")
	}
	return neovimList
}

// atLeast reports whether version ("0.10.4") is min ("0.11") or later.
func (n neovim) atLeast(min string) bool {
	have, want := strings.Split(n.version, "."), strings.Split(min, ".")
	for i := range want {
		var h, w int
		if i < len(have) {
			h, _ = strconv.Atoi(strings.SplitN(have[i], "-", 2)[0])
		}
		w, _ = strconv.Atoi(want[i])
		if h != w {
			return h > w
		}
	}
	return true
}

// eachNeovim runs test as a subtest in every Neovim neovims lists.
func eachNeovim(t *testing.T, test func(t *testing.T, nv neovim)) {
	t.Helper()
	for _, nv := range neovims(t) {
		t.Run("nvim-"+nv.version, func(t *testing.T) { test(t, nv) })
	}
}

// nvimScript runs a Lua test script of editors/neovim/tests in a real,
// headless Neovim against the kodyls binary, with the file main.go of repo,
// and returns its JSON result.
func nvimScript(t *testing.T, nv neovim, script string, repo *lsptest.Repo, env ...string) []byte {
	t.Helper()
	plugin, _ := filepath.Abs(nvimPlugin)
	path := filepath.Join(plugin, "tests", script)
	out := filepath.Join(t.TempDir(), "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nv.path, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+path)
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
		t.Fatalf("nvim %s wrote no result (%v): %v\n%s", nv.version, err, rerr, output)
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
	eachNeovim(t, func(t *testing.T, nv neovim) {
		testNeovimEndToEnd(t, nv)
		// 0.11+ can start kodyls from lsp/kodyls.lua with vim.lsp.enable.
		if nv.atLeast("0.11") {
			t.Run("vim.lsp.config", func(t *testing.T) { testNeovimEndToEnd(t, nv, "KODYLS_START=lsp_config") })
		}
	})
}

func testNeovimEndToEnd(t *testing.T, nv neovim, env ...string) {
	repo := fixtureRepo(t)
	data := nvimScript(t, nv, "e2e.lua", repo, env...)
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
// its quick fix through vim.lsp.buf.code_action, as a user does.
func TestNeovimReviewQuickFix(t *testing.T) {
	eachNeovim(t, testNeovimReviewQuickFix)
}

func testNeovimReviewQuickFix(t *testing.T, nv neovim) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
	data := nvimScript(t, nv, "review.lua", repo, "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	var res nvimResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	res.check(t, data)
}
