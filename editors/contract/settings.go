// Package contract is kodyls's editor contract, declared once: the settings
// (with their types, defaults and descriptions), the commands and their
// typed arguments and results, and the custom notifications. The settings
// resolve from built-in defaults, environment variables, the editor's
// initializationOptions and workspace configuration (section "kodyls"),
// merged in that order so that the source closest to the user wins.
//
// The package knows nothing of LSP transport: the server hands it raw JSON and
// reads back a validated Settings value plus a list of problems it can show.
package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Section is the configuration section kodyls reads from the editor.
const Section = "kodyls"

// Triggers for the LLM review.
const (
	TriggerSave   = "save"
	TriggerIdle   = "idle"
	TriggerManual = "manual"
)

// Rule scopes: where local rule detectors look.
const (
	ScopeChanged = "changed" // only lines changed against the baseline
	ScopeFile    = "file"    // every line of the buffer
)

// Settings is the resolved configuration. Field names are the JSON keys users
// write in their editor configuration.
type Settings struct {
	LLM      LLM               `json:"llm"`
	Review   Review            `json:"review"`
	Rules    Rules             `json:"rules"`
	BaseRef  string            `json:"baseRef"`
	Severity map[string]string `json:"severity"`
	Build    Build             `json:"build"`
}

// Build is the optional build-on-save: a shell command run in the
// workspace root whose errors become diagnostics.
type Build struct {
	OnSave    string `json:"onSave"` // e.g. "go build ./..."; "" = off
	TimeoutMS int    `json:"timeoutMs"`
}

// LLM describes the OpenAI-compatible endpoint. An empty BaseURL means no
// model is configured and kodyls works offline.
type LLM struct {
	BaseURL string `json:"baseUrl"`
	APIKey  string `json:"apiKey"`
	Model   string `json:"model"`
	// Models overrides Model per task class: review, rules, agent, cheap.
	Models        map[string]string `json:"models"`
	TimeoutMS     int               `json:"timeoutMs"`
	MaxConcurrent int               `json:"maxConcurrent"`
}

// TaskClasses are the keys accepted in llm.models.
var TaskClasses = []string{"review", "rules", "agent", "cheap"}

// Review controls when the LLM review runs.
type Review struct {
	Trigger     string `json:"trigger"`
	IdleDelayMS int    `json:"idleDelayMs"`
}

// Rules controls the local Kody Rules detectors.
type Rules struct {
	Scope string `json:"scope"`
}

// Defaults returns the built-in configuration, as SettingsTable declares it.
func Defaults() Settings {
	var s Settings
	for _, st := range SettingsTable {
		st.reset(&s)
	}
	return s
}

// Resolved is a Settings value together with where each key came from and
// the problems met while merging. Problems never discard valid keys: a layer
// with one bad key still contributes its other keys.
type Resolved struct {
	Settings Settings
	// Origin maps a dotted key ("llm.baseUrl") to the layer that set it last.
	Origin   map[string]string
	Problems []string
	// Rejected maps a dotted key to the value the validation refused and
	// replaced (by its default, or nothing for llm.baseUrl), so that what
	// the user set can be named after it was dropped: an llm.baseUrl that
	// is not a URL is not "no endpoint configured".
	Rejected map[string]any
}

// Layer origins, in merge order.
const (
	OriginDefault = "default"
	OriginEnv     = "env"
	OriginInit    = "initializationOptions"
	OriginClient  = "workspace/configuration"
)

// Resolve merges defaults, the environment and the editor layers (either may
// be nil) into a validated configuration.
func Resolve(getenv func(string) string, initOptions, clientConfig []byte) Resolved {
	r := Resolved{Settings: Defaults(), Origin: map[string]string{}}
	for _, st := range SettingsTable {
		r.Origin[st.Key] = OriginDefault
	}
	r.applyEnv(getenv)
	if getenv != nil {
		if raw := strings.TrimSpace(getenv(SettingsEnv)); raw != "" {
			r.applyJSON(OriginEnv+" "+SettingsEnv, unwrapSection([]byte(raw)))
		}
	}
	r.applyJSON(OriginInit, unwrapSection(initOptions))
	r.applyJSON(OriginClient, unwrapSection(clientConfig))
	given := r.Settings.clone()
	r.Problems = append(r.Problems, r.Settings.validate()...)
	for _, st := range SettingsTable {
		if was := st.Get(given); !reflect.DeepEqual(was, st.Get(r.Settings)) {
			if r.Rejected == nil {
				r.Rejected = map[string]any{}
			}
			r.Rejected[st.Key] = was
		}
	}
	return r
}

// SettingsEnv names the environment variable that carries any settings as
// JSON, in the shape of initializationOptions: how the CLI and CI, which
// have no editor, set them (`KODYLS_SETTINGS='{"llm":{"timeoutMs":20000}}'`).
// It applies after the single-key variables below.
const SettingsEnv = "KODYLS_SETTINGS"

// envVars maps environment variables to the dotted key they set. The
// KODYLS_ names win over the OPENAI_ ones, which many tools already export.
var envVars = []struct{ name, key string }{
	{"OPENAI_BASE_URL", "llm.baseUrl"},
	{"OPENAI_API_KEY", "llm.apiKey"},
	{"KODYLS_LLM_BASE_URL", "llm.baseUrl"},
	{"KODYLS_LLM_API_KEY", "llm.apiKey"},
	{"KODYLS_LLM_MODEL", "llm.model"},
}

func (r *Resolved) applyEnv(getenv func(string) string) {
	if getenv == nil {
		return
	}
	for _, ev := range envVars {
		v := strings.TrimSpace(getenv(ev.name))
		if v == "" {
			continue
		}
		st, _ := LookupSetting(ev.key)
		raw, _ := json.Marshal(v)
		if st.set(&r.Settings, raw) == nil {
			r.Origin[ev.key] = OriginEnv + " " + ev.name
		}
	}
}

// unwrapSection accepts both {"kodyls": {...}} and {...}: editors differ in
// whether they nest initializationOptions under the section name.
func unwrapSection(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var outer map[string]json.RawMessage
	if json.Unmarshal(raw, &outer) == nil {
		if inner, ok := outer[Section]; ok && len(outer) == 1 {
			return inner
		}
	}
	return raw
}

func (r *Resolved) applyJSON(origin string, raw []byte) {
	if len(raw) == 0 {
		return
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: settings must be a JSON object: %v", origin, err))
		return
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, ok := known[k]
		if !ok {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: unknown setting %q (ignored)", origin, k))
			continue
		}
		if sub == nil {
			r.applyKey(origin, k, top[k])
			continue
		}
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(top[k], &inner); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %q must be an object", origin, k))
			continue
		}
		innerKeys := make([]string, 0, len(inner))
		for ik := range inner {
			innerKeys = append(innerKeys, ik)
		}
		sort.Strings(innerKeys)
		for _, ik := range innerKeys {
			v := inner[ik]
			if !contains(sub, ik) {
				r.Problems = append(r.Problems, fmt.Sprintf("%s: unknown setting %q (ignored)", origin, k+"."+ik))
				continue
			}
			r.applyKey(origin, k+"."+ik, v)
		}
	}
}

// applyKey decodes one value into a copy of the settings so that a value of
// the wrong type leaves the previous value in place.
func (r *Resolved) applyKey(origin, key string, v json.RawMessage) {
	next := r.Settings.clone()
	st, _ := LookupSetting(key)
	if err := st.set(&next, v); err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: setting %q has the wrong type (%s); keeping %s", origin, key, strings.TrimSpace(string(v)), r.Origin[key]+" value"))
		return
	}
	r.Settings = next
	r.Origin[key] = origin
}

// DiagnosticSeverities are the values a severity may map to.
var DiagnosticSeverities = []string{"error", "warning", "information", "hint"}

// validate checks values and resets invalid ones to their defaults, so the
// server always runs with a usable configuration.
func (s *Settings) validate() []string {
	var problems []string
	d := Defaults()
	for _, st := range SettingsTable {
		problems = append(problems, st.validate(s, d)...)
	}
	sort.Strings(problems)
	return problems
}

// LLMConfigured reports whether the model can be used: an endpoint and a
// model (llm.model, or one for a task class in llm.models) are set.
func (s Settings) LLMConfigured() bool { return s.LLM.BaseURL != "" && s.ModelSet() }

// ModelSet reports whether a model name is set, for every task or for one.
func (s Settings) ModelSet() bool {
	if strings.TrimSpace(s.LLM.Model) != "" {
		return true
	}
	for _, m := range s.LLM.Models {
		if strings.TrimSpace(m) != "" {
			return true
		}
	}
	return false
}

// Redacted returns a copy safe to print or log: the API key is masked.
func (s Settings) Redacted() Settings {
	c := s.clone()
	if c.LLM.APIKey != "" {
		c.LLM.APIKey = "****" + lastN(c.LLM.APIKey, 4)
	}
	return c
}

// clone returns a copy that shares no map with s.
func (s Settings) clone() Settings {
	c := s
	c.Severity = cloneMap(s.Severity)
	c.LLM.Models = cloneMap(s.LLM.Models)
	return c
}

func lastN(s string, n int) string {
	if len(s) <= 2*n {
		return ""
	}
	return s[len(s)-n:]
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func cloneMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
