package index

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// corruptSegments overwrites 512 bytes in the middle of every segment file
// the index in dir reads (scorch leaves files it no longer reads until a
// later open) with seeded random bytes, in place: a process that has the
// files mapped sees the change.
func corruptSegments(t *testing.T, dir string) {
	t.Helper()
	idx, err := bleve.OpenUsing(filepath.Join(dir, IndexDir), map[string]interface{}{"read_only": true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	ai, _ := idx.Advanced()
	r, err := ai.(*scorch.Scorch).Reader()
	if err != nil {
		t.Fatal(err)
	}
	for _, ss := range r.(*scorch.IndexSnapshot).Segments() {
		if p, ok := ss.Segment().(segment.PersistedSegment); ok {
			paths = append(paths, p.Path())
		}
	}
	_ = r.Close()
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no segment file in %s", dir)
	}
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		junk := make([]byte, 512)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		off := max(fi.Size()/2-int64(len(junk))/2, 0)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt(junk, off)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// logBuffer is a logger whose output the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// seedDamageHistory records errors of two kinds in dir, each record
// writing its own segment, and returns them.
func seedDamageHistory(t *testing.T, dir string) []ErrorRecord {
	t.Helper()
	ctx := testCtx(t)
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var recs []ErrorRecord
	for i, name := range []string{"alphaName", "betaName", "gammaName", "deltaName"} {
		recs = append(recs, goErr("/ws", fmt.Sprintf("fp-undefined-%d", i), "undefined: "+name))
	}
	recs = append(recs, goErr("/ws", "fp-declared", "declared and not used: zed"))
	for _, e := range recs {
		mustRecord(t, h, e)
	}
	return recs
}

func openDamageHistory(t *testing.T, dir string, log *logBuffer, hold bool) *LocalHistory {
	t.Helper()
	ctx := testCtx(t)
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true, Log: log.logger(), Hold: hold})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// checkLookups looks up the seeded errors as `kodyls history search` and
// `kodyls explain` do, and checks that every answer is whole.
func checkLookups(t *testing.T, h *LocalHistory, recs []ErrorRecord) {
	t.Helper()
	ctx := testCtx(t)
	got, err := h.Search(ctx, "", "undefined declared", 10)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if len(got) != len(recs) {
		t.Errorf("search found %d errors, want %d", len(got), len(recs))
	}
	sim, err := h.Similar(ctx, "/ws", recs[0], 5)
	if err != nil {
		t.Fatalf("similar: %v", err)
	}
	if len(sim) < 2 || !sim[0].Exact || sim[0].Fingerprint != recs[0].Fingerprint || sim[1].Exact {
		t.Errorf("similar to %q: want the exact match, then similar errors; got %+v", recs[0].Message, sim)
	}
}

// TestDamagedSegmentIsRebuilt: a segment file damaged on disk is found
// when the index is opened, and the index is rebuilt from sqlite with a
// warning, instead of bleve panicking (slice bounds out of range) or
// failing every lookup with "error loading roaring bitmap".
func TestDamagedSegmentIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	recs := seedDamageHistory(t, dir)
	corruptSegments(t, dir)

	var log logBuffer
	h := openDamageHistory(t, dir, &log, false)
	checkLookups(t, h, recs)
	if !strings.Contains(log.String(), "search index of the error history was damaged") || !strings.Contains(log.String(), "rebuilt from the history database") {
		t.Errorf("no warning about rebuilding the damaged index:\n%s", log.String())
	}
	st, err := h.Index(testCtx(t))
	if err != nil || st.Documents != uint64(len(recs)) {
		t.Errorf("index after the rebuild: %+v, %v; want %d documents", st, err, len(recs))
	}
	// A second process opening it now finds nothing to repair.
	var log2 logBuffer
	checkLookups(t, openDamageHistory(t, dir, &log2, false), recs)
	if strings.Contains(log2.String(), "damaged") {
		t.Errorf("the rebuilt index was rebuilt again:\n%s", log2.String())
	}
}

// TestSegmentDamagedWhileHeld: the server keeps the index open; a segment
// damaged under it makes a lookup fail inside bleve, which must not crash
// the process: the index is rebuilt and the lookup answered.
func TestSegmentDamagedWhileHeld(t *testing.T) {
	dir := t.TempDir()
	recs := seedDamageHistory(t, dir)
	var log logBuffer
	h := openDamageHistory(t, dir, &log, true)
	checkLookups(t, h, recs) // the index is held from here on
	corruptSegments(t, dir)
	checkLookups(t, h, recs)
	if !strings.Contains(log.String(), "search index of the error history was damaged") {
		t.Errorf("no warning about rebuilding the damaged index:\n%s", log.String())
	}
}

// TestSimilarKeepsExactMatchesWhenTheIndexFails: when the index cannot
// be used even after rebuilding it, Similar still answers with the exact
// matches sqlite has.
func TestSimilarKeepsExactMatchesWhenTheIndexFails(t *testing.T) {
	h, _, x := openTestHistory(t)
	var log logBuffer
	h.log = log.logger()
	e := goErr("/ws", "fp1", "undefined: fooBar")
	mustRecord(t, h, e)
	mustRecord(t, h, goErr("/ws", "fp2", "undefined: fooBaz"))
	// A directory that cannot hold an index: every open fails, and so
	// does rebuilding it.
	x.path = filepath.Join(t.TempDir(), "missing", "deeper", IndexDir)
	if err := os.WriteFile(filepath.Dir(filepath.Dir(x.path)), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := h.Similar(testCtx(t), "/ws", e, 5)
	if err != nil {
		t.Fatalf("similar with a failing index: %v", err)
	}
	if len(got) != 1 || !got[0].Exact {
		t.Errorf("similar with a failing index: %+v; want the exact match", got)
	}
	if !strings.Contains(log.String(), "fingerprint only") {
		t.Errorf("the failure is not logged:\n%s", log.String())
	}
}

// TestFileWhereTheIndexBelongs: a file named errors.bleve is not an
// index kodyls made: it is left alone, and the error names it and says
// what to do, instead of bleve's "rename …: not a directory".
func TestFileWhereTheIndexBelongs(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	st := openTestStore(t, dir)
	path := filepath.Join(dir, IndexDir)
	if err := os.WriteFile(path, []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err == nil || !strings.Contains(err.Error(), path+" is a file") || !strings.Contains(err.Error(), "move it away or delete it") {
		t.Errorf("OpenHistory = %v; want an error naming %s and saying what to do", err, path)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "not an index" {
		t.Errorf("the file was touched: %q, %v", b, err)
	}
	// Once it is gone, the index is made again.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	mustRecord(t, h, goErr("/ws", "fp", "undefined: fooBar"))
	if got, err := h.Search(ctx, "", "fooBar", 5); err != nil || len(got) != 1 {
		t.Errorf("search once the file is gone: %+v, %v", got, err)
	}
}

// TestFirstUseByManyProcessesWarnsNothing: processes that start on an
// empty data directory at once, each creating the index and recording an
// error, must not warn that the index is missing: only an index deleted
// from beside a history that has errors is.
func TestFirstUseByManyProcessesWarnsNothing(t *testing.T) {
	for round := 0; round < 5; round++ {
		dir := t.TempDir()
		var log logBuffer
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				<-start
				st, err := OpenStore(ctx, dir)
				if err != nil {
					t.Error(err)
					return
				}
				defer st.Close()
				h, err := OpenHistory(ctx, st, HistoryOptions{Log: log.logger()})
				if err != nil {
					t.Error(err)
					return
				}
				defer h.Close()
				if _, err := h.Record(ctx, goErr("/ws", fmt.Sprintf("fp%d", i), fmt.Sprintf("undefined: name%d", i))); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if strings.Contains(log.String(), "missing") || strings.Contains(log.String(), "rebuil") {
			t.Fatalf("round %d: a false warning:\n%s", round, log.String())
		}
	}
}
