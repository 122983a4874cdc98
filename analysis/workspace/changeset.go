package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/langid"
)

// ChangeSet is the folder's whole change against base, as the pull-request
// rules judge it: every file git lists as changed in the working tree
// (untracked ones included; see changes.ChangedFiles), read from disk with
// its baseline, where open (the editor's buffers, with their unsaved text
// and their baselines) replaces the disk's version of a file. An open file
// git does not list (changed in its buffer only) is part of the set too.
// Open inputs come first, in their order, then the others in git's order.
//
// A renamed or moved file is compared with its origin (see
// changes.ListChanges). A listed file that cannot be read or has no
// baseline (deleted since, a submodule, a nested repository, a symbolic
// link leading out of the folder) is left out; only
// a failure to list the change set, or the end of ctx, is an error. Files
// the review gate skips are left to the check, which skips them.
func (f *Folder) ChangeSet(ctx context.Context, base string, open []filereview.Input) ([]filereview.Input, error) {
	listed, err := changes.ListChanges(ctx, f.Root, base, false, nil)
	if err != nil {
		return nil, fmt.Errorf("the change set of %s: %w", f.Root, err)
	}
	out := make([]filereview.Input, 0, len(open)+len(listed))
	seen := make(map[string]bool, len(open)+len(listed))
	for _, in := range open {
		if !seen[in.Path] {
			seen[in.Path] = true
			out = append(out, in)
		}
	}
	if len(listed) == 0 {
		return out, nil
	}
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return nil, fmt.Errorf("the change set of %s: %w", f.Root, err)
	}
	defer root.Close()
	for _, c := range listed {
		rel := c.Path
		if c.Submodule() || c.NestedRepo() || seen[rel] {
			continue
		}
		seen[rel] = true
		data, err := root.ReadFile(filepath.FromSlash(rel))
		if err != nil {
			f.s.log.Debug("changed file left out of the change set", "file", rel, "error", err)
			continue
		}
		from := ""
		if c.From != "" {
			from = filepath.Join(f.Root, filepath.FromSlash(c.From))
		}
		b, err := changes.LoadRenamed(ctx, filepath.Join(f.Root, filepath.FromSlash(rel)), base, from)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			f.s.log.Debug("changed file without a baseline left out of the change set", "file", rel, "error", err)
			continue
		}
		out = append(out, filereview.Input{Path: rel, Language: langid.Of(rel), Base: ReviewBase(b), Current: string(data)})
	}
	return out, ctx.Err()
}
