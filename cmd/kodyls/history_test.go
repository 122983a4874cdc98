package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
)

// TestHistoryThroughTheBinary fills the history with a real go build error
// through explain, then searches, counts and forgets it.
func TestHistoryThroughTheBinary(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	if out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain", "--offline"); code != 0 {
		t.Fatalf("explain: code %d\n%s%s", code, out, errOut)
	}

	out, errOut, code := runBinStdin(t, env, repo.Dir, "", "history", "search", "declared and not used")
	// Offline answers are built-in guidance and not stored, so there is no
	// root cause to show yet.
	if code != 0 || !strings.Contains(out, "declared and not used: unused") || !strings.Contains(out, "main.go") ||
		!strings.Contains(out, "1 time(s)") || !strings.Contains(out, "root cause: not explained yet") {
		t.Fatalf("search: code %d\n%s%s", code, out, errOut)
	}

	// Flags may follow the query.
	out, errOut, code = runBinStdin(t, env, repo.Dir, "", "history", "search", "declared and not used", "--json")
	var hits []struct {
		Tool, Message, File, Workspace string
		Count                          int
		LastSeen                       string `json:"lastSeen"`
		Latest                         *struct {
			RootCause string `json:"rootCause"`
			Source    string `json:"source"`
		} `json:"latest"`
	}
	if code != 0 {
		t.Fatalf("search --json: code %d\n%s%s", code, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	if len(hits) != 1 || hits[0].Tool != "go" || hits[0].Count != 1 || hits[0].LastSeen == "" || hits[0].Latest != nil {
		t.Fatalf("search --json: %+v", hits)
	}

	out, errOut, code = runBinStdin(t, env, repo.Dir, "", "history", "stats", "--json")
	var st struct {
		Errors       int            `json:"errors"`
		Occurrences  int            `json:"occurrences"`
		Explanations int            `json:"explanations"`
		ByTool       map[string]int `json:"byTool"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("stats --json: code %d, %v\n%s%s", code, err, out, errOut)
	}
	if st.Errors != 1 || st.Occurrences != 1 || st.Explanations != 0 || st.ByTool["go"] != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if out, _, code = runBinStdin(t, env, repo.Dir, "", "history", "stats"); code != 0 || !strings.Contains(out, "1 distinct") {
		t.Fatalf("stats text: code %d\n%s", code, out)
	}

	// Forgetting never defaults to everything.
	for _, args := range [][]string{{"forget"}, {"forget", "--workspace", repo.Dir, "--all"}, {"forget", repo.Dir}} {
		_, errOut, code = runBinStdin(t, env, repo.Dir, "", append([]string{"history"}, args...)...)
		if code != 2 || errOut == "" {
			t.Errorf("history %v: code %d, stderr %q", args, code, errOut)
		}
	}
	if _, _, code = runBinStdin(t, env, repo.Dir, "", "history", "search"); code != 2 {
		t.Errorf("search without a query: code %d", code)
	}
	if _, _, code = runBinStdin(t, env, repo.Dir, "", "history", "bogus"); code != 2 {
		t.Errorf("unknown subcommand: code %d", code)
	}
	out, _, _ = runBinStdin(t, env, repo.Dir, "", "history", "stats", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Errors != 1 {
		t.Fatalf("a refused forget deleted something: %+v %v", st, err)
	}

	// Another workspace's forget leaves it alone; its own removes it.
	other := t.TempDir()
	if out, _, code = runBinStdin(t, env, repo.Dir, "", "history", "forget", "--workspace", other); code != 0 || !strings.Contains(out, "Forgot 0") {
		t.Fatalf("forget other: code %d\n%s", code, out)
	}
	out, errOut, code = runBinStdin(t, env, repo.Dir, "", "history", "forget", "--workspace", repo.Dir)
	if code != 0 || !strings.Contains(out, "Forgot 1") {
		t.Fatalf("forget: code %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runBinStdin(t, env, repo.Dir, "", "history", "search", "declared and not used", "--json")
	hits = nil
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 0 {
		t.Fatalf("search after forget: code %d, %v, %+v\n%s%s", code, err, hits, out, errOut)
	}
	out, _, code = runBinStdin(t, env, repo.Dir, "", "history", "search", "declared and not used")
	if code != 0 || !strings.Contains(out, "No remembered error matches") {
		t.Fatalf("text search after forget: code %d\n%s", code, out)
	}
}

// TestHistoryShowsRootCause: an explanation from the model is the latest
// root cause of the error, and its words are searchable too.
func TestHistoryShowsRootCause(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable."],"confidence":0.9}`}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, errOut, code := runBinStdin(t, env, repo.Dir, buildOutput(t, repo), "explain"); code != 0 {
		t.Fatalf("explain: code %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := runBinStdin(t, env, repo.Dir, "", "history", "search", "never read")
	if code != 0 || !strings.Contains(out, "root cause: unused is assigned but never read in main (model, confidence 90%)") {
		t.Fatalf("search: code %d\n%s%s", code, out, errOut)
	}
	out, _, code = runBinStdin(t, env, repo.Dir, "", "history", "search", "--json", "declared")
	var hits []struct {
		Latest *struct {
			RootCause string   `json:"rootCause"`
			Steps     []string `json:"steps"`
			Source    string   `json:"source"`
		} `json:"latest"`
	}
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 || hits[0].Latest == nil ||
		hits[0].Latest.Source != "model" || len(hits[0].Latest.Steps) != 1 {
		t.Fatalf("search --json: code %d, %v, %+v\n%s", code, err, hits, out)
	}
}
