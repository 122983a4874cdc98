package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/workspace"
)

// checkChangeSetRules runs each folder's pull-request scope rules once over
// the folder's whole change set against the base revision, as `kodyls
// review` does: every changed file, open or not, with the open buffers'
// unsaved text in place of the disk's, in every workspace folder, one
// without open files included. A rule such as "a changed handler comes
// with its test" then sees the test even when it is not open.
// Violations are added to the open buffers they name; the violations panel
// (kodyls.ruleViolations) lists those no open buffer carries, such as the
// ones in files that are not open, until the next check. Outside a git
// repository the change set is the open buffers' changes. A file in a
// nested workspace folder is judged with that folder's rules only, as its
// buffer is reviewed, not once per folder.
func (s *Server) checkChangeSetRules(ctx context.Context, docs []*openDoc) {
	byFolder := map[*workspace.Folder][]*workspace.Snapshot{}
	for _, od := range docs {
		snap, _ := s.snapshot(string(od.uri))
		if snap == nil || snap.Folder == nil || snap.RuleFile || s.withBaseline(ctx, snap) != nil || snap.Skipped() == workspace.GitIgnored {
			continue
		}
		byFolder[od.folder] = append(byFolder[od.folder], snap)
	}
	// Every workspace folder, open files or not: its change set is on disk.
	folders := s.allFolders()
	gen := s.changeSet.begin()
	base := s.settings().BaseRef
	for _, folder := range folders {
		if ctx.Err() != nil {
			return
		}
		snaps := byFolder[folder]
		open := make([]filereview.Input, len(snaps))
		for i, snap := range snaps {
			open[i] = snap.ReviewInput()
		}
		inputs, err := folder.ChangeSet(ctx, base, open)
		if err != nil && base != "HEAD" && errors.Is(err, changes.ErrNotACommit) {
			// As the buffers are: compared with HEAD while baseRef names
			// no commit, and the user told so (in the buffers' words).
			repo := folder.Root
			if top, ok, _ := changes.RepoRoot(ctx, folder.Root); ok {
				repo = top
			}
			s.baselineFallback(&workspace.BaselineFallback{Ref: base, Reason: fmt.Sprintf("%v %q in %s", changes.ErrUnknownRevision, base, repo), HEAD: true})
			inputs, err = folder.ChangeSet(ctx, "HEAD", open)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Info("the change set is the open buffers only", "workspace", folder.Root, "error", err)
			inputs = open
		}
		inputs = s.ownedBy(folder, inputs)
		byFile, err := folder.CheckPullRequest(ctx, inputs)
		if err != nil {
			s.log.Warn("pull-request Kody Rules not checked", "workspace", folder.Root, "error", err)
			continue
		}
		for _, snap := range snaps {
			if fs := byFile[snap.Rel]; len(fs) > 0 && s.reviews.Add(snap.URI, snap.Version, fs) {
				s.publishReview(ctx, snap.URI)
			}
		}
		found := newChangeSetViolations(folder.Root, byFile, inputs, s.encoding)
		s.notifyChangeSetFiles(ctx, s.changeSet.replace(folder.Root, gen, found))
	}
}

// ownedBy keeps the inputs of folder's change set that belong to folder
// and not to a workspace folder nested inside it.
func (s *Server) ownedBy(folder *workspace.Folder, inputs []filereview.Input) []filereview.Input {
	kept := inputs[:0:0]
	for _, in := range inputs {
		if s.folderFor(filepath.Join(folder.Root, filepath.FromSlash(in.Path))) == folder {
			kept = append(kept, in)
		}
	}
	return kept
}
