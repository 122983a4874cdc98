package index

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordErrors opens the history in dir, records n distinct errors and
// closes everything, so that the database is checkpointed into its file.
func recordErrors(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := testCtx(t)
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := h.Record(ctx, goErr("/ws/a", fmt.Sprintf("fp%d", i), fmt.Sprintf("undefined: name%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DBFile+"-wal")); err == nil {
		t.Fatal("the WAL is still there after the last close")
	}
}

// damagePage overwrites the root page of table with 0xdead, as a disk
// that loses a block in the middle of the file would.
func damagePage(t *testing.T, dir, table string) {
	t.Helper()
	ctx := testCtx(t)
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var root, size int64
	if err := st.Reader().QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := st.Reader().QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, DBFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xde, 0xad}, int(size/2)), (root-1)*size); err != nil {
		t.Fatal(err)
	}
}

// TestStoreDamagedInTheMiddle: a database whose header is sound but one of
// whose tables is damaged opens, and every use of the damaged table then
// says the database is damaged and what to do, not sqlite's "database disk
// image is malformed" alone; the OnFault function hears of it once;
// QuickCheck finds it before any query does.
func TestStoreDamagedInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	recordErrors(t, dir, 20)
	damagePage(t, dir, "errors")

	ctx := testCtx(t)
	st := openTestStore(t, dir)
	if err := st.QuickCheck(ctx); !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), "move it aside or delete it") {
		t.Fatalf("QuickCheck = %v, want the database reported damaged", err)
	}
	var mu sync.Mutex
	var told []error
	st.OnFault(func(err error) {
		mu.Lock()
		told = append(told, err)
		mu.Unlock()
	})
	// QuickCheck found it before OnFault was set: it is told at once.
	if len(told) != 1 || !errors.Is(told[0], ErrStoreDamaged) {
		t.Fatalf("OnFault told %v, want the damage found by QuickCheck", told)
	}

	h, err := OpenHistory(ctx, st, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Stats(ctx); !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), st.Path()) {
		t.Errorf("Stats = %v, want the database reported damaged", err)
	}
	if _, err := h.Record(ctx, goErr("/ws/a", "fresh", "undefined: fresh")); !errors.Is(err, ErrStoreDamaged) {
		t.Errorf("Record = %v, want the database reported damaged", err)
	}
	if _, err := h.Forget(ctx, ""); !errors.Is(err, ErrStoreDamaged) {
		t.Errorf("Forget = %v, want the database reported damaged", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 {
		t.Errorf("OnFault told %d times, want once: %v", len(told), told)
	}
}

// TestStoreFaultFirstInUse: a fault found in use, with no QuickCheck, is
// told once to OnFault whatever kind of use found it.
func TestStoreFaultFirstInUse(t *testing.T) {
	dir := t.TempDir()
	recordErrors(t, dir, 5)
	damagePage(t, dir, "errors")
	ctx := testCtx(t)
	st := openTestStore(t, dir)
	n := 0
	st.OnFault(func(err error) {
		n++
		if !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), "move it aside") {
			t.Errorf("OnFault got %v", err)
		}
	})
	h, err := OpenHistory(ctx, st, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for range 3 {
		_, _ = h.Stats(ctx)
		_, _ = h.Record(ctx, goErr("/ws/a", "fresh", "undefined: fresh"))
	}
	if n != 1 {
		t.Errorf("OnFault told %d times, want once", n)
	}
}

// TestStoreFaultReadOnly: sqlite's "attempt to write a readonly database"
// becomes the message that says what to do.
func TestStoreFaultReadOnly(t *testing.T) {
	ctx := testCtx(t)
	st := openTestStore(t, t.TempDir())
	// The read pool is query_only: a write through it fails as a write to
	// a read-only file does.
	_, err := st.Reader().ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('k', 'v')`)
	if err == nil {
		t.Fatal("a write through the read pool succeeded")
	}
	err = st.Fault(err)
	if !errors.Is(err, ErrStoreReadOnly) || !strings.Contains(err.Error(), "KODYLS_DATA_DIR") || !strings.Contains(err.Error(), st.Path()) {
		t.Errorf("Fault = %v, want the database reported not writable, with what to do", err)
	}
	if other := errors.New("no such table"); st.Fault(other) != other {
		t.Error("Fault changed an error that is no fault of the file")
	}
}

// TestOpenStoreReadOnlyFile: a kodyls.db that may not be written, in a
// directory that may, is refused at open with what to do, rather than
// opened read-only to fail at every write. Root writes a file whatever
// its mode, so the test needs another user (TestStoreFaultReadOnlyDatabase
// in cmd/kodyls covers root with a read-only mount).
func TestOpenStoreReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write a read-only file")
	}
	dir := t.TempDir()
	recordErrors(t, dir, 1)
	db := filepath.Join(dir, DBFile)
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(db, 0o600) })
	st, err := OpenStore(testCtx(t), dir)
	if err == nil {
		st.Close()
		t.Fatal("a read-only kodyls.db opened")
	}
	if !errors.Is(err, ErrStoreReadOnly) || !strings.Contains(err.Error(), db) || !strings.Contains(err.Error(), "chmod u+w") {
		t.Errorf("OpenStore = %v, want the file reported not writable, with what to do", err)
	}
}

// TestOpenStoreEmptiedDatabase: a kodyls.db emptied to 0 bytes beside its
// search index starts a new history, says that the old one is lost, and
// drops the index, which would otherwise keep documents of errors that
// are gone under ids the new history reuses.
func TestOpenStoreEmptiedDatabase(t *testing.T) {
	dir := t.TempDir()
	recordErrors(t, dir, 5)
	if err := os.Truncate(filepath.Join(dir, DBFile), 0); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	st := openTestStore(t, dir)
	if n := st.Notice(); n == nil || !strings.Contains(n.Error(), "was empty") || !strings.Contains(n.Error(), "lost") {
		t.Errorf("Notice = %v, want the lost history told", n)
	}
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Record(ctx, goErr("/ws/b", "new", "undefined: newName")); err != nil {
		t.Fatal(err)
	}
	ix, err := h.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Documents != 1 {
		t.Errorf("the index holds %d documents beside 1 error", ix.Documents)
	}
	if hits, err := h.Search(ctx, "", "name3", 10); err != nil || len(hits) != 0 {
		t.Errorf("search for a lost error = %v, %v", hits, err)
	}
}

// TestOpenStoreDeletedDatabase: deleting kodyls.db, as a damaged
// database's message suggests, starts a new history with a new index,
// silently: the user did it.
func TestOpenStoreDeletedDatabase(t *testing.T) {
	dir := t.TempDir()
	recordErrors(t, dir, 5)
	if err := os.Remove(filepath.Join(dir, DBFile)); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	st := openTestStore(t, dir)
	if n := st.Notice(); n != nil {
		t.Errorf("Notice = %v after a delete", n)
	}
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if ix, err := h.Index(ctx); err != nil || ix.Documents != 0 {
		t.Errorf("the new history's index: %+v, %v; want no documents", ix, err)
	}
}

// TestDropStaleIndexKeepsWhatMayBeLive: a new data directory, a database
// that has content, or an empty database whose content is in its WAL
// leave the index alone.
func TestDropStaleIndexKeepsWhatMayBeLive(t *testing.T) {
	dir := t.TempDir()
	recordErrors(t, dir, 2)
	db := filepath.Join(dir, DBFile)
	meta := filepath.Join(dir, IndexDir, "index_meta.json")
	if emptied, err := dropStaleIndex(dir, db); emptied || err != nil {
		t.Errorf("a sound database: emptied %v, %v", emptied, err)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Fatalf("the index of a sound database was dropped: %v", err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db+"-wal", []byte("frames"), 0o600); err != nil {
		t.Fatal(err)
	}
	if emptied, err := dropStaleIndex(dir, db); emptied || err != nil {
		t.Errorf("an empty file with a WAL: emptied %v, %v", emptied, err)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Fatalf("the index was dropped while the WAL may hold the history: %v", err)
	}
	fresh := t.TempDir()
	if emptied, err := dropStaleIndex(fresh, filepath.Join(fresh, DBFile)); emptied || err != nil {
		t.Errorf("a new data dir: emptied %v, %v", emptied, err)
	}
}
