package rules

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Source is one kind of rule file kodyls reads from a workspace: the Kody
// Markdown files today; the Kodus YAML files and the instruction files of
// other assistants next. A source may own directory trees as well as single
// files at the workspace root.
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
	// Load reads the source's rules from fsys, the workspace root opened
	// through os.Root so that no path can lead outside it. Rule.File and
	// LoadError.File are workspace-relative slash-separated paths. A broken
	// file yields a *LoadError and never stops the others from loading.
	// When ctx is cancelled Load stops early and returns what it has.
	Load(ctx context.Context, fsys fs.FS) ([]*Rule, []*LoadError)
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

// DefaultRegistry returns the sources kodyls knows.
func DefaultRegistry() *Registry {
	return NewRegistry(KodyMarkdown{})
}

// Sources returns the registry's sources in priority order.
func (r *Registry) Sources() []Source { return slices.Clone(r.sources) }

// Load reads every source's rules from the workspace at root. Rules come
// sorted by File (rules of one file keep their source's order) with Source
// set to the name of the source that read them; errors come sorted by File
// and Line. A uuid already used by an earlier rule (earlier source first,
// then File order) drops the later rule with a *LoadError, since two rules
// with one id would be indistinguishable in reviews and suppressions.
//
// When ctx is cancelled Load stops early and returns what it has loaded so
// far; callers that care check ctx.Err().
func (r *Registry) Load(ctx context.Context, root string) (rules []*Rule, errs []*LoadError) {
	if ctx.Err() != nil {
		return nil, nil
	}
	// One os.Root for all the sources: none of them can read outside the
	// workspace, whatever symbolic links it holds.
	ws, err := os.OpenRoot(root)
	if err != nil {
		return nil, []*LoadError{{File: ".", Msg: fmt.Sprintf("cannot open workspace root: %v", err)}}
	}
	defer ws.Close()
	fsys := ws.FS()
	for _, src := range r.sources {
		if ctx.Err() != nil {
			break
		}
		rs, es := src.Load(ctx, fsys)
		slices.SortStableFunc(rs, byFile)
		for _, rule := range rs {
			rule.Source = src.Name()
		}
		rules = append(rules, rs...)
		errs = append(errs, es...)
	}
	rules, dupErrs := dropDuplicateUUIDs(rules)
	errs = append(errs, dupErrs...)
	slices.SortStableFunc(rules, byFile)
	slices.SortStableFunc(errs, func(a, b *LoadError) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return rules, errs
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

func byFile(a, b *Rule) int { return strings.Compare(a.File, b.File) }

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
