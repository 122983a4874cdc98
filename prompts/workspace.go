package prompts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// OverridesDir is where a workspace keeps its prompt overrides, relative to
// the workspace root.
const OverridesDir = ".kody/prompts"

// maxFileSize bounds the override and config files read: a prompt larger
// than this is a mistake (a file copied to the wrong place), and reading it
// whole into every request would be a worse one.
const maxFileSize = 1 << 20

// Problem is something wrong with a workspace's prompt files. Problems never
// stop loading: whatever is wrong is left out and the builtin or default
// stays in force.
type Problem struct {
	// File is workspace-relative and slash-separated.
	File string
	// Line is 1-based; 0 when the problem concerns the file as a whole.
	Line int
	Msg  string
	// Warning marks a file that was ignored because it does not apply, such
	// as an override for a prompt that does not exist, as opposed to one
	// that applies but is broken.
	Warning bool
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// LoadWorkspace returns the builtins with the overrides of the workspace at
// root: the prompt templates in .kody/prompts and the v2PromptOverrides of
// kodus-config.yml (or .yaml). Problems are reported, sorted by file and
// line, and never stop loading. Files are read through an os.Root, so a
// symbolic link cannot pull a file from outside the workspace into a
// prompt. An empty root gives the builtins.
func LoadWorkspace(root string) (*Set, []Problem) {
	base := Builtin()
	s := &Set{prompts: maps.Clone(base.prompts), overrides: base.overrides, err: base.err}
	if root == "" {
		return s, nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return s, []Problem{{File: root, Msg: fmt.Sprintf("cannot open the workspace: %v", err)}}
	}
	defer r.Close()
	fsys := r.FS()

	var probs []Problem
	o, ps := loadKodusConfig(fsys)
	probs = append(probs, ps...)
	s.overrides = o.merged()
	probs = append(probs, s.loadOverrides(fsys)...)

	slices.SortStableFunc(probs, func(a, b Problem) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return s, probs
}

// kodusConfigNames are the names Kodus accepts for its configuration file,
// the first found being used.
var kodusConfigNames = []string{"kodus-config.yml", "kodus-config.yaml"}

func loadKodusConfig(fsys fs.FS) (Overrides, []Problem) {
	var probs []Problem
	var used string
	var o Overrides
	for _, name := range kodusConfigNames {
		data, err := readFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if used != "" {
			probs = append(probs, Problem{File: name, Msg: "ignored: " + used + " is used", Warning: true})
			continue
		}
		used = name
		if err != nil {
			probs = append(probs, Problem{File: name, Msg: err.Error()})
			continue
		}
		var ps []Problem
		o, ps = parseKodusConfig(name, data)
		probs = append(probs, ps...)
	}
	return o, probs
}

// loadOverrides replaces builtins with the templates in OverridesDir. Only
// files named *.tmpl directly in the directory count; anything else (notes,
// backups, sub-directories) is left alone.
func (s *Set) loadOverrides(fsys fs.FS) []Problem {
	ents, err := fs.ReadDir(fsys, OverridesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []Problem{{File: OverridesDir, Msg: err.Error()}}
	}
	var probs []Problem
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".tmpl")
		if !ok || e.IsDir() {
			continue
		}
		file := OverridesDir + "/" + e.Name()
		p, prob := s.loadOverride(fsys, file, name)
		if prob != nil {
			probs = append(probs, *prob)
			continue
		}
		s.prompts[name] = p
	}
	return probs
}

// loadOverride parses one override and checks that it renders the prompt's
// example data, so that a misspelt field is reported now, with its line,
// rather than failing every review later.
func (s *Set) loadOverride(fsys fs.FS, file, name string) (*prompt, *Problem) {
	base, ok := s.prompts[name]
	if !ok {
		return nil, &Problem{File: file, Warning: true,
			Msg: fmt.Sprintf("no builtin prompt is called %q, so this file is ignored (known: %s)", name, strings.Join(s.names(), ", "))}
	}
	kept := fmt.Sprintf("; the builtin %s stays in force", name)
	src, err := readFile(fsys, file)
	if err != nil {
		return nil, &Problem{File: file, Msg: err.Error() + kept}
	}
	h, found, err := parseHeader(src)
	if err != nil {
		return nil, &Problem{File: file, Line: 1, Msg: err.Error() + kept}
	}
	if found && h.Name != "" && h.Name != name {
		return nil, &Problem{File: file, Line: 1, Msg: fmt.Sprintf("header name %q differs from the file name; rename one so both say the same%s", h.Name, kept)}
	}
	t, err := parseTemplate(file, src)
	if err != nil {
		return nil, &Problem{File: file, Line: templateErrorLine(file, err), Msg: templateErrorMsg(file, err) + kept}
	}
	if ex, ok := Example(name); ok {
		if _, err := execute(t, withOverrides(ex, s.overrides)); err != nil {
			return nil, &Problem{File: file, Line: templateErrorLine(file, err),
				Msg: fmt.Sprintf("cannot render the data of %s: %s%s", name, templateErrorMsg(file, err), kept)}
		}
	}
	version := max(h.Version, 1)
	purpose := h.Purpose
	if purpose == "" {
		purpose = base.Purpose
	}
	return &prompt{
		Prompt: Prompt{Name: name, Version: 1000*version + base.Version, Purpose: purpose, Source: file},
		tmpl:   t,
		src:    src,
	}, nil
}

// readFile reads a regular file of at most maxFileSize bytes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d KiB", maxFileSize>>10)
	}
	return data, nil
}
