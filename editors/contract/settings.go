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
	"net/url"
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

// Defaults returns the built-in configuration.
func Defaults() Settings {
	return Settings{
		LLM:     LLM{Models: map[string]string{}, TimeoutMS: 60000, MaxConcurrent: 4},
		Review:  Review{Trigger: TriggerSave, IdleDelayMS: 1500},
		Rules:   Rules{Scope: ScopeChanged},
		Build:   Build{TimeoutMS: 120000},
		BaseRef: "HEAD",
		Severity: map[string]string{
			"critical": "error",
			"high":     "warning",
			"medium":   "information",
			"low":      "hint",
		},
	}
}

// Resolved is a Settings value together with where each key came from and
// the problems met while merging. Problems never discard valid keys: a layer
// with one bad key still contributes its other keys.
type Resolved struct {
	Settings Settings
	// Origin maps a dotted key ("llm.baseUrl") to the layer that set it last.
	Origin   map[string]string
	Problems []string
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
	for _, k := range []string{"review.trigger", "review.idleDelayMs", "rules.scope", "baseRef", "severity"} {
		r.Origin[k] = OriginDefault
	}
	r.applyEnv(getenv)
	r.applyJSON(OriginInit, unwrapSection(initOptions))
	r.applyJSON(OriginClient, unwrapSection(clientConfig))
	r.Problems = append(r.Problems, r.Settings.validate()...)
	return r
}

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
		switch ev.key {
		case "llm.baseUrl":
			r.Settings.LLM.BaseURL = v
		case "llm.apiKey":
			r.Settings.LLM.APIKey = v
		case "llm.model":
			r.Settings.LLM.Model = v
		}
		r.Origin[ev.key] = OriginEnv + " " + ev.name
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

// known lists the accepted keys; nested objects list their own keys.
var known = map[string][]string{
	"llm":      {"baseUrl", "apiKey", "model", "models", "timeoutMs", "maxConcurrent"},
	"review":   {"trigger", "idleDelayMs"},
	"rules":    {"scope"},
	"baseRef":  nil,
	"severity": nil,
	"build":    {"onSave", "timeoutMs"},
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
		for ik, v := range inner {
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
	next := r.Settings
	next.Severity = cloneMap(r.Settings.Severity)
	next.LLM.Models = cloneMap(r.Settings.LLM.Models)
	var err error
	switch key {
	case "llm.baseUrl":
		err = json.Unmarshal(v, &next.LLM.BaseURL)
	case "llm.apiKey":
		err = json.Unmarshal(v, &next.LLM.APIKey)
	case "llm.model":
		err = json.Unmarshal(v, &next.LLM.Model)
	case "llm.models":
		var m map[string]string
		if err = json.Unmarshal(v, &m); err == nil {
			for k, val := range m {
				next.LLM.Models[strings.ToLower(k)] = val
			}
		}
	case "llm.timeoutMs":
		err = json.Unmarshal(v, &next.LLM.TimeoutMS)
	case "llm.maxConcurrent":
		err = json.Unmarshal(v, &next.LLM.MaxConcurrent)
	case "review.trigger":
		err = json.Unmarshal(v, &next.Review.Trigger)
	case "review.idleDelayMs":
		err = json.Unmarshal(v, &next.Review.IdleDelayMS)
	case "build.onSave":
		err = json.Unmarshal(v, &next.Build.OnSave)
	case "build.timeoutMs":
		err = json.Unmarshal(v, &next.Build.TimeoutMS)
	case "rules.scope":
		err = json.Unmarshal(v, &next.Rules.Scope)
	case "baseRef":
		err = json.Unmarshal(v, &next.BaseRef)
	case "severity":
		var m map[string]string
		if err = json.Unmarshal(v, &m); err == nil {
			for k, val := range m {
				next.Severity[strings.ToLower(k)] = strings.ToLower(val)
			}
		}
	}
	if err != nil {
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
	switch s.Review.Trigger {
	case TriggerSave, TriggerIdle, TriggerManual:
	default:
		problems = append(problems, fmt.Sprintf("review.trigger %q is not one of save, idle, manual; using %q", s.Review.Trigger, d.Review.Trigger))
		s.Review.Trigger = d.Review.Trigger
	}
	if s.Review.IdleDelayMS < 100 || s.Review.IdleDelayMS > 60000 {
		problems = append(problems, fmt.Sprintf("review.idleDelayMs %d is outside 100..60000; using %d", s.Review.IdleDelayMS, d.Review.IdleDelayMS))
		s.Review.IdleDelayMS = d.Review.IdleDelayMS
	}
	switch s.Rules.Scope {
	case ScopeChanged, ScopeFile:
	default:
		problems = append(problems, fmt.Sprintf("rules.scope %q is not one of changed, file; using %q", s.Rules.Scope, d.Rules.Scope))
		s.Rules.Scope = d.Rules.Scope
	}
	if strings.TrimSpace(s.BaseRef) == "" || strings.HasPrefix(s.BaseRef, "-") {
		problems = append(problems, fmt.Sprintf("baseRef %q is not a git revision; using %q", s.BaseRef, d.BaseRef))
		s.BaseRef = d.BaseRef
	}
	for level, sev := range s.Severity {
		if _, ok := d.Severity[level]; !ok {
			problems = append(problems, fmt.Sprintf("severity: unknown level %q (use critical, high, medium, low)", level))
			delete(s.Severity, level)
			continue
		}
		if !contains(DiagnosticSeverities, sev) {
			problems = append(problems, fmt.Sprintf("severity.%s %q is not one of error, warning, information, hint; using %q", level, sev, d.Severity[level]))
			s.Severity[level] = d.Severity[level]
		}
	}
	for task := range s.LLM.Models {
		if !contains(TaskClasses, task) {
			problems = append(problems, fmt.Sprintf("llm.models: unknown task class %q (use review, rules, agent, cheap)", task))
			delete(s.LLM.Models, task)
		}
	}
	if s.LLM.TimeoutMS < 1000 || s.LLM.TimeoutMS > 600000 {
		problems = append(problems, fmt.Sprintf("llm.timeoutMs %d is outside 1000..600000; using %d", s.LLM.TimeoutMS, d.LLM.TimeoutMS))
		s.LLM.TimeoutMS = d.LLM.TimeoutMS
	}
	if s.Build.TimeoutMS < 1000 || s.Build.TimeoutMS > 3600000 {
		problems = append(problems, fmt.Sprintf("build.timeoutMs %d is outside 1000..3600000; using %d", s.Build.TimeoutMS, d.Build.TimeoutMS))
		s.Build.TimeoutMS = d.Build.TimeoutMS
	}
	if s.LLM.MaxConcurrent < 1 || s.LLM.MaxConcurrent > 64 {
		problems = append(problems, fmt.Sprintf("llm.maxConcurrent %d is outside 1..64; using %d", s.LLM.MaxConcurrent, d.LLM.MaxConcurrent))
		s.LLM.MaxConcurrent = d.LLM.MaxConcurrent
	}
	if s.LLM.BaseURL != "" {
		u, err := url.Parse(s.LLM.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			problems = append(problems, fmt.Sprintf("llm.baseUrl %q is not an http(s) URL (example: http://localhost:11434/v1); the LLM is disabled until it is fixed", s.LLM.BaseURL))
			s.LLM.BaseURL = ""
		}
	}
	sort.Strings(problems)
	return problems
}

// LLMConfigured reports whether an endpoint is configured.
func (s Settings) LLMConfigured() bool { return s.LLM.BaseURL != "" }

// Redacted returns a copy safe to print or log: the API key is masked.
func (s Settings) Redacted() Settings {
	c := s
	c.Severity = cloneMap(s.Severity)
	c.LLM.Models = cloneMap(s.LLM.Models)
	if c.LLM.APIKey != "" {
		c.LLM.APIKey = "****" + lastN(c.LLM.APIKey, 4)
	}
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
