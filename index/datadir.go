package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
// A relative KODYLS_DATA_DIR is an error, which says what to do.
// DataDir does not create the directory; OpenStore does.
func DataDir(getenv func(string) string) (dir, source string, err error) {
	if getenv == nil {
		return "", "", errors.New("data dir: getenv is nil")
	}
	if v := getenv("KODYLS_DATA_DIR"); v != "" {
		// A relative KODYLS_DATA_DIR is refused: every process (the
		// server, each command) would resolve it against its own working
		// directory, so the store would move with it and land inside the
		// repository under review, whose next review lists it as changed.
		if !filepath.IsAbs(v) {
			hint := ""
			if strings.HasPrefix(v, "~") {
				hint = " (~ is expanded by the shell only where it begins an unquoted word; write $HOME)"
			}
			return "", "", fmt.Errorf("KODYLS_DATA_DIR %q is a relative path%s: each kodyls process would put the store under its own working directory; set KODYLS_DATA_DIR to an absolute path, e.g. $HOME/.local/share/kodyls", v, hint)
		}
		return filepath.Clean(v), SourceEnv, nil
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

// Unwritable reports that kodyls cannot create files in the data
// directory dir, which exists, saying what to do (sqlite says no more
// than "unable to open database file"); nil when it can, or when dir does
// not exist yet (OpenStore creates it).
func Unwritable(dir string) error {
	f, err := os.CreateTemp(dir, ".kodyls-write-check-*")
	if err == nil {
		name := f.Name()
		_ = f.Close()
		_ = os.Remove(name)
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	return fmt.Errorf("the data directory %s is not writable (%v): make it writable, or set KODYLS_DATA_DIR to a directory you can write", dir, cause)
}
