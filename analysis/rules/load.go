package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
)

// kodyRulesDir is where Kody Markdown rule files live, relative to the
// workspace root.
const kodyRulesDir = ".kody/rules"

// MaxFileSize is the largest rule file a source reads. Rules are short
// prose; anything larger is almost certainly a mistake (a generated or
// binary file) and would only slow every reload down.
const MaxFileSize = 1 << 20

// KodyMarkdown is the source of Kody Rules written as Markdown with YAML
// front matter: every .md file under .kody/rules, recursively.
type KodyMarkdown struct{}

// Name implements Source.
func (KodyMarkdown) Name() string { return "kody-md" }

// WatchPaths implements Source.
func (KodyMarkdown) WatchPaths() []string { return []string{kodyRulesDir} }

// Owns implements Source: .kody/rules itself, and the .md files and the
// directories below it whose names do not start with ".", the ones Load
// reads. A path with no extension may be a directory, so it counts.
func (KodyMarkdown) Owns(rel string) bool {
	rel = normalizeRelPath(rel)
	if rel == kodyRulesDir {
		return true
	}
	sub, ok := strings.CutPrefix(rel, kodyRulesDir+"/")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(sub, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	ext := path.Ext(sub)
	return ext == "" || strings.EqualFold(ext, ".md")
}

// Load implements Source. A missing rules directory means no rules and no
// error. A file larger than MaxFileSize is reported and skipped. Files are
// read as ParseMarkdown reads them: front matter and a title are optional,
// and unknown keys are kept with a warning.
//
// Symbolic links to files inside the workspace are followed; symbolic links
// to directories are not, which keeps link cycles from looping. Names
// starting with "." are skipped: they are editor backups and lock files,
// not rules.
func (KodyMarkdown) Load(ctx context.Context, ws Workspace) (rules []*Rule, errs []*LoadError) {
	isMD := func(name string) bool { return strings.EqualFold(path.Ext(name), ".md") }
	var parsed []*LoadError
	errs = walkRuleFiles(ctx, ws, kodyRulesDir, true, isMD, func(p string, data []byte) {
		rule, warns, err := ParseMarkdown(p, data)
		parsed = append(parsed, warns...)
		var lerr *LoadError
		switch {
		case errors.As(err, &lerr):
			parsed = append(parsed, lerr)
		case err != nil:
			parsed = append(parsed, &LoadError{File: p, Msg: err.Error()})
		case rule != nil:
			rules = append(rules, rule)
		}
	})
	return rules, append(errs, parsed...)
}

// walkRuleFiles calls fn with the content of every regular file under dir
// (recursively when recursive is set) whose name match accepts, in lexical
// order, and returns the problems met on the way. A missing dir is no
// problem. Names starting with "." are skipped, files and directories
// alike; symbolic links to files inside the workspace are followed, those
// to directories are not.
func walkRuleFiles(ctx context.Context, ws Workspace, dir string, recursive bool, match func(name string) bool, fn func(p string, data []byte)) (errs []*LoadError) {
	fsys := ws.FS
	info, err := fs.Stat(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// A parent that is a file, such as a .github file, holds no rules
		// either.
		return nil
	case err != nil:
		return []*LoadError{{File: dir, Msg: fmt.Sprintf("cannot read rules directory: %v", err)}}
	case !info.IsDir():
		return []*LoadError{{File: dir, Msg: fmt.Sprintf("is not a directory; rule files go in %s/", dir)}}
	}

	walkErr := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			// An unreadable directory or entry is reported and skipped;
			// its siblings still load.
			errs = append(errs, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || !recursive) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || !match(name) {
			return nil
		}
		data, lerr := readRuleFile(ws, p, d)
		switch {
		case lerr != nil:
			errs = append(errs, lerr)
		case data != nil:
			fn(p, data)
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, &LoadError{File: dir, Msg: fmt.Sprintf("cannot walk rules directory: %v", walkErr)})
	}
	return errs
}

// readRuleFile reads one rule file. It returns (nil, nil) for entries that
// are not rule files after all, such as a symbolic link to a directory; d
// may be nil for a file found by name rather than by walking.
func readRuleFile(ws Workspace, p string, d fs.DirEntry) ([]byte, *LoadError) {
	fsys := ws.FS
	// Rule text goes into review prompts: a rule file on the workspace's
	// ignore list is not read, nor is a link to a file on it (CLAUDE.md →
	// .env, an import of notes.md → private/notes.md), which is that file.
	// A link to a secret file is an error; a file the team chose to ignore
	// is a warning.
	if why := ws.privateName(p); why != "" {
		return nil, &LoadError{File: p, Warning: true, Skipped: true, Msg: "not read: the file " + why + ", and no file on the ignore list is sent to the model"}
	}
	if real, ok := followLinks(fsys, p); ok && real != p {
		if why := ws.privateName(real); why != "" {
			ignored := ws.gate().IgnoredBy(real) != ""
			return nil, &LoadError{File: p, Warning: ignored, Skipped: ignored, Msg: fmt.Sprintf("leads to %s, which %s, so it is never read as a rule", real, why)}
		}
	}
	var mode fs.FileMode
	if d != nil {
		mode = d.Type()
	} else {
		info, err := fs.Lstat(fsys, p)
		if err != nil {
			return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)}
		}
		mode = info.Mode().Type()
	}
	if mode&fs.ModeSymlink != 0 {
		// Stat follows the link inside the root and fails when it leads
		// out of it.
		info, err := fs.Stat(fsys, p)
		if err != nil {
			return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot follow symbolic link (it must stay inside the workspace): %v", err)}
		}
		if info.IsDir() {
			return nil, nil
		}
		mode = info.Mode().Type()
	}
	// Opening a FIFO or a device would block or read forever; only regular
	// files are rules.
	if !mode.IsRegular() {
		return nil, nil
	}

	f, err := fsys.Open(p)
	if err != nil {
		return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot open: %v", err)}
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > MaxFileSize {
		return nil, tooLarge(p, info.Size())
	}
	// The limit also covers a file that grows between Stat and ReadAll.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(p, int64(len(data)))
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func tooLarge(p string, size int64) *LoadError {
	return &LoadError{File: p, Msg: fmt.Sprintf("rule file is too large (%d bytes, the limit is %d); rules are short prose, so split or shorten it", size, MaxFileSize)}
}
