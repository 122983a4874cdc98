package index

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; migration i brings the schema from
// user_version i to i+1. Never edit a released migration: append a new one,
// because databases in the field have already run the old ones.
var migrations = [][]string{
	// v1: the tables every later feature builds on.
	{
		`CREATE TABLE meta (
			key   TEXT PRIMARY KEY,
			value TEXT NOT NULL
		)`,
		// Times are unix milliseconds: sortable, compact and unambiguous
		// about time zones.
		`CREATE TABLE workspaces (
			path       TEXT PRIMARY KEY,
			first_seen INTEGER NOT NULL,
			last_seen  INTEGER NOT NULL,
			opens      INTEGER NOT NULL DEFAULT 0
		)`,
		// index_queue parks search-index writes that could not get the bleve
		// lock. AUTOINCREMENT keeps ids strictly increasing even after the
		// queue is emptied, which the flush relies on to apply entries in
		// order and to delete exactly what it applied. op is 'index' (body is
		// the JSON object of fields) or 'delete' (body is NULL).
		`CREATE TABLE index_queue (
			id        INTEGER PRIMARY KEY AUTOINCREMENT,
			doc_id    TEXT NOT NULL,
			op        TEXT NOT NULL DEFAULT 'index' CHECK (op IN ('index', 'delete')),
			body      TEXT,
			queued_at INTEGER NOT NULL
		)`,
	},
	// v2: the LLM gateway's response cache and usage log.
	{
		// key is a hash of everything that determines a reply (model,
		// rendered prompt, schema, prompt version); value is the reply.
		`CREATE TABLE llm_cache (
			key        TEXT PRIMARY KEY,
			value      BLOB NOT NULL,
			created_at INTEGER NOT NULL,
			expires_at INTEGER NOT NULL
		)`,
		`CREATE INDEX llm_cache_expires ON llm_cache (expires_at)`,
		`CREATE TABLE llm_usage (
			id                INTEGER PRIMARY KEY AUTOINCREMENT,
			at                INTEGER NOT NULL,
			feature           TEXT NOT NULL,
			model             TEXT NOT NULL,
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL,
			latency_ms        INTEGER NOT NULL,
			cached            INTEGER NOT NULL,
			attempts          INTEGER NOT NULL,
			error             TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX llm_usage_feature ON llm_usage (feature, at)`,
	},
	// v3: review findings the user dismissed. kind is 'finding' (one
	// suggestion, by id) or 'label' (every suggestion with that label in
	// the file); key is the id or the label.
	{
		`CREATE TABLE dismissals (
			workspace  TEXT NOT NULL,
			file       TEXT NOT NULL,
			kind       TEXT NOT NULL CHECK (kind IN ('finding', 'label')),
			key        TEXT NOT NULL,
			created_at INTEGER NOT NULL,
			PRIMARY KEY (workspace, file, kind, key)
		)`,
	},
	// v4: the error history. An error is one (workspace, fingerprint) with
	// its occurrence count; explanations are kept per error, newest last, so
	// a cached answer can be checked against the content it was made for.
	{
		`CREATE TABLE errors (
			id          INTEGER PRIMARY KEY,
			workspace   TEXT NOT NULL,
			fingerprint TEXT NOT NULL,
			tool        TEXT NOT NULL DEFAULT '',
			language    TEXT NOT NULL DEFAULT '',
			code        TEXT NOT NULL DEFAULT '',
			message     TEXT NOT NULL DEFAULT '',
			template    TEXT NOT NULL DEFAULT '',
			file        TEXT NOT NULL DEFAULT '',
			raw         TEXT NOT NULL DEFAULT '',
			first_seen  INTEGER NOT NULL,
			last_seen   INTEGER NOT NULL,
			count       INTEGER NOT NULL DEFAULT 1,
			UNIQUE (workspace, fingerprint)
		)`,
		// Prune keeps the most recently seen errors.
		`CREATE INDEX errors_last_seen ON errors (last_seen)`,
		// steps is a JSON array of strings; source is model, history or
		// offline; feedback is -1, 0 or 1; content_hash is a hash of the
		// content of the files involved when the explanation was made.
		`CREATE TABLE explanations (
			id           INTEGER PRIMARY KEY,
			error_id     INTEGER NOT NULL REFERENCES errors (id) ON DELETE CASCADE,
			root_cause   TEXT NOT NULL DEFAULT '',
			steps        TEXT NOT NULL DEFAULT '[]',
			confidence   REAL NOT NULL DEFAULT 0,
			source       TEXT NOT NULL DEFAULT '',
			model        TEXT NOT NULL DEFAULT '',
			created_at   INTEGER NOT NULL,
			feedback     INTEGER NOT NULL DEFAULT 0 CHECK (feedback IN (-1, 0, 1)),
			content_hash TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX explanations_error ON explanations (error_id, created_at)`,
	},
	// v5: the agents' checkpoints, the latest one of each thread, so that
	// a run interrupted by a crash resumes where it stopped. state is the
	// graph's JSON state; done marks a finished thread, pruned with the
	// history.
	{
		`CREATE TABLE checkpoints (
			thread     TEXT PRIMARY KEY,
			graph      TEXT NOT NULL,
			step       INTEGER NOT NULL,
			next       TEXT NOT NULL,
			state      BLOB NOT NULL,
			done       INTEGER NOT NULL DEFAULT 0,
			updated_at INTEGER NOT NULL
		)`,
		`CREATE INDEX checkpoints_updated ON checkpoints (updated_at)`,
	},
	// v6: similar errors of the same kind (same template) without a
	// search: the fallback of Similar when every word of an error is
	// common in the history.
	{
		`CREATE INDEX errors_template ON errors (template, last_seen)`,
	},
	// v7: what each explanation was given for. An error row is a kind of
	// error (its fingerprint abstracts names away) and its message is the
	// latest occurrence's; message is the message the explanation answered
	// and msg_hash identifies that exact error (message and line), so a
	// stored answer is reused for the same error only, never for another
	// of its kind. Rows from before have '' in both: never the same error.
	{
		`ALTER TABLE explanations ADD COLUMN message TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE explanations ADD COLUMN msg_hash TEXT NOT NULL DEFAULT ''`,
	},
}

// LatestSchemaVersion is the user_version this binary migrates to.
var LatestSchemaVersion = len(migrations)

// migrate applies pending migrations, each in its own IMMEDIATE transaction.
// The version is re-read inside every transaction, so two processes that
// start together serialise on the write lock and the second one finds the
// work already done.
func (s *Store) migrate(ctx context.Context) error {
	for {
		done := false
		// Not through Write, which turns a damaged or read-only database
		// into its message: OpenStore does that, for the path alone.
		err := s.retryBusy(ctx, "write", func() error {
			return s.writeOnce(ctx, func(tx *sql.Tx) error {
				var v int
				if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
					return fmt.Errorf("read schema version: %w", err)
				}
				switch {
				case v > len(migrations):
					return fmt.Errorf("%w (database %s has schema v%d, this kodyls knows up to v%d)",
						ErrNewerSchema, s.path, v, len(migrations))
				case v == len(migrations):
					done = true
					return nil
				}
				for _, stmt := range migrations[v] {
					if _, err := tx.ExecContext(ctx, stmt); err != nil {
						return fmt.Errorf("migration v%d: %w", v+1, err)
					}
				}
				// PRAGMA cannot take a bound parameter; v is an int we control.
				if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
					return fmt.Errorf("migration v%d: set version: %w", v+1, err)
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", s.path, err)
		}
		if done {
			return nil
		}
	}
}
