// Command gen writes the published editor contract: editors/shared/kodyls-api.json
// from contract.API, and the command list and the settings table of
// README.md from contract.CommandsMarkdown and contract.SettingsMarkdown.
// Run it from anywhere inside the module:
//
//	go run ./editors/contract/gen
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kodustech/kodyls/editors/contract"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	api, err := contract.API()
	if err != nil {
		return err
	}
	apiPath := filepath.Join(root, filepath.FromSlash(contract.APIFile))
	if err := os.MkdirAll(filepath.Dir(apiPath), 0o755); err != nil {
		return err
	}
	if err := writeIfChanged(apiPath, api); err != nil {
		return err
	}
	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	updated, err := contract.ReplaceGenerated(readme)
	if err != nil {
		return err
	}
	return writeIfChanged(readmePath, updated)
}

// writeIfChanged leaves an up-to-date file untouched, so its modification
// time does not wake file watchers for nothing.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", path)
	return nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod: go generate runs in the package directory, go run wherever it is
// typed.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; run from inside the kodyls module")
		}
		dir = parent
	}
}
