package lsp

import (
	"context"

	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/workspace"
)

// capChange applies each workspace folder's kodus-config.yml
// maxSuggestions, when it caps the whole change (limitationType pr), to
// what a workspace review found, as `kodyls review` caps the change: the
// review findings of the open buffers reviewed together and the
// pull-request rule violations the panel lists for files that are not
// open. The most severe are kept (see filereview.Reviewer.CapChange); the
// others leave their buffer, or the panel, until the next review. A
// review of one file caps that file alone (filereview.Reviewer.Review).
// It returns how many findings it took from each buffer, by URI.
func (s *Server) capChange(ctx context.Context, docs []*openDoc) map[string]int {
	removed := map[string]int{}
	byFolder := map[*workspace.Folder][]*openDoc{}
	for _, od := range docs {
		byFolder[od.folder] = append(byFolder[od.folder], od)
	}
	for folder, group := range byFolder {
		if ctx.Err() != nil {
			return removed
		}
		var results []filereview.Result
		var uris []string // the buffer of each result; "" for a file not open
		var paths []string
		open := map[string]bool{}
		for _, od := range group {
			rel, _ := folder.Rel(od.path)
			findings, _ := s.reviews.Findings(string(od.uri))
			results = append(results, filereview.Result{Path: rel, Findings: findings})
			uris, paths = append(uris, string(od.uri)), append(paths, od.path)
			open[od.path] = true
		}
		for path, vs := range s.changeSet.all() {
			if open[path] {
				continue // its buffer carries what it shows
			}
			var fs []filereview.Finding
			rel := ""
			for _, v := range vs {
				if v.root == folder.Root {
					fs, rel = append(fs, v.finding), v.rel
				}
			}
			if len(fs) > 0 {
				results = append(results, filereview.Result{Path: rel, Findings: fs})
				uris, paths = append(uris, ""), append(paths, path)
			}
		}
		before := make([]int, len(results))
		for i, r := range results {
			before[i] = len(r.Findings)
		}
		results = folder.CapChange(results)
		var panel []string
		for i, r := range results {
			if len(r.Findings) == before[i] {
				continue
			}
			kept := make(map[string]bool, len(r.Findings))
			for _, f := range r.Findings {
				kept[f.ID] = true
			}
			drop := func(f filereview.Finding) bool { return !kept[f.ID] }
			// A pull-request violation capped away in a buffer also leaves
			// the panel's store, which would list it once the buffer no
			// longer shows it.
			if s.changeSet.remove(paths[i], drop) > 0 {
				panel = append(panel, paths[i])
			}
			if uris[i] == "" {
				continue
			}
			if n := s.reviews.Remove(uris[i], drop); n > 0 {
				removed[uris[i]] += n
				s.publishReview(ctx, uris[i])
			}
		}
		s.notifyChangeSetFiles(ctx, panel)
	}
	return removed
}
