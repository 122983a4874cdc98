package rules

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
)

// Source is one kind of rule file kodyls reads from a workspace: the Kody
// Markdown files, the Kodus YAML files, the instruction files of other
// assistants. A source may own directory trees as well as single files at
// the workspace root.
//
// The watcher, doctor, the CLI and the server ask a Registry of sources
// which paths hold rules, so that a new kind of rule file is added in one
// place.
type Source interface {
	// Name identifies the source in reports, such as "kody-md".
	Name() string
	// Owns reports whether rel, a workspace-relative slash-separated path,
	// is a file this source reads or a directory it reads files from. It
	// looks at the path only, never at the disk, so that it also answers
	// for files that were just removed.
	Owns(rel string) bool
	// WatchPaths are the workspace-relative directories and files the
	// source reads from, whether they exist or not. Watchers also watch
	// their parent directories, so that creating one is noticed.
	WatchPaths() []string
	// Load reads the source's rules from the workspace ws, whose FS is
	// the root opened through os.Root so that no path can lead outside
	// it; no file on its ignore list is read. Rule.File and
	// LoadError.File are workspace-relative slash-separated paths. A broken
	// file yields a *LoadError and never stops the others from loading;
	// problems that do not stop a rule from loading are LoadErrors with
	// Warning set. When ctx is cancelled Load stops early and returns what
	// it has.
	Load(ctx context.Context, ws Workspace) ([]*Rule, []*LoadError)
}

// Workspace is the workspace a Source reads its rules from.
type Workspace struct {
	// FS is the workspace root, opened through os.Root so that no path
	// can lead outside it.
	FS fs.FS
	// Ignore is the workspace's ignore list, gate.ForConfig of its
	// kodus-config.yml: rule text goes into prompts, so a rule file, a
	// reference or an import on its privacy list is not read, and the
	// search for nested instruction files skips what the review skips.
	// nil: the built-in lists without ignorePaths.
	Ignore *gate.Gate
}

// workspaceOf is the Workspace of fsys, the workspace root opened through
// os.Root, with the ignore list of its kodus-config.yml. The problems of
// that file are the review's to report (kodyls doctor, the editor); a
// reference it refuses says why.
func workspaceOf(fsys fs.FS) Workspace {
	g, _ := gate.ForConfig(kodusconfig.LoadFS(fsys))
	return Workspace{FS: fsys, Ignore: g}
}

// gate is the ignore list in force.
func (ws Workspace) gate() *gate.Gate {
	if ws.Ignore != nil {
		return ws.Ignore
	}
	return pathGate
}

// Registry is an ordered list of rule sources. Earlier sources win when two
// rules share a uuid.
type Registry struct {
	sources []Source
}

// NewRegistry returns a registry of the given sources, in priority order.
func NewRegistry(sources ...Source) *Registry {
	return &Registry{sources: slices.Clone(sources)}
}

// DefaultRegistry returns the sources kodyls knows, the team's own Kody
// Rules first so that they win a uuid shared with an imported rule.
func DefaultRegistry() *Registry {
	srcs := []Source{KodyMarkdown{}, KodyYAML{}, KodyYAML{Memories: true}}
	for _, a := range AssistantSources() {
		srcs = append(srcs, a)
	}
	return NewRegistry(srcs...)
}

// Sources returns the registry's sources in priority order.
func (r *Registry) Sources() []Source { return slices.Clone(r.sources) }

// Report is what Registry.LoadReport read: the rules, the errors of the
// files that are broken, and the warnings that did not stop anything from
// loading.
type Report struct {
	Rules    []*Rule
	Errors   []*LoadError
	Warnings []*LoadError
}

// Load reads every source's rules from the workspace at root, as
// LoadReport does, and returns the rules and the errors; warnings are left
// out, so that every LoadError it returns is a broken rule file.
func (r *Registry) Load(ctx context.Context, root string) (rules []*Rule, errs []*LoadError) {
	rep := r.LoadReport(ctx, root)
	return rep.Rules, rep.Errors
}

// LoadReport reads every source's rules from the workspace at root. Rules
// come sorted by File and Line (rules of one file otherwise keep their
// source's order) with Source set to the name of the source that read them
// and their references resolved; errors and warnings come sorted by File
// and Line. A uuid already used by an earlier rule (earlier source first,
// then File order) drops the later rule with an error, since two rules
// with one id would be indistinguishable in reviews and suppressions.
//
// When ctx is cancelled LoadReport stops early and returns what it has
// loaded so far; callers that care check ctx.Err().
func (r *Registry) LoadReport(ctx context.Context, root string) Report {
	var rep Report
	if ctx.Err() != nil {
		return rep
	}
	// One os.Root for all the sources: none of them can read outside the
	// workspace, whatever symbolic links it holds.
	ws, err := os.OpenRoot(root)
	if err != nil {
		rep.Errors = []*LoadError{{File: ".", Msg: fmt.Sprintf("cannot open workspace root: %v", err)}}
		return rep
	}
	defer ws.Close()
	// The ignore list is read with the rules, from the same root, so a
	// change of kodus-config.yml applies at the next reload.
	w := workspaceOf(ws.FS())
	var problems []*LoadError
	for _, src := range r.sources {
		if ctx.Err() != nil {
			break
		}
		rs, es := src.Load(ctx, w)
		slices.SortStableFunc(rs, byFile)
		for _, rule := range rs {
			rule.Source = src.Name()
		}
		rep.Rules = append(rep.Rules, rs...)
		problems = append(problems, es...)
	}
	kept, dupErrs := dropDuplicateUUIDs(rep.Rules)
	rep.Rules = kept
	problems = append(problems, dupErrs...)
	slices.SortStableFunc(rep.Rules, byFile)
	real := map[string]string{}
	realFile := func(file string) string {
		r, ok := real[file]
		if !ok {
			r = linkTarget(w.FS, file)
			real[file] = r
		}
		return r
	}
	for _, rule := range rep.Rules {
		if ctx.Err() != nil {
			break
		}
		problems = append(problems, resolveReferences(w, rule)...)
		rule.RealFile = realFile(rule.File)
	}
	for _, p := range problems {
		// A broken file behind a link is fixed in the file it leads to.
		p.RealFile = realFile(p.File)
		if p.Warning {
			rep.Warnings = append(rep.Warnings, p)
		} else {
			rep.Errors = append(rep.Errors, p)
		}
	}
	byPosition := func(a, b *LoadError) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	}
	slices.SortStableFunc(rep.Errors, byPosition)
	slices.SortStableFunc(rep.Warnings, byPosition)
	return rep
}

// Owns reports whether one of the sources owns rel, a workspace-relative
// path.
func (r *Registry) Owns(rel string) bool {
	_, ok := r.SourceOf(rel)
	return ok
}

// SourceOf returns the first source that owns rel, a workspace-relative
// path.
func (r *Registry) SourceOf(rel string) (Source, bool) {
	rel = normalizeRelPath(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, false
	}
	for _, src := range r.sources {
		if src.Owns(rel) {
			return src, true
		}
	}
	return nil, false
}

// WatchPaths returns the watch paths of every source, without repeats, in
// source order.
func (r *Registry) WatchPaths() []string {
	var out []string
	for _, src := range r.sources {
		for _, p := range src.WatchPaths() {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func byFile(a, b *Rule) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	return a.Line - b.Line
}

// dropDuplicateUUIDs keeps the first rule of every uuid and reports the
// others.
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
