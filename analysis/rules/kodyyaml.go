package rules

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/kodustech/kodyls/analysis/kodusconfig/yamlpos"
	"go.yaml.in/yaml/v3"
)

// The directories of the Kodus YAML rules, relative to the workspace root.
const (
	kodyYAMLReviewDir   = ".kody-rules/review"
	kodyYAMLMemoriesDir = ".kody-rules/memories"
)

// KodyYAML is the source of the Kodus platform's YAML rules: the *.yml and
// *.yaml files directly in .kody-rules/review, or in .kody-rules/memories
// when Memories is set (the rules Kody learned from review conversations;
// same format). A file holds one rule (a mapping) or a list of rules, with
// the keys title, rule (the instructions), severity, scope, path (a glob or
// a list), examples (a list of {snippet, isCorrect}, or {code, good}),
// uuid, enabled and inheritance, plus the keys a Kody Markdown front matter
// has.
type KodyYAML struct {
	Memories bool
}

func (s KodyYAML) dir() string {
	if s.Memories {
		return kodyYAMLMemoriesDir
	}
	return kodyYAMLReviewDir
}

// Name implements Source: "kody-yml", or "kody-memories" for the memories.
func (s KodyYAML) Name() string {
	if s.Memories {
		return "kody-memories"
	}
	return "kody-yml"
}

// WatchPaths implements Source.
func (s KodyYAML) WatchPaths() []string { return []string{s.dir()} }

// Owns implements Source: the directory itself and the YAML files directly
// in it whose names do not start with ".".
func (s KodyYAML) Owns(rel string) bool {
	rel = normalizeRelPath(rel)
	if rel == s.dir() {
		return true
	}
	name, ok := strings.CutPrefix(rel, s.dir()+"/")
	return ok && !strings.Contains(name, "/") && !strings.HasPrefix(name, ".") && isYAMLName(name)
}

func isYAMLName(name string) bool {
	ext := path.Ext(name)
	return strings.EqualFold(ext, ".yml") || strings.EqualFold(ext, ".yaml")
}

// Load implements Source. A broken file, or a broken rule of a list, is
// reported with its line; the other rules, of the same file too where the
// YAML allows it, still load.
func (s KodyYAML) Load(ctx context.Context, ws Workspace) (rules []*Rule, errs []*LoadError) {
	var parsed []*LoadError
	errs = walkRuleFiles(ctx, ws, s.dir(), false, isYAMLName, func(p string, data []byte) {
		rs, es := ParseKodyYAML(p, data)
		rules = append(rules, rs...)
		parsed = append(parsed, es...)
	})
	return rules, append(errs, parsed...)
}

// kodusMetaKeys are the keys of a rule exported from the Kodus platform
// that kodyls does not use; they are kept in Rule.Extra without a warning.
var kodusMetaKeys = map[string]bool{
	"status": true, "origin": true, "label": true, "labels": true, "type": true, "tags": true,
	"createdat": true, "updatedat": true, "created_at": true, "updated_at": true,
	"repositoryid": true, "directoryid": true, "organizationid": true, "teamid": true,
	"sourcepath": true, "sourceanchor": true, "contextreferenceid": true, "contextreferences": true,
	"reason": true, "extendedcontext": true, "why_is_this_important": true, "suggestionid": true,
}

// kodyYAMLKeys are the keys of a YAML rule besides the common ones.
var kodyYAMLKeys = map[string]bool{"rule": true, "examples": true}

// ParseKodyYAML reads one Kodus YAML rule file: a mapping (one rule), a
// list of mappings, or a mapping whose only key "rules" holds the list;
// several YAML documents are read one after the other. It returns the
// rules that loaded and the problems, warnings included. A rule without a
// uuid gets one derived from the file ("path:" and the file, followed by
// "#" and the slug of its title when the file holds a list).
func ParseKodyYAML(relFile string, content []byte) (rules []*Rule, errs []*LoadError) {
	file := normalizeRelPath(relFile)
	content = normalizeText(content)
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, []*LoadError{{File: file, Msg: "empty rule file: nothing to load; write the rule or delete the file", Warning: true}}
	}
	p := yamlRuleParser{file: file, slugs: map[string]int{}, src: strings.Split(string(content), "\n")}
	docs, lerr := decodeDocuments(file, content)
	if lerr != nil {
		// One broken rule should not hide the others of a list: read the
		// top-level items one by one, so that only the broken ones fail.
		if chunks := topLevelItems(content); len(chunks) > 1 {
			for _, c := range chunks {
				var doc yaml.Node
				if err := safeUnmarshal(c.data, &doc); err != nil {
					line, msg := yamlpos.ErrorLine(err, c.data)
					line = tabLine(msg, c.data, line)
					errs = append(errs, &LoadError{File: file, Line: line + c.line - 1, Column: 1, Msg: "invalid YAML: " + msg + yamlHint(msg, c.data, line)})
					continue
				}
				shiftLines(&doc, c.line-1)
				rs, es := p.document(&doc, true)
				rules, errs = append(rules, rs...), append(errs, es...)
			}
			return rules, errs
		}
		errs = append(errs, lerr)
	}
	list := len(docs) > 1
	for _, doc := range docs {
		rs, es := p.document(doc, list)
		rules, errs = append(rules, rs...), append(errs, es...)
	}
	return rules, errs
}

// decodeDocuments decodes every YAML document of content. On a syntax
// error it returns the documents before the broken one and the error.
func decodeDocuments(file string, content []byte) (docs []*yaml.Node, lerr *LoadError) {
	defer func() {
		if p := recover(); p != nil {
			lerr = &LoadError{File: file, Line: 1, Column: 1, Msg: fmt.Sprintf("cannot parse YAML: %v", p)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			line, msg := yamlpos.ErrorLine(err, content)
			line = tabLine(msg, content, line)
			return docs, &LoadError{File: file, Line: line, Column: 1, Msg: "invalid YAML: " + msg + yamlHint(msg, content, line)}
		}
		docs = append(docs, &doc)
	}
}

func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml: %v", p)
		}
	}()
	return yaml.Unmarshal(data, n)
}

type yamlChunk struct {
	data []byte
	line int // the 1-based line of the file on which data starts
}

// topLevelItems splits a file that is a YAML list into its items: each
// starts at a line beginning with "- " (or a lone "-") in the first column.
// Lines above the first item (comments) are left out. It returns nil when
// the file is not such a list.
func topLevelItems(content []byte) []yamlChunk {
	lines := bytes.SplitAfter(content, []byte("\n"))
	var chunks []yamlChunk
	for i, l := range lines {
		t := bytes.TrimRight(l, "\n")
		if bytes.HasPrefix(t, []byte("- ")) || string(t) == "-" {
			chunks = append(chunks, yamlChunk{line: i + 1})
		}
		if len(chunks) > 0 {
			c := &chunks[len(chunks)-1]
			c.data = append(c.data, l...)
		} else if s := bytes.TrimSpace(t); len(s) > 0 && s[0] != '#' && string(s) != "---" {
			return nil
		}
	}
	return chunks
}

// shiftLines adds n to the line of every node under doc.
func shiftLines(doc *yaml.Node, n int) {
	seen := map[*yaml.Node]bool{}
	var walk func(*yaml.Node)
	walk = func(x *yaml.Node) {
		if x == nil || seen[x] {
			return
		}
		seen[x] = true
		x.Line += n
		for _, c := range x.Content {
			walk(c)
		}
	}
	walk(doc)
}

// yamlRuleParser reads the rules of one YAML file.
type yamlRuleParser struct {
	file  string
	src   []string       // the file's lines, for byte columns (see decoder.src)
	slugs map[string]int // for ids derived from titles, against collisions
	n     int            // rules seen, for titles derived from the file name
}

// document reads the rules of one YAML document. list says whether the
// file holds several rules, so that ids derived from the file name need
// the title too.
func (p *yamlRuleParser) document(doc *yaml.Node, list bool) (rules []*Rule, errs []*LoadError) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = yamlpos.Deref(root.Content[0])
	}
	if yamlpos.IsNull(root) {
		return nil, nil
	}
	var items []*yaml.Node
	switch root.Kind {
	case yaml.MappingNode:
		if v := mappingValue(root, "rules"); v != nil && len(root.Content) == 2 && v.Kind == yaml.SequenceNode {
			items, list = v.Content, true
		} else {
			items = []*yaml.Node{root}
		}
	case yaml.SequenceNode:
		items, list = root.Content, true
	default:
		d := decoder{file: p.file, src: p.src}
		return nil, []*LoadError{d.errAt(root, "a Kodus YAML rule file holds a rule (a mapping with title: and rule:) or a list of rules, not a %s", kindName(root))}
	}
	for _, it := range items {
		r, es := p.rule(yamlpos.Deref(it), list)
		errs = append(errs, es...)
		if r != nil {
			rules = append(rules, r)
		}
	}
	return rules, errs
}

// mappingValue returns the value of key in m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(strings.TrimSpace(m.Content[i].Value), key) {
			return yamlpos.Deref(m.Content[i+1])
		}
	}
	return nil
}

// rule reads one rule's mapping. A broken rule yields its errors and nil.
func (p *yamlRuleParser) rule(m *yaml.Node, list bool) (*Rule, []*LoadError) {
	p.n++
	d := decoder{file: p.file, src: p.src, lenient: true, known: kodyYAMLKeys, quiet: kodusMetaKeys}
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, []*LoadError{d.errAt(m, "every rule of the list must be a mapping with title: and rule:, not a %s", kindName(m))}
	}
	r := &Rule{
		Severity: SeverityMedium,
		Scope:    ScopeFile,
		Enabled:  true,
		File:     p.file,
		Line:     m.Line,
	}
	var ruleText *yaml.Node
	other := func(key string, k, v *yaml.Node) (bool, *LoadError) {
		switch key {
		case "rule", "instructions":
			s, lerr := d.scalar(k, v, key)
			if lerr != nil {
				return true, lerr
			}
			ruleText = v
			r.Body = strings.TrimSpace(s)
			r.Instructions = r.Body
			r.BodyLine = v.Line
			if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				r.BodyLine++ // a block scalar starts on the next line
			}
			r.textLine = r.BodyLine
			return true, nil
		case "examples":
			var lerr *LoadError
			r.Examples, lerr = d.examples(k, v)
			return true, lerr
		}
		return false, nil
	}
	if _, lerr := d.decodeMapping(m, r, other); lerr != nil {
		return nil, append(d.warnings, lerr)
	}
	if r.Title == "" {
		switch {
		case r.Body != "":
			r.Title = firstSentence(r.Body)
		case list:
			r.Title = titleFromFileName(p.file) + " " + strconv.Itoa(p.n)
		default:
			r.Title = titleFromFileName(p.file)
		}
	}
	if ruleText == nil && r.Body == "" {
		d.warnAt(m, `rule %q has no "rule:" text, so the title alone says what to check; add rule: with the instructions`, r.Title)
	}
	// A rule the platform rejected or deleted stays off unless the file
	// turns it on explicitly.
	if st, ok := r.Extra["status"].(string); ok && mappingValue(m, "enabled") == nil {
		switch strings.ToLower(strings.TrimSpace(st)) {
		case "rejected", "deleted", "inactive", "disabled", "archived":
			r.Enabled = false
		}
	}
	if r.UUID == "" {
		r.UUID = "path:" + p.file
		if list {
			r.UUID += "#" + uniqueSlug(p.slugs, r.Title)
		}
	}
	return r, d.warnings
}

// examples decodes a rule's examples: a list of {snippet, isCorrect} (the
// platform's form) or {code, good}, or of plain snippets.
func (d *decoder) examples(k, v *yaml.Node) ([]Example, *LoadError) {
	if yamlpos.IsNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, d.errAt(valueOrKey(k, v), "examples must be a list of {snippet, isCorrect}, not a %s", kindName(v))
	}
	var out []Example
	for _, it := range v.Content {
		it = yamlpos.Deref(it)
		var ex Example
		switch {
		case it == nil:
			continue
		case it.Kind == yaml.ScalarNode:
			ex.Code = it.Value
		case it.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(it.Content); i += 2 {
				ek, ev := it.Content[i], yamlpos.Deref(it.Content[i+1])
				key := strings.ToLower(strings.TrimSpace(ek.Value))
				switch key {
				case "snippet", "code":
					s, lerr := d.scalar(ek, ev, "examples."+key)
					if lerr != nil {
						return nil, lerr
					}
					ex.Code = s
				case "iscorrect", "good", "correct", "is_correct":
					if ev == nil || ev.Kind != yaml.ScalarNode {
						return nil, d.errAt(valueOrKey(ek, ev), "examples.%s must be true or false, not a %s", ek.Value, kindName(ev))
					}
					var b bool
					if err := ev.Decode(&b); err != nil {
						return nil, d.errAt(ev, "examples.%s must be true or false, not %q", ek.Value, ev.Value)
					}
					ex.Kind = "bad"
					if b {
						ex.Kind = "good"
					}
				case "language", "lang":
					s, lerr := d.scalar(ek, ev, "examples."+key)
					if lerr != nil {
						return nil, lerr
					}
					ex.Language = strings.TrimSpace(s)
				case "description", "text", "explanation":
					s, lerr := d.scalar(ek, ev, "examples."+key)
					if lerr != nil {
						return nil, lerr
					}
					ex.Text = strings.TrimSpace(s)
				default:
					d.warnAt(ek, "unknown example key %q is ignored; an example has snippet and isCorrect", ek.Value)
				}
			}
		default:
			return nil, d.errAt(it, "every example must be a mapping with snippet and isCorrect, not a %s", kindName(it))
		}
		if ex.Code != "" && !strings.HasSuffix(ex.Code, "\n") {
			ex.Code += "\n"
		}
		out = append(out, ex)
	}
	return out, nil
}
