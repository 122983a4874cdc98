package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DBFile is the name of the sqlite database inside the data directory.
const DBFile = "kodyls.db"

// writeRetryLimit bounds how long Write keeps retrying a transaction that
// fails with SQLITE_BUSY or SQLITE_LOCKED. Each attempt already waits up to
// busy_timeout inside sqlite, so this only matters under heavy contention.
const writeRetryLimit = 10 * time.Second

// ErrStoreBusy is returned by Write when another process kept the database
// locked for longer than the retry limit. It replaces sqlite's own "database
// is locked", which tells the user nothing about what to do.
var ErrStoreBusy = errors.New("kodyls database is busy: another kodyls process kept it locked; retry, or stop the other kodyls process")

// ErrNewerSchema is returned by OpenStore when the database was migrated by a
// newer kodyls than this binary. Opening it anyway could corrupt data that the
// newer version relies on.
var ErrNewerSchema = errors.New("data dir was written by a newer kodyls; upgrade or set KODYLS_DATA_DIR")

// Store is the sqlite database of kodyls at <dir>/kodyls.db. It keeps two
// connection pools: one writer connection, because sqlite allows only one
// writer at a time and a single connection turns in-process contention into
// a queue instead of SQLITE_BUSY, and a read pool that WAL lets run alongside
// the writer.
type Store struct {
	dir  string
	path string
	w    *sql.DB
	r    *sql.DB

	// notice is what the user should know about how the store was
	// opened (see Notice).
	notice error
	// faultMu guards onFault and reported: each kind of fault found in
	// use (damaged, read-only) is handed to onFault once.
	faultMu  sync.Mutex
	onFault  func(error)
	reported map[error]error
}

// OpenStore opens (creating if needed) the database in dir and migrates it to
// the latest schema. dir is created with mode 0700 because the history may
// contain source code.
func OpenStore(ctx context.Context, dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open store: empty data dir; set KODYLS_DATA_DIR or HOME")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w; check permissions or set KODYLS_DATA_DIR", dir, err)
	}
	path := filepath.Join(dir, DBFile)
	s := &Store{dir: dir, path: path}
	if err := checkTruncated(path); err != nil {
		return nil, err
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	emptied, err := dropStaleIndex(dir, path)
	if err != nil {
		return nil, err
	}
	if emptied {
		s.notice = fmt.Errorf("%s was empty (0 bytes): the error history it held is lost, and its search index was dropped with it; a new history starts now", path)
	}

	// The pragmas go in the DSN so every connection database/sql opens gets
	// them, including ones opened later to replace a broken connection.
	// busy_timeout makes sqlite wait for another process's lock instead of
	// failing at once; _txlock=immediate takes the write lock at BEGIN, so a
	// transaction never has to upgrade a read lock, which is the one case
	// busy_timeout cannot help with. secure_delete overwrites what a delete
	// frees with zeros, so that forgetting the history (which holds error
	// output and code) removes its bytes from the file, not only its rows.
	w, err := sql.Open("sqlite", dsn(path, []string{
		"busy_timeout(5000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)", "secure_delete(1)",
	}, "immediate"))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s.w = w

	// The first connection converts the file to WAL, which needs a brief
	// exclusive lock; retry it like a write so that two processes starting
	// together do not fail here.
	if err := s.retryBusy(ctx, "open database", func() error { return w.PingContext(ctx) }); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}

	// query_only makes an accidental write through the read pool fail loudly
	// instead of bypassing the single-writer discipline.
	r, err := sql.Open("sqlite", dsn(path, []string{
		"busy_timeout(5000)", "foreign_keys(1)", "query_only(1)",
	}, ""))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	r.SetMaxIdleConns(2)
	s.r = r

	if err := s.migrate(ctx); err != nil {
		_ = s.Close()
		switch {
		case isDamaged(err):
			return nil, damagedError(path, err)
		case isReadOnly(err):
			return nil, readOnlyError(path, err)
		}
		return nil, err
	}
	return s, nil
}

// Notice is what the user should be told about how the store was opened,
// nil when nothing: today, that kodyls.db was found empty, so the history
// it held is lost (see dropStaleIndex).
func (s *Store) Notice() error { return s.notice }

// OnFault sets fn to be told, once for each kind, when the database is
// found damaged (ErrStoreDamaged) or not writable (ErrStoreReadOnly) in
// use, after it opened: damage away from the pages read at open shows only
// when a query reaches it. fn gets the message that says what to do; a
// fault found before OnFault was called is handed to it at once.
func (s *Store) OnFault(fn func(error)) {
	s.faultMu.Lock()
	s.onFault = fn
	var past []error
	for _, err := range s.reported {
		past = append(past, err)
	}
	s.faultMu.Unlock()
	if fn != nil {
		for _, err := range past {
			fn(err)
		}
	}
}

// Fault turns err, from a query or a write of this store, into the
// message that says what to do when it means the database is damaged or
// cannot be written, and tells the OnFault function the first time; any
// other error is returned as it is. Every write goes through it (see
// Write); readers of the store call it on their errors.
func (s *Store) Fault(err error) error {
	var kind, msg error
	switch {
	case err == nil || errors.Is(err, ErrStoreDamaged) || errors.Is(err, ErrStoreReadOnly):
		return err
	case isDamaged(err):
		kind, msg = ErrStoreDamaged, damagedError(s.path, err)
	case isReadOnly(err):
		kind, msg = ErrStoreReadOnly, readOnlyError(s.path, err)
	default:
		return err
	}
	return s.report(kind, msg)
}

// report hands msg, a fault of this kind, to the OnFault function if it
// is the first of its kind, and returns it.
func (s *Store) report(kind, msg error) error {
	s.faultMu.Lock()
	first := s.reported[kind] == nil
	if first {
		if s.reported == nil {
			s.reported = map[error]error{}
		}
		s.reported[kind] = msg
	}
	fn := s.onFault
	s.faultMu.Unlock()
	if first && fn != nil {
		fn(msg)
	}
	return msg
}

// QuickCheck runs sqlite's quick_check over the whole database: damage in
// a page no query has read yet shows only there. It returns the message
// that says what to do when the database is damaged. It reads every page,
// so it is for `kodyls doctor`, not for every open.
func (s *Store) QuickCheck(ctx context.Context) error {
	rows, err := s.r.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return s.Fault(fmt.Errorf("check database: %w", err))
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.Fault(fmt.Errorf("check database: %w", err))
		}
		if line != "ok" {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return s.Fault(fmt.Errorf("check database: %w", err))
	}
	if len(found) > 0 {
		return s.report(ErrStoreDamaged, damagedError(s.path, fmt.Errorf("quick_check: %s", strings.Join(found, "; "))))
	}
	return nil
}

// ErrStoreReadOnly means kodyls.db, or its -wal or -shm file, cannot be
// written though the data directory can: kodyls would remember nothing.
var ErrStoreReadOnly = errors.New("kodyls database is not writable")

func readOnlyError(path string, err error) error {
	how := "make it writable (chmod u+w, as its owner)"
	if errors.Is(err, syscall.EROFS) {
		how = "mount its file system read-write"
	}
	return fmt.Errorf("%w: %s (%w); kodyls remembers nothing until it is: %s, or set KODYLS_DATA_DIR to a directory you can write", ErrStoreReadOnly, path, err, how)
}

// isReadOnly reports whether err is SQLITE_READONLY.
func isReadOnly(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY
}

// checkWritable reports a database file (or its -wal or -shm file) that
// exists and that this process may not write. sqlite opens such a file
// read-only without a word and fails only at the first write, with
// "attempt to write a readonly database"; the data directory itself may
// be writable, so Unwritable does not catch it. access(2) is asked rather
// than the file opened: closing a descriptor of the database would drop
// the locks sqlite holds on it in this process.
func checkWritable(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := writable(p); err != nil {
			return readOnlyError(p, err)
		}
	}
	return nil
}

// dropStaleIndex deals with a database file that is missing or empty
// (0 bytes) beside a search index, before sqlite opens it: the history
// the index mirrors is gone, and the new one would reuse its error ids,
// so the index would show other errors under theirs. The index is
// removed, and OpenSearch creates it anew. emptied reports an empty file,
// which the user did not make on purpose (unlike deleting kodyls.db, as a
// damaged database's message suggests). The index is looked at first: it
// is created only after the database has been written, so an index seen
// before a missing or empty database is older than that database.
func dropStaleIndex(dir, path string) (emptied bool, err error) {
	idx := filepath.Join(dir, IndexDir)
	if _, err := os.Stat(filepath.Join(idx, "index_meta.json")); err != nil {
		return false, nil
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Size() == 0:
		if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
			return false, nil // the content may all be in the WAL
		}
		emptied = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, nil
	}
	aside := fmt.Sprintf("%s.stale-%d-%d", idx, os.Getpid(), rand.Int64())
	if err := os.Rename(idx, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return emptied, nil // another process dropped it first
		}
		return emptied, fmt.Errorf("the search index %s belongs to a history that is gone and cannot be moved aside: %w; remove that directory and kodyls will rebuild it", idx, err)
	}
	_ = os.RemoveAll(aside)
	return emptied, nil
}

// ErrStoreDamaged means the sqlite file is not a usable database.
var ErrStoreDamaged = errors.New("kodyls database is damaged")

func damagedError(path string, err error) error {
	return fmt.Errorf("%w: %s (%w); kodyls works without it for now; move it aside or delete it (with its -wal and -shm files) to start a new history", ErrStoreDamaged, path, err)
}

// isDamaged reports whether err is SQLITE_CORRUPT or SQLITE_NOTADB.
func isDamaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// checkTruncated compares the size of the database file with the size its
// header records. sqlite opens a truncated file without complaint and
// fails only when a query reaches a missing page, far from where the
// damage could be explained; this catches it at open, for the price of
// reading 100 bytes. Only checkpoints write the header, so in WAL mode the
// file is never legitimately shorter than the header says.
func checkTruncated(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // missing: sqlite creates it; unreadable: sqlite says why
	}
	defer f.Close()
	var h [100]byte
	n, _ := f.ReadAt(h[:], 0) // a short read is judged by n
	if n == 0 {
		return nil // empty: sqlite initialises it
	}
	if n < len(h) || string(h[:16]) != "SQLite format 3\x00" {
		return damagedError(path, errors.New("not an sqlite database"))
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The page count is valid only if the change counter matches
	// version-valid-for; older writers did not keep it.
	if binary.BigEndian.Uint32(h[24:28]) != binary.BigEndian.Uint32(h[92:96]) || pages == 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	if want := pages * pageSize; fi.Size() < want {
		return damagedError(path, fmt.Errorf("truncated: %d bytes, the header records %d", fi.Size(), want))
	}
	return nil
}

// dsn builds a modernc sqlite URI. The path is escaped so that a data dir
// containing '?', '#' or '%' cannot be mistaken for query parameters.
func dsn(path string, pragmas []string, txlock string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Checkpoint copies the write-ahead log into the database file and
// empties the log (PRAGMA wal_checkpoint(TRUNCATE)), so that rows just
// deleted leave no copy in kodyls.db-wal. It reports whether it could:
// a reader of another process in the middle of a transaction keeps it
// from finishing, and the next checkpoint (sqlite's own, or the one of
// the last connection to close) does it then.
func (s *Store) Checkpoint(ctx context.Context) (bool, error) {
	var busy, logFrames, done int
	err := s.retryBusy(ctx, "checkpoint", func() error {
		return s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	})
	if err != nil {
		return false, s.Fault(fmt.Errorf("checkpoint %s: %w", s.path, err))
	}
	return busy == 0, nil
}

// Close closes both connection pools.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close database %s: %w", s.path, err)
	}
	return nil
}

// Path is the file name of the database.
func (s *Store) Path() string { return s.path }

// Dir is the data directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Reader returns the read pool. Writes through it fail (query_only); use
// Write instead.
func (s *Store) Reader() *sql.DB { return s.r }

// SchemaVersion returns PRAGMA user_version, the number of migrations applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it if fn returns nil. When sqlite reports SQLITE_BUSY or
// SQLITE_LOCKED (another process held the lock past busy_timeout), the whole
// transaction is rolled back and fn runs again after a backoff, until ctx is
// done or about 10s have passed; fn must therefore be safe to re-run. fn must
// not call Write itself: the writer has a single connection, so a nested call
// would wait for itself.
//
// An error that means the database is damaged or cannot be written comes
// back as the message that says what to do (see Fault).
func (s *Store) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.Fault(s.retryBusy(ctx, "write", func() error { return s.writeOnce(ctx, fn) }))
}

func (s *Store) writeOnce(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// retryBusy runs op until it succeeds, fails with something other than a
// busy/locked error, ctx is done, or writeRetryLimit has passed.
func (s *Store) retryBusy(ctx context.Context, what string, op func() error) error {
	start := time.Now()
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !isBusy(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		if time.Since(start) >= writeRetryLimit {
			// The raw sqlite error is logged, not returned, because its text
			// ("database is locked") is what users must never see.
			slog.Warn("kodyls database stayed locked", "op", what, "path", s.path, "attempts", attempt, "err", err)
			return fmt.Errorf("%s: %w (waited %s)", what, ErrStoreBusy, time.Since(start).Round(time.Millisecond))
		}
		slog.Debug("kodyls database busy, retrying", "op", what, "attempt", attempt, "err", err)
		// Jitter keeps two processes that collided from colliding again in
		// lockstep.
		d := backoff/2 + rand.N(backoff)
		if err := sleepCtx(ctx, d); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED, including their
// extended codes (the driver enables extended result codes).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Workspace is one workspace root that kodyls has served.
type Workspace struct {
	Path      string
	FirstSeen time.Time
	LastSeen  time.Time
	Opens     int
}

// TouchWorkspace records that the workspace at path was opened: it is
// inserted on first sight and its open count and last-seen time updated on
// every later call.
func (s *Store) TouchWorkspace(ctx context.Context, path string) error {
	if path == "" {
		return errors.New("touch workspace: empty path")
	}
	path = filepath.Clean(path)
	now := time.Now().UnixMilli()
	err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO workspaces (path, first_seen, last_seen, opens) VALUES (?, ?, ?, 1)
ON CONFLICT (path) DO UPDATE SET last_seen = excluded.last_seen, opens = workspaces.opens + 1`,
			path, now, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("touch workspace %s: %w", path, err)
	}
	return nil
}

// Workspaces lists known workspaces, most recently seen first.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT path, first_seen, last_seen, opens FROM workspaces ORDER BY last_seen DESC, path`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", s.Fault(err))
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		var w Workspace
		var first, last int64
		if err := rows.Scan(&w.Path, &first, &last, &w.Opens); err != nil {
			return nil, fmt.Errorf("list workspaces: %w", s.Fault(err))
		}
		w.FirstSeen = time.UnixMilli(first)
		w.LastSeen = time.UnixMilli(last)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", s.Fault(err))
	}
	return out, nil
}
