package rules

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"
	"go.yaml.in/yaml/v3"
)

// frontMatterFirstLine is the file line on which the YAML of the front
// matter starts: the opening "---" is line 1.
const frontMatterFirstLine = 2

// Parse reads one rule file strictly, as the Kody Markdown format defines
// it: front matter is required and must have a title. relFile is the file's
// workspace-relative path; it names the file in errors and derives the
// rule's id when the file has no uuid. The error, when not nil, is a
// *LoadError. Warnings (unknown keys) are dropped; ParseMarkdown returns
// them.
func Parse(relFile string, content []byte) (*Rule, error) {
	r, _, lerr := parse(normalizeRelPath(relFile), content, false)
	if lerr != nil {
		// Returning lerr directly would turn a nil *LoadError into a
		// non-nil error interface; this branch keeps the two apart.
		return nil, lerr
	}
	return r, nil
}

// ParseMarkdown reads one Kody Markdown rule file the way the KodyMarkdown
// source does, accepting what real rule files hold besides the strict
// format: no front matter at all (the whole file is the rule), no title
// (taken from the first Markdown heading, else from the file name), and
// an empty file (a warning, no rule). Problems that do not stop the rule
// from loading, such as unknown keys, come back as warnings. The error,
// when not nil, is a *LoadError and the rule is nil; the front matter's
// other errors then come back with the warnings (Warning false).
func ParseMarkdown(relFile string, content []byte) (*Rule, []*LoadError, error) {
	r, warns, lerr := parse(normalizeRelPath(relFile), content, true)
	if lerr != nil {
		return nil, warns, lerr
	}
	return r, warns, nil
}

func parse(file string, content []byte, lenient bool) (r *Rule, warns []*LoadError, lerr *LoadError) {
	// The YAML decoder is third-party code fed with user input; a panic in
	// it must become a diagnostic, not take the language server down.
	defer func() {
		if p := recover(); p != nil {
			r, warns, lerr = nil, nil, &LoadError{File: file, Line: 1, Column: 1, Msg: fmt.Sprintf("cannot parse front matter: %v", p)}
		}
	}()

	content = normalizeText(content)
	var (
		fm       []byte
		body     string
		bodyLine int
		hasFM    bool
	)
	switch {
	case lenient && len(bytes.TrimSpace(content)) == 0:
		return nil, []*LoadError{{File: file, Msg: "empty rule file: nothing to load; write the rule or delete the file", Warning: true}}, nil
	case lenient && !startsWithDelimiter(content):
		body, bodyLine = string(content), 1
	default:
		fm, body, bodyLine, lerr = splitFrontMatter(file, content)
		if lerr != nil {
			return nil, nil, lerr
		}
		hasFM = true
	}

	r = &Rule{
		Severity: SeverityMedium,
		Scope:    ScopeFile,
		Enabled:  true,
		File:     file,
		Line:     1,
		Body:     strings.TrimSpace(body),
		BodyLine: bodyLine,
		textLine: bodyLine + leadingLines(body),
	}
	d := decoder{file: file, offset: frontMatterFirstLine - 1, lenient: lenient, src: strings.Split(string(content), "\n")}
	if hasFM {
		var doc yaml.Node
		if err := yaml.Unmarshal(fm, &doc); err != nil {
			line, msg := yamlErrorPosition(err, fm)
			return nil, nil, &LoadError{File: file, Line: line + frontMatterFirstLine - 1, Column: 1, Msg: "invalid YAML in front matter: " + msg}
		}
		if lerr := d.decodeFrontMatter(&doc, r); lerr != nil {
			// Every error of the front matter, not only the first.
			return nil, d.more, lerr
		}
	}
	if r.UUID == "" {
		r.UUID = "path:" + file
	}
	instrBody := body
	if r.Title == "" {
		// Only the lenient mode gets here: the strict one requires a title.
		var at int
		r.Title, at = titleFromHeading(body)
		if r.Title != "" {
			// A heading that opens the body is the rule's title, not
			// part of its instructions.
			if at == leadingLines(body) {
				instrBody = dropLine(body, at)
			}
		} else {
			r.Title = titleFromFileName(file)
		}
	}
	r.Instructions, r.Examples = parseBody(instrBody)
	return r, d.warnings, nil
}

// normalizeText drops a UTF-8 byte order mark and turns CRLF line endings
// into LF, so that every reader sees the same text and line numbers.
func normalizeText(content []byte) []byte {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	if bytes.Contains(content, []byte("\r\n")) {
		content = bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))
	}
	return content
}

// leadingLines counts the line breaks in the white space that TrimSpace
// removes from the start of s.
func leadingLines(s string) int {
	return strings.Count(s[:len(s)-len(strings.TrimLeft(s, " \t\r\n"))], "\n")
}

func startsWithDelimiter(content []byte) bool {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	return isDelimiter(first)
}

// titleFromHeading returns the text of the first Markdown heading of body
// that is not one of the sections of the rule format ("Instructions",
// "Examples"), and the index of its line; "" when there is none.
func titleFromHeading(body string) (string, int) {
	lines, _ := scanMarkdown(body)
	for i, l := range lines {
		if l.level == 0 || l.heading == "" {
			continue
		}
		switch strings.ToLower(l.heading) {
		case "instructions", "instruction", "examples", "example":
			continue
		}
		return cutTitle(l.heading), i
	}
	return "", -1
}

// dropLine returns s without its line i (0-based).
func dropLine(s string, i int) string {
	lines := strings.Split(s, "\n")
	if i < 0 || i >= len(lines) {
		return s
	}
	return strings.Join(slices.Delete(lines, i, i+1), "\n")
}

// titleFromFileName makes a title of a file name: "no-console-log.md"
// becomes "No console log".
func titleFromFileName(file string) string {
	name := path.Base(file)
	for ext := path.Ext(name); ext != "" && ext != name; ext = path.Ext(name) {
		name = strings.TrimSuffix(name, ext)
	}
	name = strings.TrimLeft(name, ".")
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == ' ' }), " ")
	if name == "" {
		return path.Base(file)
	}
	rs := []rune(name)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

// splitFrontMatter separates the YAML between the opening and closing "---"
// lines from the Markdown body. bodyLine is the 1-based line where the body
// starts.
func splitFrontMatter(file string, content []byte) (fm []byte, body string, bodyLine int, lerr *LoadError) {
	content = normalizeText(content)
	const hint = `a rule file starts with a "---" line, then YAML keys (at least "title: ..."), then a closing "---" line`
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, "", 0, &LoadError{File: file, Line: 1, Column: 1, Msg: "empty rule file: " + hint}
	}
	first, rest, _ := bytes.Cut(content, []byte("\n"))
	if !isDelimiter(first) {
		return nil, "", 0, &LoadError{File: file, Line: 1, Column: 1, Msg: "missing front matter: " + hint}
	}
	line := 1
	off := 0
	for off <= len(rest) {
		next := bytes.IndexByte(rest[off:], '\n')
		end := len(rest)
		if next >= 0 {
			end = off + next
		}
		line++
		if isDelimiter(rest[off:end]) {
			after := ""
			if next >= 0 {
				after = string(rest[end+1:])
			}
			return rest[:off], after, line + 1, nil
		}
		if next < 0 {
			break
		}
		off = end + 1
	}
	return nil, "", 0, &LoadError{File: file, Line: 1, Column: 1,
		Msg: `unterminated front matter: no closing "---" line after the opening one; add a "---" line after the last YAML key`}
}

// isDelimiter reports whether a line is "---", allowing trailing spaces and
// the "\r" of a CRLF file.
func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

var yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// yamlErrorPosition turns an error of the YAML library into a 1-based line
// of the front matter and a message without the library's prefix. The
// library omits the line when it is the first one, and reports some errors
// with no line at all; those are located in the source where possible.
func yamlErrorPosition(err error, fm []byte) (int, string) {
	if n, msg, ok := yamlpos.LibraryLine(err); ok {
		n = min(max(n, 1), bytes.Count(fm, []byte("\n"))+1)
		n = tabLine(msg, fm, n)
		return n, msg + yamlHint(msg, fm, n)
	}
	s := err.Error()
	if m := yamlAnchorRE.FindStringSubmatch(s); m != nil {
		msg := fmt.Sprintf("unknown alias *%s (no anchor &%s defined before it); quote the value if the \"*\" is meant literally", m[1], m[1])
		for i, l := range strings.Split(string(fm), "\n") {
			if strings.Contains(l, "*"+m[1]) {
				return i + 1, msg
			}
		}
		return 1, msg
	}
	msg := strings.TrimPrefix(s, "yaml: ")
	return 1, msg + yamlHint(msg, fm, 1)
}

// tabLine moves the line of a "tab character" error to the first line, from
// line on, that is indented with a tab: the library reports the line of the
// value the tab interrupted, which may be the one above.
func tabLine(msg string, data []byte, line int) int {
	if !strings.Contains(msg, "tab character") {
		return line
	}
	lines := strings.Split(string(data), "\n")
	for i := max(line, 1) - 1; i < len(lines); i++ {
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		if strings.Contains(indent, "\t") {
			return i + 1
		}
	}
	return line
}

// yamlHint adds the likely fix to the YAML library's terse messages, for the
// mistakes rule authors make most: tabs, unquoted globs and regular
// expressions, and backslashes inside double quotes.
func yamlHint(msg string, fm []byte, line int) string {
	lines := strings.Split(string(fm), "\n")
	src := ""
	if line-1 < len(lines) {
		src = lines[line-1]
	}
	switch {
	case strings.Contains(msg, "tab character") || strings.HasPrefix(strings.TrimLeft(src, " "), "\t"):
		return "; indent with spaces, YAML does not allow tabs"
	case strings.Contains(msg, "unknown escape character"):
		return `; inside double quotes a backslash starts an escape, so write regular expressions in single quotes ('\d+')`
	case strings.Contains(msg, "did not find expected alphabetic or numeric character"):
		return `; a value starting with "*" or "&" must be quoted, as in path: "**/*.go"`
	case strings.Contains(msg, "cannot start any token"):
		return "; quote values that start with @, ` or %"
	case strings.Contains(msg, "mapping values are not allowed"):
		return `; check the indentation, and quote values that contain ": "`
	}
	return ""
}

// decoder turns the YAML nodes of a front matter or of a Kodus YAML rule
// into Rule fields, reporting the position of the offending node for every
// problem.
type decoder struct {
	file string
	// src is the file's text, split into lines as the parser saw them
	// (BOM and CR removed), which turns the YAML parser's columns
	// (characters) into the byte columns of a LoadError; nil keeps them.
	src []string
	// offset is added to a node's line to make it a line of the file: 1
	// for front matter (the "---" line comes first), 0 for a YAML file.
	offset int
	// lenient accepts a front matter without a title.
	lenient bool
	// known are the keys decodeMapping understands besides the common
	// ones, and quiet the keys it keeps in Extra without a warning.
	known map[string]bool
	quiet map[string]bool
	// warnings collects the problems that do not stop the rule from
	// loading, and more the errors of a mapping after its first (which
	// decodeMapping returns), so that each is reported.
	warnings []*LoadError
	more     []*LoadError
}

// The keys of a Kody Markdown front matter, which a Kodus YAML rule has
// too. Some keys have aliases that
// real rule files use; they are decoded as the canonical key.
var (
	commonKeys = []string{"title", "uuid", "severity", "severity_min", "path", "scope", "enabled", "languages", "buckets", "detector", "inheritance"}
	keyAliases = map[string]string{
		"paths":        "path",
		"language":     "languages",
		"severity-min": "severity_min",
		"severitymin":  "severity_min",
		"bucket":       "buckets",
	}
)

func (d *decoder) line(n *yaml.Node) int { return n.Line + d.offset }

func (d *decoder) errAt(n *yaml.Node, format string, args ...any) *LoadError {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line = d.line(n)
		col = d.column(line, n.Column)
	}
	return &LoadError{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// column turns the YAML parser's column of a node on the file's 1-based
// line, which counts characters, into the 1-based byte column a LoadError
// carries.
func (d *decoder) column(line, chars int) int {
	chars = max(chars, 1)
	if line < 1 || line > len(d.src) {
		return chars
	}
	s := d.src[line-1]
	n := 1
	for i := range s {
		if n == chars {
			return i + 1
		}
		n++
	}
	// Past the end of the line (the parser's own counting went further).
	return len(s) + 1 + chars - n
}

func (d *decoder) warnAt(n *yaml.Node, format string, args ...any) {
	w := d.errAt(n, format, args...)
	w.Warning = true
	d.warnings = append(d.warnings, w)
}

func (d *decoder) decodeFrontMatter(doc *yaml.Node, r *Rule) *LoadError {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			root = nil
		} else {
			root = yamlpos.Deref(root.Content[0])
		}
	}
	if root == nil || root.Kind == 0 || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		if d.lenient {
			return nil
		}
		return &LoadError{File: d.file, Line: 1, Column: 1, Msg: `front matter is empty: add at least "title: ..."`}
	}
	if root.Kind != yaml.MappingNode {
		return d.errAt(root, `front matter must be a YAML mapping of keys such as "title: ...", not a %s`, kindName(root))
	}
	titleSeen, lerr := d.decodeMapping(root, r, nil)
	if lerr != nil {
		return lerr
	}
	if !titleSeen && !d.lenient {
		return &LoadError{File: d.file, Line: 1, Column: 1, Msg: `missing required key "title" in front matter; add "title: <what the rule enforces>"`}
	}
	return nil
}

// decodeMapping decodes the keys of one rule's mapping into r. A key that
// is neither common nor in d.known is handed to other, when not nil, and
// otherwise kept in r.Extra with a warning. It reports whether the mapping
// has a title key.
func (d *decoder) decodeMapping(m *yaml.Node, r *Rule, other func(key string, k, v *yaml.Node) (bool, *LoadError)) (titleSeen bool, _ *LoadError) {
	seen := map[string]*yaml.Node{}
	var sevSeen bool
	var first *LoadError
	fail := func(lerr *LoadError) {
		if first == nil {
			first = lerr
		} else {
			d.more = append(d.more, lerr)
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], yamlpos.Deref(m.Content[i+1])
		raw := strings.TrimSpace(k.Value)
		key := strings.ToLower(raw)
		if c, ok := keyAliases[key]; ok {
			key = c
		}
		if prev, ok := seen[key]; ok {
			fail(d.errAt(k, "duplicate key %q (first set on line %d); keep only one", k.Value, d.line(prev)))
			continue
		}
		seen[key] = k
		var lerr *LoadError
		switch key {
		case "title":
			titleSeen = true
			lerr = d.title(k, v, r)
		case "uuid":
			var s string
			if s, lerr = d.scalar(k, v, "uuid"); lerr == nil {
				r.UUID = strings.TrimSpace(s)
				r.uuidLine, r.uuidColumn = d.line(k), d.column(d.line(k), k.Column)
			}
		case "severity":
			sevSeen = true
			var sev Severity
			if sev, lerr = d.severity(k, v, "severity"); lerr == nil && sev != "" {
				r.Severity = sev
			}
		case "severity_min":
			r.SeverityMin, lerr = d.severity(k, v, "severity_min")
		case "path":
			lerr = d.paths(k, v, r)
		case "scope":
			lerr = d.scope(k, v, r)
		case "enabled":
			lerr = d.enabled(k, v, r)
		case "languages":
			r.Languages, lerr = d.stringList(k, v, "languages")
		case "buckets":
			r.Buckets, lerr = d.stringList(k, v, "buckets")
		case "detector":
			lerr = d.detector(k, v, r)
		case "inheritance":
			r.Inheritance = decodeAny(v)
		default:
			handled := false
			if other != nil {
				handled, lerr = other(key, k, v)
			}
			if !handled && lerr == nil {
				d.keepExtra(raw, k, v, r)
			}
		}
		if lerr != nil {
			fail(lerr)
		}
	}
	if first != nil {
		return false, first
	}
	// "severity_min" stands for the severity when there is none: rule
	// files synced from the platform carry only the minimum.
	if !sevSeen && r.SeverityMin != "" {
		r.Severity = r.SeverityMin
	}
	return titleSeen, nil
}

// keepExtra keeps an unknown key's value in r.Extra and warns about it
// unless it is one the source expects (the Kodus platform's metadata).
func (d *decoder) keepExtra(raw string, k, v *yaml.Node, r *Rule) {
	if r.Extra == nil {
		r.Extra = map[string]any{}
	}
	r.Extra[raw] = decodeAny(v)
	if d.quiet[strings.ToLower(raw)] {
		return
	}
	known := slices.Clone(commonKeys)
	for key := range d.known {
		known = append(known, key)
	}
	slices.Sort(known)
	d.warnAt(k, "unknown key %q is kept but not used; the keys kodyls reads are %s", raw, strings.Join(known, ", "))
}

// decodeAny decodes a node into plain Go values (string, bool, int,
// float64, []any, map[string]any); nil when it cannot.
func decodeAny(v *yaml.Node) any {
	if v == nil {
		return nil
	}
	var out any
	if err := v.Decode(&out); err != nil {
		return v.Value
	}
	return out
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "value"
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "single value"
	}
	return "value"
}

// scalar returns the text of a scalar value, rejecting lists and mappings
// where one value is expected. A null value yields "".
func (d *decoder) scalar(k, v *yaml.Node, name string) (string, *LoadError) {
	if v == nil || v.Kind != yaml.ScalarNode {
		return "", d.errAt(valueOrKey(k, v), "%s must be a single value, not a %s", name, kindName(v))
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return v.Value, nil
}

func valueOrKey(k, v *yaml.Node) *yaml.Node {
	if v != nil && v.Line > 0 {
		return v
	}
	return k
}

func (d *decoder) title(k, v *yaml.Node, r *Rule) *LoadError {
	s, lerr := d.scalar(k, v, "title")
	if lerr != nil {
		return lerr
	}
	r.Title = strings.TrimSpace(s)
	if r.Title == "" && !d.lenient {
		return d.errAt(k, "title is empty; say in a few words what the rule enforces")
	}
	return nil
}

// severity decodes a severity value; "" for an empty one, which keeps the
// default.
func (d *decoder) severity(k, v *yaml.Node, name string) (Severity, *LoadError) {
	s, lerr := d.scalar(k, v, name)
	if lerr != nil {
		return "", lerr
	}
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	sev, ok := ParseSeverity(s)
	if !ok {
		return "", d.errAt(valueOrKey(k, v), "invalid %s %q: use one of critical, high, medium, low", name, s)
	}
	return sev, nil
}

func (d *decoder) scope(k, v *yaml.Node, r *Rule) *LoadError {
	s, lerr := d.scalar(k, v, "scope")
	if lerr != nil {
		return lerr
	}
	if strings.TrimSpace(s) == "" {
		return nil
	}
	sc, ok := ParseScope(s)
	if !ok {
		return d.errAt(valueOrKey(k, v), "invalid scope %q: use file or pull_request", s)
	}
	r.Scope = sc
	return nil
}

func (d *decoder) enabled(k, v *yaml.Node, r *Rule) *LoadError {
	if v == nil || v.Kind != yaml.ScalarNode {
		return d.errAt(valueOrKey(k, v), "enabled must be true or false, not a %s", kindName(v))
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return d.errAt(v, "enabled must be true or false, not %q", v.Value)
	}
	r.Enabled = b
	return nil
}

// stringList accepts either one value or a list of values.
func (d *decoder) stringList(k, v *yaml.Node, name string) ([]string, *LoadError) {
	if v == nil {
		return nil, nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" {
			return nil, nil
		}
		return []string{strings.TrimSpace(v.Value)}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			item = yamlpos.Deref(item)
			if item == nil || item.Kind != yaml.ScalarNode {
				return nil, d.errAt(valueOrKey(v, item), "every entry of %s must be a single value, not a %s", name, kindName(item))
			}
			s := strings.TrimSpace(item.Value)
			if s == "" || item.Tag == "!!null" {
				return nil, d.errAt(item, "%s has an empty entry; remove it", name)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, d.errAt(valueOrKey(k, v), "%s must be a value or a list of values, not a %s", name, kindName(v))
}

func (d *decoder) paths(k, v *yaml.Node, r *Rule) *LoadError {
	list, lerr := d.stringList(k, v, "path")
	if lerr != nil {
		return lerr
	}
	// Point at the offending list item when there is a list.
	itemNode := func(i int) *yaml.Node {
		if v.Kind == yaml.SequenceNode && i < len(v.Content) {
			return v.Content[i]
		}
		return valueOrKey(k, v)
	}
	// Every bad pattern is reported, not only the first: the first is
	// the rule's error, the others go with the file's further errors.
	var first *LoadError
	for i, p := range list {
		p = normalizePattern(p)
		glob := strings.TrimPrefix(p, "!")
		var lerr *LoadError
		switch {
		case glob == "":
			lerr = d.errAt(itemNode(i), "path pattern %q matches nothing; write a glob such as \"src/**/*.go\"", list[i])
		case !doublestar.ValidatePattern(glob):
			lerr = d.errAt(itemNode(i), "invalid path glob %q: check for unbalanced [ ] or { } and a trailing \\", list[i])
		}
		switch {
		case lerr == nil:
			list[i] = p
		case first == nil:
			first = lerr
		default:
			d.more = append(d.more, lerr)
		}
	}
	if first != nil {
		return first
	}
	r.Paths = list
	return nil
}

func (d *decoder) detector(k, v *yaml.Node, r *Rule) *LoadError {
	if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return d.errAt(valueOrKey(k, v), "detector must be a mapping with type, pattern and optional flags and replace, not a %s", kindName(v))
	}
	var (
		typ, pattern, flags, replace           string
		typNode, patKey, flagsNode, replaceKey *yaml.Node
		hasType, hasPattern, hasFlags, hasFix  bool
		seen                                   = map[string]*yaml.Node{}
	)
	for i := 0; i+1 < len(v.Content); i += 2 {
		dk, dv := v.Content[i], yamlpos.Deref(v.Content[i+1])
		key := strings.ToLower(strings.TrimSpace(dk.Value))
		if prev, ok := seen[key]; ok {
			return d.errAt(dk, "duplicate detector key %q (first set on line %d); keep only one", dk.Value, d.line(prev))
		}
		seen[key] = dk
		s, lerr := d.scalar(dk, dv, "detector."+key)
		if lerr != nil && (key == "type" || key == "pattern" || key == "flags" || key == "replace") {
			return lerr
		}
		switch key {
		case "type":
			typ, typNode, hasType = s, valueOrKey(dk, dv), true
		case "pattern":
			pattern, patKey, hasPattern = s, dk, true
		case "flags":
			flags, flagsNode, hasFlags = strings.TrimSpace(s), valueOrKey(dk, dv), true
		case "replace":
			replace, replaceKey, hasFix = s, dk, true
		default:
			return d.errAt(dk, "unknown detector key %q: a detector has type, pattern, flags and replace", dk.Value)
		}
	}
	if !hasType {
		return d.errAt(k, `detector has no "type"; set type: regex`)
	}
	t, err := checkDetectorType(typ)
	if err != nil {
		return d.errAt(typNode, "%s", err.Error())
	}
	if !hasPattern || pattern == "" {
		at := k
		if hasPattern {
			at = patKey
		}
		return d.errAt(at, `detector has no "pattern"; set pattern: '<regular expression>' (single quotes keep backslashes as they are)`)
	}
	if hasFlags {
		if err := checkFlags(flags); err != nil {
			return d.errAt(flagsNode, "%s", err.Error())
		}
	}
	re, err := compilePattern(pattern, flags)
	if err != nil {
		// The key's line is reported rather than the value's because a
		// block scalar value starts on the next line, and the key is what
		// the author looks for.
		return d.errAt(patKey, "%s", err.Error())
	}
	if hasFix {
		if err := checkReplace(re, replace); err != nil {
			return d.errAt(replaceKey, "%s", err.Error())
		}
	}
	r.Detector = &Detector{Type: t, Pattern: pattern, Flags: flags, Replace: replace, HasFix: hasFix, re: re, pf: newPrefilter(re)}
	return nil
}
