package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

func TestDoctorChecksTheEndpoint(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.SetModels("qwen2.5-coder", "llama3")
	fake.RequireKnownModel(true) // like OpenAI: an unknown model is a 404
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{"ok": true}))
	repo := fixtureRepo(t)
	repo.Write(map[string]string{".kody/rules/validate-input.md": "---\ntitle: Handlers validate their input\n---\nEvery handler validates its decoded input before using it.\n"})

	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=qwen2.5-coder")
	out, errOut, code := runBin(t, env, repo.Dir, "doctor")
	if code != 0 {
		t.Fatalf("doctor against a healthy endpoint: code %d\n%s%s", code, out, errOut)
	}
	// With a model, a rule without a detector is checked by it.
	if line := lineWith(out, "Handlers validate their input"); !strings.Contains(line, "checked by the model") || strings.Contains(line, "offline") {
		t.Errorf("doctor's line of the model-checked rule: %q", line)
	}
	for _, want := range []string{fake.URL + " model qwen2.5-coder", "reachable", "2 models served", "json_schema accepted"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	env = append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=gpt-9")
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "gpt-9") || !strings.Contains(out, "qwen2.5-coder") || !strings.Contains(out, "KODYLS_LLM_MODEL") {
		t.Errorf("unknown model: code %d, want 1 and a problem naming the served models:\n%s", code, out)
	}

	fake.RejectJSONSchema(true)
	env = append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=llama3")
	out, _, code = runBin(t, env, repo.Dir, "doctor")
	if code != 0 || !strings.Contains(out, "json_object fallback works") {
		t.Errorf("endpoint without json_schema: code %d:\n%s", code, out)
	}
}

// TestEndpointWithoutModel: an endpoint is set but no model. The doctor
// lists the models the endpoint serves; a review says once what to set and
// runs offline, instead of failing every model stage of every file.
func TestEndpointWithoutModel(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.SetModels("qwen2.5-coder", "llama3")
	fake.On(llmtest.Any(), llmtest.JSON(map[string]any{"ok": true}))
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL)

	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "the endpoint serves llama3, qwen2.5-coder") || strings.Count(out, "no model is set") != 1 {
		t.Errorf("doctor without a model: code %d, want 1, the served models and one problem:\n%s", code, out)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 0 || strings.Count(out, "no model is set: set llm.model or KODYLS_LLM_MODEL") != 1 ||
		!strings.Contains(out, "offline: local Kody Rules only") || strings.Contains(out, "degraded") {
		t.Errorf("review without a model: code %d\n%s%s", code, out, errOut)
	}
	if n := fake.CountChat(); n != 0 {
		t.Errorf("%d chat requests without a model, want none", n)
	}
}

func TestDoctorUnreachableEndpoint(t *testing.T) {
	repo := fixtureRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL=http://127.0.0.1:1/v1", "KODYLS_LLM_MODEL=m")
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, "not reachable") || !strings.Contains(out, "KODYLS_LLM_BASE_URL") {
		t.Fatalf("unreachable endpoint: code %d:\n%s", code, out)
	}
}

// TestSecretsNeverLeaveThroughTheBinary: a changed file holding secrets is
// reviewed through the real binary; the fake endpoint never sees them.
func TestSecretsNeverLeaveThroughTheBinary(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	// Fake secrets generated at run time (random, like real ones) so that
	// no scanner flags this file.
	rng := rand.New(rand.NewPCG(1, 2))
	randStr := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	secrets := []string{
		"sk-proj-" + randStr(alnum, 48),
		"ghp_" + randStr(alnum, 36),
		"AKIA" + randStr("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
	}
	// Passwords people type: one in a connection URI (with '#' and '@',
	// as the leak had), and words and digits under password names,
	// which no entropy test would flag.
	uriPW := "Adm1n#" + randStr(alnum, 4) + "@" + randStr(alnum, 3)
	wordPW := "Summer" + randStr("0123456789", 4) + "!"
	propsPW := "Welcome" + randStr("0123456789", 3)
	secrets = append(secrets, uriPW, wordPW, propsPW)
	code := "package main\n\nvar (\n\topenAI = \"" + secrets[0] + "\"\n\tgh     = \"" + secrets[1] + "\"\n\tawsID  = \"" + secrets[2] + "\"\n" +
		"\tdsn    = \"postgres://admin:" + uriPW + "@db.internal:5432/app\"\n" +
		"\tdbPassword = \"" + wordPW + "\"\n)\n"
	props := "spring.datasource.url=jdbc:postgresql://db.internal:5432/app\nspring.datasource.password=" + propsPW + "\n"
	repo := lsptest.NewRepo(t, map[string]string{"main.go": "package main\n", "application.properties": "server.port=8080\n"})
	repo.Write(map[string]string{"main.go": code, "application.properties": props})
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, errOut, code := runBin(t, env, repo.Dir, "review", "main.go", "application.properties"); code != 0 {
		t.Fatalf("review: %d\n%s%s", code, out, errOut)
	}
	if fake.CountChat() == 0 {
		t.Fatal("nothing was sent: the test proves nothing")
	}
	var sent strings.Builder
	for _, r := range fake.Requests() {
		sent.Write(r.Body)
		for _, s := range secrets {
			if strings.Contains(string(r.Body), s) {
				t.Fatalf("secret %q reached the endpoint in %s", s[:8], r.Path)
			}
		}
	}
	// Only the passwords go: the model still reads where the code connects
	// and which property it sets, in both files.
	for _, keep := range []string{"admin:[REDACTED:url-password]@db.internal:5432/app", "dbPassword = \\\"[REDACTED:password]\\\"",
		"spring.datasource.password=[REDACTED:password]"} {
		if !strings.Contains(sent.String(), keep) {
			t.Errorf("the endpoint never saw %q: redaction took more than the secret, or the file was not sent", keep)
		}
	}
}

// TestModelOfATaskClassTheEndpointDoesNotServe: a typo in llm.models (the
// model of one task class) is a problem doctor names, and a review whose
// analysis model the endpoint refuses on every call exits 2, though the
// other stages' model works.
func TestModelOfATaskClassTheEndpointDoesNotServe(t *testing.T) {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.SetModels("fake-model")
	fake.RequireKnownModel(true)
	fake.On(llmtest.SchemaName("health_check"), llmtest.JSON(map[string]any{"ok": true}))
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := changedRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model", `KODYLS_SETTINGS={"llm":{"models":{"review":"gpt-typo"}}}`)
	out, _, code := runBin(t, env, repo.Dir, "doctor")
	if code != 1 || !strings.Contains(out, `llm.models.review names model "gpt-typo"`) {
		t.Errorf("doctor: code %d, want 1 naming llm.models.review:\n%s", code, out)
	}
	out, errOut, code := runBin(t, env, repo.Dir, "review")
	if code != 2 || !strings.Contains(errOut+out, "gpt-typo") {
		t.Errorf("review: code %d, want 2 naming the refused model\n%s%s", code, out, errOut)
	}
}
