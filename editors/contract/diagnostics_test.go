package contract

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestPluginsReadDeclaredDiagnosticData: every field the VS Code extension
// and the Neovim plugin read from a diagnostic's data is declared in
// DiagnosticData, so the server cannot drop one unnoticed.
func TestPluginsReadDeclaredDiagnosticData(t *testing.T) {
	declared := map[string]bool{}
	for f := range reflect.TypeFor[DiagnosticData]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		declared[name] = true
	}
	read := regexp.MustCompile(`\bdata\??\.(\w+)`)
	seen := 0
	for _, file := range []string{
		filepath.Join("..", "vscode", "src", "extension.ts"),
		filepath.Join("..", "neovim", "lua", "kodyls", "init.lua"),
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !declared[m[1]] {
				t.Errorf("%s reads data.%s, which DiagnosticData does not declare", file, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("found no read of a diagnostic's data in the plugins; the check proves nothing")
	}
}
