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
//   - scorch locks root.bolt with flock: shared for a reader opened
//     read-only, exclusive for a writer. Lookups read through a shared
//     handle (kept open by long-lived processes, see Search.Hold), so any
//     number of processes read at once. Every change to the history is
//     parked in the sqlite table index_queue in the transaction that makes
//     it, then applied at once if the index is free; otherwise it waits
//     there, and a later lookup takes the index exclusively for a moment to
//     apply it: at once for the process's own changes when nobody else is
//     reading, within about a second for other processes' changes (the
//     readers are asked to let go through markers in WantDir). Nothing is
//     lost and no process waits for another to write.
package index
