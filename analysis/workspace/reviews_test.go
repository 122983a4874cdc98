package workspace_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/anchor"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

const reviewGo = "package main\n\nimport \"fmt\"\n\nfunc total(items []int) int {\n\tsum := 0\n\tfor i := 0; i < len(items); i++ {\n\t\tsum += items[i]\n\t}\n\treturn sum\n}\n\nfunc main() {\n\tfmt.Print(total(nil))\n}\n"

const loopHeader = "for i := 0; i <= len(items); i++ {"

// buggyGo is reviewGo with an off-by-one loop typed on line 7 and a
// trailing space after `return sum` on line 10, so both lines are changed.
var buggyGo = strings.Replace(strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1), "return sum", "return sum ", 1)

// offByOne is what the fake model suggests for the typed loop.
var offByOne = reviewtest.Suggestion{
	SuggestionContent:  "Ranging over the slice avoids the index error.",
	ExistingCode:       loopHeader,
	ImprovedCode:       "for _, it := range items {",
	OneSentenceSummary: "Use range instead of an off-by-one index loop",
	RelevantLinesStart: 7, RelevantLinesEnd: 7, Label: "bug", Severity: "high",
}

// document is the result line of total.
var document = reviewtest.Suggestion{
	SuggestionContent:  "Say what the result is.",
	ExistingCode:       "return sum",
	ImprovedCode:       "return sum // total",
	OneSentenceSummary: "Document the result",
	RelevantLinesStart: 10, RelevantLinesEnd: 10, Label: "documentation", Severity: "low",
}

// reviewed is a folder whose model is the fake endpoint.
type reviewed struct {
	fake   *llmtest.Server
	svc    *workspace.Services
	folder *workspace.Folder
}

// startReviewed scripts fake with suggestions (and analyze replies, when
// given) and returns a folder over a repository with reviewGo committed.
func startReviewed(t *testing.T, suggestions []reviewtest.Suggestion, analyze ...llmtest.Reply) *reviewed {
	t.Helper()
	fake := llmtest.NewServer()
	t.Cleanup(fake.Close)
	reviewtest.Script(fake, suggestions, analyze...)
	svc := modelServices(t, fake)
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
	return &reviewed{fake: fake, svc: svc, folder: loadFolder(t, svc, repo)}
}

// snapshot is version v of main.go holding text.
func (r *reviewed) snapshot(t *testing.T, v int32, text string) *workspace.Snapshot {
	t.Helper()
	path := filepath.Join(r.folder.Root, "main.go")
	return &workspace.Snapshot{
		URI: "file://" + filepath.ToSlash(path), Path: path, Rel: "main.go", Language: "go",
		Folder: r.folder, Version: v, Text: text,
		Baseline: baseline(t, r.folder, "main.go"), BaselineReady: true,
		Settings: r.svc.Settings(),
	}
}

// runAsync starts a review and returns where its error arrives.
func runAsync(ctx context.Context, rs *workspace.Reviews, snap *workspace.Snapshot) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := rs.Run(ctx, snap, nil)
		done <- err
	}()
	return done
}

func await(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-t.Context().Done():
	case <-time.After(wait):
	}
	t.Fatalf("%s did not return", what)
	return nil
}

func TestReviewsFollowEdits(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne})
	header := strings.Index(buggyGo, loopHeader)
	const above = "// total adds.\n"

	tests := []struct {
		name  string
		edits []anchor.Edit
		known bool
		// want is the span's new start, -1 when the finding is dropped.
		want int
	}{
		{"typing above moves the finding", []anchor.Edit{{Start: 0, End: 0, NewLen: len(above)}}, true, header + len(above)},
		{"two edits above add up", []anchor.Edit{{Start: 0, End: 0, NewLen: 3}, {Start: 1, End: 2, NewLen: 5}}, true, header + 7},
		{"deleting above moves it back", []anchor.Edit{{Start: 0, End: len("package main\n"), NewLen: 0}}, true, header - len("package main\n")},
		{"typing below leaves it", []anchor.Edit{{Start: len(buggyGo), End: len(buggyGo), NewLen: 4}}, true, header},
		{"an edit inside drops it", []anchor.Edit{{Start: header + 12, End: header + 14, NewLen: 1}}, true, -1},
		{"unknown edits drop it", nil, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []int32
			rs := workspace.NewReviews(func(_ string, since, upTo int32) ([]anchor.Edit, bool) {
				asked = append(asked, since, upTo)
				return tt.edits, tt.known
			})
			snap := r.snapshot(t, 3, buggyGo)
			res, err := rs.Run(t.Context(), snap, nil)
			if err != nil {
				t.Fatal(err)
			}
			fs, v := rs.Findings(snap.URI)
			if v != 3 || len(fs) != 1 || len(res.Findings) != 1 || fs[0].ID != res.Findings[0].ID {
				t.Fatalf("after the review: version %d, findings %+v, result %+v", v, fs, res.Findings)
			}
			if sp := fs[0].Span; buggyGo[sp.Start:sp.End] != loopHeader {
				t.Fatalf("the finding covers %q, want the loop header", buggyGo[sp.Start:sp.End])
			}
			length := fs[0].Span.End - fs[0].Span.Start

			// The same or an older version changes nothing.
			rs.Follow(snap.URI, 3)
			rs.Follow(snap.URI, 2)
			if got, v := rs.Findings(snap.URI); len(asked) != 0 || v != 3 || len(got) != 1 || got[0].Span != fs[0].Span {
				t.Fatalf("Follow to the same version asked edits since %v and left %+v at version %d", asked, got, v)
			}

			rs.Follow(snap.URI, 4)
			got, v := rs.Findings(snap.URI)
			if len(asked) != 2 || asked[0] != 3 || asked[1] != 4 || v != 4 {
				t.Fatalf("asked edits between %v, findings at version %d; want between 3 and 4, at 4", asked, v)
			}
			if tt.want < 0 {
				if len(got) != 0 {
					t.Fatalf("kept %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Span.Start != tt.want || got[0].Span.End-got[0].Span.Start != length {
				t.Fatalf("findings %+v, want one starting at %d, %d bytes long", got, tt.want, length)
			}
		})
	}
}

// suggest is the analysis answer with suggestions.
func suggest(s ...reviewtest.Suggestion) llmtest.Reply {
	return llmtest.JSON(map[string]any{"codeSuggestions": append([]reviewtest.Suggestion{}, s...)})
}

// slowly makes a reply take long enough for the test to act meanwhile.
func slowly(r llmtest.Reply) llmtest.Reply {
	r.Latency = 300 * time.Millisecond
	return r
}

// TestNewerReviewWaitsForOlder: a review asked for a newer version while
// one runs waits for it instead of cancelling it, so the hunks the older
// one sent are in the cache and not sent again; the older one's result is
// superseded.
func TestNewerReviewWaitsForOlder(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, slowly(suggest(offByOne)), suggest())
	rs := workspace.NewReviews(func(string, int32, int32) ([]anchor.Edit, bool) { return nil, true })
	older := r.snapshot(t, 1, buggyGo)
	first := runAsync(t.Context(), rs, older)
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the first review's analysis request never left")
	}
	// The buffer was saved again with a change outside the reviewed
	// hunks (here none: the text is the same).
	newer := r.snapshot(t, 2, buggyGo)
	second := make(chan error, 1)
	go func() {
		res, err := rs.Run(t.Context(), newer, nil)
		if err == nil && len(res.Findings) != 1 {
			err = errors.New("the second review lost the first one's finding")
		}
		second <- err
	}()
	if err := await(t, first, "the first review"); !errors.Is(err, workspace.ErrStale) {
		t.Fatalf("the first review returned %v, want ErrStale (superseded)", err)
	}
	if err := await(t, second, "the second review"); err != nil {
		t.Fatal(err)
	}
	if n := r.fake.Disconnects(); n != 0 {
		t.Errorf("%d requests aborted; the older review should have finished", n)
	}
	analyses := 0
	for _, q := range r.fake.ChatRequests() {
		if q.Chat.SchemaName() == review.SchemaAnalyze {
			analyses++
		}
	}
	if n := analyses; n != 1 {
		t.Errorf("%d analysis requests; the second review should find the hunk in the cache", n)
	}
	if fs, v := rs.Findings(older.URI); len(fs) != 1 || v != 2 || rs.Running() != 0 {
		t.Fatalf("findings %+v at version %d, %d running after both reviews ended", fs, v, rs.Running())
	}
}

// TestEditDuringReviewMovesItsFindings: an edit made while a review runs
// does not cancel it; its findings are kept, moved by the edits made
// meanwhile.
func TestEditDuringReviewMovesItsFindings(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, slowly(suggest(offByOne)))
	const above = "// total adds.\n"
	rs := workspace.NewReviews(func(_ string, since, upTo int32) ([]anchor.Edit, bool) {
		if since != 1 || upTo != 2 {
			return nil, false
		}
		return []anchor.Edit{{Start: 0, End: 0, NewLen: len(above)}}, true
	})
	snap := r.snapshot(t, 1, buggyGo)
	done := runAsync(t.Context(), rs, snap)
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the analysis request never left")
	}
	rs.Follow(snap.URI, 2)
	if err := await(t, done, "the review"); err != nil {
		t.Fatalf("the review of version 1 returned %v after an edit, want its findings", err)
	}
	if n := r.fake.Disconnects(); n != 0 {
		t.Errorf("%d requests aborted by the edit", n)
	}
	fs, v := rs.Findings(snap.URI)
	text := above + buggyGo
	if len(fs) != 1 || v != 2 || text[fs[0].Span.Start:fs[0].Span.End] != loopHeader {
		t.Fatalf("findings %+v at version %d, want the loop header in version 2", fs, v)
	}
}

func TestReviewsRemoveFindLinkForget(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne, document})
	rs := workspace.NewReviews(nil)
	snap := r.snapshot(t, 5, buggyGo)
	if _, err := rs.Run(t.Context(), snap, nil); err != nil {
		t.Fatal(err)
	}
	fs, _ := rs.Findings(snap.URI)
	if len(fs) != 2 || fs[0].Label != "bug" || fs[1].Label != "documentation" {
		t.Fatalf("findings %+v, want the bug and the documentation", fs)
	}
	bug, doc := fs[0], fs[1]

	// Find returns a finding by id with the version its span refers to.
	if got, v, ok := rs.Find(snap.URI, doc.ID); !ok || v != 5 || got.ID != doc.ID || got.Span != doc.Span {
		t.Fatalf("Find(%s) = %+v, %d, %v", doc.ID, got, v, ok)
	}
	if _, _, ok := rs.Find(snap.URI, "no-such-id"); ok {
		t.Fatal("Find of an unknown id succeeded")
	}
	if _, _, ok := rs.Find("file:///elsewhere.go", bug.ID); ok {
		t.Fatal("Find in an unknown document succeeded")
	}

	// Link copies the cluster links by id and leaves the others.
	dups := []review.DuplicateRef{{ID: "x", File: "other.go", LinesStart: 3, LinesEnd: 4}}
	rs.Link(snap.URI, map[string]filereview.Finding{bug.ID: {Suggestion: review.Suggestion{Duplicates: dups, DuplicateOf: "primary"}}})
	fs, _ = rs.Findings(snap.URI)
	if len(fs[0].Duplicates) != 1 || fs[0].Duplicates[0] != dups[0] || fs[0].DuplicateOf != "primary" ||
		fs[1].Duplicates != nil || fs[1].DuplicateOf != "" || fs[0].Span != bug.Span {
		t.Fatalf("after Link: %+v", fs)
	}
	rs.Link("file:///elsewhere.go", map[string]filereview.Finding{bug.ID: {}}) // no document: nothing happens

	// Remove drops what the function reports, and counts it.
	if n := rs.Remove(snap.URI, func(f filereview.Finding) bool { return f.Label == "style" }); n != 0 {
		t.Fatalf("Remove of no match removed %d", n)
	}
	if n := rs.Remove(snap.URI, func(f filereview.Finding) bool { return f.ID == bug.ID }); n != 1 {
		t.Fatalf("Remove removed %d, want 1", n)
	}
	if fs, v := rs.Findings(snap.URI); len(fs) != 1 || fs[0].ID != doc.ID || v != 5 {
		t.Fatalf("after Remove: %+v at version %d", fs, v)
	}
	if n := rs.Remove("file:///elsewhere.go", func(filereview.Finding) bool { return true }); n != 0 {
		t.Fatalf("Remove in an unknown document removed %d", n)
	}

	// Findings hands out a copy.
	fs, _ = rs.Findings(snap.URI)
	fs[0].Label = "changed"
	if got, _, _ := rs.Find(snap.URI, doc.ID); got.Label != "documentation" {
		t.Fatal("changing the slice Findings returned changed the state")
	}

	// Forget drops the document's state.
	rs.Forget(snap.URI)
	if fs, v := rs.Findings(snap.URI); fs != nil || v != 0 {
		t.Fatalf("after Forget: %+v at version %d", fs, v)
	}
	rs.Forget(snap.URI) // twice is harmless
}

func TestForgetCancelsRunningReview(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, llmtest.Reply{Hang: true})
	rs := workspace.NewReviews(nil)
	snap := r.snapshot(t, 1, buggyGo)
	done := runAsync(t.Context(), rs, snap)
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the analysis request never left")
	}
	rs.Forget(snap.URI)
	if err := await(t, done, "the review"); !errors.Is(err, workspace.ErrStale) {
		t.Fatalf("the review of a closed document returned %v, want ErrStale", err)
	}
	if fs, v := rs.Findings(snap.URI); fs != nil || v != 0 || rs.Running() != 0 {
		t.Fatalf("the closed document has findings %+v at version %d, %d running", fs, v, rs.Running())
	}
}

// TestCancelledWaiterLeavesTheRunningReviewItsFindings: a review of a
// newer version that gives up while it waits supersedes nothing: the
// running review keeps its findings.
func TestCancelledWaiterLeavesTheRunningReviewItsFindings(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, slowly(suggest(offByOne)))
	rs := workspace.NewReviews(func(string, int32, int32) ([]anchor.Edit, bool) { return nil, true })
	first := runAsync(t.Context(), rs, r.snapshot(t, 1, buggyGo))
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the analysis request never left")
	}
	ctx, cancel := context.WithCancel(t.Context())
	second := runAsync(ctx, rs, r.snapshot(t, 2, buggyGo))
	cancel()
	if err := await(t, second, "the waiting review"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled waiting review returned %v", err)
	}
	if err := await(t, first, "the running review"); err != nil {
		t.Fatalf("the running review returned %v after a waiter gave up, want its findings", err)
	}
	if fs, _ := rs.Findings(r.snapshot(t, 1, buggyGo).URI); len(fs) != 1 {
		t.Fatalf("findings %+v, want the running review's", fs)
	}
}

// TestSupersededWaiterEndsAtOnce: of the reviews waiting for a running
// one, those a newer request supersedes end at once (an editor shows
// each as a progress report) instead of when the running one ends; only
// the review that starts says so through started.
func TestSupersededWaiterEndsAtOnce(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, llmtest.Reply{Hang: true})
	rs := workspace.NewReviews(func(string, int32, int32) ([]anchor.Edit, bool) { return nil, true })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	started := make(chan int32, 4)
	run := func(v int32) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := rs.Run(ctx, r.snapshot(t, v, buggyGo), func() { started <- v })
			done <- err
		}()
		return done
	}
	first := run(1)
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the analysis request never left")
	}
	second := run(2)
	third := run(3)
	if err := await(t, second, "the superseded review"); !errors.Is(err, workspace.ErrStale) {
		t.Fatalf("the superseded review returned %v while the first still runs, want ErrStale", err)
	}
	cancel()
	await(t, first, "the first review")
	await(t, third, "the third review")
	if got := <-started; got != 1 || len(started) != 0 {
		t.Errorf("started for version %d (and %d more); want only the first, the others never ran", got, len(started))
	}
}

// TestLateOlderReviewIsStale: a review of an older version that reaches
// Run while a newer version is reviewed (its baseline read was slow) asks
// the model nothing and leaves the newer findings in place.
func TestLateOlderReviewIsStale(t *testing.T) {
	r := startReviewed(t, []reviewtest.Suggestion{offByOne}, slowly(suggest(offByOne)), suggest(document))
	rs := workspace.NewReviews(func(string, int32, int32) ([]anchor.Edit, bool) { return nil, true })
	newer := runAsync(t.Context(), rs, r.snapshot(t, 2, buggyGo))
	if !r.fake.WaitSchema(review.SchemaAnalyze, 1, wait) {
		t.Fatal("the analysis request never left")
	}
	older := runAsync(t.Context(), rs, r.snapshot(t, 1, buggyGo+"\n// older\n"))
	if err := await(t, newer, "the newer review"); err != nil {
		t.Fatal(err)
	}
	if err := await(t, older, "the older review"); !errors.Is(err, workspace.ErrStale) {
		t.Fatalf("the late older review returned %v, want ErrStale", err)
	}
	analyses := 0
	for _, q := range r.fake.ChatRequests() {
		if q.Chat.SchemaName() == review.SchemaAnalyze {
			analyses++
		}
	}
	if analyses != 1 {
		t.Errorf("%d analysis requests, want the newer review's only", analyses)
	}
	if fs, v := rs.Findings(r.snapshot(t, 2, buggyGo).URI); len(fs) != 1 || fs[0].Label != "bug" || v != 2 {
		t.Errorf("findings %+v at version %d, want the newer review's bug at 2", fs, v)
	}
}
