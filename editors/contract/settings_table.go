package contract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON types a setting may have, as JSON Schema spells them.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeObject  = "object"
)

// Setting is one key of the kodyls configuration section. SettingsTable is
// the only place a key is spelled: Defaults, Resolve, the validation, the
// generated JSON Schema and the README table are all derived from it.
type Setting struct {
	// Key is the dotted key ("llm.baseUrl"); the part before the dot names
	// the object the key is nested in.
	Key string
	// Type is the JSON type: TypeString, TypeInteger or TypeObject.
	Type string
	// Default is the built-in value, a string, an int or a map[string]string.
	Default any
	// DefaultDoc replaces the rendered default in the README when the value
	// itself says little ("server default" for an empty model name).
	DefaultDoc string
	// Description is the user-facing meaning (Markdown).
	Description string
	// Example is a valid value other than the default.
	Example any
	// Enum lists the accepted values of a string; nil accepts any string.
	Enum []string
	// Minimum and Maximum bound an integer; nil means unbounded.
	Minimum, Maximum *int
	// Keys lists the accepted keys of an object, KeyNoun names one of them
	// in problems ("level") and Values, when not nil, the accepted values of
	// every key (matched case-insensitively).
	Keys    []string
	KeyNoun string
	Values  []string

	get   func(*Settings) any
	set   func(*Settings, json.RawMessage) error
	reset func(*Settings)
	check func(s *Settings, def Settings) []string
}

// SeverityLevels are the finding severities, the keys of the severity setting.
var SeverityLevels = []string{"critical", "high", "medium", "low"}

// SettingGroups describes the objects the dotted keys are nested in.
var SettingGroups = map[string]string{
	"llm":    "The OpenAI-compatible model endpoint. With no `baseUrl` kodyls works offline.",
	"review": "When the AI review runs.",
	"rules":  "The local Kody Rules detectors.",
	"build":  "The optional build on save.",
}

// SettingsTable declares every setting, in the order the README lists them.
var SettingsTable = []Setting{
	stringSetting("llm.baseUrl", func(s *Settings) *string { return &s.LLM.BaseURL }, "",
		"OpenAI-compatible endpoint, e.g. `http://localhost:11434/v1`", "http://localhost:11434/v1").
		checked(checkBaseURL),
	stringSetting("llm.apiKey", func(s *Settings) *string { return &s.LLM.APIKey }, "",
		"not needed for local endpoints", "sk-example").
		checked(checkAPIKey),
	stringSetting("llm.model", func(s *Settings) *string { return &s.LLM.Model }, "",
		"model name", "qwen2.5-coder").
		documented("none; required with `llm.baseUrl`"),
	mapSetting("llm.models", func(s *Settings) *map[string]string { return &s.LLM.Models }, map[string]string{},
		TaskClasses, "task class", nil,
		"model per task class: `{ \"review\": \"…\", \"rules\": \"…\", \"agent\": \"…\", \"cheap\": \"…\" }`",
		map[string]string{"cheap": "qwen2.5-coder:7b"}),
	intSetting("llm.timeoutMs", func(s *Settings) *int { return &s.LLM.TimeoutMS }, 60000, 1000, 600000,
		"per-call timeout", 30000),
	intSetting("llm.maxConcurrent", func(s *Settings) *int { return &s.LLM.MaxConcurrent }, 4, 1, 64,
		"concurrent calls to the endpoint", 2),
	stringSetting("review.trigger", func(s *Settings) *string { return &s.Review.Trigger }, TriggerSave,
		"`save`, `idle` or `manual` (the AI review)", TriggerIdle).
		oneOf(TriggerSave, TriggerIdle, TriggerManual),
	intSetting("review.idleDelayMs", func(s *Settings) *int { return &s.Review.IdleDelayMS }, 1500, 100, 60000,
		"quiet period for `idle`", 3000),
	stringSetting("rules.scope", func(s *Settings) *string { return &s.Rules.Scope }, ScopeChanged,
		"`changed` lines only, or the whole `file`", ScopeFile).
		oneOf(ScopeChanged, ScopeFile),
	stringSetting("baseRef", func(s *Settings) *string { return &s.BaseRef }, "HEAD",
		"the git revision buffers are compared with", "origin/main").
		checked(checkBaseRef),
	stringSetting("build.onSave", func(s *Settings) *string { return &s.Build.OnSave }, "",
		"a shell command run in the workspace on save, e.g. `go build ./...`; its errors become diagnostics "+
			"(`source` \"build\") that offer \"Explain this error\"; a newer save cancels the running build "+
			"and kills its process group", "go build ./..."),
	intSetting("build.timeoutMs", func(s *Settings) *int { return &s.Build.TimeoutMS }, 120000, 1000, 3600000,
		"limit of one build", 300000),
	mapSetting("severity", func(s *Settings) *map[string]string { return &s.Severity }, map[string]string{
		"critical": "error",
		"high":     "warning",
		"medium":   "information",
		"low":      "hint",
	}, SeverityLevels, "level", DiagnosticSeverities,
		"the diagnostic severity of each finding severity, e.g. `{ \"low\": \"information\" }`",
		map[string]string{"low": "information"}),
}

// LookupSetting returns the table entry of a dotted key.
func LookupSetting(key string) (Setting, bool) {
	i, ok := settingIndex[key]
	if !ok {
		return Setting{}, false
	}
	return SettingsTable[i], true
}

var settingIndex = func() map[string]int {
	m := make(map[string]int, len(SettingsTable))
	for i, st := range SettingsTable {
		m[st.Key] = i
	}
	return m
}()

// known lists the accepted top-level keys; nested objects list their own
// keys, a nil list marks a key that is not nested.
var known = func() map[string][]string {
	m := map[string][]string{}
	for _, st := range SettingsTable {
		group, sub, nested := strings.Cut(st.Key, ".")
		if !nested {
			m[group] = nil
			continue
		}
		m[group] = append(m[group], sub)
	}
	return m
}()

// Get returns the setting's value in s: a string, an int or a
// map[string]string (the map itself, not a copy).
func (st Setting) Get(s Settings) any { return st.get(&s) }

func stringSetting(key string, field func(*Settings) *string, def, desc, example string) Setting {
	return Setting{
		Key: key, Type: TypeString, Default: def, Description: desc, Example: example,
		get: func(s *Settings) any { return *field(s) },
		// Blanks around a value are a slip (a key pasted with its line
		// break), never meant: they are dropped wherever it comes from.
		set: func(s *Settings, v json.RawMessage) error {
			if err := json.Unmarshal(v, field(s)); err != nil {
				return err
			}
			*field(s) = strings.TrimSpace(*field(s))
			return nil
		},
		reset: func(s *Settings) { *field(s) = def },
	}
}

func intSetting(key string, field func(*Settings) *int, def, lo, hi int, desc string, example int) Setting {
	return Setting{
		Key: key, Type: TypeInteger, Default: def, Description: desc, Example: example,
		Minimum: &lo, Maximum: &hi,
		get:   func(s *Settings) any { return *field(s) },
		set:   func(s *Settings, v json.RawMessage) error { return json.Unmarshal(v, field(s)) },
		reset: func(s *Settings) { *field(s) = def },
	}
}

// mapSetting is an object whose keys merge into the previous value, so a
// user may override one severity level and keep the others. Keys are
// matched case-insensitively, and so are values when they are enumerated.
func mapSetting(key string, field func(*Settings) *map[string]string, def map[string]string,
	keys []string, noun string, values []string, desc string, example map[string]string) Setting {
	return Setting{
		Key: key, Type: TypeObject, Default: def, Description: desc, Example: example,
		Keys: keys, KeyNoun: noun, Values: values,
		get: func(s *Settings) any { return *field(s) },
		set: func(s *Settings, v json.RawMessage) error {
			var m map[string]string
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			dst := field(s)
			if *dst == nil {
				*dst = map[string]string{}
			}
			for k, val := range m {
				val = strings.TrimSpace(val)
				if values != nil {
					val = strings.ToLower(val)
				}
				(*dst)[strings.ToLower(k)] = val
			}
			return nil
		},
		reset: func(s *Settings) { *field(s) = cloneMap(def) },
	}
}

func (st Setting) oneOf(values ...string) Setting {
	st.Enum = values
	return st
}

func (st Setting) documented(defaultDoc string) Setting {
	st.DefaultDoc = defaultDoc
	return st
}

func (st Setting) checked(check func(s *Settings, def Settings) []string) Setting {
	st.check = check
	return st
}

// Expected says in words what a value of the setting must be, for the
// problem reported when a value has the wrong type: "an integer
// (milliseconds, 1000..600000)", "one of the strings save, idle, manual".
func (st Setting) Expected() string {
	switch st.Type {
	case TypeInteger:
		var about []string
		if strings.HasSuffix(st.Key, "Ms") {
			about = append(about, "milliseconds")
		}
		if st.Minimum != nil && st.Maximum != nil {
			about = append(about, fmt.Sprintf("%d..%d", *st.Minimum, *st.Maximum))
		}
		if len(about) == 0 {
			return "an integer"
		}
		return "an integer (" + strings.Join(about, ", ") + ")"
	case TypeObject:
		what := "an object of strings"
		if st.Keys != nil {
			what = fmt.Sprintf("an object whose keys are %s", strings.Join(st.Keys, ", "))
			if st.Values != nil {
				return what + " and whose values are " + strings.Join(st.Values, ", ")
			}
			return what + ", with string values"
		}
		return what
	}
	if st.Enum != nil {
		return "one of the strings " + strings.Join(st.Enum, ", ")
	}
	return "a string"
}

// validate checks the setting's value in s against its enum, range, keys
// and custom check, and resets an invalid value to its default.
func (st Setting) validate(s *Settings, def Settings) []string {
	var problems []string
	switch v := st.get(s).(type) {
	case string:
		if st.Enum != nil && !slices.Contains(st.Enum, v) {
			problems = append(problems, fmt.Sprintf("%s %q is not one of %s; using %q", st.Key, v, strings.Join(st.Enum, ", "), st.Default))
			st.reset(s)
		}
	case int:
		if (st.Minimum != nil && v < *st.Minimum) || (st.Maximum != nil && v > *st.Maximum) {
			problems = append(problems, fmt.Sprintf("%s %d is outside %d..%d; using %d", st.Key, v, *st.Minimum, *st.Maximum, st.Default))
			st.reset(s)
		}
	case map[string]string:
		defaults, _ := st.Default.(map[string]string)
		for k, val := range v {
			if st.Keys != nil && !slices.Contains(st.Keys, k) {
				problems = append(problems, fmt.Sprintf("%s: unknown %s %q (use %s)", st.Key, st.KeyNoun, k, strings.Join(st.Keys, ", ")))
				delete(v, k)
				continue
			}
			if st.Values != nil && !slices.Contains(st.Values, val) {
				problems = append(problems, fmt.Sprintf("%s.%s %q is not one of %s; using %q", st.Key, k, val, strings.Join(st.Values, ", "), defaults[k]))
				v[k] = defaults[k]
			}
		}
	}
	if st.check != nil {
		problems = append(problems, st.check(s, def)...)
	}
	return problems
}

// checkAPIKey reports a key with a blank or control character inside:
// no key has one, and a line break cannot be sent in an HTTP header at
// all. The key itself is never shown.
func checkAPIKey(s *Settings, _ Settings) []string {
	for i, r := range []rune(s.LLM.APIKey) {
		if !unicode.IsSpace(r) && !unicode.IsControl(r) {
			continue
		}
		what := fmt.Sprintf("a control character (U+%04X)", r)
		switch r {
		case '\n', '\r':
			what = "a line break"
		case '\t':
			what = "a tab"
		case ' ':
			what = "a blank"
		}
		return []string{fmt.Sprintf("llm.apiKey has %s at character %d of %d: an API key has none, and the endpoint will refuse it; copy the key again (KODYLS_LLM_API_KEY or llm.apiKey)",
			what, i+1, utf8.RuneCountInString(s.LLM.APIKey))}
	}
	return nil
}

// checkBaseRef refuses what cannot be a revision: whether it names a
// commit needs git, and is checked where a baseline is read (the server
// falls back to HEAD and says so) and by `kodyls doctor`.
func checkBaseRef(s *Settings, d Settings) []string {
	if strings.TrimSpace(s.BaseRef) == "" || strings.HasPrefix(s.BaseRef, "-") || strings.IndexFunc(s.BaseRef, isSpaceOrControl) >= 0 {
		ref := s.BaseRef
		s.BaseRef = d.BaseRef
		return []string{fmt.Sprintf("baseRef %q is not a git revision; using %q", ref, d.BaseRef)}
	}
	return nil
}

func checkBaseURL(s *Settings, _ Settings) []string {
	if s.LLM.BaseURL == "" {
		return nil
	}
	u, err := url.Parse(s.LLM.BaseURL)
	// url.Parse takes "http://host/ v1" with its blank; no endpoint does.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.IndexFunc(s.LLM.BaseURL, isSpaceOrControl) >= 0 {
		bad := s.LLM.BaseURL
		s.LLM.BaseURL = ""
		return []string{fmt.Sprintf("llm.baseUrl %q is not an http(s) URL (example: http://localhost:11434/v1); the LLM is disabled until it is fixed", RedactURL(bad))}
	}
	if !s.ModelSet() {
		return []string{fmt.Sprintf("llm.baseUrl is %s but no model is set: set llm.model or KODYLS_LLM_MODEL (`kodyls doctor` lists the models the endpoint serves); the LLM is disabled until it is set", u.Redacted())}
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
