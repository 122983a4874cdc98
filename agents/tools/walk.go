package tools

import (
	"bufio"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// skipDirs are never descended into: they hold history, dependencies and
// vendored code, where matches drown the user's own code.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// gitignore is the simple subset of the root .gitignore: plain and glob
// patterns (with **), a leading "/" or an inner "/" anchoring to the root,
// a trailing "/" for directories. Negations are ignored, which can only
// hide more files, never expose one.
type gitignore []ignoreRule

type ignoreRule struct {
	pattern  string
	anchored bool
	dirOnly  bool
}

func loadGitignore(root *os.Root) gitignore {
	f, err := root.Open(".gitignore")
	if err != nil {
		return nil
	}
	defer f.Close()
	var rules gitignore
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		r := ignoreRule{}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if line == "" || !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// dirIgnored returns the directory among dir and its parents that g
// ignores, or "" when none is.
func (g gitignore) dirIgnored(dir string) string {
	if dir == "." || dir == "" {
		return ""
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if g.match(p, true) {
			return p
		}
	}
	return ""
}

func (g gitignore) match(rel string, dir bool) bool {
	for _, r := range g {
		if r.dirOnly && !dir {
			continue
		}
		name := path.Base(rel)
		if r.anchored {
			name = rel
		}
		if ok, _ := doublestar.Match(r.pattern, name); ok {
			return true
		}
	}
	return false
}

// walk calls f for every regular file under start (relative, slash
// separated) that is not skipped, git-ignored or on the privacy list, in
// lexical order, until f returns false. Entries that cannot be read are
// skipped: a partial answer is more useful to the model than none.
func (w Workspace) walk(root *os.Root, start string, f func(rel string) bool) error {
	ign := loadGitignore(root)
	stop := false
	// A start reached through a link ("alias" → ".") walks the files of
	// its target: the privacy list applies to their real paths too.
	realStart := start
	if start != "." {
		if r, ok := w.resolve(start); ok {
			realStart = r
		}
	}
	private := func(rel string, d fs.DirEntry) bool {
		if w.ignoredEntry(rel, d) {
			return true
		}
		if realStart == start || w.Ignore == nil {
			return false
		}
		return w.Ignore(path.Join(realStart, strings.TrimPrefix(strings.TrimPrefix(rel, start), "/")))
	}
	return fs.WalkDir(root.FS(), start, func(rel string, d fs.DirEntry, err error) error {
		if stop {
			return fs.SkipAll
		}
		if err != nil {
			if rel == start {
				return rootErr(rel, err)
			}
			return nil
		}
		if rel != "." && rel != start && (private(rel, d) || ign.match(rel, d.IsDir()) || d.IsDir() && skipDirs[d.Name()]) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symlink is followed only if it stays inside the root, and
			// not into .git.
			if w.InGitDir(rel) {
				return nil
			}
			st, err := w.stat(root, rel)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		if !f(rel) {
			stop = true
			return fs.SkipAll
		}
		return nil
	})
}

// ignoredEntry is ignored for an entry of a walk, which does not follow
// linked directories: only a link itself can lead elsewhere.
func (w Workspace) ignoredEntry(rel string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink != 0 {
		return w.ignored(rel)
	}
	return w.Ignore != nil && w.Ignore(rel)
}
