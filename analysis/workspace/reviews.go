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

// ErrStale is returned by [Reviews.Run] when its result would not be
// shown: a review of a newer version of the document was asked for
// meanwhile, the document was closed, or the edits made during the review
// are not known, so its findings cannot be moved to the current text.
var ErrStale = errors.New("superseded: a review of a newer version of the buffer replaced this one (its findings show when it ends), or the buffer was closed")

// EditsFunc gives the byte edits that turned version since of a document
// into version upTo; false when they are not known (the document was
// reopened, or the versions are too old).
type EditsFunc func(uri string, since, upTo int32) ([]anchor.Edit, bool)

// Reviews keeps the review findings of the open documents, each tied to
// the document version its spans refer to, and moves them with the edits.
// It is the editor's review state; `kodyls review` has no buffers and
// calls [Folder.Review] directly.
//
// An edit does not cancel a running review: its hunks are cached when it
// ends and its findings move with the edits made meanwhile, so typing on
// after a save costs no second call for the hunks it did not touch. A
// review asked for a newer version waits for the running one, and then
// finds those hunks in the cache.
type Reviews struct {
	mu      sync.Mutex
	docs    map[string]*docReview
	running int
	edits   EditsFunc
}

type docReview struct {
	cancel  context.CancelFunc // the running review; nil when none
	call    *reviewCall        // the running review, for others of its version to join
	waiting map[int32]int      // versions asked for whose reviews have not started nor given up
	// asked is closed, and replaced, when a review is asked for, so that
	// reviews waiting for the running one see at once that a newer one
	// supersedes them.
	asked    chan struct{}
	reviewed int32 // the version of the last review that started
	findings []filereview.Finding
	version  int32 // the version the findings' spans refer to
}

// newerWanted reports whether a review of a version newer than v waits.
func (d *docReview) newerWanted(v int32) bool {
	for w, n := range d.waiting {
		if w > v && n > 0 {
			return true
		}
	}
	return false
}

// want records that a review of version v waits; the returned function
// records that it no longer does. r.mu is held for both.
func (d *docReview) want(v int32) (done func()) {
	if d.waiting == nil {
		d.waiting = map[int32]int{}
	}
	d.waiting[v]++
	if d.asked != nil {
		close(d.asked)
	}
	d.asked = make(chan struct{})
	once := false
	return func() {
		if once {
			return
		}
		once = true
		if d.waiting[v]--; d.waiting[v] <= 0 {
			delete(d.waiting, v)
		}
	}
}

// NewReviews returns an empty review state that moves findings with the
// edits edits gives (nil: findings are dropped at the first edit).
func NewReviews(edits EditsFunc) *Reviews {
	if edits == nil {
		edits = func(string, int32, int32) ([]anchor.Edit, bool) { return nil, false }
	}
	return &Reviews{docs: map[string]*docReview{}, edits: edits}
}

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

// Run reviews a snapshot and keeps the findings, moved to the version the
// document reached meanwhile. A review of the version already being
// reviewed joins the running one (a save, then "review this file", then
// "review the workspace" cost one review); a review of a newer version
// waits for the running one to end first. started, when not nil, is
// called when this call's own review starts talking to the model (not
// when it joins or waits), so that the editor shows one progress report
// per review that runs. The error is ErrStale when a review of a newer
// version was asked for (and still waits) before this one could keep its
// findings, or the document was closed.
func (r *Reviews) Run(ctx context.Context, snap *Snapshot, started func()) (filereview.Result, error) {
	r.mu.Lock()
	d := r.doc(snap.URI)
	unwant := d.want(snap.Version)
	for {
		// Stale when closed, when a newer version waits, or when a newer
		// one was reviewed already (this one reached Run late, after a
		// slow baseline read): its findings would replace newer ones.
		if r.docs[snap.URI] != d || d.newerWanted(snap.Version) || d.reviewed > snap.Version {
			unwant()
			r.mu.Unlock()
			return filereview.Result{}, ErrStale
		}
		c := d.call
		if c == nil {
			break
		}
		asked := d.asked
		r.mu.Unlock()
		select {
		case <-c.done:
			if c.version == snap.Version && !(errors.Is(c.err, context.Canceled) && ctx.Err() == nil) {
				// Joined: unless its caller gave up on it and this one did not.
				r.mu.Lock()
				unwant()
				r.mu.Unlock()
				return c.res, c.err
			}
		case <-asked: // a review was asked for: is this one superseded?
		case <-ctx.Done():
			r.mu.Lock()
			unwant()
			r.mu.Unlock()
			return filereview.Result{}, ctx.Err()
		}
		r.mu.Lock()
	}
	unwant()
	d.reviewed = snap.Version
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &reviewCall{version: snap.Version, done: make(chan struct{})}
	d.cancel, d.call = cancel, c
	r.running++
	r.mu.Unlock()

	if started != nil {
		started()
	}
	var res filereview.Result
	var err error
	if why := snap.Skipped(); why == GitIgnored {
		// Not in the change set: `kodyls review` leaves it out too. (The
		// file gate's verdicts are the reviewer's own.)
		res = filereview.Result{Path: snap.Rel, Skipped: why}
	} else {
		res, err = snap.Folder.Review(rctx, snap.ReviewInput())
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	res, err = r.keep(ctx, rctx, d, snap, res, err)
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

// keep records the result of the running review of d, moved to the
// version the document reached meanwhile, and returns what its callers
// get. r.mu is held.
func (r *Reviews) keep(ctx, rctx context.Context, d *docReview, snap *Snapshot, res filereview.Result, err error) (filereview.Result, error) {
	current := r.docs[snap.URI] == d
	if current {
		d.cancel = nil
	}
	if err != nil && !errors.Is(err, filereview.ErrOffline) {
		if rctx.Err() != nil && ctx.Err() == nil {
			return res, ErrStale
		}
		return res, err
	}
	if !current || rctx.Err() != nil || d.newerWanted(snap.Version) {
		return res, ErrStale
	}
	at := max(d.version, snap.Version)
	found, ok := r.move(snap.URI, res.Findings, snap.Version, at)
	if !ok {
		return res, ErrStale
	}
	if shown, ok := r.move(snap.URI, d.findings, d.version, at); ok && analysisFailed(res.Degraded) {
		// The model could not review the changed hunks (an error, a
		// 429, garbage): what was shown there stays, moved with the
		// edits, until a review succeeds.
		found = keepShown(found, shown)
	}
	res.Findings = found
	d.findings, d.version = found, at
	return res, err
}

// move moves findings computed for version from of a document to version
// to: a finding whose code was edited is dropped, the others follow the
// text. It reports false when the edits are not known.
func (r *Reviews) move(uri string, fs []filereview.Finding, from, to int32) ([]filereview.Finding, bool) {
	if from == to || len(fs) == 0 {
		return fs, true
	}
	edits, ok := r.edits(uri, from, to)
	if !ok {
		return nil, false
	}
	var kept []filereview.Finding
	for _, f := range fs {
		if span, ok := anchor.Track(f.Span, edits); ok {
			f.Span = span
			kept = append(kept, f)
		}
	}
	return kept, true
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

// Follow moves the findings of a document to version: a finding whose
// code was edited is dropped until the next review, the others follow the
// text. It does not touch a running review, whose findings are moved when
// it ends.
func (r *Reviews) Follow(uri string, version int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.docs[uri]
	if d == nil || d.version >= version {
		return
	}
	d.findings, _ = r.move(uri, d.findings, d.version, version)
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
