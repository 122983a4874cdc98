package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var builtinFS embed.FS

// BuiltinSource is the Source of a prompt that comes with kodyls.
const BuiltinSource = "builtin"

// Prompt describes one prompt of a Set.
type Prompt struct {
	Name    string
	Version int
	// Purpose is the one-line purpose from the header.
	Purpose string
	// Source is BuiltinSource or the workspace-relative path of the
	// override, such as ".kody/prompts/review_analyze_user.tmpl".
	Source string
}

// Rendered is a prompt rendered with data. Callers key caches by (Name,
// Version, Text): the version alone does not cover the data, and the text
// alone does not say which prompt produced it.
type Rendered struct {
	Name    string
	Version int
	Text    string
	Source  string
}

// Set is the prompts of one workspace: the builtins, with the workspace's
// overrides in place of the builtins they replace, and the workspace's
// kodus-config texts. A Set does not change once loaded and is safe for
// concurrent use.
type Set struct {
	prompts   map[string]*prompt
	overrides Overrides // merged with the defaults
	// err is why loading failed, for a Set that lacks prompts it should
	// have. Render reports it when asked for a prompt it does not have.
	err error
}

type prompt struct {
	Prompt
	tmpl *template.Template
	// src is the template source, hashed by the version check.
	src []byte
}

var builtin = func() *Set {
	sub, err := fs.Sub(builtinFS, "templates")
	if err != nil {
		return &Set{prompts: map[string]*prompt{}, overrides: defaults.merged(), err: err}
	}
	s, err := Load(sub)
	s.err = errors.Join(err, defaultsErr)
	return s
}()

// Builtin returns the prompts embedded in kodyls with the default texts.
// They are parsed when the package is initialised; the package's tests fail
// if any is broken, so in a released binary none is. The Set is shared: it
// is never modified.
func Builtin() *Set { return builtin }

// Load parses the *.tmpl files at the root of fsys as builtin prompts: each
// must start with a complete header whose name is its file name. It returns
// every well-formed prompt together with an error describing all the files
// that were not, so one broken file does not hide the others' problems.
func Load(fsys fs.FS) (*Set, error) {
	s := &Set{prompts: map[string]*prompt{}, overrides: defaults.merged()}
	files, err := fs.Glob(fsys, "*.tmpl")
	if err != nil {
		return s, fmt.Errorf("prompts: %w", err)
	}
	if len(files) == 0 {
		return s, errors.New("prompts: no *.tmpl files found")
	}
	slices.Sort(files)
	var errs []error
	seen := map[string]string{} // prompt name → file that declared it
	for _, file := range files {
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			errs = append(errs, fmt.Errorf("prompts: %w", err))
			continue
		}
		h, err := parseBuiltinHeader(src)
		if err != nil {
			errs = append(errs, fmt.Errorf("prompts: %s:1: %w", file, err))
			continue
		}
		if prev, dup := seen[h.Name]; dup {
			errs = append(errs, fmt.Errorf("prompts: %s:1: duplicate prompt name %q, also declared in %s", file, h.Name, prev))
			continue
		}
		seen[h.Name] = file
		if want := strings.TrimSuffix(path.Base(file), ".tmpl"); h.Name != want {
			errs = append(errs, fmt.Errorf("prompts: %s:1: header name %q differs from the file name; rename one so both say the same", file, h.Name))
			continue
		}
		t, err := parseTemplate(h.Name, src)
		if err != nil {
			errs = append(errs, fmt.Errorf("prompts: %s:%d: %s", file, templateErrorLine(h.Name, err), templateErrorMsg(h.Name, err)))
			continue
		}
		s.prompts[h.Name] = &prompt{
			Prompt: Prompt{Name: h.Name, Version: h.Version, Purpose: h.Purpose, Source: BuiltinSource},
			tmpl:   t,
			src:    src,
		}
	}
	return s, errors.Join(errs...)
}

// parseTemplate parses a prompt template. name appears in the template
// package's error messages, so an override is named by its path.
func parseTemplate(name string, src []byte) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Funcs(funcs).Parse(string(src))
}

// List returns the prompts sorted by name.
func (s *Set) List() []Prompt {
	out := make([]Prompt, 0, len(s.prompts))
	for _, p := range s.prompts {
		out = append(out, p.Prompt)
	}
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Get returns the prompt of that name.
func (s *Set) Get(name string) (Prompt, bool) {
	p, ok := s.prompts[name]
	if !ok {
		return Prompt{}, false
	}
	return p.Prompt, true
}

// Digest is a hash of the named prompt's template text ("" for a name the
// Set lacks): an override edited without a new header version has
// another.
func (s *Set) Digest(name string) string {
	p, ok := s.prompts[name]
	if !ok {
		return ""
	}
	d := sha256.Sum256(p.src)
	return hex.EncodeToString(d[:8])
}

// Overrides returns the workspace's kodus-config texts merged with the
// defaults: every category and severity level has its text. The maps are
// the caller's to keep.
func (s *Set) Overrides() Overrides { return s.overrides.clone() }

// Render executes the named prompt with data, which should be the prompt's
// data type (see Example). A key missing from a map, a field missing from a
// struct, or an unknown prompt name is an error. A data struct whose
// Overrides field is left zero gets the Set's overrides, so callers cannot
// silently lose the workspace's kodus-config by forgetting to pass it.
//
// The text loses its leading blank lines and trailing white space; nothing
// else is touched, since it carries code whose blank lines and spaces
// matter.
func (s *Set) Render(name string, data any) (Rendered, error) {
	p, ok := s.prompts[name]
	if !ok {
		err := fmt.Errorf("prompts: unknown prompt %q (known: %s)", name, strings.Join(s.names(), ", "))
		if s.err != nil {
			err = fmt.Errorf("%w; loading failed: %w", err, s.err)
		}
		return Rendered{}, err
	}
	text, err := execute(p.tmpl, withOverrides(data, s.overrides))
	if err != nil {
		return Rendered{}, fmt.Errorf("prompts: render %s (%s): %w", name, p.Source, err)
	}
	return Rendered{Name: name, Version: p.Version, Text: text, Source: p.Source}, nil
}

func execute(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return trimBlank(b.String()), nil
}

// trimBlank removes the blank lines at the start of s, and the white space
// at its end, which the template's actions and header leave behind. The
// indentation of the first line stays: it may be code.
func trimBlank(s string) string {
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	return strings.TrimRight(s, " \t\r\n")
}

func (s *Set) names() []string {
	names := make([]string, 0, len(s.prompts))
	for n := range s.prompts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var overridesType = reflect.TypeFor[Overrides]()

// withOverrides returns data with o in its Overrides field when data is a
// struct, or a pointer to one, whose Overrides field is zero. The caller's
// value is copied, never modified.
func withOverrides(data any, o Overrides) any {
	v := reflect.ValueOf(data)
	ptr := v.Kind() == reflect.Pointer
	if ptr {
		if v.IsNil() {
			return data
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return data
	}
	f, ok := v.Type().FieldByName("Overrides")
	if !ok || f.Type != overridesType || !f.IsExported() || len(f.Index) != 1 || !v.Field(f.Index[0]).IsZero() {
		return data
	}
	cp := reflect.New(v.Type())
	cp.Elem().Set(v)
	cp.Elem().Field(f.Index[0]).Set(reflect.ValueOf(o.clone()))
	if ptr {
		return cp.Interface()
	}
	return cp.Elem().Interface()
}

// rendersOverrides reports whether the data type of a prompt carries
// Overrides, i.e. whether its text depends on kodus_defaults.yml.
func rendersOverrides(data any) bool {
	t := reflect.TypeOf(data)
	if t == nil {
		return false
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	f, ok := t.FieldByName("Overrides")
	return ok && f.Type == overridesType
}

// templateErrorLine extracts the line from an error of the template package
// about the template called name ("template: NAME:LINE: …" when parsing,
// "template: NAME:LINE:COL: executing …" when executing); 1 when it has
// none.
func templateErrorLine(name string, err error) int {
	rest, ok := strings.CutPrefix(err.Error(), "template: "+name+":")
	if !ok {
		return 1
	}
	n := 0
	for _, r := range rest {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return max(n, 1)
}

// templateErrorMsg is the message of a template error without the
// "template: NAME:LINE:COL: " prefix, which the caller reports as position.
func templateErrorMsg(name string, err error) string {
	s := err.Error()
	rest, ok := strings.CutPrefix(s, "template: "+name+":")
	if !ok {
		return s
	}
	// Skip "LINE:" and "COL:" when present.
	for range 2 {
		i := strings.IndexByte(rest, ':')
		if i <= 0 || strings.Trim(rest[:i], "0123456789") != "" {
			break
		}
		rest = rest[i+1:]
	}
	return strings.TrimSpace(rest)
}
