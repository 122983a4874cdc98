package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/rewoo"
	"github.com/kodustech/kodyls/analysis/review"
)

// Every scripted reply reports this usage, so the tokens an evaluation
// reports can be checked against what the fake served.
const servedPrompt, servedCompletion = 1000, 70

func served(r llmtest.Reply) llmtest.Reply {
	r.Usage = &llmtest.Usage{PromptTokens: servedPrompt, CompletionTokens: servedCompletion}
	return r
}

// evalJSON is `kodyls eval ... --json`.
type evalJSON struct {
	Command    string
	Step       string
	Strategies []struct {
		Name                           string
		Step                           string
		Passed, Total                  int
		PassRate                       float64
		StepsPerCase                   float64
		PromptTokens, CompletionTokens int
		Tokens, ModelCalls             int
		P50LatencyMs                   int64
		Cases                          []struct {
			Name                           string
			Pass                           bool
			FailedProperty, Reason         string
			Steps                          int
			PromptTokens, CompletionTokens int
			ModelCalls                     int
			LatencyMs                      int64
		}
	}
}

// runEval runs one evaluation with --json and returns its report and the
// requests the fake received during the run.
func runEval(t *testing.T, fake *llmtest.Server, args ...string) (evalJSON, []llmtest.Recorded) {
	t.Helper()
	before := len(fake.ChatRequests())
	out, errOut, code := runBin(t, fakeEnv(t, fake), t.TempDir(), append(append([]string{"eval"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("eval %v: code %d\n%s\n%s", args, code, out, errOut)
	}
	var rep evalJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	return rep, fake.ChatRequests()[before:]
}

func schemaOf(r llmtest.Recorded) string {
	if r.Chat != nil && r.Chat.ResponseFormat != nil && r.Chat.ResponseFormat.JSONSchema != nil {
		return r.Chat.ResponseFormat.JSONSchema.Name
	}
	return ""
}

// checkServed: the tokens and calls of a strategy and of each of its cases
// add up to what the fake served, and the totals are the cases' sums.
func checkServed(t *testing.T, rep evalJSON, reqs []llmtest.Recorded) {
	t.Helper()
	if len(rep.Strategies) != 1 {
		t.Fatalf("strategies %+v", rep.Strategies)
	}
	s := rep.Strategies[0]
	n := len(reqs)
	if n == 0 || s.ModelCalls != n || s.PromptTokens != n*servedPrompt || s.CompletionTokens != n*servedCompletion || s.Tokens != n*(servedPrompt+servedCompletion) {
		t.Errorf("%s: %d calls, %d+%d tokens (%d); the fake served %d calls of %d+%d", s.Name, s.ModelCalls, s.PromptTokens, s.CompletionTokens, s.Tokens, n, servedPrompt, servedCompletion)
	}
	calls, steps := 0, 0
	for _, c := range s.Cases {
		if c.PromptTokens != c.ModelCalls*servedPrompt || c.CompletionTokens != c.ModelCalls*servedCompletion {
			t.Errorf("%s/%s: %d calls but %d+%d tokens", s.Name, c.Name, c.ModelCalls, c.PromptTokens, c.CompletionTokens)
		}
		calls += c.ModelCalls
		steps += c.Steps
	}
	if calls != n || s.StepsPerCase != float64(steps)/float64(len(s.Cases)) || s.PassRate != float64(s.Passed)/float64(s.Total) {
		t.Errorf("%s: totals %+v do not sum the cases", s.Name, s)
	}
}

// kodyls eval fix runs each fix strategy on the canonical broken programs
// with the real Go toolchain: the scripted plan fits one program only, so
// that case passes in three steps (read, edit, verifying build) and the
// others fail on the build, and every token the fake served is counted.
func TestEvalFixStrategies(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), served(llmtest.Text(editPlan("\treturn id\n", "\treturn fmt.Sprint(id)\n"))))
	fake.On(llmtest.SchemaName("reflection"), served(llmtest.Text(`{"assessment":"failed","reasoning":"no other idea","adjustments":[]}`)))
	for _, name := range []string{"plan-mode", "single-plan"} {
		t.Run(name, func(t *testing.T) {
			rep, reqs := runEval(t, fake, "fix", "--strategy", name)
			checkServed(t, rep, reqs)
			s := rep.Strategies[0]
			if rep.Command != "fix" || s.Name != name || !strings.Contains(s.Step, "plan step") || s.Total != 3 || s.Passed != 1 {
				t.Fatalf("report %+v", rep)
			}
			for _, c := range s.Cases {
				switch {
				case c.Name == "go-return-type":
					if !c.Pass || c.Steps != 3 || c.ModelCalls != 1 {
						t.Errorf("%s: %+v", c.Name, c)
					}
				case c.Pass || c.FailedProperty != "the build passes with the fix's edits" || c.Steps < 1 || c.ModelCalls < 1:
					t.Errorf("%s: %+v", c.Name, c)
				}
			}
		})
	}
	text, errOut, code := runBin(t, fakeEnv(t, fake), t.TempDir(), "eval", "fix", "--strategy", "single-plan")
	for _, want := range []string{"== single-plan (a step is a plan step run", "go-unused-variable", "expected: the build passes with the fix's edits", "pass rate: 1/3 (33%)", "p50 latency"} {
		if code != 0 || !strings.Contains(text, want) {
			t.Fatalf("text report lacks %q (code %d):\n%s%s", want, code, text, errOut)
		}
	}
}

// kodyls eval review runs the file pipeline on the canonical defects and
// the ReWoo pull-request check on the canonical change sets; steps are the
// stages that asked the model for each case, tokens what the fake served.
func TestEvalReviewStrategies(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	offByOne := map[string]any{
		"suggestionContent": "i <= len(items) reads one element past the end and panics: index out of range.",
		"existingCode":      "for i := 0; i <= len(items); i++ {", "improvedCode": "for i := 0; i < len(items); i++ {",
		"oneSentenceSummary": "Off-by-one loop bound", "relevantLinesStart": 6, "relevantLinesEnd": 6, "label": "bug", "severity": "high",
	}
	fake.On(llmtest.SchemaName(review.SchemaMode), served(llmtest.JSON(map[string]string{"reviewMode": "light_mode"})))
	fake.On(llmtest.SchemaName(review.SchemaAnalyze), served(llmtest.JSON(map[string]any{"codeSuggestions": []any{offByOne}})))
	fake.On(llmtest.SchemaName(review.SchemaSeverity), served(llmtest.JSON(map[string]any{"codeSuggestions": []any{map[string]any{"index": 1, "severity": "high"}}})))
	fake.On(llmtest.SchemaName(review.SchemaSafeguard), served(llmtest.JSON(map[string]any{"codeSuggestions": []any{map[string]any{"index": 1, "action": "no_changes", "reason": "correct"}}})))
	fake.On(llmtest.SchemaName(review.SchemaImplemented), served(llmtest.JSON(map[string]any{"codeSuggestions": []any{map[string]any{"index": 1, "implementationStatus": "not_implemented"}}})))
	// The pull-request check: a plan that lists the files around the
	// change, and a judge that finds the untested handler only.
	fake.On(llmtest.SchemaName(rewoo.SchemaPlan), served(llmtest.JSON(map[string]any{"steps": []map[string]any{
		{"id": "E1", "tool": "list_files", "args": map[string]any{"dir": "."}, "reason": "the files next to the change"},
	}})))
	fake.On(llmtest.All(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.PromptContains("api/handlers/orders.go")), served(llmtest.JSON(map[string]any{"violations": []map[string]any{{
		"rule": 1, "file": "api/handlers/orders.go", "reason": "orders_test.go does not exist",
		"suggestionContent": "Add api/handlers/orders_test.go.", "existingCode": "func Orders() []string {", "improvedCode": "func Orders() []string {",
		"oneSentenceSummary": "Orders has no test", "relevantLinesStart": 4, "relevantLinesEnd": 4,
	}}})))
	fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), served(llmtest.JSON(map[string]any{"violations": []any{}})))

	caseFiles := map[string]string{
		"go-offbyone": "stock/total.go", "go-ignored-error": "config/load.go", "go-nil-map": "count/words.go",
		"python-sql-injection": "users/find.py", "python-mutable-default": "tags/add.py", "ts-missing-await": "src/users.ts",
		"go-handler-without-test": "api/handlers/orders.go", "go-handler-with-existing-test": "api/handlers/users.go", "ts-route-not-registered": "src/routes/billing.ts",
	}
	for _, tc := range []struct {
		name   string
		passed int
		failed map[string]string // case → the property reported as failed
	}{
		{"pipeline", 1, map[string]string{
			"go-ignored-error":     "a finding on the defect's lines",
			"python-sql-injection": "a finding on the defect's lines",
			// Anchored on the defect's lines by the model's line numbers, in
			// other words than the defect's.
			"go-nil-map": "the finding on the defect's lines names the defect", "python-mutable-default": "a finding on the defect's lines",
			"ts-missing-await": "a finding on the defect's lines",
		}},
		{"rewoo", 2, map[string]string{"ts-route-not-registered": "a violation of the rule on the file that breaks it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, reqs := runEval(t, fake, "review", "--strategy", tc.name)
			checkServed(t, rep, reqs)
			s := rep.Strategies[0]
			if s.Passed != tc.passed || s.Total != tc.passed+len(tc.failed) || !strings.Contains(s.Step, "stage") {
				t.Fatalf("report %+v", s)
			}
			for _, c := range s.Cases {
				if want := tc.failed[c.Name]; c.Pass == (want != "") || c.FailedProperty != want {
					t.Errorf("%s: pass=%v property %q (%s), want %q", c.Name, c.Pass, c.FailedProperty, c.Reason, want)
				}
				// The stages are the distinct schemas of the calls whose
				// diff is this case's change, and its calls are those calls.
				file, stages, calls := caseFiles[c.Name], map[string]bool{}, 0
				for _, r := range reqs {
					if file != "" && strings.Contains(string(r.Body), "## file: '"+file+"'") {
						stages[schemaOf(r)] = true
						calls++
					}
				}
				if file == "" || c.Steps != len(stages) || c.ModelCalls != calls {
					t.Errorf("%s: %d steps and %d calls reported; the fake saw %d stages %v in %d calls", c.Name, c.Steps, c.ModelCalls, len(stages), stages, calls)
				}
			}
		})
	}
}

// With no --strategy every strategy runs; an unknown one is a usage error
// naming the available ones.
func TestEvalStrategyNames(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{}))
	env := fakeEnv(t, fake)
	for cmd, names := range map[string]string{"fix": "plan-mode, single-plan", "review": "pipeline, rewoo", "rca": "plan-execute, react, rewoo, routed"} {
		_, errOut, code := runBin(t, env, t.TempDir(), "eval", cmd, "--strategy", "tree-of-thought")
		if code != 2 || !strings.Contains(errOut, `"tree-of-thought"`) || !strings.Contains(errOut, names) {
			t.Errorf("eval %s with an unknown strategy: code %d, %q", cmd, code, errOut)
		}
	}
	if _, errOut, code := runBin(t, env, t.TempDir(), "eval", "lint"); code != 2 || !strings.Contains(errOut, `unknown command "lint"`) {
		t.Errorf("eval lint: code %d, %q", code, errOut)
	}
	if n := len(fake.ChatRequests()); n != 0 {
		t.Errorf("a usage error called the model %d times", n)
	}
	rep, _ := runEval(t, fake, "review")
	var got []string
	for _, s := range rep.Strategies {
		got = append(got, s.Name)
	}
	if strings.Join(got, ",") != "pipeline,rewoo" {
		t.Errorf("eval review ran %v", got)
	}
}

// The fix strategies differ where the reflection matters: when the first
// edit does not apply and the reflection corrects it, plan mode runs the
// adjusted plan version and its build passes, while the single plan stops
// at its first version.
func TestEvalFixPlanModeAdjustsWhereSinglePlanStops(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), served(llmtest.Text(editPlan("\treturn id\n", "\treturn fmt.Sprint(id)\n"))))
	fake.On(llmtest.All(llmtest.SchemaName("reflection"), llmtest.PromptContains("declared and not used")), served(llmtest.JSON(map[string]any{
		"assessment": "needs_adjustment", "reasoning": "the edit targets another program: remove the unused variable",
		"adjustments": []map[string]any{{"type": "MODIFY", "stepId": "edit", "reason": "the unused variable is count",
			"input": map[string]any{"edits": []map[string]string{{"file": "main.go", "oldText": "\tcount := 3\n", "newText": ""}}}}},
	})))
	fake.On(llmtest.SchemaName("reflection"), served(llmtest.JSON(map[string]any{"assessment": "failed", "reasoning": "no other idea", "adjustments": []any{}})))
	pass := map[string]map[string]bool{}
	steps := map[string]map[string]int{}
	for _, name := range []string{"plan-mode", "single-plan"} {
		rep, reqs := runEval(t, fake, "fix", "--strategy", name)
		checkServed(t, rep, reqs)
		pass[name], steps[name] = map[string]bool{}, map[string]int{}
		for _, c := range rep.Strategies[0].Cases {
			pass[name][c.Name], steps[name][c.Name] = c.Pass, c.Steps
		}
	}
	if !pass["plan-mode"]["go-unused-variable"] || pass["single-plan"]["go-unused-variable"] {
		t.Fatalf("go-unused-variable passed %v", pass)
	}
	// The adjusted version runs the corrected edit and the verifying build.
	if steps["plan-mode"]["go-unused-variable"] <= steps["single-plan"]["go-unused-variable"] {
		t.Errorf("steps %v", steps)
	}
}

// TestEvalWithAKeyTheEndpointRefuses: an endpoint that refuses every call
// as unauthorised (HTTP 401) measures nothing: a set-up error, told on
// stderr, exit 2, and no table of failed cases.
func TestEvalWithAKeyTheEndpointRefuses(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Status: 401})
	for _, args := range [][]string{{"eval", "rca", "--strategy", "react"}, {"eval", "rca", "--strategy", "react", "--json"}} {
		out, errOut, code := runBin(t, fakeEnv(t, fake), t.TempDir(), args...)
		if code != 2 || !strings.Contains(errOut, "kodyls eval rca: 401 from llm endpoint") || !strings.Contains(errOut, "KODYLS_LLM_API_KEY") {
			t.Errorf("%v: code %d, want 2 and the set-up error\n%s\n%s", args, code, out, errOut)
		}
		if strings.Contains(out, "pass rate") || strings.Contains(out, "passRate") {
			t.Errorf("%v: a table of cases the endpoint refused:\n%s", args, out)
		}
	}
}
