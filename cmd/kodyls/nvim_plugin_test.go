package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// pluginResult is what the plugin's command tests write: their steps and
// what the commands showed.
type pluginResult struct {
	nvimResult
	Quickfix []struct {
		File string `json:"file"`
		Lnum int    `json:"lnum"`
		Text string `json:"text"`
		Type string `json:"type"`
	} `json:"quickfix"`
	Health      string `json:"health"`
	Explanation string `json:"explanation"`
	// BuildMessage is the build diagnostic explain_build.lua explained.
	BuildMessage string `json:"build_message"`
	// LatencyMs: keystroke → diagnostic; QuickfixLatencyMs: keystroke →
	// the :KodyViolations list refreshed.
	LatencyMs         []float64 `json:"latency_ms"`
	QuickfixLatencyMs []float64 `json:"quickfix_latency_ms"`
}

func runPluginScript(t *testing.T, nv neovim, script string, repo *lsptest.Repo, env ...string) pluginResult {
	t.Helper()
	data := nvimScript(t, nv, script, repo, env...)
	var res pluginResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	res.check(t, data)
	return res
}

// TestNeovimPluginCommandsOffline drives the plugin's commands with no
// model: :KodyStatus, :KodyViolations (and its refresh on
// kodyls/ruleViolationsChanged), :KodyRule, :checkhealth kodyls, and the
// detector's fix applied through vim.lsp.buf.code_action.
func TestNeovimPluginCommandsOffline(t *testing.T) {
	eachNeovim(t, testNeovimPluginCommandsOffline)
}

func testNeovimPluginCommandsOffline(t *testing.T, nv neovim) {
	repo := fixtureRepo(t)
	// The rule's detector with a replace, for the fix the script applies.
	rule := strings.Replace(lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"\n---\n", "\n  replace: 'log.Println('\n---\n", 1)
	repo.Write(map[string]string{".kody/rules/no-println.md": rule})
	res := runPluginScript(t, nv, "commands_offline.lua", repo)
	if len(res.Quickfix) != 2 || res.Quickfix[0].Lnum != 7 || res.Quickfix[1].Lnum != 8 {
		t.Fatalf("quickfix after the second violation: %+v", res.Quickfix)
	}
	for _, it := range res.Quickfix {
		if !strings.HasSuffix(it.File, "main.go") || it.Text != "[high] No fmt.Println: fmt.Println(" {
			t.Errorf("quickfix entry %+v", it)
		}
	}
	if len(res.LatencyMs) != 5 || len(res.QuickfixLatencyMs) != 5 {
		t.Errorf("latency samples: %v, %v", res.LatencyMs, res.QuickfixLatencyMs)
	}
	// Reported, not asserted: the README quotes them.
	t.Logf("Neovim %s: keystroke → diagnostic %s ms; keystroke → :KodyViolations list %s ms", nv.version,
		fmt.Sprint(res.LatencyMs), fmt.Sprint(res.QuickfixLatencyMs))
	if !strings.Contains(res.Health, repo.Dir) || !strings.Contains(res.Health, "schema v") {
		t.Errorf("checkhealth lacks the doctor's report:\n%s", res.Health)
	}
}

// TestNeovimPluginQuickfixWorkspaces: with two workspaces open, one
// kodyls client each, :KodyViolations lists the violations of both and
// keeps them when either client reports a change; the column of a
// violation after non-ASCII text is its byte column (Neovim 0.7 and 0.10
// get positions in UTF-16 from kodyls).
func TestNeovimPluginQuickfixWorkspaces(t *testing.T) {
	eachNeovim(t, testNeovimPluginQuickfixWorkspaces)
}

func testNeovimPluginQuickfixWorkspaces(t *testing.T, nv neovim) {
	repo, other := fixtureRepo(t), fixtureRepo(t)
	res := runPluginScript(t, nv, "quickfix.lua", repo, "KODYLS_FILE2="+filepath.Join(other.Dir, "main.go"))
	per := map[string]int{}
	for _, it := range res.Quickfix {
		per[filepath.Dir(it.File)]++
	}
	if len(res.Quickfix) != 4 || per[repo.Dir] != 2 || per[other.Dir] != 2 {
		t.Fatalf("quickfix of two workspaces: %+v", res.Quickfix)
	}
}

// TestNeovimPluginStatusPerWorkspace: with two workspaces open, one
// without a model (offline) and one with (ready), :KodyStatus and the
// statusline show the current buffer's server, not the one that spoke
// last; each window's statusline shows its own buffer's.
func TestNeovimPluginStatusPerWorkspace(t *testing.T) {
	eachNeovim(t, testNeovimPluginStatusPerWorkspace)
}

func testNeovimPluginStatusPerWorkspace(t *testing.T, nv neovim) {
	repo, other := fixtureRepo(t), fixtureRepo(t)
	fake := llmtest.NewServer()
	defer fake.Close()
	runPluginScript(t, nv, "status.lua", repo,
		"KODYLS_FILE2="+filepath.Join(other.Dir, "main.go"), "KODYLS_FAKE_URL="+fake.URL)
}

// TestNeovimPluginHealthLspConfig: on Neovim 0.11+, :checkhealth kodyls
// with no client running checks the cmd set with vim.lsp.config (a binary
// not on PATH) and gives the doctor its settings.
func TestNeovimPluginHealthLspConfig(t *testing.T) {
	eachNeovim(t, func(t *testing.T, nv neovim) {
		if !nv.atLeast("0.11") {
			t.Skip("vim.lsp.config is Neovim 0.11+")
		}
		res := runPluginScript(t, nv, "health_config.lua", fixtureRepo(t))
		if !strings.Contains(res.Health, "schema v") {
			t.Errorf("checkhealth lacks the doctor's report:\n%s", res.Health)
		}
	})
}

// TestNeovimPluginHelp: doc/kodyls.txt gets its tags with :helptags and
// every link in it opens a help page, in each Neovim the plugin supports.
func TestNeovimPluginHelp(t *testing.T) {
	eachNeovim(t, func(t *testing.T, nv neovim) {
		runPluginScript(t, nv, "help.lua", lsptest.NewRepo(t, nil))
	})
}

// TestNeovimPluginCommandsWithModel drives the commands that need the
// model, against the fake endpoint: :KodyStatus, :KodyReview file and
// workspace, :KodyExplain, :KodyFix.
func TestNeovimPluginCommandsWithModel(t *testing.T) {
	eachNeovim(t, testNeovimPluginCommandsWithModel)
}

func testNeovimPluginCommandsWithModel(t *testing.T, nv neovim) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	fake.On(llmtest.HasTool("final_answer"), llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"the loop reads one element past the end of items","fixGuidelines":["Range over the slice."],"confidence":0.8}`}))
	// :KodyFix's plan: put the loop bound back.
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("i <= len(items)", "i < len(items)")))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"complete","reasoning":"the bound is right","adjustments":[]}`))
	// :KodyReview workspace judges the pull-request rule over the change
	// set, where api/orders.go changed on disk without its test.
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), llmtest.Text("No plan: the diff is enough."))
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []map[string]any{{
		"rule": 1, "file": "api/orders.go", "reason": "Orders changed and its test did not.",
		"suggestionContent": "Test the change in api/orders_test.go.", "existingCode": "func Orders() string {",
		"improvedCode": "func Orders() string {", "oneSentenceSummary": "test the change to Orders", "relevantLinesStart": 3, "relevantLinesEnd": 3,
	}}}))
	const ordersGo = "package api\n\nfunc Orders() string {\n\treturn \"orders\"\n}\n"
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md":    lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		".kody/rules/handler-tests.md": "---\ntitle: API handlers change with their tests\nseverity: high\nscope: pull_request\npath: \"api/**\"\n---\nA change to a handler under api/ comes with a change to its test.\n",
		"main.go":                      reviewGo,
		"api/orders.go":                ordersGo,
	})
	repo.Write(map[string]string{"api/orders.go": strings.Replace(ordersGo, `"orders"`, `"all orders"`, 1)})
	res := runPluginScript(t, nv, "commands_model.lua", repo, "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if !strings.Contains(res.Explanation, "### Root cause") {
		t.Errorf("explanation:\n%s", res.Explanation)
	}
}

// greetGo builds; explain_build.lua breaks its line 6 and saves.
const greetGo = "package main\n\nimport \"fmt\"\n\nfunc greet() string {\n\treturn \"hello\"\n}\n\nfunc main() { fmt.Println(greet()) }\n"

// TestNeovimPluginExplainBuildError: with build.onSave set to the real
// `go build ./...`, a compile error written and saved in Neovim shows as
// the build's diagnostic, and :KodyExplain on it shows the explanation of
// that error in the float. The fake endpoint answers only an explanation
// request that carries the compiler's message, so the float's root cause
// proves which error was explained.
func TestNeovimPluginExplainBuildError(t *testing.T) {
	eachNeovim(t, testNeovimPluginExplainBuildError)
}

func testNeovimPluginExplainBuildError(t *testing.T, nv neovim) {
	const rootCause = "greet is declared to return a string but its return statement gives the untyped constant 42"
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.All(llmtest.HasTool("final_answer"), llmtest.PromptContains("cannot use 42")),
		llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
			Arguments: `{"rootCause":"` + rootCause + `","fixGuidelines":["Return a string, or change the result type."],"confidence":0.9}`}))
	repo := lsptest.NewRepo(t, map[string]string{"go.mod": "module example.com/greet\n\ngo 1.22\n", "main.go": greetGo})
	res := runPluginScript(t, nv, "explain_build.lua", repo, append(fakeEnv(t, fake), "KODYLS_ROOT_CAUSE="+rootCause)...)
	if !strings.Contains(res.BuildMessage, "cannot use 42") {
		t.Errorf("build diagnostic: %q", res.BuildMessage)
	}
	if !strings.Contains(res.Explanation, "### Root cause") || !strings.Contains(res.Explanation, rootCause) {
		t.Errorf("explanation:\n%s", res.Explanation)
	}
}
