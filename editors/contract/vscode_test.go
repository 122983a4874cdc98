package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// vscodeExtensionSettings are the settings of the VS Code extension itself,
// never sent to the server; editors/vscode/README.md documents each.
var vscodeExtensionSettings = []string{"kodyls.path", "kodyls.trace.server"}

const regenerateVSCode = "run npm run gen:settings in editors/vscode"

// TestVSCodeSettingsMatchContract checks that editors/vscode/package.json
// offers every setting of the contract as kodyls.<key>, with the contract's
// type, default, enum, bounds and description, plus the documented
// extension-only settings and nothing else.
func TestVSCodeSettingsMatchContract(t *testing.T) {
	dir := filepath.Join("..", "vscode")
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration json.RawMessage `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("editors/vscode/package.json: %v", err)
	}
	props := vscodeProperties(t, pkg.Contributes.Configuration)

	schema := SettingsSchema()
	for _, st := range SettingsTable {
		name := "kodyls." + st.Key
		got, ok := props[name]
		if !ok {
			t.Errorf("package.json lacks the setting %s: %s", name, regenerateVSCode)
			continue
		}
		s := schema
		for part := range strings.SplitSeq(st.Key, ".") {
			s = s.Properties[part]
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"type", "default", "enum", "minimum", "maximum", "description", "properties"} {
			if !reflect.DeepEqual(got[field], want[field]) {
				t.Errorf("%s: %s is %v in package.json, %v in the contract: %s", name, field, got[field], want[field], regenerateVSCode)
			}
		}
		if st.Type == TypeObject && got["additionalProperties"] != false {
			t.Errorf("%s: package.json must reject unknown keys (additionalProperties false): %s", name, regenerateVSCode)
		}
	}

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range props {
		key := strings.TrimPrefix(name, "kodyls.")
		if _, ok := LookupSetting(key); ok && strings.HasPrefix(name, "kodyls.") {
			continue
		}
		if !slices.Contains(vscodeExtensionSettings, name) {
			t.Errorf("package.json has %s, neither a contract setting nor a documented extension-only one", name)
		}
	}
	for _, name := range vscodeExtensionSettings {
		if _, ok := props[name]; !ok {
			t.Errorf("package.json lacks the extension setting %s", name)
		}
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("editors/vscode/README.md does not document the extension-only setting %s", name)
		}
	}
	if d, _ := props["kodyls.path"]["default"].(string); d != "kodyls" {
		t.Errorf("kodyls.path defaults to %q, want kodyls (found on PATH)", d)
	}
}

// vscodeProperties flattens contributes.configuration, an object or an
// array of categories, into its properties.
func vscodeProperties(t *testing.T, raw json.RawMessage) map[string]map[string]any {
	t.Helper()
	type category struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	var cats []category
	if err := json.Unmarshal(raw, &cats); err != nil {
		var one category
		if err := json.Unmarshal(raw, &one); err != nil {
			t.Fatalf("contributes.configuration: %v", err)
		}
		cats = []category{one}
	}
	props := map[string]map[string]any{}
	for _, c := range cats {
		for k, v := range c.Properties {
			if _, dup := props[k]; dup {
				t.Errorf("package.json declares %s twice", k)
			}
			props[k] = v
		}
	}
	return props
}

// TestPluginsDeclareCommandResults: the VS Code extension and the Neovim
// plugin show command results themselves and must say so in
// capabilities.experimental, or the server would also open every
// explanation as a document.
func TestPluginsDeclareCommandResults(t *testing.T) {
	for file, want := range map[string]string{
		filepath.Join("..", "vscode", "src", "extension.ts"):       ExperimentalKey + ": { commandResults: true }",
		filepath.Join("..", "neovim", "lua", "kodyls", "init.lua"): ExperimentalKey + " = { commandResults = true }",
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), want) {
			t.Errorf("%s does not declare %q", file, want)
		}
	}
}
