package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestCommandsTellConfigurationProblems: every command tells on stderr
// the settings it could not use, with the type expected and the key meant,
// instead of going on in silence.
func TestCommandsTellConfigurationProblems(t *testing.T) {
	repo := brokenGoRepo(t)
	output := buildOutput(t, repo)
	env := append(testEnv(t), `KODYLS_SETTINGS={"llm":{"timeoutMs":"20s"},"rule":{}}`)
	const (
		wrongType = `configuration: env KODYLS_SETTINGS: setting "llm.timeoutMs" has the wrong type ("20s"): expected an integer (milliseconds, 1000..600000); keeping the default`
		unknown   = `configuration: env KODYLS_SETTINGS: unknown setting "rule" (ignored; did you mean "rules"?)`
	)
	for _, args := range [][]string{
		{"explain", "--offline"}, {"explain"}, {"fix"}, {"rules", "list"}, {"rules", "check"}, {"history", "stats"}, {"eval", "rca"},
	} {
		_, errOut, _ := runBinStdin(t, env, repo.Dir, output, args...)
		cmd := "kodyls " + strings.Join(args[:1], " ")
		if args[0] == "rules" || args[0] == "history" || args[0] == "eval" {
			cmd = "kodyls " + strings.Join(args[:2], " ")
		}
		for _, want := range []string{cmd + ": " + wrongType, cmd + ": " + unknown} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", strings.Join(args, " "), want, errOut)
			}
		}
	}
	out, _, _ := runBin(t, env, repo.Dir, "doctor")
	if !strings.Contains(out, `did you mean "rules"?`) || !strings.Contains(out, "expected an integer (milliseconds, 1000..600000)") {
		t.Errorf("doctor does not list the same problems:\n%s", out)
	}
	out, errOut, _ := runBin(t, append(testEnv(t), `KODYLS_SETTINGS=[1]`), repo.Dir, "rules", "list")
	if !strings.Contains(errOut, "kodyls rules list: configuration: env KODYLS_SETTINGS: settings must be a JSON object, got an array") || strings.Contains(out+errOut, "Go value") {
		t.Errorf("settings that are an array:\n%s%s", out, errOut)
	}
}

// TestNoModelSaysWhy: without a usable model, explain, fix, eval and
// rules test name the cause (a URL set but unusable, no model, nothing
// set), never asking to set what is set.
func TestNoModelSaysWhy(t *testing.T) {
	repo := brokenGoRepo(t)
	repo.Write(map[string]string{".kody/rules/validate.md": "---\ntitle: Handlers validate input\nseverity: high\n---\nValidate input.\n"})
	output := buildOutput(t, repo)
	badURL := append(testEnv(t), "KODYLS_LLM_BASE_URL=127.0.0.1:8089/v1", "KODYLS_LLM_MODEL=fake-model")
	noModel := append(testEnv(t), "KODYLS_LLM_BASE_URL=http://127.0.0.1:8089/v1")
	const (
		urlCause   = `llm.baseUrl "127.0.0.1:8089/v1" (from env KODYLS_LLM_BASE_URL) is not a usable http(s) URL`
		modelCause = "no model is set for http://127.0.0.1:8089/v1 (from env KODYLS_LLM_BASE_URL): set KODYLS_LLM_MODEL"
	)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"explain, bad URL", badURL, []string{"explain"}, 0, urlCause},
		{"explain, no model", noModel, []string{"explain"}, 0, modelCause},
		{"fix, bad URL", badURL, []string{"fix"}, 2, "Fix this error needs a model: " + urlCause},
		{"fix, no model", noModel, []string{"fix"}, 2, "Fix this error needs a model: " + modelCause},
		{"eval, bad URL", badURL, []string{"eval", "rca"}, 2, "kodyls eval rca: " + urlCause},
		{"eval, no model", noModel, []string{"eval", "rca"}, 2, "kodyls eval rca: " + modelCause},
		{"rules test, no model", noModel, []string{"rules", "test", "Handlers validate"}, 0, "no model can be used: " + modelCause},
	} {
		out, errOut, code := runBinStdin(t, c.env, repo.Dir, output, c.args...)
		all := out + errOut
		if code != c.code || !strings.Contains(all, c.want) || strings.Contains(all, "configure KODYLS_LLM_BASE_URL") ||
			strings.Contains(all, "no LLM endpoint configured") {
			t.Errorf("%s: code %d (want %d), want %q:\n%s", c.name, code, c.code, c.want, all)
		}
	}
	out, _, _ := runBinStdin(t, badURL, repo.Dir, output, "explain", "--offline")
	if !strings.Contains(out, "no model was used (offline)") || strings.Contains(out, "KODYLS_LLM") {
		t.Errorf("explain --offline asks for a model:\n%s", out)
	}
}

// TestDoctorBlamesTheBaseURL: a base URL that is not the API root, or
// that names a web page, is reported as the URL's problem with what it
// must be; not as a model the endpoint does not serve, nor as a server
// to start.
func TestDoctorBlamesTheBaseURL(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>a web UI</title>"))
	}))
	defer web.Close()
	repo := fixtureRepo(t)
	for url, want := range map[string]string{
		fake.URL + "/v1":                    "is not the API root (/v1 appears twice)",
		strings.TrimSuffix(fake.URL, "/v1"): "is not the API root (it does not end in /v1)",
		fake.URL + "/chat/completions":      "is not the API root (without /chat/completions",
		web.URL + "/v1":                     "answers, but not as an OpenAI-compatible API (got text/html from /models, not JSON)",
	} {
		out, errOut, code := runBin(t, append(testEnv(t), "KODYLS_LLM_BASE_URL="+url, "KODYLS_LLM_MODEL=fake-model"), repo.Dir, "doctor")
		problems := out[strings.LastIndex(out, "problem(s):")+1:]
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(problems, "e.g. http://localhost:11434/v1") ||
			strings.Contains(problems, "KODYLS_LLM_MODEL") || strings.Contains(problems, "not reachable") {
			t.Errorf("doctor with %s: code %d, want 1 and %q:\n%s%s", url, code, want, out, errOut)
		}
	}
}

// TestAPIKeyWithALineBreak: a key pasted with its line break into JSON
// settings works; one with a line break inside is a configuration problem
// naming llm.apiKey, not an endpoint to start.
func TestAPIKeyWithALineBreak(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.RequireAPIKey("sk-abc")
	fake.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
	repo := fixtureRepo(t)
	settings := func(key string) string {
		return `KODYLS_SETTINGS={"llm":{"apiKey":"` + key + `","baseUrl":"` + fake.URL + `","model":"fake-model"}}`
	}
	out, errOut, code := runBin(t, append(testEnv(t), settings(`sk-abc\n`)), repo.Dir, "doctor")
	if code != 0 || !strings.Contains(out, "API key from env KODYLS_SETTINGS") {
		t.Errorf("doctor with a key ending in a line break: code %d, want 0 and the key's origin\n%s%s", code, out, errOut)
	}
	fake.Reset()
	out, errOut, code = runBin(t, append(testEnv(t), settings(`sk-abc\ndef`)), repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "llm.apiKey has a line break at character 7") || strings.Contains(out, "not reachable") ||
		strings.Contains(out, "start the server") || strings.Contains(out, "abc") {
		t.Errorf("doctor with a line break inside the key: code %d, want 1 and llm.apiKey named\n%s%s", code, out, errOut)
	}
}

// TestOpenAIKeyStaysWithOpenAI: OPENAI_API_KEY is not sent to the
// endpoint KODYLS_LLM_BASE_URL names, and doctor says so; a key for that
// endpoint goes in KODYLS_LLM_API_KEY, and doctor says where it came from.
func TestOpenAIKeyStaysWithOpenAI(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Text(`{"ok": true}`))
	repo := fixtureRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model", "OPENAI_API_KEY=sk-openai-secret-1234")
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 || !strings.Contains(out, "note: OPENAI_API_KEY is not sent to "+fake.URL) || !strings.Contains(out, "no API key") {
		t.Errorf("doctor: code %d\n%s%s", code, out, errOut)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("doctor made no request")
	}
	for _, r := range reqs {
		if h := r.Header.Get("Authorization"); strings.Contains(h, "sk-openai-secret") {
			t.Errorf("%s %s carried OPENAI_API_KEY: %q", r.Method, r.Path, h)
		}
	}
	fake.Reset()
	out, _, _ = runBin(t, append(env, "KODYLS_LLM_API_KEY=local-key-5678"), repo.Dir, "doctor")
	if !strings.Contains(out, "API key from env KODYLS_LLM_API_KEY") || strings.Contains(out, "note: OPENAI_API_KEY") {
		t.Errorf("doctor with KODYLS_LLM_API_KEY:\n%s", out)
	}
	for _, r := range fake.Requests() {
		if h := r.Header.Get("Authorization"); h != "Bearer local-key-5678" {
			t.Errorf("%s %s: Authorization %q, want KODYLS_LLM_API_KEY", r.Method, r.Path, h)
		}
	}
}

// TestRelativeDataDirRefused: a relative KODYLS_DATA_DIR would put the
// store inside the repository each command runs in; it is refused with
// the variable and its value named, by doctor and by the server, and no
// store is written into the repository.
func TestRelativeDataDirRefused(t *testing.T) {
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_DATA_DIR=kodyls-data")
	explainOffline(t, env, repo.Dir, "someName")
	if _, err := os.Stat(filepath.Join(repo.Dir, "kodyls-data")); err == nil {
		t.Error("the store was written into the repository under review")
	}
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	const want = `KODYLS_DATA_DIR "kodyls-data" is a relative path`
	if code != 1 || !strings.Contains(lineWith(out, "data dir"), "unresolved") || !strings.Contains(out, want) || !strings.Contains(out, "absolute path") {
		t.Errorf("doctor: code %d, want 1 and %q\n%s", code, want, out)
	}
	if st, _ := runGit(repo.Dir, "status", "--porcelain"); strings.Contains(st, "kodyls") {
		t.Errorf("the repository has kodyls files:\n%s", st)
	}
	storeWarningShown(t, env, want)
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return string(out), err
}

// TestDoctorWithoutHome: with HOME and KODYLS_DATA_DIR unset, doctor says
// once to set KODYLS_DATA_DIR.
func TestDoctorWithoutHome(t *testing.T) {
	repo := fixtureRepo(t)
	out, _, code := runBin(t, []string{"PATH=" + os.Getenv("PATH")}, repo.Dir, "doctor")
	line := lineWith(out, "no data directory")
	if code != 1 || strings.Count(line, "KODYLS_DATA_DIR") != 1 {
		t.Errorf("doctor without HOME: code %d, problem %q; want KODYLS_DATA_DIR named once\n%s", code, line, out)
	}
}

// readOnlyDataEnv names the read-only file system TestReadOnlyDataDir's
// second run finds mounted.
const readOnlyDataEnv = "KODYLS_TEST_READONLY_DATA"

// TestReadOnlyDataDir: an existing data directory kodyls cannot write
// (here a read-only file system, which root cannot write either) is
// reported with what to do, not as sqlite's bare "unable to open database
// file". The test re-runs itself in a private mount namespace; where
// those are not allowed it is skipped.
func TestReadOnlyDataDir(t *testing.T) {
	if mnt := os.Getenv(readOnlyDataEnv); mnt != "" {
		readOnlyDataDir(t, mnt)
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare not installed")
	}
	ns := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		ns = append([]string{"--user", "--map-root-user"}, ns...)
	}
	mnt := t.TempDir()
	mount := "mount -t tmpfs -o size=1m,ro kodyls-test " + shQuote(mnt)
	if out, err := exec.Command(unshare, append(ns, "sh", "-c", mount)...).CombinedOutput(); err != nil {
		t.Skipf("no private mount namespace with a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lsptest.BuildBinary(t) // the child's build is then a hit in Go's cache
	cmd := exec.Command(unshare, append(ns, "sh", "-c", mount+" && exec "+shQuote(self)+" -test.run '^TestReadOnlyDataDir$' -test.count=1 -test.v")...)
	cmd.Env = append(os.Environ(), readOnlyDataEnv+"="+mnt)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestReadOnlyDataDir")) {
		t.Fatalf("inside the mount namespace: %v\n%s", err, out)
	}
}

func readOnlyDataDir(t *testing.T, mnt string) {
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_DATA_DIR="+mnt)
	want := "the data directory " + mnt + " is not writable (read-only file system): make it writable, or set KODYLS_DATA_DIR"
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("doctor: code %d, want 1 and %q\n%s", code, want, out)
	}
	_, errOut, code := runBin(t, env, repo.Dir, "history", "stats")
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("history stats: code %d, want 1 and %q\n%s", code, want, errOut)
	}
	storeWarningShown(t, env, want)
}
