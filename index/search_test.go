package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

func openTestSearch(t *testing.T, dir string) (*Store, *Search) {
	t.Helper()
	st := openTestStore(t, dir)
	x, err := OpenSearch(st, dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, x
}

func mustIndex(t *testing.T, x *Search, docs ...Doc) {
	t.Helper()
	if err := x.Index(testCtx(t), docs); err != nil {
		t.Fatal(err)
	}
}

func mustCount(t *testing.T, x *Search) uint64 {
	t.Helper()
	n, err := x.Count(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustPending(t *testing.T, x *Search) int {
	t.Helper()
	n, err := x.Pending(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// topID searches for text and returns the best hit, or "" if none.
func topID(t *testing.T, x *Search, text string) (string, Hit) {
	t.Helper()
	hits, err := x.Search(testCtx(t), text, 3)
	if err != nil {
		t.Fatalf("Search(%q): %v", text, err)
	}
	if len(hits) == 0 {
		return "", Hit{}
	}
	return hits[0].ID, hits[0]
}

// holdIndex opens the index directly, as another process would, so that
// our flock conflicts with Search's (flock locks belong to the open file, so
// this works inside one process too).
func holdIndex(t *testing.T, x *Search) (release func()) {
	t.Helper()
	idx, err := bleve.Open(x.Path())
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := idx.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

var errorDocs = []Doc{
	{ID: "e1", Fields: map[string]string{
		"message":    `undefined: foo.Bar (type *T has no field or method "x")`,
		"code":       "MissingFieldOrMethod",
		"language":   "go",
		"root_cause": "the method was renamed",
	}},
	{ID: "e2", Fields: map[string]string{
		"message":  `cannot find module providing package github.com/acme/widget: import lookup disabled by -mod=vendor`,
		"code":     "BrokenImport",
		"language": "go",
	}},
	{ID: "e3", Fields: map[string]string{
		"message":  `TypeError: Cannot read properties of undefined (reading 'map')`,
		"language": "typescript",
	}},
	{ID: "e4", Fields: map[string]string{
		"message":  `error[E0382]: borrow of moved value: ` + "`v`",
		"language": "rust",
	}},
}

func TestSearchPunctuationHeavy(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	mustIndex(t, x, errorDocs...)

	id, hit := topID(t, x, `undefined: foo.Bar (type *T has no field or method "x")`)
	if id != "e1" {
		t.Fatalf("top hit = %q, want e1", id)
	}
	if hit.Score <= 0 {
		t.Errorf("score = %v", hit.Score)
	}
	if hit.Fields["root_cause"] != "the method was renamed" || hit.Fields["language"] != "go" {
		t.Errorf("stored fields = %v", hit.Fields)
	}
	// Identifiers are split on punctuation, so parts of them match.
	if id, _ := topID(t, x, "Bar"); id != "e1" {
		t.Errorf("Bar: top hit = %q, want e1", id)
	}
	if id, _ := topID(t, x, "github.com/acme/widget -mod=vendor"); id != "e2" {
		t.Errorf("import: top hit = %q, want e2", id)
	}
	if id, _ := topID(t, x, "error[E0382]: borrow of moved value: `v`"); id != "e4" {
		t.Errorf("rust: top hit = %q, want e4", id)
	}
	// Text full of query-string syntax must not be parsed as such.
	for _, q := range []string{
		`+foo -bar "unterminated`, `field:value AND (b`, `*`, `~2 ^3 \ / [a TO b]`, `message:"x"`, `)(][}{`,
	} {
		if _, err := x.Search(testCtx(t), q, 5); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	if hits, err := x.Search(testCtx(t), "   ", 5); err != nil || hits != nil {
		t.Errorf("blank search = %v, %v", hits, err)
	}
}

func TestSearchTopK(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	var docs []Doc
	for i := 0; i < 30; i++ {
		docs = append(docs, Doc{ID: fmt.Sprintf("d%d", i), Fields: map[string]string{"message": "common words here"}})
	}
	mustIndex(t, x, docs...)
	hits, err := x.Search(testCtx(t), "common", 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 7 {
		t.Errorf("len(hits) = %d, want 7", len(hits))
	}
	hits, err = x.Search(testCtx(t), "common", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 10 {
		t.Errorf("k=0: len(hits) = %d, want default 10", len(hits))
	}
}

func TestSearchIndexReplaceDeleteCount(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	mustIndex(t, x, errorDocs...)
	if n := mustCount(t, x); n != uint64(len(errorDocs)) {
		t.Errorf("Count = %d, want %d", n, len(errorDocs))
	}
	// Re-indexing an ID replaces the document.
	mustIndex(t, x, Doc{ID: "e3", Fields: map[string]string{"message": "replaced zebra"}})
	if id, _ := topID(t, x, "zebra"); id != "e3" {
		t.Errorf("top hit = %q, want e3", id)
	}
	if id, _ := topID(t, x, "properties"); id != "" {
		t.Errorf("old text of e3 still found: %q", id)
	}
	if err := x.Delete(testCtx(t), []string{"e1", "e2"}); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, x); n != 2 {
		t.Errorf("Count after delete = %d, want 2", n)
	}
	if id, _ := topID(t, x, "foo.Bar"); id != "" {
		t.Errorf("deleted doc found: %q", id)
	}
	if err := x.Index(testCtx(t), []Doc{{ID: ""}}); err == nil {
		t.Error("empty ID accepted")
	}
}

func TestSearchReopenAndSecondOpen(t *testing.T) {
	dir := t.TempDir()
	st, x := openTestSearch(t, dir)
	mustIndex(t, x, errorDocs...)
	// A second OpenSearch on an existing index must reuse it.
	y, err := OpenSearch(st, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, y); n != uint64(len(errorDocs)) {
		t.Errorf("Count = %d, want %d", n, len(errorDocs))
	}
}

func TestSearchConcurrentCreate(t *testing.T) {
	dir := t.TempDir()
	st := openTestStore(t, dir)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			_, err := OpenSearch(st, dir)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(dir, IndexDir+".tmp-*"))
	if len(matches) != 0 {
		t.Errorf("temporary build dirs left behind: %v", matches)
	}
}

func TestSearchRecreatesRemovedIndex(t *testing.T) {
	dir := t.TempDir()
	_, x := openTestSearch(t, dir)
	mustIndex(t, x, errorDocs...)
	if err := os.RemoveAll(x.Path()); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, x); n != 0 {
		t.Errorf("Count = %d after removal, want 0", n)
	}
	mustIndex(t, x, errorDocs[0])
	if id, _ := topID(t, x, "foo.Bar"); id != "e1" {
		t.Errorf("top hit = %q", id)
	}
}

// TestSearchBusyInProcess holds the index with another handle: Index and
// Delete queue, Search and Count fail with ErrBusy within the wait, and the
// queue is applied in order once the index is free.
func TestSearchBusyInProcess(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	x.lockWait = 300 * time.Millisecond
	mustIndex(t, x, errorDocs...)

	release := holdIndex(t, x)
	mustIndex(t, x, Doc{ID: "q1", Fields: map[string]string{"message": "queued version one"}})
	mustIndex(t, x, Doc{ID: "q1", Fields: map[string]string{"message": "queued version two"}})
	if err := x.Delete(testCtx(t), []string{"e4"}); err != nil {
		t.Fatal(err)
	}
	if n := mustPending(t, x); n != 3 {
		t.Errorf("Pending = %d, want 3", n)
	}
	start := time.Now()
	_, err := x.Search(testCtx(t), "queued", 5)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("Search err = %v, want ErrBusy", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Search took %s while busy", d)
	}
	if _, err := x.Count(testCtx(t)); !errors.Is(err, ErrBusy) {
		t.Errorf("Count err = %v, want ErrBusy", err)
	}
	// A caller deadline shorter than the wait is honoured.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	x.lockWait = time.Minute
	start = time.Now()
	if _, err := x.Search(ctx, "queued", 5); err == nil {
		t.Error("Search succeeded while busy")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Search ignored ctx deadline: took %s", d)
	}
	x.lockWait = 300 * time.Millisecond

	release()
	// The direct write after the queue must win over the queued versions.
	mustIndex(t, x, Doc{ID: "q1", Fields: map[string]string{"message": "direct version three"}})
	if n := mustPending(t, x); n != 0 {
		t.Errorf("Pending after release = %d, want 0", n)
	}
	if _, hit := topID(t, x, "version"); hit.ID != "q1" || hit.Fields["message"] != "direct version three" {
		t.Errorf("q1 = %+v, want the direct version", hit)
	}
	if n := mustCount(t, x); n != uint64(len(errorDocs)) { // +q1 -e4
		t.Errorf("Count = %d, want %d", n, len(errorDocs))
	}
	if id, _ := topID(t, x, "borrow moved"); id != "" {
		t.Errorf("queued delete not applied: found %q", id)
	}
}

func TestSearchCanceledContext(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.Index(ctx, errorDocs); !errors.Is(err, context.Canceled) {
		t.Errorf("Index err = %v, want context.Canceled", err)
	}
	if _, err := x.Search(ctx, "x", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Search err = %v, want context.Canceled", err)
	}
}

// TestSearchConcurrentCallers runs many operations on one Search at once:
// they take turns, and none fails.
func TestSearchConcurrentCallers(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 5; i++ {
				id := fmt.Sprintf("c%d-%d", g, i)
				if err := x.Index(ctx, []Doc{{ID: id, Fields: map[string]string{"message": token(id)}}}); err != nil {
					errs <- err
				}
				if _, err := x.Search(ctx, "anything", 3); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := mustCount(t, x); n != 40 {
		t.Errorf("Count = %d, want 40", n)
	}
}

// TestSearchQueuedCallersDoNotAddUp checks that callers waiting behind each
// other inside one process share the lock wait instead of each waiting in
// full, one after another.
func TestSearchQueuedCallersDoNotAddUp(t *testing.T) {
	_, x := openTestSearch(t, t.TempDir())
	x.lockWait = time.Second
	release := holdIndex(t, x)
	defer release()
	ctx := testCtx(t)
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Go(func() {
			if err := x.Index(ctx, []Doc{{ID: fmt.Sprint("w", g)}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Serial waits would take 6 × 1s; shared ones about 1s. The bound is
	// loose because a loaded machine slows the queue writes down too.
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("6 queued callers took %s", d)
	}
	if n := mustPending(t, x); n != 6 {
		t.Errorf("Pending = %d, want 6", n)
	}
	release()
	if n := mustCount(t, x); n != 6 {
		t.Errorf("Count = %d, want 6", n)
	}
}
