// Package index is the local store of kodyls: a sqlite database that keeps
// the history of errors, explanations, review caches and dismissals, and a
// bleve full-text index over past errors. Both live in one data directory
// (see DataDir).
//
// Several kodyls processes may share a data directory at once (a language
// server and a CLI command, or two editors). The package is built so that
// none of them hangs and none sees "database is locked":
//
//   - sqlite runs in WAL mode with a busy timeout, a single writer
//     connection per process that starts IMMEDIATE transactions, and a
//     retry loop in Store.Write for the rare SQLITE_BUSY that still escapes.
//   - bleve allows one process at a time (scorch takes an exclusive flock on
//     root.bolt). Search therefore never keeps the index open between
//     operations: each operation opens it with a short lock timeout, works
//     and closes it. Writes that cannot get the index in time are parked in
//     the sqlite table index_queue and applied by whichever process opens the
//     index next, so nothing is lost.
package index
