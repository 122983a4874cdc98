// Package contract is kodyls's editor contract, declared once: the settings
// (with their types, defaults and descriptions), the commands and their
// typed arguments and results, and the custom notifications. The settings
// resolve from built-in defaults, environment variables, the editor's
// initializationOptions and workspace configuration (section "kodyls"),
// merged in that order so that the source closest to the user wins (the
// server passes no initializationOptions once the editor answers
// workspace/configuration with an object: that answer is all its settings).
//
// The package knows nothing of LSP transport: the server hands it raw JSON and
// reads back a validated Settings value plus a list of problems it can show.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"

	"sort"
	"strings"
	"unicode/utf8"
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

	// Notes are advisories that need no action, such as an API key that was
	// withheld from an endpoint it is not meant for.
	Notes []string
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
	r.scopeOpenAIKey(getenv)
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

// OpenAIHost is the host OPENAI_API_KEY is meant for.
const OpenAIHost = "api.openai.com"

// scopeOpenAIKey withholds OPENAI_API_KEY from an endpoint it is not meant
// for: many tools export it for OpenAI, and sending it to whatever server
// llm.baseUrl names (a local model, a third party) would leak it. It is
// used with the base URL of OPENAI_BASE_URL, or with https://api.openai.com.
func (r *Resolved) scopeOpenAIKey(getenv func(string) string) {
	if getenv == nil || r.Origin["llm.apiKey"] != OriginEnv+" OPENAI_API_KEY" {
		return
	}
	base := strings.TrimRight(r.Settings.LLM.BaseURL, "/")
	if base == "" {
		return
	}
	if ob := strings.TrimRight(strings.TrimSpace(getenv("OPENAI_BASE_URL")), "/"); ob != "" && ob == base {
		return
	}
	if u, err := url.Parse(base); err == nil && u.Scheme == "https" && strings.EqualFold(u.Hostname(), OpenAIHost) {
		return
	}
	r.Settings.LLM.APIKey = ""
	r.Origin["llm.apiKey"] = OriginDefault
	r.Notes = append(r.Notes, fmt.Sprintf("OPENAI_API_KEY is not sent to %s (from %s): it is used only with OPENAI_BASE_URL's endpoint or https://%s; set KODYLS_LLM_API_KEY or llm.apiKey if this endpoint needs a key",
		redactURL(base), r.Origin["llm.baseUrl"], OpenAIHost))
}

// WhyNoModel says why no model can be used and what to do, naming the
// cause: a base URL that was set but is unusable, a missing model, or
// nothing configured. It is "" when a model can be used.
func (r Resolved) WhyNoModel() string {
	s := r.Settings
	switch {
	case s.LLMConfigured():
		return ""
	case r.RejectedBaseURL() != "":
		return fmt.Sprintf("llm.baseUrl %q (from %s) is not a usable http(s) URL: set it to the endpoint's API root, e.g. http://localhost:11434/v1",
			redactURL(r.RejectedBaseURL()), r.Origin["llm.baseUrl"])
	case s.LLM.BaseURL != "":
		return fmt.Sprintf("no model is set for %s (from %s): set KODYLS_LLM_MODEL or llm.model (`kodyls doctor` lists the models the endpoint serves)",
			redactURL(s.LLM.BaseURL), r.Origin["llm.baseUrl"])
	case s.ModelSet():
		return "no LLM endpoint is set (a model is): set KODYLS_LLM_BASE_URL or llm.baseUrl, e.g. http://localhost:11434/v1"
	}
	return "no LLM endpoint is configured: set KODYLS_LLM_BASE_URL and KODYLS_LLM_MODEL, or the llm settings of your editor"
}

// RejectedBaseURL returns the llm.baseUrl that was set but is not used
// because the validation refused it, "" when there is none.
func (r Resolved) RejectedBaseURL() string {
	if r.Settings.LLM.BaseURL != "" {
		return ""
	}
	was, _ := r.Rejected["llm.baseUrl"].(string)
	return strings.TrimSpace(was)
}

// redactURL hides the password of a URL's user info.
func redactURL(raw string) string { return RedactURL(raw) }

// RedactURL hides the password of a URL's user info, also in text that
// is not quite a URL (a scheme typo, no scheme, a password with "/" or a
// blank that url.Parse refuses): a base URL shown in a message or the
// status must not show the password typed into it.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		// A URL it reads: its own user info, if any (and the text as
		// given otherwise, not re-encoded).
		if u.User == nil {
			return raw
		}
		return u.Redacted()
	}
	// The user info is what comes before the last "@" of the authority:
	// after any "scheme://" (or the typo "scheme//"), up to the path. A
	// password may hold "/", so the path starts after that "@".
	rest := raw
	prefix := ""
	if i := strings.Index(rest, "//"); i >= 0 && !strings.ContainsAny(rest[:i], "@") {
		prefix, rest = rest[:i+2], rest[i+2:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	if end := strings.IndexAny(rest[at:], "/?#"); end >= 0 {
		// An "@" in the path is not user info; the last one before it is.
		if j := strings.LastIndex(rest[:at+end], "@"); j >= 0 {
			at = j
		}
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
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
// IsObject reports whether raw, the section "kodyls" of an editor's
// settings (or the settings wrapped in it), is a JSON object: the editor
// sent settings, if only {}, rather than null or nothing.
func IsObject(raw []byte) bool {
	var top map[string]json.RawMessage
	inner := unwrapSection(raw)
	return len(inner) > 0 && json.Unmarshal(inner, &top) == nil && top != nil
}

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
		r.Problems = append(r.Problems, fmt.Sprintf("%s: %s", origin, notAnObject("settings", raw, err)))
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
			r.Problems = append(r.Problems, fmt.Sprintf("%s: unknown setting %q (ignored%s)", origin, k, didYouMean(k)))
			continue
		}
		if sub == nil {
			r.applyKey(origin, k, top[k])
			continue
		}
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(top[k], &inner); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %s", origin, notAnObject(fmt.Sprintf("%q", k), top[k], err)))
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
				r.Problems = append(r.Problems, fmt.Sprintf("%s: unknown setting %q (ignored%s)", origin, k+"."+ik, didYouMean(k+"."+ik)))
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
		keeping := "the default"
		if o := r.Origin[key]; o != OriginDefault {
			keeping = "the value from " + o
		}
		shown := shorten(strings.Join(strings.Fields(string(v)), " "), 60)
		if key == "llm.apiKey" {
			shown = jsonKind(v)
		}
		r.Problems = append(r.Problems, fmt.Sprintf("%s: setting %q has the wrong type (%s): expected %s; keeping %s", origin, key, shown, st.Expected(), keeping))
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
	c.LLM.BaseURL = RedactURL(c.LLM.BaseURL)
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

// notAnObject says why raw, which should be a JSON object, is not one,
// in JSON's words rather than Go's.
func notAnObject(what string, raw []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s are not valid JSON (%v at byte %d)", what, syn, syn.Offset)
	}
	return fmt.Sprintf("%s must be a JSON object, got %s", what, jsonKind(raw))
}

// jsonKind names the kind of a JSON value with its article: "an array",
// "a string", "a number", "true", "null".
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return "a number"
}

// didYouMean suggests the declared key closest to a misspelled one, as
// "; did you mean …?", or "" when none is close or several are equally
// close. A key of one object written in another, or at the top ("model"
// for "llm.model"), is suggested where it belongs.
func didYouMean(key string) string {
	group, leaf, nested := strings.Cut(key, ".")
	name := key
	if nested {
		name = leaf
	}
	var elsewhere []string
	for _, st := range SettingsTable {
		if g, l, ok := strings.Cut(st.Key, "."); ok && (!nested || g != group) && strings.EqualFold(l, name) {
			elsewhere = append(elsewhere, st.Key)
		}
	}
	if len(elsewhere) == 1 {
		return fmt.Sprintf("; did you mean %q?", elsewhere[0])
	}
	candidates := map[string]string{} // the name compared → the key suggested
	if nested {
		for _, sub := range known[group] {
			candidates[sub] = group + "." + sub
		}
	} else {
		for g := range known {
			candidates[g] = g
		}
	}
	best, bestD, ties := "", -1, 0
	for c, suggest := range candidates {
		d := closeness(name, c)
		switch {
		case d < 0:
		case bestD < 0 || d < bestD:
			best, bestD, ties = suggest, d, 1
		case d == bestD:
			ties++
		}
	}
	if bestD < 0 || ties > 1 {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// closeness is the edit distance between a misspelled key and a declared
// one, compared without case, or -1 when they are too far apart to
// suggest: more than a third of the key's letters differ, unless one is
// the other cut short ("timeout" for "timeoutMs").
func closeness(a, b string) int {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	d := editDistance(la, lb)
	limit := max(1, min(utf8.RuneCountInString(la), utf8.RuneCountInString(lb))/3)
	if d <= limit {
		return d
	}
	short, long := la, lb
	if len(short) > len(long) {
		short, long = long, short
	}
	if strings.HasPrefix(long, short) && len(long)-len(short) <= 3 && len(short) >= 4 {
		return d
	}
	return -1
}

// editDistance is the edit distance between a and b in runes, a swap of
// two neighbours counting as one edit (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
