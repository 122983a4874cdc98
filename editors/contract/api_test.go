package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

const regenerate = "run go run ./editors/contract/gen"

func TestAPIFileIsCurrent(t *testing.T) {
	want, err := API()
	if err != nil {
		t.Fatal(err)
	}
	again, err := API()
	if err != nil || !bytes.Equal(want, again) {
		t.Fatalf("API() is not deterministic (err %v)", err)
	}
	if !json.Valid(want) || !bytes.HasSuffix(want, []byte("}\n")) {
		t.Fatalf("API() is not one JSON document ending with a newline")
	}
	got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(APIFile)))
	if err != nil {
		t.Fatalf("%v: %s", err, regenerate)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: %s", APIFile, regenerate)
	}
}

func TestREADMESettingsTableIsCurrent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceSettingsTable(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Fatalf("the settings table of README.md is stale: %s", regenerate)
	}
	if !strings.Contains(SettingsMarkdown(), "| `review.trigger` | `save` | `save`, `idle` or `manual` (the AI review) |") {
		t.Errorf("SettingsMarkdown lost the README's columns:\n%s", SettingsMarkdown())
	}
}

func TestReplaceSettingsTableNeedsMarkers(t *testing.T) {
	if _, err := ReplaceSettingsTable([]byte("# no table here\n")); err == nil {
		t.Fatal("a README without markers must be an error, not a silent no-op")
	}
	in := []byte("a\n" + SettingsBeginMarker + "\nold\n" + SettingsEndMarker + "\nb\n")
	out, err := ReplaceSettingsTable(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n" + SettingsBeginMarker + "\n" + SettingsMarkdown() + SettingsEndMarker + "\nb\n"; string(out) != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", out, want)
	}
}

func TestREADMECommandListIsCurrent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceCommandsList(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Fatalf("the command list of README.md is stale: %s", regenerate)
	}
	list := CommandsMarkdown()
	for _, c := range Commands {
		if !strings.Contains(list, "- `"+c.Name+"` (*"+c.Title+"*): "+c.Description) {
			t.Errorf("the command list does not describe %s", c.Name)
		}
	}
}

func TestREADMEMessagesListIsCurrent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceMessagesList(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Fatalf("the notifications and requests of README.md are stale: %s", regenerate)
	}
	list := MessagesMarkdown()
	for _, m := range append(slices.Clone(Notifications), Requests...) {
		if !strings.Contains(list, "`"+m.Method+"` (`"+Shape(m.Params)+"`)") || !strings.Contains(list, m.Description) {
			t.Errorf("the README does not describe %s", m.Method)
		}
	}
}

// TestCommandsMarkdownShapes pins how arguments and results are spelled:
// every JSON field of the contract's types, nested ones included, with
// optional fields marked.
func TestCommandsMarkdownShapes(t *testing.T) {
	list := CommandsMarkdown()
	for _, want := range []string{
		"Result: `{groups: [{rule: {uuid, title, severity, file, uri}, violations: [{uri, range, match, version, checkedBy, id, message?, fixable?}]}], ruleErrors: [{file, uri, line, message}], notChecked: [{uuid, title, severity, file, uri}]}`.",
		"Argument: `{uuid, uri?}`. Result: `{uri, range}`.",
		"Result: `[{uri, version, findings, hunks, cachedHunks, skipped?, degraded?, offline?}]`. Reports `$/progress`",
		"Argument: `{uri?, range?, message?, code?, source?, text?, offline?}`, with at least `uri` and `message`, or `text`. Result: `{markdown, rca}`.",
		"Argument: `{uri, range?, message, code?, source?}`. Result: `{applied, verified, verification, rounds, files, diff, markdown, note?, edits: [{file, oldText, newText}]}`.",
		"(*Kody: Reload Rules*): Re-reads every workspace's Kody Rules and reports how many loaded and how many files are broken. No argument. Result: `{rules, broken}`.",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the command list lacks %s\n%s", want, list)
		}
	}
	if got := strings.Count(list, "\n- `kodyls."); got != len(Commands)-1 || !strings.HasPrefix(list, "- `kodyls.") {
		t.Errorf("want one item per command (%d):\n%s", len(Commands), list)
	}
}

func TestReplaceCommandsListNeedsMarkers(t *testing.T) {
	if _, err := ReplaceCommandsList([]byte("# no list here\n" + SettingsBeginMarker + "\n" + SettingsEndMarker + "\n")); err == nil {
		t.Fatal("a README without markers must be an error, not a silent no-op")
	}
	in := []byte("a\n" + CommandsBeginMarker + "\n- `kodyls.gone`: old\n" + CommandsEndMarker + "\nb\n")
	out, err := ReplaceCommandsList(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n" + CommandsBeginMarker + "\n" + CommandsMarkdown() + CommandsEndMarker + "\nb\n"; string(out) != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", out, want)
	}
}

func resolvedSettingsSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	rs, err := SettingsSchema().Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatalf("the settings schema does not resolve: %v", err)
	}
	return rs
}

func instance(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSettingsSchemaValidates(t *testing.T) {
	rs := resolvedSettingsSchema(t)
	if err := rs.Validate(instance(t, Defaults())); err != nil {
		t.Fatalf("the schema rejects Defaults(): %v", err)
	}
	for _, st := range SettingsTable {
		if err := rs.Validate(instance(t, nest(st.Key, st.Example))); err != nil {
			t.Errorf("the schema rejects the example of %s: %v", st.Key, err)
		}
	}
	for _, bad := range []string{
		`{"review":{"trigger":"sometimes"}}`,
		`{"review":{"idleDelayMs":"fast"}}`,
		`{"review":{"idleDelayMs":5}}`,
		`{"llm":{"maxConcurrent":65}}`,
		`{"severity":{"low":"loud"}}`,
		`{"severity":{"trivial":"hint"}}`,
		`{"llm":{"models":{"summarise":"x"}}}`,
		`{"colour":"blue"}`,
		`{"llm":"http://localhost:11434/v1"}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(bad), &v); err != nil {
			t.Fatal(err)
		}
		if rs.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
		if r := Resolve(nil, []byte(bad), nil); len(r.Problems) == 0 {
			t.Errorf("Resolve accepts %s, which the schema rejects", bad)
		}
	}
}

// nest turns a dotted key and a value into the JSON object a user writes.
func nest(key string, v any) map[string]any {
	if group, sub, ok := strings.Cut(key, "."); ok {
		return map[string]any{group: map[string]any{sub: v}}
	}
	return map[string]any{key: v}
}

// TestEndpointNeedsModel: an endpoint without a model name is reported once
// and leaves the model off, instead of every request failing later; a
// model for one task class is enough.
func TestEndpointNeedsModel(t *testing.T) {
	r := Resolve(func(k string) string {
		if k == "KODYLS_LLM_BASE_URL" {
			return "http://user:secret@localhost:11434/v1"
		}
		return ""
	}, nil, nil)
	want := []string{"llm.baseUrl is http://user:xxxxx@localhost:11434/v1 but no model is set: set llm.model or KODYLS_LLM_MODEL (`kodyls doctor` lists the models the endpoint serves); the LLM is disabled until it is set"}
	if !slices.Equal(r.Problems, want) || r.Settings.LLMConfigured() {
		t.Fatalf("configured %v, problems %q", r.Settings.LLMConfigured(), r.Problems)
	}
	r = Resolve(nil, []byte(`{"llm":{"baseUrl":"http://localhost:11434/v1","models":{"review":"qwen2.5-coder"}}}`), nil)
	if len(r.Problems) != 0 || !r.Settings.LLMConfigured() {
		t.Fatalf("with a review model: configured %v, problems %q", r.Settings.LLMConfigured(), r.Problems)
	}
}

func TestEverySettingRoundTrips(t *testing.T) {
	def := Defaults()
	for _, st := range SettingsTable {
		t.Run(st.Key, func(t *testing.T) {
			obj := nest(st.Key, st.Example)
			if st.Key == "llm.baseUrl" {
				// An endpoint needs a model (TestEndpointNeedsModel).
				obj["llm"].(map[string]any)["model"] = "m"
			}
			raw, err := json.Marshal(map[string]any{Section: obj})
			if err != nil {
				t.Fatal(err)
			}
			r := Resolve(nil, raw, nil)
			if len(r.Problems) != 0 {
				t.Fatalf("problems: %v", r.Problems)
			}
			if r.Origin[st.Key] != OriginInit {
				t.Errorf("origin %q, want %q", r.Origin[st.Key], OriginInit)
			}
			got := st.Get(r.Settings)
			if reflect.DeepEqual(got, st.Get(def)) {
				t.Fatalf("value unchanged: %v", got)
			}
			if m, ok := st.Example.(map[string]string); ok {
				for k, v := range m {
					if got.(map[string]string)[k] != v {
						t.Errorf("%s.%s = %q, want %q", st.Key, k, got.(map[string]string)[k], v)
					}
				}
			} else if got != st.Example {
				t.Errorf("resolved %v, want %v", got, st.Example)
			}
			if other := Resolve(nil, nil, nil); other.Origin[st.Key] != OriginDefault {
				t.Errorf("default origin %q", other.Origin[st.Key])
			}
		})
	}
}

// TestTableMatchesStruct keeps the table and the Settings struct's JSON tags
// in step: each key the struct marshals is declared once, and nothing else.
func TestTableMatchesStruct(t *testing.T) {
	var fromStruct []string
	for k, v := range instance(t, Defaults()).(map[string]any) {
		if _, group := SettingGroups[k]; group {
			for sub := range v.(map[string]any) {
				fromStruct = append(fromStruct, k+"."+sub)
			}
			continue
		}
		fromStruct = append(fromStruct, k)
	}
	var fromTable []string
	for _, st := range SettingsTable {
		fromTable = append(fromTable, st.Key)
		if st.Description == "" || st.Example == nil || reflect.DeepEqual(st.Example, st.Default) {
			t.Errorf("%s needs a description and an example other than its default", st.Key)
		}
		if !reflect.DeepEqual(st.Get(Defaults()), st.Default) {
			t.Errorf("%s: Defaults() has %v, the table %v", st.Key, st.Get(Defaults()), st.Default)
		}
	}
	sort.Strings(fromStruct)
	sort.Strings(fromTable)
	if !slices.Equal(fromStruct, fromTable) {
		t.Fatalf("Settings marshals %v\nthe table declares %v", fromStruct, fromTable)
	}
	for group := range known {
		if known[group] != nil && SettingGroups[group] == "" {
			t.Errorf("group %q has no description in SettingGroups", group)
		}
	}
}

// TestProblemWording pins the messages users see and other packages match.
func TestProblemWording(t *testing.T) {
	r := Resolve(nil, nil, []byte(`{
		"review": {"trigger": "x", "idleDelayMs": 5, "when": 1},
		"rules": {"scope": "repo"},
		"baseRef": "-x",
		"severity": {"low": "loud", "trivial": "hint"},
		"llm": {"models": {"summarise": "m"}, "timeoutMs": 1, "maxConcurrent": 0, "baseUrl": "localhost:1"},
		"build": {"timeoutMs": 1, "onSave": 3},
		"colour": "blue"
	}`))
	want := []string{
		`workspace/configuration: setting "build.onSave" has the wrong type (3): expected a string; keeping the default`,
		`workspace/configuration: unknown setting "colour" (ignored)`,
		`workspace/configuration: unknown setting "review.when" (ignored)`,
		`baseRef "-x" is not a git revision; using "HEAD"`,
		`build.timeoutMs 1 is outside 1000..3600000; using 120000`,
		`llm.baseUrl "localhost:1" is not an http(s) URL (example: http://localhost:11434/v1); the LLM is disabled until it is fixed`,
		`llm.maxConcurrent 0 is outside 1..64; using 4`,
		`llm.models: unknown task class "summarise" (use review, rules, agent, cheap)`,
		`llm.timeoutMs 1 is outside 1000..600000; using 60000`,
		`review.idleDelayMs 5 is outside 100..60000; using 1500`,
		`review.trigger "x" is not one of save, idle, manual; using "save"`,
		`rules.scope "repo" is not one of changed, file; using "changed"`,
		`severity.low "loud" is not one of error, warning, information, hint; using "hint"`,
		`severity: unknown level "trivial" (use critical, high, medium, low)`,
	}
	if !slices.Equal(r.Problems, want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(r.Problems, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(r.Settings, Defaults()) {
		t.Fatalf("every bad value must fall back to its default: %+v", r.Settings)
	}
}

func TestContractTables(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands {
		if !strings.HasPrefix(c.Name, "kodyls.") || seen[c.Name] || c.Title == "" || c.Description == "" || c.Result == nil {
			t.Errorf("command %+v: want a unique kodyls.* name, a title, a description and a result", c)
		}
		seen[c.Name] = true
	}
	for _, m := range slices.Concat(Notifications, Requests) {
		if !strings.HasPrefix(m.Method, "kodyls/") || seen[m.Method] || m.Description == "" || m.Params == nil {
			t.Errorf("method %+v: want a unique kodyls/* name, a description and params", m)
		}
		if m.Direction != ServerToClient && m.Direction != ClientToServer {
			t.Errorf("%s: direction %q", m.Method, m.Direction)
		}
		seen[m.Method] = true
	}
	for _, m := range Requests {
		if m.Result == nil {
			t.Errorf("request %s has no result type", m.Method)
		}
	}
}
