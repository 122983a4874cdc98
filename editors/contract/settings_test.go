package contract

import (
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestMergeOrder(t *testing.T) {
	r := Resolve(env(map[string]string{
		"OPENAI_BASE_URL":     "http://openai.invalid/v1",
		"KODYLS_LLM_BASE_URL": "http://localhost:11434/v1",
		"KODYLS_LLM_MODEL":    "qwen2.5-coder",
	}),
		[]byte(`{"kodyls":{"llm":{"model":"from-init"},"review":{"trigger":"idle"}}}`),
		[]byte(`{"review":{"trigger":"manual"},"severity":{"low":"information"}}`))
	s := r.Settings
	if s.LLM.BaseURL != "http://localhost:11434/v1" || r.Origin["llm.baseUrl"] != "env KODYLS_LLM_BASE_URL" {
		t.Errorf("KODYLS_ env must win over OPENAI_: %q from %q", s.LLM.BaseURL, r.Origin["llm.baseUrl"])
	}
	if s.LLM.Model != "from-init" || r.Origin["llm.model"] != OriginInit {
		t.Errorf("initializationOptions must override env: model %q", s.LLM.Model)
	}
	if s.Review.Trigger != TriggerManual || r.Origin["review.trigger"] != OriginClient {
		t.Errorf("workspace/configuration must override initializationOptions: %q", s.Review.Trigger)
	}
	if s.Severity["low"] != "information" || s.Severity["critical"] != "error" {
		t.Errorf("severity merge: %v", s.Severity)
	}
	if len(r.Problems) != 0 {
		t.Errorf("problems: %v", r.Problems)
	}
}

func TestBadValuesKeepTheRest(t *testing.T) {
	r := Resolve(env(nil), nil, []byte(`{"review":{"trigger":"sometimes","idleDelayMs":"fast"},"rules":{"scope":"file"},"colour":"blue","llm":{"baseUrl":"localhost:1234"}}`))
	s := r.Settings
	if s.Rules.Scope != ScopeFile {
		t.Errorf("a valid key beside bad ones must apply: scope %q", s.Rules.Scope)
	}
	if s.Review.Trigger != TriggerSave || s.Review.IdleDelayMS != 1500 {
		t.Errorf("bad values must fall back to defaults: %+v", s.Review)
	}
	if s.LLMConfigured() {
		t.Errorf("a base URL without scheme must not be used")
	}
	all := strings.Join(r.Problems, "\n")
	for _, want := range []string{`unknown setting "colour"`, `"review.idleDelayMs" has the wrong type`, `review.trigger "sometimes"`, "http://localhost:11434/v1"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}

func TestRedacted(t *testing.T) {
	s := Defaults()
	s.LLM.APIKey = "sk-proj-abcdefghijklmnop1234"
	if got := s.Redacted().LLM.APIKey; strings.Contains(got, "abcdef") || !strings.HasSuffix(got, "1234") {
		t.Fatalf("redacted key %q", got)
	}
	if s.LLM.APIKey != "sk-proj-abcdefghijklmnop1234" {
		t.Fatal("Redacted must not modify the original")
	}
}

func TestLLMTaskModels(t *testing.T) {
	r := Resolve(env(map[string]string{"KODYLS_LLM_MODEL": "base"}), nil,
		[]byte(`{"llm":{"models":{"review":"big","Cheap":"small","summarise":"x"},"timeoutMs":5,"maxConcurrent":2}}`))
	l := r.Settings.LLM
	if l.Model != "base" || l.Models["review"] != "big" || l.Models["cheap"] != "small" || l.MaxConcurrent != 2 {
		t.Fatalf("llm settings %+v", l)
	}
	if _, ok := l.Models["summarise"]; ok || l.TimeoutMS != 60000 {
		t.Fatalf("invalid values kept: %+v", l)
	}
	if len(r.Problems) != 2 {
		t.Fatalf("problems %v", r.Problems)
	}
}

// KODYLS_SETTINGS carries any setting for the CLI and CI; the editor's
// layers still win, and a broken value is a problem, not a crash.
func TestSettingsEnv(t *testing.T) {
	r := Resolve(env(map[string]string{
		"KODYLS_LLM_MODEL": "single",
		SettingsEnv:        `{"kodyls":{"llm":{"timeoutMs":2000,"model":"from-json"},"build":{"onSave":"go build ./..."}}}`,
	}), []byte(`{"llm":{"model":"from-init"}}`), nil)
	if r.Settings.LLM.TimeoutMS != 2000 || r.Origin["llm.timeoutMs"] != "env "+SettingsEnv {
		t.Errorf("timeout %d from %q", r.Settings.LLM.TimeoutMS, r.Origin["llm.timeoutMs"])
	}
	if r.Settings.Build.OnSave != "go build ./..." || r.Settings.LLM.Model != "from-init" {
		t.Errorf("build %q, model %q (initializationOptions must win)", r.Settings.Build.OnSave, r.Settings.LLM.Model)
	}
	bad := Resolve(env(map[string]string{SettingsEnv: `{"llm":{"timeoutMs":"soon"}`}), nil, nil)
	if len(bad.Problems) != 1 || !strings.Contains(bad.Problems[0], SettingsEnv) || bad.Settings.LLM.TimeoutMS != 60000 {
		t.Errorf("broken JSON: problems %q, timeout %d", bad.Problems, bad.Settings.LLM.TimeoutMS)
	}
}

// TestWrongTypeSaysWhatIsExpected: a value of the wrong type is reported
// with the type the setting takes, from the settings table, and with the
// value kept.
func TestWrongTypeSaysWhatIsExpected(t *testing.T) {
	r := Resolve(env(map[string]string{SettingsEnv: `{"llm":{"timeoutMs":"20s","models":["a"]},"review":{"trigger":1},"severity":{"low":2}}`}),
		[]byte(`{"llm":{"timeoutMs":"30s","apiKey":12345678}}`), nil)
	want := []string{
		`env KODYLS_SETTINGS: setting "llm.models" has the wrong type (["a"]): expected an object whose keys are review, rules, agent, cheap, with string values; keeping the default`,
		`env KODYLS_SETTINGS: setting "llm.timeoutMs" has the wrong type ("20s"): expected an integer (milliseconds, 1000..600000); keeping the default`,
		`env KODYLS_SETTINGS: setting "review.trigger" has the wrong type (1): expected one of the strings save, idle, manual; keeping the default`,
		`env KODYLS_SETTINGS: setting "severity" has the wrong type ({"low":2}): expected an object whose keys are critical, high, medium, low and whose values are error, warning, information, hint; keeping the default`,
		// The key's value is never shown, only its kind.
		`initializationOptions: setting "llm.apiKey" has the wrong type (a number): expected a string; keeping the default`,
		`initializationOptions: setting "llm.timeoutMs" has the wrong type ("30s"): expected an integer (milliseconds, 1000..600000); keeping the default`,
	}
	if got := strings.Join(r.Problems, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	r = Resolve(env(map[string]string{SettingsEnv: `{"llm":{"timeoutMs":20000}}`}), []byte(`{"llm":{"timeoutMs":"30s"}}`), nil)
	if len(r.Problems) != 1 || !strings.HasSuffix(r.Problems[0], "; keeping the value from env KODYLS_SETTINGS") || r.Settings.LLM.TimeoutMS != 20000 {
		t.Errorf("problems %q, timeout %d: want the value of KODYLS_SETTINGS kept, and said", r.Problems, r.Settings.LLM.TimeoutMS)
	}
}

// TestMisspelledKeySuggested: an unknown key close to one declared gets
// a suggestion; one close to none, or to several, gets none.
func TestMisspelledKeySuggested(t *testing.T) {
	for raw, want := range map[string]string{
		`{"llm":{"timeout":1}}`:       `unknown setting "llm.timeout" (ignored; did you mean "llm.timeoutMs"?)`,
		`{"rule":{}}`:                 `unknown setting "rule" (ignored; did you mean "rules"?)`,
		`{"llm":{"baseURL":"x"}}`:     `unknown setting "llm.baseURL" (ignored; did you mean "llm.baseUrl"?)`,
		`{"llm":{"modle":"x"}}`:       `unknown setting "llm.modle" (ignored; did you mean "llm.model"?)`,
		`{"model":"x"}`:               `unknown setting "model" (ignored; did you mean "llm.model"?)`,
		`{"review":{"scope":"file"}}`: `unknown setting "review.scope" (ignored; did you mean "rules.scope"?)`,
		`{"colour":"blue"}`:           `unknown setting "colour" (ignored)`,
		`{"timeoutMs":1}`:             `unknown setting "timeoutMs" (ignored)`, // llm. or build.: no guess
		`{"review":{"when":"save"}}`:  `unknown setting "review.when" (ignored)`,
		`{"severity":{},"builds":{}}`: `unknown setting "builds" (ignored; did you mean "build"?)`,
	} {
		r := Resolve(env(nil), []byte(raw), nil)
		if len(r.Problems) != 1 || r.Problems[0] != OriginInit+": "+want {
			t.Errorf("%s: problems %q, want %q", raw, r.Problems, want)
		}
	}
}

// TestSettingsNotAnObject: settings that are not a JSON object are said to
// be so in JSON's words, not Go's.
func TestSettingsNotAnObject(t *testing.T) {
	for raw, want := range map[string]string{
		`[1]`:            "env KODYLS_SETTINGS: settings must be a JSON object, got an array",
		`"x"`:            "env KODYLS_SETTINGS: settings must be a JSON object, got a string",
		`{"kodyls":3}`:   "env KODYLS_SETTINGS: settings must be a JSON object, got a number",
		`{"llm":"x"}`:    `env KODYLS_SETTINGS: "llm" must be a JSON object, got a string`,
		`{"llm":{"a":1}`: "env KODYLS_SETTINGS: settings are not valid JSON (unexpected end of JSON input at byte 14)",
	} {
		r := Resolve(env(map[string]string{SettingsEnv: raw}), nil, nil)
		if len(r.Problems) != 1 || r.Problems[0] != want {
			t.Errorf("%s: problems %q, want %q", raw, r.Problems, want)
		}
		if strings.Contains(strings.Join(r.Problems, ""), "Go value") {
			t.Errorf("%s: a Go type in the problem: %q", raw, r.Problems)
		}
	}
}

// TestStringSettingsTrimmed: blanks around a string value, a key pasted
// with its line break in JSON or an editor's settings, are dropped as
// they are from the environment; a blank or control character inside a
// key is a problem naming llm.apiKey, without the key.
func TestStringSettingsTrimmed(t *testing.T) {
	r := Resolve(env(map[string]string{SettingsEnv: `{"llm":{"apiKey":"sk-abc\n","baseUrl":" http://localhost:11434/v1 ","model":"m\t"}}`}), nil, nil)
	l := r.Settings.LLM
	if l.APIKey != "sk-abc" || l.BaseURL != "http://localhost:11434/v1" || l.Model != "m" || len(r.Problems) != 0 {
		t.Errorf("llm %+v, problems %q: want the blanks dropped", l, r.Problems)
	}
	r = Resolve(env(nil), nil, []byte(`{"llm":{"apiKey":"sk-abc\ndef-secret"}}`))
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "llm.apiKey has a line break at character 7 of 17") || strings.Contains(r.Problems[0], "secret") {
		t.Errorf("problems %q: want the line break inside the key named, without the key", r.Problems)
	}
	r = Resolve(env(map[string]string{"KODYLS_LLM_API_KEY": "sk abc"}), nil, nil)
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "llm.apiKey has a blank at character 3") {
		t.Errorf("problems %q: want the blank inside the key named", r.Problems)
	}
}

// TestOpenAIKeyOnlyForOpenAI: OPENAI_API_KEY goes with OPENAI_BASE_URL's
// endpoint or OpenAI's, never to another endpoint named by
// KODYLS_LLM_BASE_URL or the editor; KODYLS_LLM_API_KEY goes anywhere.
func TestOpenAIKeyOnlyForOpenAI(t *testing.T) {
	const key = "sk-openai-0123456789"
	cases := []struct {
		name   string
		env    map[string]string
		client string
		sent   bool
	}{
		{"OPENAI_BASE_URL", map[string]string{"OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_API_KEY": key}, "", true},
		{"api.openai.com", map[string]string{"KODYLS_LLM_BASE_URL": "https://api.openai.com/v1", "OPENAI_API_KEY": key}, "", true},
		{"local endpoint", map[string]string{"KODYLS_LLM_BASE_URL": "http://localhost:11434/v1", "OPENAI_API_KEY": key}, "", false},
		{"over OPENAI_BASE_URL", map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1", "KODYLS_LLM_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_API_KEY": key}, "", false},
		{"editor's endpoint", map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1", "OPENAI_API_KEY": key}, `{"llm":{"baseUrl":"https://third.party/v1"}}`, false},
		{"same URL twice", map[string]string{"OPENAI_BASE_URL": "https://proxy.example/v1", "KODYLS_LLM_BASE_URL": "https://proxy.example/v1/", "OPENAI_API_KEY": key}, "", true},
		{"plain http to openai", map[string]string{"KODYLS_LLM_BASE_URL": "http://api.openai.com/v1", "OPENAI_API_KEY": key}, "", false},
	}
	for _, c := range cases {
		var client []byte
		if c.client != "" {
			client = []byte(c.client)
		}
		c.env["KODYLS_LLM_MODEL"] = "m"
		r := Resolve(env(c.env), nil, client)
		if got := r.Settings.LLM.APIKey == key; got != c.sent {
			t.Errorf("%s: key sent %v, want %v", c.name, got, c.sent)
		}
		if !c.sent && (r.Origin["llm.apiKey"] != OriginDefault || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "OPENAI_API_KEY is not sent to "+r.Settings.LLM.BaseURL)) {
			t.Errorf("%s: origin %q, notes %q: want the key withheld and said", c.name, r.Origin["llm.apiKey"], r.Notes)
		}
		if len(r.Problems) != 0 {
			t.Errorf("%s: problems %q", c.name, r.Problems)
		}
	}
	r := Resolve(env(map[string]string{"KODYLS_LLM_BASE_URL": "http://localhost:11434/v1", "KODYLS_LLM_MODEL": "m", "OPENAI_API_KEY": key, "KODYLS_LLM_API_KEY": "local-key"}), nil, nil)
	if r.Settings.LLM.APIKey != "local-key" || r.Origin["llm.apiKey"] != "env KODYLS_LLM_API_KEY" || len(r.Notes) != 0 {
		t.Errorf("KODYLS_LLM_API_KEY: key %q from %q, notes %q", r.Settings.LLM.APIKey, r.Origin["llm.apiKey"], r.Notes)
	}
}

// TestWhyNoModel names the cause: an unusable URL, a missing model, or
// nothing set.
func TestWhyNoModel(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"KODYLS_LLM_BASE_URL": "127.0.0.1:8089/v1", "KODYLS_LLM_MODEL": "m"}, `llm.baseUrl "127.0.0.1:8089/v1" (from env KODYLS_LLM_BASE_URL) is not a usable http(s) URL`},
		{map[string]string{"KODYLS_LLM_BASE_URL": "http://127.0.0.1:8089/v1"}, "no model is set for http://127.0.0.1:8089/v1 (from env KODYLS_LLM_BASE_URL): set KODYLS_LLM_MODEL"},
		{map[string]string{"KODYLS_LLM_MODEL": "m"}, "no LLM endpoint is set (a model is): set KODYLS_LLM_BASE_URL"},
		{nil, "no LLM endpoint is configured: set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL"},
		{map[string]string{"KODYLS_LLM_BASE_URL": "http://127.0.0.1:8089/v1", "KODYLS_LLM_MODEL": "m"}, ""},
	} {
		got := Resolve(env(c.env), nil, nil).WhyNoModel()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

func TestIsObject(t *testing.T) {
	for raw, want := range map[string]bool{
		``: false, `null`: false, ` null `: false, `{"kodyls":null}`: false, `"x"`: false, `[]`: false, `{`: false,
		`{}`: true, ` {} `: true, `{"kodyls":{}}`: true, `{"rules":{"scope":"file"}}`: true,
	} {
		if got := IsObject([]byte(raw)); got != want {
			t.Errorf("IsObject(%q) = %v, want %v", raw, got, want)
		}
	}
}
