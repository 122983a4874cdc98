package index

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdingHistory opens the history in dir as the server does, records an
// error with word in its message and looks it up, so that the history
// holds the index. holding reports whether it still does.
func holdingHistory(t *testing.T, dir, word string) (h *LocalHistory, holding func() bool) {
	t.Helper()
	ctx := testCtx(t)
	h, err := OpenHistory(ctx, openTestStore(t, dir), HistoryOptions{RequireIndex: true, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	mustRecord(t, h, goErr("/ws", "fp-"+word, "undefined: "+word))
	if hits, err := h.Search(ctx, "", word, 5); err != nil || len(hits) != 1 {
		t.Fatalf("search for %s = %+v, %v", word, hits, err)
	}
	holding = func() bool {
		h.x.take()
		defer h.x.give()
		return h.x.held != nil
	}
	if !holding() {
		t.Fatal("the history does not hold the index after a lookup")
	}
	return h, holding
}

// TestHeldIndexYieldsToOtherProcess: a language server holds the index
// (Hold) and another kodyls process writes to it. The other process must
// get the index by asking, without parking anything in the queue, and the
// holder must see its documents on its next lookup.
func TestHeldIndexYieldsToOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	ctx := testCtx(t)
	dir := t.TempDir()
	h, holding := holdingHistory(t, dir, "heldWord")
	id := mustRecord(t, h, goErr("/ws", "fp1", "undefined: heldWord"))
	// The write took the index alone for a moment; a lookup holds it again.
	if _, err := h.Search(ctx, "", "heldWord", 5); err != nil || !holding() {
		t.Fatalf("the history does not hold the index again after a lookup (%v)", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	const n = 4
	cmd := startHelper(cctx, t, "writer", dir, "KODYLS_INDEX_HELPER_PREFIX=other", fmt.Sprintf("KODYLS_INDEX_HELPER_N=%d", n))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("other process: %v\n%s", err, errOut.String())
	}
	t.Logf("the other process wrote %d batches in %s while the index was held", n, time.Since(start).Round(time.Millisecond))
	if got := strings.TrimSpace(out.String()); got != "queued=0" {
		t.Errorf("other process: %s; want every write applied directly, none queued", got)
	}
	// The holder let go and sees the other process's documents.
	for i := 0; i < n; i++ {
		want := docID("other", i, 0)
		if got, _ := topID(t, h.x, token(want)); got != want {
			t.Errorf("holder's search for %s: top hit %q", want, got)
		}
	}
	if got, err := h.Similar(ctx, "/ws", goErr("/ws", "fp1", "undefined: heldWord"), 1); err != nil || len(got) != 1 || got[0].ErrorID != id {
		t.Errorf("Similar after the other process = %+v, %v", got, err)
	}
}

// TestHeldIndexReleasedWhenIdle: without operations the holder lets go, so
// even a process that does not ask (an older kodyls) gets the index.
func TestHeldIndexReleasedWhenIdle(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	st, x := openTestSearch(t, dir)
	_ = st
	if err := x.Hold(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	mustIndex(t, x, errorDocs...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		x.take()
		held := x.held != nil
		x.give()
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index is still held long after the idle time")
		}
		time.Sleep(20 * time.Millisecond)
	}
	release := holdIndex(t, x) // opens it directly, as another process would
	release()
	if n, err := x.Count(ctx); err != nil || n != uint64(len(errorDocs)) {
		t.Errorf("Count after the idle release = %d, %v", n, err)
	}
}

// TestIndexRebuiltFromStore: a deleted or damaged index is rebuilt from
// sqlite, with a warning, and every remembered error is found again.
func TestIndexRebuiltFromStore(t *testing.T) {
	damage := map[string]func(t *testing.T, path string){
		"deleted": func(t *testing.T, path string) {
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
		},
		"root.bolt overwritten": func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Join(path, "store", "root.bolt"), bytes.Repeat([]byte("garbage!"), 512), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"metadata lost": func(t *testing.T, path string) {
			if err := os.Remove(filepath.Join(path, "index_meta.json")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, breakIt := range damage {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			dir := t.TempDir()
			st := openTestStore(t, dir)
			h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
			if err != nil {
				t.Fatal(err)
			}
			a := mustRecord(t, h, goErr("/ws", "fp1", "undefined: alphaName"))
			if err := h.Explain(ctx, a, Explanation{RootCause: "renamed in refactor", Source: SourceModel}); err != nil {
				t.Fatal(err)
			}
			b := mustRecord(t, h, goErr("/ws", "fp2", "undefined: betaName"))
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			breakIt(t, filepath.Join(dir, IndexDir))

			var logged bytes.Buffer
			h, err = OpenHistory(ctx, st, HistoryOptions{RequireIndex: true, Log: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatalf("OpenHistory after the index was %s: %v", name, err)
			}
			defer h.Close()
			if got, err := h.Search(ctx, "", "refactor", 5); err != nil || len(got) != 1 || got[0].ErrorID != a {
				t.Errorf("Search by root cause after rebuild = %+v, %v", got, err)
			}
			if got, err := h.Search(ctx, "", "betaName", 5); err != nil || len(got) != 1 || got[0].ErrorID != b {
				t.Errorf("Search after rebuild = %+v, %v", got, err)
			}
			if !strings.Contains(logged.String(), "rebuilt from the history database") {
				t.Errorf("no message about the rebuild: %q", logged.String())
			}
			matches, _ := filepath.Glob(filepath.Join(dir, IndexDir+".damaged-*"))
			if len(matches) != 0 {
				t.Errorf("damaged index left behind: %v", matches)
			}
		})
	}
}

// otherRecords opens a second history on dir, as a one-shot command does
// (not holding the index), and records an error with "otherWord" in it.
func otherRecords(t *testing.T, dir string) *LocalHistory {
	t.Helper()
	other, err := OpenHistory(testCtx(t), openTestStore(t, dir), HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	mustRecord(t, other, goErr("/ws", "fp-other", "undefined: otherWord"))
	return other
}

// dueNow makes every queued change old enough for the next lookup to
// apply it (see applyDue), as a second's wait would.
func dueNow(t *testing.T, st *Store) {
	t.Helper()
	err := st.Write(testCtx(t), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE index_queue SET queued_at = queued_at - ?`, 2*applyEvery.Milliseconds())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLookupAnswersWhenQueueCannotBeApplied: queued changes that cannot
// be applied (a full disk) do not fail the lookups of a holder: they read
// the index as it is, and the changes arrive once they can be applied.
func TestLookupAnswersWhenQueueCannotBeApplied(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	h, _ := holdingHistory(t, dir, "serverWord")
	otherRecords(t, dir)
	if p := mustPending(t, h.x); p == 0 {
		t.Fatal("the other history's write was not queued while the holder read")
	}
	dueNow(t, h.st)
	h.x.flushErr = syscall.ENOSPC
	for i := 0; i < 2; i++ {
		if hits, err := h.Search(ctx, "", "serverWord", 5); err != nil || len(hits) != 1 {
			t.Fatalf("lookup %d with the queue failing: %+v, %v", i+1, hits, err)
		}
	}
	if p := mustPending(t, h.x); p == 0 {
		t.Fatal("the queue was dropped though it could not be applied")
	}
	h.x.flushErr = nil
	h.x.take()
	h.x.lastApply = time.Time{} // as a second later
	h.x.give()
	if hits, err := h.Search(ctx, "", "otherWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("once the queue can be applied: %+v, %v", hits, err)
	}
}

// TestHolderSeesARebuiltIndex: the index is deleted while a holder reads
// it; another history rebuilds it and writes to the new one at once (no one
// holds it). The holder's next lookup reads the new index.
func TestHolderSeesARebuiltIndex(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	h, _ := holdingHistory(t, dir, "serverWord")
	if err := os.RemoveAll(filepath.Join(dir, IndexDir)); err != nil {
		t.Fatal(err)
	}
	other := otherRecords(t, dir)
	if p := mustPending(t, other.x); p != 0 {
		t.Fatalf("Pending = %d: the write to the rebuilt index was queued", p)
	}
	if hits, err := h.Search(ctx, "", "otherWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("the holder's lookup after the rebuild: %+v, %v", hits, err)
	}
}

// TestTwoHoldersShareTheIndex: two servers on one data directory both
// keep the index open for reading; neither lets go for the other's
// lookups. A change one of them queued is applied by the other's lookup
// once due: it asks, the holder lets go, and both then find the change.
func TestTwoHoldersShareTheIndex(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	first, holdingFirst := holdingHistory(t, dir, "firstWord")
	second, err := OpenHistory(ctx, openTestStore(t, dir), HistoryOptions{RequireIndex: true, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	mustRecord(t, second, goErr("/ws", "fp-second", "undefined: secondWord"))
	if hits, err := second.Search(ctx, "", "firstWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("the second server's lookup: %+v, %v", hits, err)
	}
	holdingSecond := func() bool {
		second.x.take()
		defer second.x.give()
		return second.x.held != nil
	}
	if !holdingFirst() || !holdingSecond() {
		t.Fatalf("both should hold the index: first %v, second %v", holdingFirst(), holdingSecond())
	}
	if p := mustPending(t, first.x); p == 0 {
		t.Fatal("the second server's write was not queued while the first read")
	}
	if hits, err := first.Search(ctx, "", "firstWord", 5); err != nil || len(hits) != 1 || !holdingSecond() {
		t.Fatalf("the first server's lookup before the change is due: %+v, %v, second holding %v", hits, err, holdingSecond())
	}

	dueNow(t, first.st)
	first.x.take()
	first.x.applyWait = 10 * time.Second // the mechanism, not the machine's speed
	first.x.give()
	if hits, err := first.Search(ctx, "", "secondWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("the first server's lookup once the change is due: %+v, %v", hits, err)
	}
	if p := mustPending(t, first.x); p != 0 {
		t.Errorf("Pending = %d after the due lookup, want 0", p)
	}
	if hits, err := second.Search(ctx, "", "secondWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("the second server's lookup after the apply: %+v, %v", hits, err)
	}
}

// TestQueueFromTheFutureIsApplied: a change queued under a clock that
// later stepped back carries a time in the future; it is applied at the
// next lookup rather than once the clock catches up.
func TestQueueFromTheFutureIsApplied(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	h, _ := holdingHistory(t, dir, "serverWord")
	otherRecords(t, dir)
	err := h.st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE index_queue SET queued_at = ?`, time.Now().Add(time.Hour).UnixMilli())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := h.Search(ctx, "", "otherWord", 5); err != nil || len(hits) != 1 {
		t.Fatalf("lookup with a change queued an hour ahead: %+v, %v", hits, err)
	}
}
