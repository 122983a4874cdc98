package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openTestStore(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := OpenStore(testCtx(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

func writeMeta(ctx context.Context, st *Store, key string) error {
	return st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)`, key, time.Now().String())
		return err
	})
}

func countRows(t *testing.T, st *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := st.Reader().QueryRowContext(testCtx(t), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrationsFresh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	st := openTestStore(t, dir)
	ctx := testCtx(t)

	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("data dir mode = %o, want 700", perm)
	}
	if st.Path() != filepath.Join(dir, DBFile) {
		t.Errorf("Path = %q", st.Path())
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != LatestSchemaVersion || v < 1 {
		t.Errorf("SchemaVersion = %d, want %d", v, LatestSchemaVersion)
	}
	for _, table := range []string{"meta", "workspaces", "index_queue"} {
		if n := countRows(t, st, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table); n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	var mode string
	if err := st.Reader().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	// The write pool must really have the pragmas from the DSN.
	err = st.Write(ctx, func(tx *sql.Tx) error {
		var busy, fk, secure int
		if err := tx.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "PRAGMA secure_delete").Scan(&secure); err != nil {
			return err
		}
		if busy != 5000 || fk != 1 || secure != 1 {
			return fmt.Errorf("busy_timeout = %d, foreign_keys = %d, secure_delete = %d", busy, fk, secure)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The read pool must refuse writes.
	if _, err := st.Reader().ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('a', 'b')`); err == nil {
		t.Error("write through Reader succeeded, want query_only error")
	}
}

func TestMigrationsReopenIdempotent(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		st, err := OpenStore(ctx, dir)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := st.TouchWorkspace(ctx, "/ws/a"); err != nil {
			t.Fatal(err)
		}
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != LatestSchemaVersion {
			t.Errorf("open %d: SchemaVersion = %d, want %d", i, v, LatestSchemaVersion)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	st := openTestStore(t, dir)
	ws, err := st.Workspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Opens != 3 {
		t.Errorf("Workspaces = %+v, want one with 3 opens", ws)
	}
}

func TestMigrationsConcurrentOpen(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			st, err := OpenStore(ctx, dir)
			if err != nil {
				errs <- err
				return
			}
			errs <- st.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestMigrationsNewerSchema(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", LatestSchemaVersion+7)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, dir)
	if err == nil {
		st.Close()
		t.Fatal("OpenStore succeeded on a database from a newer kodyls")
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("err = %v, want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "upgrade or set KODYLS_DATA_DIR") {
		t.Errorf("err = %q, want it to say what to do", err)
	}
}

func TestWorkspaces(t *testing.T) {
	st := openTestStore(t, t.TempDir())
	ctx := testCtx(t)
	before := time.Now().Add(-time.Second)
	for _, p := range []string{"/ws/a", "/ws/b/", "/ws/a"} {
		if err := st.TouchWorkspace(ctx, p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := st.TouchWorkspace(ctx, ""); err == nil {
		t.Error("TouchWorkspace(\"\") succeeded")
	}
	ws, err := st.Workspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("Workspaces = %+v, want 2", ws)
	}
	// Most recently seen first; the trailing slash is cleaned away.
	if ws[0].Path != "/ws/a" || ws[0].Opens != 2 || ws[1].Path != "/ws/b" || ws[1].Opens != 1 {
		t.Errorf("Workspaces = %+v", ws)
	}
	for _, w := range ws {
		if w.FirstSeen.Before(before) || w.LastSeen.Before(w.FirstSeen) {
			t.Errorf("bad times in %+v", w)
		}
	}
	if !ws[0].LastSeen.After(ws[0].FirstSeen) {
		t.Errorf("LastSeen not updated: %+v", ws[0])
	}
}

// TestWriteConcurrent hammers Write from many goroutines through two Stores
// on the same file, which contend on the sqlite lock exactly like two
// processes do (separate connections, separate file handles).
func TestWriteConcurrent(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{openTestStore(t, dir), openTestStore(t, dir)}
	ctx := testCtx(t)
	const goroutines, writes = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*writes)
	for g := 0; g < goroutines; g++ {
		st := stores[g%len(stores)]
		wg.Go(func() {
			for i := 0; i < writes; i++ {
				if err := writeMeta(ctx, st, fmt.Sprintf("g%d-%d", g, i)); err != nil {
					errs <- err
				}
				if err := st.TouchWorkspace(ctx, "/ws/shared"); err != nil {
					errs <- err
				}
			}
		})
	}
	// Readers run alongside; WAL must let them through.
	wg.Go(func() {
		for i := 0; i < 50; i++ {
			if _, err := stores[1].Workspaces(ctx); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := countRows(t, stores[0], `SELECT count(*) FROM meta`); n != goroutines*writes {
		t.Errorf("meta rows = %d, want %d", n, goroutines*writes)
	}
	if n := countRows(t, stores[0], `SELECT opens FROM workspaces WHERE path = '/ws/shared'`); n != goroutines*writes {
		t.Errorf("opens = %d, want %d", n, goroutines*writes)
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	st := openTestStore(t, t.TempDir())
	ctx := testCtx(t)
	boom := errors.New("boom")
	err := st.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('k', 'v')`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM meta`); n != 0 {
		t.Errorf("meta rows = %d after rollback", n)
	}
}

// TestWriteWaitsForOtherWriter holds the write lock from a second Store for
// longer than nothing but shorter than busy_timeout: Write must wait, not
// fail with "database is locked".
func TestWriteWaitsForOtherWriter(t *testing.T) {
	dir := t.TempDir()
	a, b := openTestStore(t, dir), openTestStore(t, dir)
	ctx := testCtx(t)
	locked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Write(ctx, func(tx *sql.Tx) error {
			close(locked)
			time.Sleep(300 * time.Millisecond)
			_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('a', 'a')`)
			return err
		})
	}()
	<-locked
	if err := writeMeta(ctx, b, "b"); err != nil {
		t.Errorf("second writer: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first writer: %v", err)
	}
	if n := countRows(t, a, `SELECT count(*) FROM meta`); n != 2 {
		t.Errorf("meta rows = %d, want 2", n)
	}
}

func TestIsBusyOnlyBusy(t *testing.T) {
	if isBusy(errors.New("database is locked")) {
		t.Error("plain error treated as busy")
	}
	if isBusy(nil) {
		t.Error("nil treated as busy")
	}
}
