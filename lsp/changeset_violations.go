package lsp

import (
	"path/filepath"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// closedViolations are the pull-request rule violations the last change-set
// check found in files that were not open: no buffer shows them as
// diagnostics, so the violations panel lists them (and they can be
// dismissed from it). Each check of a workspace replaces its entries.
type closedViolations struct {
	mu     sync.Mutex
	byRoot map[string]map[uri.URI][]closedViolation
}

// closedViolation is one violation in a file that is not open, located in
// the text the check judged (the file on disk).
type closedViolation struct {
	rel     string // relative to the workspace root
	finding filereview.Finding
	rng     protocol.Range
}

// newClosedViolations locates each finding of byFile whose file is not in
// open in that file's text from inputs.
func newClosedViolations(root string, byFile map[string][]filereview.Finding, inputs []filereview.Input, open map[string]bool, enc textdoc.Encoding) map[uri.URI][]closedViolation {
	text := make(map[string]string, len(inputs))
	for _, in := range inputs {
		text[in.Path] = in.Current
	}
	out := map[uri.URI][]closedViolation{}
	for rel, fs := range byFile {
		if open[rel] || len(fs) == 0 {
			continue
		}
		u := uri.File(filepath.Join(root, filepath.FromSlash(rel)))
		doc := textdoc.New(string(u), 0, text[rel])
		for _, f := range fs {
			rng := protocol.Range{Start: toProtocol(doc.PositionAt(f.Span.Start, enc)), End: toProtocol(doc.PositionAt(f.Span.End, enc))}
			out[u] = append(out[u], closedViolation{rel: rel, finding: f, rng: rng})
		}
	}
	return out
}

// replace sets a workspace's entries and returns the files whose entries
// changed, for the panel to refresh.
func (c *closedViolations) replace(root string, next map[uri.URI][]closedViolation) []uri.URI {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRoot == nil {
		c.byRoot = map[string]map[uri.URI][]closedViolation{}
	}
	prev := c.byRoot[root]
	var changed []uri.URI
	for u, vs := range next {
		if !sameViolations(prev[u], vs) {
			changed = append(changed, u)
		}
	}
	for u := range prev {
		if _, ok := next[u]; !ok {
			changed = append(changed, u)
		}
	}
	c.byRoot[root] = next
	sort.Slice(changed, func(i, j int) bool { return changed[i] < changed[j] })
	return changed
}

func sameViolations(a, b []closedViolation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].finding.ID != b[i].finding.ID || a[i].rng != b[i].rng {
			return false
		}
	}
	return true
}

// all returns every entry by file.
func (c *closedViolations) all() map[uri.URI][]closedViolation {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[uri.URI][]closedViolation{}
	for _, files := range c.byRoot {
		for u, vs := range files {
			out[u] = append(out[u], vs...)
		}
	}
	return out
}

// find returns the entry with id in the file u, and its workspace root.
func (c *closedViolations) find(u uri.URI, id string) (closedViolation, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for root, files := range c.byRoot {
		for _, v := range files[u] {
			if v.finding.ID == id {
				return v, root, true
			}
		}
	}
	return closedViolation{}, "", false
}

// remove drops the entries of file u that drop reports, and how many.
func (c *closedViolations) remove(u uri.URI, drop func(filereview.Finding) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, files := range c.byRoot {
		kept := files[u][:0:0]
		for _, v := range files[u] {
			if drop(v.finding) {
				n++
				continue
			}
			kept = append(kept, v)
		}
		if len(kept) == 0 {
			delete(files, u)
		} else {
			files[u] = kept
		}
	}
	return n
}
