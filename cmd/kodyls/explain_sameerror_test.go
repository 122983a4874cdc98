package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// pyTraceback is Python's report of a failed import on line.
func pyTraceback(file string, line int, module string) string {
	return "Traceback (most recent call last):\n" +
		"  File \"" + file + "\", line " + strconv.Itoa(line) + ", in <module>\n" +
		"    import " + module + "\n" +
		"ModuleNotFoundError: No module named '" + module + "'\n"
}

func rootCauseAnswer(root string) llmtest.Reply {
	return llmtest.Tools(llmtest.ToolCall{Name: "final_answer", Arguments: `{"rootCause":"` + root + `","fixGuidelines":["fix it"],"confidence":0.9}`})
}

// TestExplainAnotherErrorOfTheKindAsksTheModel: after `No module named
// 'requests'` was explained, `No module named 'numpy'` in the same,
// unchanged file is another error: the model explains it, not the
// history with the answer about requests, and each is then answered from
// history with its own explanation.
func TestExplainAnotherErrorOfTheKindAsksTheModel(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.PromptContains("- Message: No module named 'numpy'"), rootCauseAnswer("ROOT-NP: numpy is not installed"))
	fake.On(llmtest.Any(), rootCauseAnswer("ROOT-REQ: pip install requests"))
	repo := lsptest.NewRepo(t, map[string]string{"app.py": "import requests\nimport numpy\n"})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	app := filepath.Join(repo.Dir, "app.py")
	explain := func(output string, args ...string) explainJSON {
		t.Helper()
		out, errOut, code := runBinStdin(t, env, repo.Dir, output, append([]string{"explain", "--json"}, args...)...)
		var rep explainJSON
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("explain: code %d, %v\n%s%s", code, err, out, errOut)
		}
		return rep
	}
	req, np := pyTraceback(app, 1, "requests"), pyTraceback(app, 2, "numpy")

	if rep := explain(req); rep.RCA.Source != "model" || !strings.HasPrefix(rep.RCA.RootCause, "ROOT-REQ") {
		t.Fatalf("requests: %+v", rep.RCA)
	}
	calls := fake.CountChat()
	rep := explain(np)
	if rep.RCA.Source != "model" || !strings.HasPrefix(rep.RCA.RootCause, "ROOT-NP") || fake.CountChat() == calls {
		t.Fatalf("numpy answered %q (%s), note %q", rep.RCA.RootCause, rep.RCA.Source, rep.Note)
	}
	prompt := fake.ChatRequests()[calls].Chat.Text()
	if !strings.Contains(prompt, "- Error: No module named 'requests' (app.py)\n  Root cause found then: ROOT-REQ") ||
		strings.Contains(prompt, "- Error: No module named 'numpy'") {
		t.Errorf("the explanation of requests is not shown as given for requests:\n%s", prompt)
	}

	calls = fake.CountChat()
	for output, want := range map[string]string{req: "ROOT-REQ", np: "ROOT-NP"} {
		rep := explain(output)
		if rep.RCA.Source != "history" || !strings.HasPrefix(rep.RCA.RootCause, want) {
			t.Errorf("again: %q (%s), want %s from history", rep.RCA.RootCause, rep.RCA.Source, want)
		}
		rep = explain(output, "--offline")
		if rep.RCA.Source != "history" || !strings.HasPrefix(rep.RCA.RootCause, want) {
			t.Errorf("offline: %q (%s), want %s from history", rep.RCA.RootCause, rep.RCA.Source, want)
		}
	}
	if fake.CountChat() != calls {
		t.Errorf("%d model calls for errors explained before", fake.CountChat()-calls)
	}
	// A third module, offline: neither explanation is its own.
	if rep := explain(strings.ReplaceAll(np, "numpy", "pandas"), "--offline"); rep.RCA.Source == "history" {
		t.Errorf("pandas offline answered from history: %q, note %q", rep.RCA.RootCause, rep.Note)
	}

	// The history says which error its explanation answered.
	out, errOut, code := runBinStdin(t, env, repo.Dir, "", "history", "search", "No module named")
	if code != 0 || !strings.Contains(out, "No module named 'pandas'") || !strings.Contains(out, "root cause: ROOT-NP") ||
		!strings.Contains(out, "given for:  No module named 'numpy'") {
		t.Errorf("history search: code %d\n%s%s", code, out, errOut)
	}
}

// TestExplainTimestampedErrorIsOneError: an error that quotes the clock
// is one error however often it recurs: one fingerprint, one history
// entry, and the model asked once.
func TestExplainTimestampedErrorIsOneError(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), rootCauseAnswer("the test certificate expired"))
	repo := lsptest.NewRepo(t, map[string]string{
		"go.mod":    "module example.com/cert\n\ngo 1.22\n",
		"x_test.go": "package cert\n\nimport \"testing\"\n\nfunc TestCert(t *testing.T) {\n\tt.Error(check())\n}\n",
	})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	fps := map[string]bool{}
	for i, now := range []string{"2026-11-25T15:09:30Z", "2026-11-25T15:10:02.518Z", "2026-11-26T08:00:00+01:00"} {
		output := "--- FAIL: TestCert (0.00s)\n    x_test.go:6: x509: certificate has expired or is not yet valid: current time " + now +
			" is after 2026-11-24T00:00:00Z\nFAIL\nFAIL\texample.com/cert\t0.002s\nFAIL\n"
		out, errOut, code := runBinStdin(t, env, repo.Dir, output, "explain", "--json")
		var rep explainJSON
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("explain: code %d, %v\n%s%s", code, err, out, errOut)
		}
		fps[rep.Errors[rep.Primary].Fingerprint] = true
		if want := map[bool]string{true: "model", false: "history"}[i == 0]; rep.RCA.Source != want {
			t.Errorf("run %d answered by %s, want %s", i+1, rep.RCA.Source, want)
		}
	}
	if len(fps) != 1 || fake.CountChat() != 1 {
		t.Errorf("%d fingerprints, %d model calls; want 1 and 1", len(fps), fake.CountChat())
	}
	out, _, _ := runBinStdin(t, env, repo.Dir, "", "history", "stats", "--json")
	var st struct{ Errors, Occurrences int }
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Errors != 1 || st.Occurrences != 3 {
		t.Errorf("history stats %+v, %v; want 1 error seen 3 times\n%s", st, err, out)
	}
}

// TestHistoryKeepsNoSecretAndForgetsForGood: the secrets of an error's
// text never reach the history's files or `history search`, and
// `history forget --all` leaves none of the forgotten text in the data
// directory.
func TestHistoryKeepsNoSecretAndForgetsForGood(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"db.py": "import psycopg\nzanzibar_quokka = psycopg.connect(DSN)\n"})
	env := testEnv(t)
	data := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "KODYLS_DATA_DIR="); ok {
			data = v
		}
	}
	passwords := []string{"Zq8-hunter2-Wx", "Pv3-swordfish-Lk"}
	for _, pw := range passwords {
		output := "Traceback (most recent call last):\n  File \"" + filepath.Join(repo.Dir, "db.py") + "\", line 2, in <module>\n" +
			"    zanzibar_quokka = psycopg.connect(DSN)\n" +
			"psycopg.OperationalError: connection to postgres://admin:" + pw + "@db.internal:5432/app failed for zanzibar_quokka: password authentication failed\n"
		if out, errOut, code := runBinStdin(t, env, repo.Dir, output, "explain", "--offline"); code != 0 {
			t.Fatalf("explain: code %d\n%s%s", code, out, errOut)
		}
	}
	holding := func(text string) []string {
		var in []string
		err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err == nil && bytes.Contains(b, []byte(text)) {
				in = append(in, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	out, errOut, code := runBinStdin(t, env, repo.Dir, "", "history", "search", "password authentication failed")
	if code != 0 || !strings.Contains(out, "password authentication failed") || !strings.Contains(out, "2 time(s)") {
		t.Fatalf("history search: code %d\n%s%s", code, out, errOut)
	}
	for _, pw := range passwords {
		if strings.Contains(out, pw) {
			t.Errorf("history search prints the password %s:\n%s", pw, out)
		}
		if in := holding(pw); len(in) > 0 {
			t.Errorf("the password %s is stored in %v", pw, in)
		}
	}
	if len(holding("zanzibar_quokka")) == 0 {
		t.Fatal("the error's text is in no file of the data directory: the test proves nothing")
	}
	if out, errOut, code := runBinStdin(t, env, repo.Dir, "", "history", "forget", "--all"); code != 0 || !strings.Contains(out, "Forgot 1") {
		t.Fatalf("forget: code %d\n%s%s", code, out, errOut)
	}
	if in := holding("zanzibar_quokka"); len(in) > 0 {
		t.Errorf("the forgotten error's text is still in %v", in)
	}
}
