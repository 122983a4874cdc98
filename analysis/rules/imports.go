package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// MaxImportDepth is how deep "@path" imports of a CLAUDE.md nest: the
// file's own imports are depth 1. Claude Code stops at the same depth.
const MaxImportDepth = 5

// importRE finds "@path" at the start of a line or after white space.
var importRE = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// importRef is one "@path" of a file, as written.
type importRef struct {
	raw    string
	line   int // 1-based
	column int // 0-based byte offset of the "@"
}

// findImports returns the "@path" imports of an instruction file's text,
// outside fenced and indented code blocks and code spans. "@kody-ignore",
// "@kody-sync" and "@file:" references are not imports, nor is anything
// with a ":" (a URL, a mention of a scope).
func findImports(text string) []importRef {
	if !strings.Contains(text, "@") {
		return nil
	}
	lines, _ := scanMarkdown(text)
	var out []importRef
	prevBlank, inIndented := true, false
	for i, l := range lines {
		t := l.text
		blank := strings.TrimSpace(t) == ""
		if l.fence >= 0 {
			prevBlank, inIndented = false, false
			continue
		}
		// An indented code block starts after a blank line and goes on
		// while the lines stay indented (or blank).
		if !blank && leadingSpaces(t) >= 4 && (prevBlank || inIndented) && !bulletRE.MatchString(strings.TrimLeft(t, " \t")) {
			inIndented = true
			prevBlank = false
			continue
		}
		if !blank {
			inIndented = false
		}
		prevBlank = blank
		if !strings.Contains(t, "@") {
			continue
		}
		t = blankCodeSpans(t)
		for _, m := range importRE.FindAllStringSubmatchIndex(t, -1) {
			raw := strings.TrimRight(t[m[2]:m[3]], ".,;:!?)]}\"'>*_")
			if raw == "" || strings.HasPrefix(raw, "kody-") || strings.Contains(raw, ":") || strings.HasPrefix(raw, "@") {
				continue
			}
			out = append(out, importRef{raw: raw, line: i + 1, column: m[2] - 1})
		}
	}
	return out
}

// blankCodeSpans replaces the code spans of a line (text between matching
// runs of backticks) with spaces, keeping the columns.
func blankCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		closeAt := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				closeAt = j
				break
			}
			j += m
		}
		if closeAt < 0 {
			i += n
			continue
		}
		for k := i; k < closeAt+n; k++ {
			b[k] = ' '
		}
		i = closeAt + n
	}
	return string(b)
}

// importTarget resolves the path of an import written in the file from
// (workspace-relative) to a workspace-relative path. problem says why it
// is refused, in words for the file's author; quiet reports a word that is
// more likely a mention ("@alice", "@angular/core") than a file, whose
// absence is no warning.
func importTarget(from, raw string) (target, problem string, quiet bool) {
	p := strings.ReplaceAll(raw, `\`, "/")
	last := path.Base(p)
	quiet = !strings.Contains(last, ".") || strings.HasPrefix(last, ".") && !strings.Contains(last[1:], ".")
	switch {
	case strings.HasPrefix(p, "~"):
		return "", "imports from the home directory are not followed; kodyls imports files inside the workspace only", false
	case strings.HasPrefix(p, "/") || hasVolume(p):
		return "", "absolute paths are not followed; write the path relative to the importing file", false
	}
	target = path.Clean(path.Join(path.Dir(from), p))
	if target == ".." || strings.HasPrefix(target, "../") {
		return "", "the path leads outside the workspace; kodyls imports files inside the workspace only", false
	}
	if !fs.ValidPath(target) || target == "." {
		return "", "not a valid file path", quiet
	}
	return target, "", quiet
}

// importGroup is the rules of one imported file and the directories of
// the instruction files that import it, directly or not.
type importGroup struct {
	rules    []*Rule
	dirs     []string // "." when an import reaches it from the root
	children []string // the files it imports
}

// importer reads the "@path" imports of one source's files during a Load.
type importer struct {
	a      *Assistant
	ws     Workspace
	groups map[string]*importGroup
	order  []string // the imported files, in the order first met
	warns  []*LoadError
}

// load imports what the file from (whose text is data) imports, and what
// those files import, up to MaxImportDepth. The imported rules apply where
// the instruction file in dir applies. chain is the files from the
// instruction file down to from.
func (im *importer) load(from string, data []byte, dir string, chain []string) {
	text := string(normalizeText(data))
	for _, ref := range findImports(text) {
		warn := func(format string, args ...any) {
			im.warns = append(im.warns, &LoadError{File: from, Line: ref.line, Column: ref.column + 1, Warning: true,
				Msg: fmt.Sprintf("import @%s: ", ref.raw) + fmt.Sprintf(format, args...)})
		}
		target, problem, quiet := importTarget(from, ref.raw)
		if problem != "" {
			if !quiet {
				warn("%s", problem)
			}
			continue
		}
		if slices.Contains(chain, target) {
			warn("not imported: %s already imports it, directly or not (an import cycle)", target)
			continue
		}
		if len(chain) > MaxImportDepth {
			warn("not imported: imports nest at most %d deep", MaxImportDepth)
			continue
		}
		if im.readOnItsOwn(target) {
			// AGENTS.md, .cursorrules…: their own source reads them,
			// so importing them again would make every rule twice.
			continue
		}
		if g, ok := im.groups[target]; ok {
			// Imported already, by another file: its rules apply here too.
			if parent := im.groups[from]; parent != nil && !slices.Contains(parent.children, target) {
				parent.children = append(parent.children, target)
			}
			im.widen(target, g, dir, map[string]bool{})
			continue
		}
		content, why := im.read(target)
		if why != "" {
			if !quiet || !strings.HasPrefix(why, notFound) {
				warn("%s", why)
			}
			continue
		}
		rs, es := im.a.Parse(target, content)
		im.warns = append(im.warns, es...)
		g := &importGroup{rules: rs, dirs: []string{dir}}
		im.groups[target] = g
		im.order = append(im.order, target)
		if parent := im.groups[from]; parent != nil {
			parent.children = append(parent.children, target)
		}
		im.load(target, content, dir, append(slices.Clone(chain), target))
	}
}

// widen makes the rules of target, and of the files it imports, apply in
// dir as well.
func (im *importer) widen(target string, g *importGroup, dir string, seen map[string]bool) {
	if seen[target] {
		return
	}
	seen[target] = true
	if !slices.Contains(g.dirs, dir) {
		g.dirs = append(g.dirs, dir)
	}
	for _, c := range g.children {
		if cg := im.groups[c]; cg != nil {
			im.widen(c, cg, dir, seen)
		}
	}
}

// readOnItsOwn reports whether another assistant source reads target.
func (im *importer) readOnItsOwn(target string) bool {
	for _, src := range AssistantSources() {
		if src.name != im.a.name && src.Owns(target) {
			return true
		}
	}
	return im.a.Owns(target)
}

const notFound = "not found"

// read reads an imported file; why says why it cannot.
func (im *importer) read(target string) (data []byte, why string) {
	if why := im.ws.unreadable(); why != "" {
		return nil, why + ", so no file is imported until it is fixed"
	}
	if why := im.ws.private(target); why != "" {
		return nil, "the file " + why + ", so it is never imported"
	}
	info, err := fs.Stat(im.ws.FS, target)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, notFound + ": " + target + " does not exist in the workspace"
	case err != nil:
		return nil, fmt.Sprintf("cannot read %s (it must be a file inside the workspace): %v", target, unwrapPathError(err))
	case !info.Mode().IsRegular():
		return nil, target + " is not a regular file"
	}
	data, lerr := readRuleFile(im.ws, target, nil)
	if lerr != nil {
		return nil, lerr.Msg
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, target + " is a binary file"
	}
	return data, ""
}

// rules returns the imported rules, each scoped to the directories of the
// instruction files that import it.
func (im *importer) rules() []*Rule {
	var out []*Rule
	for _, file := range im.order {
		g := im.groups[file]
		for _, r := range g.rules {
			if !slices.Contains(g.dirs, ".") {
				own := r.Paths
				r.Paths = nil
				for _, d := range g.dirs {
					r.Paths = append(r.Paths, scopeToDir(own, d)...)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// openWorkspace opens the workspace at root through os.Root.
func openWorkspace(root string) (fs.FS, func(), error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, nil, err
	}
	return r.FS(), func() { r.Close() }, nil
}

// ignoredFile reports whether an instruction file is marked @kody-ignore.
func ignoredFile(data []byte) bool {
	ignore, _ := fileMarkers(strings.Split(string(normalizeText(data)), "\n"))
	return ignore
}

// onlyImports reports whether a rule's text is nothing but imports, list
// markers and punctuation.
func onlyImports(r *Rule) bool {
	refs := findImports(r.Body)
	if len(refs) == 0 {
		return false
	}
	rest := importRE.ReplaceAllString(blankCodeSpans(r.Body), " ")
	return strings.TrimFunc(rest, func(c rune) bool {
		return c == ' ' || c == '\n' || c == '\t' || c == '-' || c == '*' || c == '+' || c == '.' || c == ',' || c == ':'
	}) == ""
}
