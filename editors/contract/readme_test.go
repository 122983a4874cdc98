package contract

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeEditorSnippets: the Helix and Emacs snippets in the README
// start the server the way the binary expects and name only settings the
// contract declares, with values it accepts.
func TestReadmeEditorSnippets(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	section := func(heading string) string {
		i := strings.Index(readme, heading)
		if i < 0 {
			t.Fatalf("README has no %q section", heading)
		}
		rest := readme[i+len(heading):]
		if j := regexp.MustCompile(`\n##+ `).FindStringIndex(rest); j != nil {
			rest = rest[:j[0]]
		}
		return rest
	}
	helix := section("### Helix")
	emacs := section("### Emacs (eglot)")
	for _, want := range []string{`command = "kodyls"`, `args = ["serve"]`, `language-servers = ["gopls", "kodyls"]`} {
		if !strings.Contains(helix, want) {
			t.Errorf("Helix snippet lacks %s", want)
		}
	}
	if !strings.Contains(emacs, `("kodyls" "serve")`) {
		t.Error(`Emacs snippet does not start ("kodyls" "serve")`)
	}

	// Settings the snippets set: TOML inline tables and eglot plists,
	// flattened to dotted keys.
	settings := map[string]string{}
	toml := regexp.MustCompile(`(\w+) = \{ (\w+) = "([^"]*)" \}`)
	if m := regexp.MustCompile(`(?m)^config = \{(.*)\}$`).FindStringSubmatch(helix); m != nil {
		for _, kv := range toml.FindAllStringSubmatch(m[1], -1) {
			settings["helix "+kv[1]+"."+kv[2]] = kv[3]
		}
	}
	for _, kv := range regexp.MustCompile(`:(\w+) \(:(\w+) "([^"]*)"\)`).FindAllStringSubmatch(emacs, -1) {
		settings["emacs "+kv[1]+"."+kv[2]] = kv[3]
	}
	if len(settings) == 0 {
		t.Fatal("found no settings in the snippets; the check proves nothing")
	}
	for where, value := range settings {
		key := where[strings.Index(where, " ")+1:]
		raw := `{"` + strings.Replace(key, ".", `":{"`, 1) + `":"` + value + `"}}`
		res := Resolve(func(string) string { return "" }, []byte(raw), nil)
		if len(res.Problems) > 0 || res.Origin[key] != OriginInit {
			t.Errorf("%s = %q: not a setting the server accepts: %v", where, value, res.Problems)
		}
	}
}
