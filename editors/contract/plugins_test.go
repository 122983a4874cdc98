package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestPluginsNameDeclaredMessages: the plugins name server commands,
// notifications and requests as string literals; a rename in the contract
// must fail here, not only in an editor. Every `kodyls/…` method either
// plugin names is declared; every `kodyls.…` name the Neovim plugin sends
// is a server command; every one in the VS Code extension is a server
// command, or one of the extension's own commands, settings, views or
// status items; and
// the extension offers every server command in the palette.
func TestPluginsNameDeclaredMessages(t *testing.T) {
	commands := map[string]bool{}
	for _, c := range Commands {
		commands[c.Name] = true
	}
	methods := map[string]bool{}
	for _, m := range append(slices.Clone(Notifications), Requests...) {
		methods[m.Method] = true
	}
	read := func(parts ...string) string {
		src, err := os.ReadFile(filepath.Join(append([]string{".."}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	lua := read("neovim", "lua", "kodyls", "init.lua")
	ts := read("vscode", "src", "extension.ts")
	var pkg struct {
		Contributes struct {
			Commands      []struct{ Command string }
			Views         map[string][]struct{ ID string }
			Configuration []struct {
				Properties map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(read("vscode", "package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	palette, settings, own := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, views := range pkg.Contributes.Views {
		for _, v := range views {
			own[v.ID] = true
		}
	}
	for _, m := range regexp.MustCompile(`createStatusBarItem\('([^']+)'`).FindAllStringSubmatch(ts, -1) {
		own[m[1]] = true
	}
	for _, c := range pkg.Contributes.Commands {
		palette[c.Command] = true
	}
	for _, section := range pkg.Contributes.Configuration {
		for k := range section.Properties {
			settings[k] = true
		}
	}

	method := regexp.MustCompile(`['"](kodyls/[A-Za-z]+)['"]`)
	name := regexp.MustCompile(`['"](kodyls\.[A-Za-z]+)['"]`)
	for file, src := range map[string]string{"init.lua": lua, "extension.ts": ts} {
		ms := method.FindAllStringSubmatch(src, -1)
		if len(ms) == 0 {
			t.Errorf("%s names no kodyls/ method: the check proves nothing", file)
		}
		for _, m := range ms {
			if !methods[m[1]] {
				t.Errorf("%s names %s, which the contract does not declare", file, m[1])
			}
		}
	}
	luaNames := name.FindAllStringSubmatch(lua, -1)
	if len(luaNames) == 0 {
		t.Error("init.lua names no server command: the check proves nothing")
	}
	for _, m := range luaNames {
		if !commands[m[1]] {
			t.Errorf("init.lua sends %s, which is not a server command", m[1])
		}
	}
	for _, m := range name.FindAllStringSubmatch(ts, -1) {
		if !commands[m[1]] && !palette[m[1]] && !settings[m[1]] && !own[m[1]] {
			t.Errorf("extension.ts names %s: not a server command, nor one of the extension's commands, settings, views or status items", m[1])
		}
	}
	for c := range commands {
		if !palette[c] {
			t.Errorf("the extension does not offer the server command %s in the palette", c)
		}
	}
}
