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
