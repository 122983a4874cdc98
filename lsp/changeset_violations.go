package lsp

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// changeSetViolations are the pull-request rule violations the last
// workspace review found, in every changed file, open or not. An open
// buffer shows those found for its text as diagnostics (they were added to
// its review); the violations panel lists the others: files that are not
// open, files opened or closed since, whose buffer no longer carries them.
// Each check of a workspace folder replaces its entries.
type changeSetViolations struct {
	mu     sync.Mutex
	byRoot map[string]map[string][]changeSetViolation // root → absolute path → violations
	gen    map[string]uint64                          // root → the check that set them
	next   uint64
}

// changeSetViolation is one violation, located in the text the check
// judged (the buffer's, or the file on disk).
type changeSetViolation struct {
	root, rel string
	finding   filereview.Finding
	rng       protocol.Range
}

// begin numbers a check, so that a slower, older one cannot replace what a
// newer one found.
func (c *changeSetViolations) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next
}

// newChangeSetViolations locates each finding of byFile in that file's
// text from inputs.
func newChangeSetViolations(root string, byFile map[string][]filereview.Finding, inputs []filereview.Input, enc textdoc.Encoding) map[string][]changeSetViolation {
	text := make(map[string]string, len(inputs))
	for _, in := range inputs {
		text[in.Path] = in.Current
	}
	out := map[string][]changeSetViolation{}
	for rel, fs := range byFile {
		if len(fs) == 0 {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		doc := textdoc.New(string(uri.File(abs)), 0, text[rel])
		for _, f := range fs {
			rng := protocol.Range{Start: toProtocol(doc.PositionAt(f.Span.Start, enc)), End: toProtocol(doc.PositionAt(f.Span.End, enc))}
			out[abs] = append(out[abs], changeSetViolation{root: root, rel: rel, finding: f, rng: rng})
		}
	}
	return out
}

// replace sets a workspace folder's entries from the check gen and returns
// the files whose entries changed, for the panel to refresh; nothing when
// a newer check already set them.
func (c *changeSetViolations) replace(root string, gen uint64, next map[string][]changeSetViolation) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRoot == nil {
		c.byRoot = map[string]map[string][]changeSetViolation{}
	}
	if c.gen == nil {
		c.gen = map[string]uint64{}
	}
	if gen < c.gen[root] {
		return nil
	}
	prev := c.byRoot[root]
	var changed []string
	for p, vs := range next {
		if !sameViolations(prev[p], vs) {
			changed = append(changed, p)
		}
	}
	for p := range prev {
		if _, ok := next[p]; !ok {
			changed = append(changed, p)
		}
	}
	c.byRoot[root], c.gen[root] = next, gen
	sort.Strings(changed)
	return changed
}

func sameViolations(a, b []changeSetViolation) bool {
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

// drop forgets a workspace folder's entries (the folder left the
// workspace), also those a check still running would set, and returns the
// files that had entries.
func (c *changeSetViolations) drop(root string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var paths []string
	for p := range c.byRoot[root] {
		paths = append(paths, p)
	}
	delete(c.byRoot, root)
	if c.gen == nil {
		c.gen = map[string]uint64{}
	}
	// The checks begun so far are older than what replace accepts.
	c.gen[root] = c.next + 1
	sort.Strings(paths)
	return paths
}

// all returns every entry by absolute path.
func (c *changeSetViolations) all() map[string][]changeSetViolation {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]changeSetViolation{}
	for _, files := range c.byRoot {
		for p, vs := range files {
			out[p] = append(out[p], vs...)
		}
	}
	return out
}

// has reports whether there are entries for the file at path.
func (c *changeSetViolations) has(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, files := range c.byRoot {
		if len(files[path]) > 0 {
			return true
		}
	}
	return false
}

// find returns the entry with id in the file at path.
func (c *changeSetViolations) find(path, id string) (changeSetViolation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, files := range c.byRoot {
		for _, v := range files[path] {
			if v.finding.ID == id {
				return v, true
			}
		}
	}
	return changeSetViolation{}, false
}

// remove drops the entries of the file at path that drop reports, and says
// how many.
func (c *changeSetViolations) remove(path string, drop func(filereview.Finding) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, files := range c.byRoot {
		var kept []changeSetViolation
		for _, v := range files[path] {
			if drop(v.finding) {
				n++
				continue
			}
			kept = append(kept, v)
		}
		if len(kept) == 0 {
			delete(files, path)
		} else {
			files[path] = kept
		}
	}
	return n
}

// panelEntry is a change-set violation the panel lists, with the URI to
// show it under.
type panelEntry struct {
	uri uri.URI
	v   changeSetViolation
}

// changeSetPanel returns the pull-request violations the panel lists:
// those no open buffer carries (a buffer carries the ones the check found
// in its text until it is closed or reviewed again), in files that still
// exist. An open file is listed under the editor's URI for it.
func (s *Server) changeSetPanel() []panelEntry {
	open := map[string]*openDoc{}
	for _, od := range s.openDocs() {
		if od.path != "" {
			open[od.path] = od
		}
	}
	var out []panelEntry
	for path, vs := range s.changeSet.all() {
		u := s.clientURI(path)
		od := open[path]
		if od != nil {
			u = od.uri
		} else if _, err := os.Stat(path); err != nil {
			continue // deleted or renamed since the check
		}
		for _, v := range vs {
			if od != nil {
				if _, _, ok := s.reviews.Find(string(od.uri), v.finding.ID); ok {
					continue // the buffer shows it, where it is now
				}
			}
			out = append(out, panelEntry{uri: u, v: v})
		}
	}
	return out
}

// notifyChangeSetFiles tells the editor that the panel's data changed for
// the files at paths, under the URI the editor knows each by.
func (s *Server) notifyChangeSetFiles(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	open := map[string]uri.URI{}
	for _, od := range s.openDocs() {
		if od.path != "" {
			open[od.path] = od.uri
		}
	}
	uris := make([]uri.URI, 0, len(paths))
	for _, p := range paths {
		if u, ok := open[p]; ok {
			uris = append(uris, u)
		} else {
			uris = append(uris, s.clientURI(p))
		}
	}
	s.notifyViolationsChanged(ctx, uris...)
}
