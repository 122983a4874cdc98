package workspace

import (
	"context"
	"errors"
	"strings"

	"github.com/kodustech/kodyls/analysis/changes"
)

// BaselineFallback says that a file's baseline could not be read at the
// revision the settings name, and what the file is compared with instead.
type BaselineFallback struct {
	// Ref is the revision asked for (the baseRef setting).
	Ref string
	// Reason is why it could not be read, in git's words where git gave
	// them (an unknown revision, a repository git refuses to use, no git).
	Reason string
	// HEAD is set when the file is compared with HEAD instead (Ref names no
	// commit); otherwise git cannot read the repository at all and the
	// file is compared with its content on disk when it was loaded, as a
	// file outside any repository is.
	HEAD bool
}

// LoadBaseline reads and caches the baseline of a file at ref, as the
// editor compares buffers with it. When ref names no commit, the file is
// compared with HEAD; when git cannot read the repository at all, with its
// content on disk now. Either way the returned fallback says so, and the
// lines the user did not touch are not all reported as changed. The error
// is only ctx's.
func (f *Folder) LoadBaseline(ctx context.Context, absPath, ref string) (changes.Baseline, *BaselineFallback, error) {
	b, err := f.Engine.RefreshBaseline(ctx, absPath, ref)
	if err == nil {
		return b, nil, nil
	}
	if ctx.Err() != nil {
		return b, nil, ctx.Err()
	}
	fb := &BaselineFallback{Ref: ref, Reason: baselineReason(err, absPath)}
	if ref != "HEAD" && errors.Is(err, changes.ErrUnknownRevision) {
		hb, herr := f.Engine.RefreshBaseline(ctx, absPath, "HEAD")
		if herr == nil {
			fb.HEAD = true
			return hb, fb, nil
		}
		if ctx.Err() != nil {
			return hb, nil, ctx.Err()
		}
		fb.Reason = baselineReason(herr, absPath)
	}
	return f.Engine.UseDiskBaseline(absPath), fb, nil
}

// baselineReason is a baseline error without the file it was read for, so
// that one cause reads the same for every file of a repository.
func baselineReason(err error, absPath string) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "baseline of "+absPath+": ")
	msg = strings.TrimPrefix(msg, "load baseline: ")
	msg = strings.TrimPrefix(msg, "find repository: ")
	return msg
}
