package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// RulesDir is where rule files live, relative to the workspace root.
const RulesDir = ".kody/rules"

// MaxFileSize is the largest rule file LoadDir reads. Rules are short prose;
// anything larger is almost certainly a mistake (a generated or binary file)
// and would only slow every reload down.
const MaxFileSize = 1 << 20

// LoadDir loads every rule file under root/.kody/rules, recursively, sorted
// by File. A missing rules directory means no rules and no error. A broken
// file yields a *LoadError and never stops the others from loading; so does
// a file larger than MaxFileSize, and a uuid already used by an earlier file
// (the later rule is dropped).
//
// Files are read through an os.Root opened at root, so a symbolic link can
// never make LoadDir read outside the workspace. Symbolic links to files
// inside it are followed; symbolic links to directories are not, which
// keeps link cycles from looping. Names starting with "." are skipped: they
// are editor backups and lock files, not rules.
//
// When ctx is cancelled LoadDir stops early and returns what it has loaded
// so far; callers that care check ctx.Err().
func LoadDir(ctx context.Context, root string) (rules []*Rule, errs []*LoadError) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, []*LoadError{{File: RulesDir, Msg: fmt.Sprintf("cannot open workspace root: %v", err)}}
	}
	defer r.Close()
	fsys := r.FS()

	info, err := fs.Stat(fsys, RulesDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, []*LoadError{{File: RulesDir, Msg: fmt.Sprintf("cannot read rules directory: %v", err)}}
	case !info.IsDir():
		return nil, []*LoadError{{File: RulesDir, Msg: "is not a directory; rule files go in .kody/rules/"}}
	}

	walkErr := fs.WalkDir(fsys, RulesDir, func(p string, d fs.DirEntry, err error) error {
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
			if p != RulesDir && strings.HasPrefix(name, ".") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || !strings.EqualFold(path.Ext(name), ".md") {
			return nil
		}
		rule, lerr := loadFile(fsys, p, d)
		switch {
		case lerr != nil:
			errs = append(errs, lerr)
		case rule != nil:
			rules = append(rules, rule)
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, &LoadError{File: RulesDir, Msg: fmt.Sprintf("cannot walk rules directory: %v", walkErr)})
	}

	slices.SortFunc(rules, func(a, b *Rule) int { return strings.Compare(a.File, b.File) })
	rules, dupErrs := dropDuplicateUUIDs(rules)
	errs = append(errs, dupErrs...)
	slices.SortStableFunc(errs, func(a, b *LoadError) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return rules, errs
}

// loadFile reads and parses one rule file. It returns (nil, nil) for entries
// that are not rule files after all, such as a symbolic link to a directory.
func loadFile(fsys fs.FS, p string, d fs.DirEntry) (*Rule, *LoadError) {
	mode := d.Type()
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
	rule, err := Parse(p, data)
	if err != nil {
		var lerr *LoadError
		if errors.As(err, &lerr) {
			return nil, lerr
		}
		return nil, &LoadError{File: p, Msg: err.Error()}
	}
	return rule, nil
}

func tooLarge(p string, size int64) *LoadError {
	return &LoadError{File: p, Msg: fmt.Sprintf("rule file is too large (%d bytes, the limit is %d); rules are short prose, so split or shorten it", size, MaxFileSize)}
}

// dropDuplicateUUIDs keeps the first rule (in File order) of every uuid and
// reports the others, since two rules with one id would be indistinguishable
// in reviews and suppressions.
func dropDuplicateUUIDs(rules []*Rule) ([]*Rule, []*LoadError) {
	var errs []*LoadError
	first := make(map[string]*Rule, len(rules))
	kept := rules[:0]
	for _, r := range rules {
		if prev, ok := first[r.UUID]; ok {
			errs = append(errs, &LoadError{File: r.File, Line: r.uuidLine, Column: r.uuidColumn,
				Msg: fmt.Sprintf("duplicate uuid %q: %s already uses it; give each rule its own uuid", r.UUID, prev.File)})
			continue
		}
		first[r.UUID] = r
		kept = append(kept, r)
	}
	return kept, errs
}
