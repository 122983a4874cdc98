package index

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Sources reported by DataDir, so callers (for example a "kodyls doctor"
// command) can tell the user why a particular directory was chosen.
const (
	SourceEnv     = "KODYLS_DATA_DIR"
	SourceXDG     = "XDG_DATA_HOME"
	SourceDefault = "default"
)

// DataDir resolves the data directory: $KODYLS_DATA_DIR, else
// $XDG_DATA_HOME/kodyls, else $HOME/.local/share/kodyls. getenv is os.Getenv
// in production; tests inject their own. The returned directory is absolute
// and source says which rule won (SourceEnv, SourceXDG or SourceDefault).
// DataDir does not create the directory; OpenStore does.
func DataDir(getenv func(string) string) (dir, source string, err error) {
	if getenv == nil {
		return "", "", errors.New("data dir: getenv is nil")
	}
	if v := getenv("KODYLS_DATA_DIR"); v != "" {
		// A relative KODYLS_DATA_DIR is honoured but made absolute now, so
		// that the directory does not silently change with the working
		// directory of whichever process reads it.
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", "", fmt.Errorf("data dir from KODYLS_DATA_DIR %q: %w", v, err)
		}
		return abs, SourceEnv, nil
	}
	// The XDG base directory spec says a relative XDG_DATA_HOME is invalid and
	// must be ignored, so fall through to the default in that case.
	if v := getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(filepath.Clean(v), "kodyls"), SourceXDG, nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", "", errors.New("cannot find a data directory: HOME is not set; set KODYLS_DATA_DIR to a writable directory")
	}
	abs, err := filepath.Abs(filepath.Join(home, ".local", "share", "kodyls"))
	if err != nil {
		return "", "", fmt.Errorf("data dir from HOME %q: %w", home, err)
	}
	return abs, SourceDefault, nil
}
