package rules

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/kodustech/kodyls/analysis/gate"
)

// The bounds of the walk that looks for AGENTS.md and CLAUDE.md in the
// workspace's subdirectories. It runs on every reload, so a huge
// repository must not make reloading slow: instruction files live near the
// top of a tree, where services and packages start.
const (
	// MaxNestedDepth is how many directory levels below the workspace root
	// are searched ("services/api" is 2).
	MaxNestedDepth = 8
	// MaxNestedDirs is how many directories one walk visits at most; past
	// it the walk stops with a warning.
	MaxNestedDirs = 10_000
)

// nestedDirLimit is MaxNestedDirs, lowered by tests.
var nestedDirLimit = MaxNestedDirs

// generatedDirs are build output and caches, skipped by name at any depth
// on top of what the review gate skips (vendored code, kodus-config
// ignorePaths): nobody keeps instructions there, and they can be huge.
// testdata holds test fixtures by Go's convention (the go tool ignores it
// too): an AGENTS.md there is a sample, not the team's instructions.
var generatedDirs = map[string]bool{
	"dist": true, "build": true, "out": true, "target": true,
	"__pycache__": true, "coverage": true, "bower_components": true,
	"testdata": true,
}

// pathGate is the gate without the workspace's ignorePaths, for answers
// from the path alone (Owns).
var pathGate, _ = gate.New(gate.Options{})

// nestedDirOK reports, from the path alone, whether dir (a clean,
// workspace-relative directory other than ".") is one the walk enters:
// within MaxNestedDepth, with no element that starts with "." (.git, .venv,
// .next…), is build output, or is vendored by the gate's measure, and not
// ignored by kodus-config ignorePaths.
func nestedDirOK(g *gate.Gate, dir, file string) bool {
	enter, _ := nestedDir(g, dir, file)
	return enter
}

// nestedDir says whether the walk enters dir (see nestedDirOK) and, when it
// does not, whether the only reason is that kodus-config ignorePaths
// ignores the directory: an instruction file at the top of such a
// directory is told as skipped, while one in a hidden, generated or
// vendored directory is of no concern to anyone.
func nestedDir(g *gate.Gate, dir, file string) (enter, ignored bool) {
	if dir == "." || dir == "" || strings.HasPrefix(dir, "../") || dir == ".." {
		return false, false
	}
	depth := 0
	for part := range strings.SplitSeq(dir, "/") {
		depth++
		if strings.HasPrefix(part, ".") || generatedDirs[part] {
			return false, false
		}
	}
	if depth > MaxNestedDepth {
		return false, false
	}
	// The gate answers for files: a directory is vendored, or on the
	// built-in privacy list, when the instruction file in it would be.
	if pathGate.CheckPath(dir + "/" + file).Skip() {
		return false, false
	}
	if g == nil {
		return true, false
	}
	if g.IgnoredBy(dir) != "" {
		return false, true
	}
	// A file ignorePaths ignores by its own name (AGENTS.md, **/*.md) is
	// found and told as skipped; the directory is walked all the same.
	return !g.Private(dir).Skip(), false
}

// walkNestedDirs calls fn with every directory below the workspace root
// that nestedDirOK accepts, in lexical order, parents first, starting at
// under ("." for the whole workspace), and ignored, when not nil, with
// every directory it does not enter only because kodus-config ignorePaths
// ignores it (nothing below such a directory is looked at). It returns a
// warning when it stopped at MaxNestedDirs.
func walkNestedDirs(ctx context.Context, fsys fs.FS, g *gate.Gate, file, under string, fn func(dir string, entries []fs.DirEntry), ignored func(dir string)) *LoadError {
	visited := 0
	var warn *LoadError
	var walk func(dir string)
	walk = func(dir string) {
		if ctx.Err() != nil || warn != nil {
			return
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return
		}
		if dir != "." {
			fn(dir, entries)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := path.Join(dir, e.Name())
			enter, ign := nestedDir(g, sub, file)
			if !enter {
				if ign && ignored != nil {
					ignored(sub)
				}
				continue
			}
			if visited++; visited > nestedDirLimit {
				warn = &LoadError{File: ".", Warning: true, Msg: fmt.Sprintf(
					"stopped looking for %s in subdirectories after %d directories; add the large directories to kodus-config.yml ignorePaths",
					file, nestedDirLimit)}
				return
			}
			walk(sub)
		}
	}
	walk(under)
	return warn
}

// nestedFiles returns the files named file in the subdirectories of the
// workspace (not at its root), in lexical order of their directories. A
// file kodus-config ignorePaths ignores is among them, so that reading it
// tells it is skipped: whether ignorePaths names the file or the directory
// it is in. In an ignored directory only its top is looked at, with one
// Lstat per directory: the walk never goes into an ignored tree.
func nestedFiles(ctx context.Context, fsys fs.FS, g *gate.Gate, file string) (files []string, warn *LoadError) {
	warn = walkNestedDirs(ctx, fsys, g, file, ".", func(dir string, entries []fs.DirEntry) {
		for _, e := range entries {
			if e.Name() == file && !e.IsDir() {
				files = append(files, dir+"/"+file)
			}
		}
	}, func(dir string) {
		p := dir + "/" + file
		if info, err := fs.Lstat(fsys, p); err == nil && !info.IsDir() {
			files = append(files, p)
		}
	})
	return files, warn
}

// scopeToDir makes a rule of an instruction file in dir apply to dir's
// subtree only: its own globs, relative to dir, are moved under it, and a
// rule without a positive glob gets "dir/**". dir "." changes nothing.
func scopeToDir(paths []string, dir string) []string {
	if dir == "." || dir == "" {
		return paths
	}
	prefix := escapeGlob(dir) + "/"
	var out []string
	positive := false
	for _, p := range paths {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			out = append(out, "!"+prefix+strings.TrimPrefix(neg, "/"))
			continue
		}
		positive = true
		out = append(out, prefix+strings.TrimPrefix(p, "/"))
	}
	if !positive {
		out = append([]string{prefix + "**"}, out...)
	}
	return out
}

// escapeGlob quotes the characters doublestar gives a meaning to, so that
// a directory such as "app/[slug]" matches itself.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NestedDirs returns the workspace-relative directories below under ("."
// for the whole workspace) in which a source of the registry looks for
// instruction files, within MaxNestedDepth and MaxNestedDirs, so that a
// watcher can watch them; nil when no source reads nested files.
func (r *Registry) NestedDirs(ctx context.Context, root, under string) []string {
	var names []string
	for _, src := range r.sources {
		if a, ok := src.(*Assistant); ok && a.nested {
			names = append(names, path.Base(a.file))
		}
	}
	if len(names) == 0 {
		return nil
	}
	under = normalizeRelPath(under)
	if under != "." && !r.WalksDir(under) {
		return nil
	}
	fsys, closeFS, err := openWorkspace(root)
	if err != nil {
		return nil
	}
	defer closeFS()
	g := workspaceOf(fsys).gate()
	var dirs []string
	if under != "." {
		dirs = append(dirs, under)
	}
	// The directories are the same for every name but for the gate's
	// answer on the file in them; the first name decides.
	walkNestedDirs(ctx, fsys, g, names[0], under, func(dir string, _ []fs.DirEntry) {
		if dir != under {
			dirs = append(dirs, dir)
		}
	}, nil)
	return dirs
}

// WalksDir reports, from the path alone, whether a source of the registry
// looks for instruction files in the directory rel (workspace-relative),
// so that a watcher starts watching it when it is created.
func (r *Registry) WalksDir(rel string) bool {
	rel = normalizeRelPath(rel)
	for _, src := range r.sources {
		if a, ok := src.(*Assistant); ok && a.nested && nestedDirOK(pathGate, rel, path.Base(a.file)) {
			return true
		}
	}
	return false
}
