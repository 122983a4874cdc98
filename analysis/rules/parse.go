package rules

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"
	"go.yaml.in/yaml/v3"
)

// frontMatterFirstLine is the file line on which the YAML of the front
// matter starts: the opening "---" is line 1.
const frontMatterFirstLine = 2

// Parse reads one rule file. relFile is the file's workspace-relative path;
// it names the file in errors and derives the rule's id when the file has no
// uuid. The error, when not nil, is a *LoadError.
func Parse(relFile string, content []byte) (*Rule, error) {
	r, lerr := parse(normalizeRelPath(relFile), content)
	if lerr != nil {
		// Returning lerr directly would turn a nil *LoadError into a
		// non-nil error interface; this branch keeps the two apart.
		return nil, lerr
	}
	return r, nil
}

func parse(file string, content []byte) (r *Rule, lerr *LoadError) {
	// The YAML decoder is third-party code fed with user input; a panic in
	// it must become a diagnostic, not take the language server down.
	defer func() {
		if p := recover(); p != nil {
			r, lerr = nil, &LoadError{File: file, Line: 1, Column: 1, Msg: fmt.Sprintf("cannot parse front matter: %v", p)}
		}
	}()

	fm, body, bodyLine, lerr := splitFrontMatter(file, content)
	if lerr != nil {
		return nil, lerr
	}

	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		line, msg := yamlErrorPosition(err, fm)
		return nil, &LoadError{File: file, Line: line + frontMatterFirstLine - 1, Column: 1, Msg: "invalid YAML in front matter: " + msg}
	}

	r = &Rule{
		Severity: SeverityMedium,
		Scope:    ScopeFile,
		Enabled:  true,
		File:     file,
		Body:     strings.TrimSpace(body),
		BodyLine: bodyLine,
	}
	d := decoder{file: file}
	if lerr := d.decodeFrontMatter(&doc, r); lerr != nil {
		return nil, lerr
	}
	if r.UUID == "" {
		r.UUID = "path:" + file
	}
	r.Instructions, r.Examples = parseBody(body)
	return r, nil
}

// splitFrontMatter separates the YAML between the opening and closing "---"
// lines from the Markdown body. bodyLine is the 1-based line where the body
// starts.
func splitFrontMatter(file string, content []byte) (fm []byte, body string, bodyLine int, lerr *LoadError) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
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

// decoder turns the front matter's YAML nodes into Rule fields, reporting
// the position of the offending node for every problem.
type decoder struct {
	file string
}

func (d *decoder) errAt(n *yaml.Node, format string, args ...any) *LoadError {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line = n.Line + frontMatterFirstLine - 1
		col = max(n.Column, 1)
	}
	return &LoadError{File: d.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
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
		return &LoadError{File: d.file, Line: 1, Column: 1, Msg: `front matter is empty: add at least "title: ..."`}
	}
	if root.Kind != yaml.MappingNode {
		return d.errAt(root, `front matter must be a YAML mapping of keys such as "title: ...", not a %s`, kindName(root))
	}

	seen := map[string]*yaml.Node{}
	var titleSeen bool
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], yamlpos.Deref(root.Content[i+1])
		key := strings.ToLower(strings.TrimSpace(k.Value))
		if prev, ok := seen[key]; ok {
			return d.errAt(k, "duplicate key %q (first set on line %d); keep only one", k.Value, prev.Line+frontMatterFirstLine-1)
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
				r.uuidLine, r.uuidColumn = k.Line+frontMatterFirstLine-1, k.Column
			}
		case "severity":
			lerr = d.severity(k, v, r)
		case "path":
			lerr = d.paths(k, v, r)
		case "scope":
			lerr = d.scope(k, v, r)
		case "enabled":
			lerr = d.enabled(k, v, r)
		case "languages":
			r.Languages, lerr = d.stringList(k, v, "languages")
		case "detector":
			lerr = d.detector(k, v, r)
		default:
			// Unknown keys are accepted: rules synced from the Kodus
			// platform may carry metadata this version does not use.
		}
		if lerr != nil {
			return lerr
		}
	}
	if !titleSeen {
		return &LoadError{File: d.file, Line: 1, Column: 1, Msg: `missing required key "title" in front matter; add "title: <what the rule enforces>"`}
	}
	return nil
}

func kindName(n *yaml.Node) string {
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
	if r.Title == "" {
		return d.errAt(k, "title is empty; say in a few words what the rule enforces")
	}
	return nil
}

func (d *decoder) severity(k, v *yaml.Node, r *Rule) *LoadError {
	s, lerr := d.scalar(k, v, "severity")
	if lerr != nil {
		return lerr
	}
	if strings.TrimSpace(s) == "" {
		return nil // an empty value keeps the default
	}
	sev, ok := ParseSeverity(s)
	if !ok {
		return d.errAt(valueOrKey(k, v), "invalid severity %q: use one of critical, high, medium, low", s)
	}
	r.Severity = sev
	return nil
}

func (d *decoder) scope(k, v *yaml.Node, r *Rule) *LoadError {
	s, lerr := d.scalar(k, v, "scope")
	if lerr != nil {
		return lerr
	}
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case "":
	case ScopeFile, ScopePullRequest:
		r.Scope = sc
	default:
		return d.errAt(valueOrKey(k, v), "invalid scope %q: use file or pull_request", s)
	}
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
	for i, p := range list {
		p = normalizePattern(p)
		glob := strings.TrimPrefix(p, "!")
		if glob == "" {
			return d.errAt(itemNode(i), "path pattern %q matches nothing; write a glob such as \"src/**/*.go\"", list[i])
		}
		if !doublestar.ValidatePattern(glob) {
			return d.errAt(itemNode(i), "invalid path glob %q: check for unbalanced [ ] or { } and a trailing \\", list[i])
		}
		list[i] = p
	}
	r.Paths = list
	return nil
}

func (d *decoder) detector(k, v *yaml.Node, r *Rule) *LoadError {
	if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return d.errAt(valueOrKey(k, v), "detector must be a mapping with type, pattern and optional flags, not a %s", kindName(v))
	}
	var (
		typ, pattern, flags           string
		typNode, patKey, flagsNode    *yaml.Node
		hasType, hasPattern, hasFlags bool
		seen                          = map[string]*yaml.Node{}
	)
	for i := 0; i+1 < len(v.Content); i += 2 {
		dk, dv := v.Content[i], yamlpos.Deref(v.Content[i+1])
		key := strings.ToLower(strings.TrimSpace(dk.Value))
		if prev, ok := seen[key]; ok {
			return d.errAt(dk, "duplicate detector key %q (first set on line %d); keep only one", dk.Value, prev.Line+frontMatterFirstLine-1)
		}
		seen[key] = dk
		s, lerr := d.scalar(dk, dv, "detector."+key)
		if lerr != nil && (key == "type" || key == "pattern" || key == "flags") {
			return lerr
		}
		switch key {
		case "type":
			typ, typNode, hasType = s, valueOrKey(dk, dv), true
		case "pattern":
			pattern, patKey, hasPattern = s, dk, true
		case "flags":
			flags, flagsNode, hasFlags = strings.TrimSpace(s), valueOrKey(dk, dv), true
		default:
			return d.errAt(dk, "unknown detector key %q: a detector has type, pattern and flags", dk.Value)
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
	r.Detector = &Detector{Type: t, Pattern: pattern, Flags: flags, re: re}
	return nil
}
