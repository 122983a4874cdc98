package rules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"
	"go.yaml.in/yaml/v3"
)

// maxTitleLen is the longest title, in characters, made from a bullet or a
// sentence of an assistant's instruction file.
const maxTitleLen = 80

// frontMatterKind says which front matter an assistant's file may start
// with.
type frontMatterKind int

const (
	noFrontMatter      frontMatterKind = iota
	cursorFrontMatter                  // description, globs, alwaysApply
	copilotFrontMatter                 // applyTo
)

// Assistant is the source of the instruction files another coding
// assistant keeps in the workspace: one file at a fixed path (CLAUDE.md),
// or the files under a directory whose names end in a suffix
// (.cursor/rules/**/*.mdc). The files are read unchanged and split into
// rules, one per "##" section when a file has at least two, else one per
// top-level bullet when it has at least two, else one for the whole file.
//
// A file with "@kody-ignore" in its first or last 10 lines is left out; a
// file that is empty or holds only headings is skipped unless it has
// "@kody-sync" there. Imported rules have file scope, medium severity and
// no detector; their ids are "<source>:<file>#<slug of the title>" (with
// "-2", "-3"… when two titles make the same slug), so that they stay the
// same across reloads and edits elsewhere in the file.
type Assistant struct {
	name   string
	file   string // the one file, when dir is ""
	dir    string // the directory tree of the files
	suffix string // what the files' names end in
	fm     frontMatterKind
	// nested: files with the same name in subdirectories are read too,
	// each rule scoped to its directory's subtree.
	nested bool
	// imports: "@path" imports of the files are followed.
	imports bool
}

// CursorRules is the source of .cursorrules, Cursor's legacy rules file.
func CursorRules() *Assistant { return &Assistant{name: "cursorrules", file: ".cursorrules"} }

// CursorMDC is the source of Cursor's project rules, .cursor/rules/**/*.mdc,
// with the front matter keys description, globs (the paths the rule applies
// to: a glob, globs separated by commas, or a list) and alwaysApply (true
// makes the rule apply to every file).
func CursorMDC() *Assistant {
	return &Assistant{name: "cursor-mdc", dir: ".cursor/rules", suffix: ".mdc", fm: cursorFrontMatter}
}

// CopilotInstructions is the source of GitHub Copilot's repository-wide
// instructions, .github/copilot-instructions.md.
func CopilotInstructions() *Assistant {
	return &Assistant{name: "copilot", file: ".github/copilot-instructions.md"}
}

// CopilotPathInstructions is the source of GitHub Copilot's path-specific
// instructions, .github/instructions/**/*.instructions.md, with the front
// matter key applyTo (globs separated by commas).
func CopilotPathInstructions() *Assistant {
	return &Assistant{name: "copilot-instructions", dir: ".github/instructions", suffix: ".instructions.md", fm: copilotFrontMatter}
}

// ClaudeMD is the source of Claude Code's CLAUDE.md at the workspace root
// and in its subdirectories, where a file's rules apply to its directory's
// subtree only. The files' "@path" imports (relative to the importing
// file) are followed inside the workspace, up to MaxImportDepth deep; the
// imported files' rules keep their own file and line and apply where the
// importing file does.
func ClaudeMD() *Assistant {
	return &Assistant{name: "claude", file: "CLAUDE.md", nested: true, imports: true}
}

// AgentsMD is the source of AGENTS.md, read by Codex and other agents, at
// the workspace root and in its subdirectories, where a file's rules apply
// to its directory's subtree only.
func AgentsMD() *Assistant { return &Assistant{name: "agents", file: "AGENTS.md", nested: true} }

// WindsurfRules is the source of .windsurfrules, Windsurf's rules file.
func WindsurfRules() *Assistant { return &Assistant{name: "windsurf", file: ".windsurfrules"} }

// AssistantSources returns the sources of every assistant's instruction
// files kodyls imports, in the order DefaultRegistry gives them priority.
func AssistantSources() []*Assistant {
	return []*Assistant{
		CursorRules(), CursorMDC(), CopilotInstructions(), CopilotPathInstructions(),
		ClaudeMD(), AgentsMD(), WindsurfRules(),
	}
}

// Name implements Source.
func (a *Assistant) Name() string { return a.name }

// WatchPaths implements Source.
func (a *Assistant) WatchPaths() []string {
	if a.dir != "" {
		return []string{a.dir}
	}
	return []string{a.file}
}

// Owns implements Source: the file, or the directory, the directories
// below it and the files with the suffix in them, names starting with "."
// excepted. A path with no extension may be a directory, so it counts.
func (a *Assistant) Owns(rel string) bool {
	rel = normalizeRelPath(rel)
	if a.dir == "" {
		if rel == a.file {
			return true
		}
		dir, name := path.Split(rel)
		return a.nested && name == a.file && nestedDirOK(pathGate, strings.TrimSuffix(dir, "/"), a.file)
	}
	if rel == a.dir {
		return true
	}
	sub, ok := strings.CutPrefix(rel, a.dir+"/")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(sub, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return path.Ext(sub) == "" || a.hasSuffix(path.Base(sub))
}

func (a *Assistant) hasSuffix(name string) bool {
	return len(name) > len(a.suffix) && strings.EqualFold(name[len(name)-len(a.suffix):], a.suffix)
}

// Load implements Source.
func (a *Assistant) Load(ctx context.Context, ws Workspace) (rules []*Rule, errs []*LoadError) {
	fsys := ws.FS
	var parsed []*LoadError
	read := func(p string, data []byte) {
		rs, es := a.Parse(p, data)
		rules = append(rules, rs...)
		parsed = append(parsed, es...)
	}
	if a.dir != "" {
		errs = walkRuleFiles(ctx, ws, a.dir, true, a.hasSuffix, read)
		return rules, append(errs, parsed...)
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	im := &importer{a: a, ws: ws, groups: map[string]*importGroup{}}
	readScoped := func(p string, data []byte) {
		dir := "."
		if a.nested && p != a.file {
			dir = path.Dir(p)
		}
		rs, es := a.Parse(p, data)
		for _, r := range rs {
			r.Paths = scopeToDir(r.Paths, dir)
		}
		parsed = append(parsed, es...)
		if a.imports && !ignoredFile(data) {
			im.load(p, data, dir, []string{p})
			// A rule that only imports ("@AGENTS.md") asks nothing
			// of the code itself.
			rs = slices.DeleteFunc(rs, onlyImports)
		}
		rules = append(rules, rs...)
	}
	// A missing file, or a parent that is not a directory, means no
	// rules.
	if _, err := fs.Lstat(fsys, a.file); err == nil {
		data, lerr := readRuleFile(ws, a.file, nil)
		switch {
		case lerr != nil:
			errs = append(errs, lerr)
		case data != nil:
			readScoped(a.file, data)
		}
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		errs = append(errs, &LoadError{File: a.file, Msg: fmt.Sprintf("cannot read: %v", err)})
	}
	if a.nested {
		files, warn := nestedFiles(ctx, fsys, ws.gate(), a.file)
		if warn != nil {
			errs = append(errs, warn)
		}
		for _, f := range files {
			if ctx.Err() != nil {
				break
			}
			data, lerr := readRuleFile(ws, f, nil)
			switch {
			case lerr != nil:
				errs = append(errs, lerr)
			case data != nil:
				readScoped(f, data)
			}
		}
	}
	rules = append(rules, im.rules()...)
	errs = append(errs, im.warns...)
	return rules, append(errs, parsed...)
}

// Parse reads the rules of one of the source's files; relFile is its
// workspace-relative path.
func (a *Assistant) Parse(relFile string, content []byte) (rules []*Rule, errs []*LoadError) {
	file := normalizeRelPath(relFile)
	content = normalizeText(content)
	lines := strings.Split(string(content), "\n")
	src := slices.Clone(lines) // before the markers are blanked
	ignore, sync := fileMarkers(lines)
	if ignore {
		return nil, nil
	}
	blankMarkerLines(lines)

	// The front matter, when the source has one, gives the paths.
	base := &Rule{Severity: SeverityMedium, Scope: ScopeFile, Enabled: true, File: file}
	var description string
	bodyStart := 0 // index of the body's first line
	if a.fm != noFrontMatter && len(lines) > 0 && isDelimiter([]byte(lines[0])) {
		end := -1
		for i := 1; i < len(lines); i++ {
			if isDelimiter([]byte(lines[i])) {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, []*LoadError{{File: file, Line: 1, Column: 1,
				Msg: `unterminated front matter: no closing "---" line after the opening one; add a "---" line after the last key`}}
		}
		var lerr *LoadError
		description, lerr = a.frontMatter(file, []byte(strings.Join(lines[1:end], "\n")), base, src)
		if lerr != nil {
			return nil, []*LoadError{lerr}
		}
		bodyStart = end + 1
	}

	body := strings.Join(lines[bodyStart:], "\n")
	chunks := splitRules(body, bodyStart+1)
	if len(chunks) == 0 {
		if !sync {
			return nil, nil
		}
		// "@kody-sync" turns a file of headings into one rule.
		chunks = wholeFile(body, bodyStart+1, true)
		if len(chunks) == 0 {
			return nil, nil
		}
	}
	if len(chunks) == 1 && description != "" && chunks[0].whole {
		chunks[0].title = cutTitle(description)
	}

	slugs := map[string]int{}
	for _, c := range chunks {
		r := *base
		r.Paths = slices.Clone(base.Paths)
		r.Extra = maps.Clone(base.Extra)
		r.Title = c.title
		if r.Title == "" {
			r.Title = titleFromFileName(file)
		}
		r.Line = c.line
		r.Body = c.text
		r.Instructions = c.text
		r.BodyLine = c.textLine
		r.textLine = c.textLine
		r.UUID = a.name + ":" + file + "#" + uniqueSlug(slugs, r.Title)
		rules = append(rules, &r)
	}
	return rules, nil
}

// frontMatter reads the front matter of a Cursor or Copilot file into
// base's paths and Extra. It returns the description, which titles a file
// that is one rule.
func (a *Assistant) frontMatter(file string, fm []byte, base *Rule, src []string) (description string, lerr *LoadError) {
	defer func() {
		if p := recover(); p != nil {
			lerr = &LoadError{File: file, Line: 1, Column: 1, Msg: fmt.Sprintf("cannot parse front matter: %v", p)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		line, msg := yamlErrorPosition(err, fm)
		return "", &LoadError{File: file, Line: line + frontMatterFirstLine - 1, Column: 1, Msg: "invalid YAML in front matter: " + msg}
	}
	if len(doc.Content) == 0 || yamlpos.IsNull(yamlpos.Deref(doc.Content[0])) {
		return "", nil
	}
	d := decoder{file: file, offset: frontMatterFirstLine - 1, src: src}
	root := yamlpos.Deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return "", d.errAt(root, "front matter must be a YAML mapping of keys, not a %s", kindName(root))
	}
	var globs []string
	var globsNode *yaml.Node
	always := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], yamlpos.Deref(root.Content[i+1])
		key := strings.TrimSpace(k.Value)
		if base.Extra == nil {
			base.Extra = map[string]any{}
		}
		base.Extra[key] = decodeAny(v)
		switch {
		case a.fm == cursorFrontMatter && strings.EqualFold(key, "globs"),
			a.fm == copilotFrontMatter && strings.EqualFold(key, "applyTo"):
			list, lerr := d.globList(k, v, key)
			if lerr != nil {
				return "", lerr
			}
			globs, globsNode = list, valueOrKey(k, v)
		case a.fm == cursorFrontMatter && strings.EqualFold(key, "alwaysApply"):
			var b bool
			if v == nil || v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
				return "", d.errAt(valueOrKey(k, v), "alwaysApply must be true or false")
			}
			always = b
		case strings.EqualFold(key, "description"):
			if v != nil && v.Kind == yaml.ScalarNode {
				description = strings.TrimSpace(v.Value)
			}
		}
	}
	if always {
		// Cursor applies such a rule to every file, whatever its globs.
		return description, nil
	}
	for i, g := range globs {
		g = normalizePattern(g)
		if !doublestar.ValidatePattern(strings.TrimPrefix(g, "!")) {
			return "", d.errAt(globsNode, "invalid glob %q: check for unbalanced [ ] or { } and a trailing \\", globs[i])
		}
		globs[i] = g
	}
	base.Paths = globs
	return description, nil
}

// globList reads globs given as one glob, globs separated by commas (outside
// braces, which hold alternatives: "**/*.{ts,tsx}"), or a list of either.
func (d *decoder) globList(k, v *yaml.Node, name string) ([]string, *LoadError) {
	list, lerr := d.stringList(k, v, name)
	if lerr != nil {
		return nil, lerr
	}
	var out []string
	for _, item := range list {
		for _, g := range splitGlobs(item) {
			if g = strings.Trim(strings.TrimSpace(g), `"'`); g != "" {
				out = append(out, g)
			}
		}
	}
	return out, nil
}

// splitGlobs splits s at the commas that are not inside braces.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

var markerRE = regexp.MustCompile(`(?:^|[^\w@-])@kody-(ignore|sync)(?:$|[^\w-])`)

// markerWindow is how many lines at the start and at the end of a file are
// searched for "@kody-ignore" and "@kody-sync".
const markerWindow = 10

// fileMarkers reports whether the first or last lines of a file hold
// "@kody-ignore" or "@kody-sync".
func fileMarkers(lines []string) (ignore, sync bool) {
	n := len(lines)
	if n > 0 && lines[n-1] == "" {
		n-- // the empty string after the last newline is no line
	}
	for i, l := range lines[:n] {
		if i >= markerWindow && i < n-markerWindow {
			continue
		}
		for _, m := range markerRE.FindAllStringSubmatch(l, -1) {
			switch m[1] {
			case "ignore":
				ignore = true
			case "sync":
				sync = true
			}
		}
	}
	return ignore, sync
}

var markerLineRE = regexp.MustCompile(`^\s*(?:<!--|//|#+|/\*)?\s*@kody-(?:ignore|sync)\s*(?:-->|\*/)?\s*$`)

// blankMarkerLines empties the lines that hold nothing but a marker, so
// that the marker does not become part of a rule and the line numbers stay.
func blankMarkerLines(lines []string) {
	for i, l := range lines {
		if markerLineRE.MatchString(l) {
			lines[i] = ""
		}
	}
}

// chunk is one rule split out of an instruction file.
type chunk struct {
	title    string
	text     string
	line     int // 1-based line of the heading or bullet
	textLine int // 1-based line on which text starts
	whole    bool
}

// splitRules splits a body whose first line is the file's line firstLine:
// into "##" sections when there are at least two, else into top-level
// bullets when there are at least two, else into one rule. It returns
// nothing when the body is empty or holds only headings.
func splitRules(body string, firstLine int) []chunk {
	lines, _ := scanMarkdown(body)
	if onlyHeadings(lines) {
		return nil
	}
	var sections []int
	for i, l := range lines {
		if l.level == 2 {
			sections = append(sections, i)
		}
	}
	if len(sections) >= 2 {
		var out []chunk
		for _, h := range sections {
			end := sectionEnd(lines, h, 2)
			text, off := trimmedText(lines[h+1 : end])
			c := chunk{title: cutTitle(lines[h].heading), text: text, line: firstLine + h, textLine: firstLine + h + 1 + off}
			if text == "" {
				// A heading alone is a rule in so many words.
				c.text, c.textLine = lines[h].heading, c.line
			}
			out = append(out, c)
		}
		return out
	}
	if items := bullets(lines); len(items) >= 2 {
		out := make([]chunk, 0, len(items))
		for _, it := range items {
			out = append(out, chunk{title: bulletTitle(it.text), text: it.text, line: firstLine + it.line, textLine: firstLine + it.line})
		}
		return out
	}
	return wholeFile(body, firstLine, false)
}

// wholeFile makes the whole body one rule, titled by its first heading,
// else its first sentence. With headings set, a body of headings only is
// kept too.
func wholeFile(body string, firstLine int, headings bool) []chunk {
	lines, _ := scanMarkdown(body)
	if !headings && onlyHeadings(lines) {
		return nil
	}
	text, off := trimmedText(lines)
	if text == "" {
		return nil
	}
	c := chunk{text: text, line: firstLine + off, textLine: firstLine + off, whole: true}
	for _, l := range lines {
		if l.level > 0 && l.heading != "" {
			c.title = cutTitle(l.heading)
			break
		}
	}
	if c.title == "" {
		c.title = bulletTitle(text)
	}
	return []chunk{c}
}

// onlyHeadings reports whether every line that is not blank is a heading.
func onlyHeadings(lines []mdLine) bool {
	for _, l := range lines {
		if l.level == 0 && strings.TrimSpace(l.text) != "" {
			return false
		}
	}
	return true
}

// trimmedText joins lines and trims the result, returning how many lines
// were dropped from the start.
func trimmedText(lines []mdLine) (string, int) {
	off := 0
	for off < len(lines) && strings.TrimSpace(lines[off].text) == "" && lines[off].fence < 0 {
		off++
	}
	return joinText(lines[off:]), off
}

type bulletItem struct {
	line int // 0-based index of the bullet's line in the body
	text string
}

var bulletRE = regexp.MustCompile(`^ ?([-*+]|\d{1,9}[.)])(?:[ \t]+|$)`)

// bullets finds the top-level list items of a body (a "-", "*", "+" or
// "1." at the start of a line, outside code fences) with their
// continuation lines, dedented. Prose between lists is left out.
func bullets(lines []mdLine) []bulletItem {
	var items []bulletItem
	var cur []string
	curLine, indent, blank := -1, 0, false
	flush := func() {
		if curLine >= 0 {
			text := strings.TrimSpace(strings.Join(cur, "\n"))
			if text != "" {
				items = append(items, bulletItem{line: curLine, text: text})
			}
		}
		cur, curLine, blank = nil, -1, false
	}
	for i, l := range lines {
		t := l.text
		switch {
		case l.level > 0:
			flush()
		case l.fence < 0 && bulletRE.MatchString(t):
			flush()
			m := bulletRE.FindString(t)
			curLine, indent = i, len(m)
			cur = []string{t[len(m):]}
		case curLine < 0:
		case strings.TrimSpace(t) == "" && l.fence < 0:
			blank = true
			cur = append(cur, "")
		case blank && l.fence < 0 && leadingSpaces(t) < 2:
			// A paragraph after the list ends the item.
			flush()
		default:
			cur = append(cur, strings.TrimRight(trimIndent(t, indent), " \t"))
		}
	}
	flush()
	return items
}

func leadingSpaces(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

var boldLeadRE = regexp.MustCompile(`^(?:\*\*|__)([^*_\n]{1,80}?)(?:\*\*|__)\s*(?::|-|—|–|\.)?\s`)

// bulletTitle makes a title of a bullet or paragraph: the bold lead-in
// when it starts with one ("**Errors**: wrap them"), else its first
// sentence, at most maxTitleLen characters.
func bulletTitle(text string) string {
	if m := boldLeadRE.FindStringSubmatch(text + " "); m != nil {
		if t := strings.TrimSpace(strings.TrimRight(m[1], ":")); t != "" {
			return cutTitle(t)
		}
	}
	return firstSentence(text)
}

// firstSentence returns the first sentence of the first paragraph of
// text, without Markdown emphasis, at most maxTitleLen characters.
func firstSentence(text string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	// A code fence, a nested list or a heading ends the paragraph too.
	lines := strings.Split(para, "\n")
	for i := 1; i < len(lines); i++ {
		if c, _, _, _ := fenceMarker(strings.TrimLeft(lines[i], " ")); c != 0 || bulletRE.MatchString(strings.TrimLeft(lines[i], " ")) {
			lines = lines[:i]
			break
		}
		if l, _ := atxHeading(lines[i]); l > 0 {
			lines = lines[:i]
			break
		}
	}
	para = strings.Join(lines, "\n")
	para = strings.Join(strings.Fields(para), " ")
	para = strings.NewReplacer("**", "", "__", "").Replace(para)
	for i := 0; i+1 < len(para); i++ {
		if (para[i] == '.' || para[i] == '!' || para[i] == '?') && para[i+1] == ' ' {
			para = para[:i+1]
			break
		}
	}
	return cutTitle(strings.TrimSuffix(para, "."))
}

// cutTitle shortens a title to maxTitleLen characters at a word boundary,
// ending it with "…" when it was cut. A title to cut is redacted first: a
// secret cut in half would no longer be recognised where the title is
// sent to the model.
func cutTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxTitleLen {
		return s
	}
	if s = redact.Default().String(s); utf8.RuneCountInString(s) <= maxTitleLen {
		return s
	}
	rs := []rune(s)[:maxTitleLen-1]
	cut := string(rs)
	if i := strings.LastIndexByte(cut, ' '); i > maxTitleLen/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// slugify turns a title into lower-case letters, digits and dashes.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 60 {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "rule"
	}
	return b.String()
}

// uniqueSlug returns the slug of title, with "-2", "-3"… added when an
// earlier title of the same file made the same one.
func uniqueSlug(seen map[string]int, title string) string {
	s := slugify(title)
	if seen[s] == 0 {
		seen[s] = 1
		return s
	}
	for n := seen[s] + 1; ; n++ {
		if c := s + "-" + strconv.Itoa(n); seen[c] == 0 {
			seen[s], seen[c] = n, 1
			return c
		}
	}
}
