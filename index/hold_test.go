package index

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	if hits, err := h.Search(ctx, word, 5); err != nil || len(hits) != 1 {
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
	h, _ := holdingHistory(t, dir, "heldWord")
	id := mustRecord(t, h, goErr("/ws", "fp1", "undefined: heldWord"))

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
			if got, err := h.Search(ctx, "refactor", 5); err != nil || len(got) != 1 || got[0].ErrorID != a {
				t.Errorf("Search by root cause after rebuild = %+v, %v", got, err)
			}
			if got, err := h.Search(ctx, "betaName", 5); err != nil || len(got) != 1 || got[0].ErrorID != b {
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
