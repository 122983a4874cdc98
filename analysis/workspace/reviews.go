package workspace

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/review"
)

// ErrStale is returned by [Reviews.Run] when the document changed while it
// was reviewed: the review was cancelled and its result discarded.
var ErrStale = errors.New("the buffer changed during the review; its result was discarded")

// Reviews keeps the review findings of the open documents, each tied to
// the document version its spans refer to, and moves them with the edits.
// It is the editor's review state; `kodyls review` has no buffers and
// calls [Folder.Review] directly.
type Reviews struct {
	mu      sync.Mutex
	docs    map[string]*docReview
	running int
}

type docReview struct {
	cancel   context.CancelFunc // the running review; nil when none
	seq      uint64             // identifies the running review
	runningV int32              // the version the running review is for
	call     *reviewCall        // the running review, for others of its version to join
	findings []filereview.Finding
	version  int32 // the version the findings' spans refer to
}

// NewReviews returns an empty review state.
func NewReviews() *Reviews { return &Reviews{docs: map[string]*docReview{}} }

func (r *Reviews) doc(uri string) *docReview {
	d := r.docs[uri]
	if d == nil {
		d = &docReview{}
		r.docs[uri] = d
	}
	return d
}

// Running is the number of reviews in progress.
func (r *Reviews) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// Run reviews a snapshot, cancelling an older review of the same document,
// and keeps the findings unless a newer review started or [Reviews.Follow]
// saw a newer version meanwhile (then the error is ErrStale). A review of
// the version already being reviewed joins the running one (a save, then
// "review this file", then "review the workspace" cost one review).
func (r *Reviews) Run(ctx context.Context, snap *Snapshot) (filereview.Result, error) {
	r.mu.Lock()
	d := r.doc(snap.URI)
	if c := d.call; c != nil && c.version == snap.Version {
		r.mu.Unlock()
		select {
		case <-c.done:
			if errors.Is(c.err, context.Canceled) && ctx.Err() == nil {
				// Its caller gave up on it, this one did not.
				return r.Run(ctx, snap)
			}
			return c.res, c.err
		case <-ctx.Done():
			return filereview.Result{}, ctx.Err()
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.cancel != nil {
		d.cancel()
	}
	d.seq++
	seq := d.seq
	c := &reviewCall{version: snap.Version, done: make(chan struct{})}
	d.cancel, d.runningV, d.call = cancel, snap.Version, c
	r.running++
	r.mu.Unlock()

	res, err := snap.Folder.Review(rctx, snap.ReviewInput())

	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	res, err = r.keep(ctx, rctx, d, seq, snap, res, err)
	if d.call == c {
		d.call = nil
	}
	c.res, c.err = res, err
	close(c.done)
	return res, err
}

// reviewCall is a running review that others of the same version join.
type reviewCall struct {
	version int32
	done    chan struct{}
	res     filereview.Result
	err     error
}

// keep records the result of the review seq of d when it is still the
// current one, and returns what its callers get. r.mu is held.
func (r *Reviews) keep(ctx, rctx context.Context, d *docReview, seq uint64, snap *Snapshot, res filereview.Result, err error) (filereview.Result, error) {
	current := d.seq == seq && r.docs[snap.URI] == d
	if current {
		d.cancel = nil
	}
	if err != nil && !errors.Is(err, filereview.ErrOffline) {
		if rctx.Err() != nil && ctx.Err() == nil {
			return res, ErrStale
		}
		return res, err
	}
	if !current || rctx.Err() != nil {
		return res, ErrStale
	}
	if analysisFailed(res.Degraded) && d.version == snap.Version {
		// The model could not review the changed hunks (an error, a
		// 429, garbage): what was shown there stays, moved with the
		// edits, until a review succeeds.
		res.Findings = keepShown(res.Findings, d.findings)
	}
	d.findings, d.version = res.Findings, snap.Version
	return res, err
}

// analysisFailed reports whether a review lost its analysis stage: the
// hunks it sent found nothing because the model did not answer.
func analysisFailed(degraded []string) bool {
	for _, d := range degraded {
		if strings.HasPrefix(d, review.StageAnalyze+":") {
			return true
		}
	}
	return false
}

// keepShown adds to found the findings of shown it does not have.
func keepShown(found, shown []filereview.Finding) []filereview.Finding {
	have := make(map[string]bool, len(found))
	for _, f := range found {
		have[f.ID] = true
	}
	out := append([]filereview.Finding(nil), found...)
	for _, f := range shown {
		if !have[f.ID] {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Span.Start < out[j].Span.Start })
	return out
}

// Follow moves the findings of a document to version, given the edits made
// since a version (nil, false when they are unknown): a finding whose code
// was edited is dropped until the next review, the others follow the text.
// A running review of an older version is cancelled.
func (r *Reviews) Follow(uri string, version int32, editsSince func(int32) ([]anchor.Edit, bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil {
		return
	}
	if d.cancel != nil && d.runningV < version {
		d.cancel()
		d.cancel = nil
	}
	if d.version >= version {
		return
	}
	if len(d.findings) > 0 {
		edits, ok := editsSince(d.version)
		kept := d.findings[:0]
		if ok {
			for _, f := range d.findings {
				if span, ok := anchor.Track(f.Span, edits); ok {
					f.Span = span
					kept = append(kept, f)
				}
			}
		}
		d.findings = kept
	}
	d.version = version
}

// Findings returns a copy of the findings of a document and the version
// their spans refer to.
func (r *Reviews) Findings(uri string) ([]filereview.Finding, int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil {
		return nil, 0
	}
	return append([]filereview.Finding(nil), d.findings...), d.version
}

// Find returns a finding by id and the version its span refers to.
func (r *Reviews) Find(uri, id string) (filereview.Finding, int32, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.docs[uri]; d != nil {
		for _, f := range d.findings {
			if f.ID == id {
				return f, d.version, true
			}
		}
	}
	return filereview.Finding{}, 0, false
}

// Add appends findings computed for a version of a document (the
// pull-request rules' violations) to its findings. It reports false, and
// adds nothing, when the document's findings are for another version.
func (r *Reviews) Add(uri string, version int32, fs []filereview.Finding) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil || d.version != version {
		return false
	}
	seen := map[string]bool{}
	for _, f := range d.findings {
		seen[f.ID] = true
	}
	for _, f := range fs {
		if !seen[f.ID] {
			d.findings = append(d.findings, f)
		}
	}
	return true
}

// Remove drops the findings of a document that drop reports, and says how
// many there were.
func (r *Reviews) Remove(uri string, drop func(filereview.Finding) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil {
		return 0
	}
	kept := d.findings[:0]
	for _, f := range d.findings {
		if !drop(f) {
			kept = append(kept, f)
		}
	}
	n := len(d.findings) - len(kept)
	d.findings = kept
	return n
}

// Link copies the cluster links (duplicates, duplicate-of) of findings by
// id onto a document's findings.
func (r *Reviews) Link(uri string, linked map[string]filereview.Finding) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil {
		return
	}
	for i, f := range d.findings {
		if l, ok := linked[f.ID]; ok {
			d.findings[i].Duplicates, d.findings[i].DuplicateOf = l.Duplicates, l.DuplicateOf
		}
	}
}

// Forget drops a document's state (it was closed) and cancels its review.
func (r *Reviews) Forget(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.docs[uri]; d != nil && d.cancel != nil {
		d.cancel()
	}
	delete(r.docs, uri)
}
