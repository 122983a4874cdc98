package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Dismissal kinds.
const (
	DismissFinding = "finding" // one suggestion, by its id
	DismissLabel   = "label"   // every suggestion with the label, in the file
)

// Dismissal is a finding (or a kind of finding) the user does not want to
// see again in a file.
type Dismissal struct {
	Workspace, File string
	Kind, Key       string
}

// Dismiss remembers a dismissal.
func (s *Store) Dismiss(ctx context.Context, d Dismissal) error {
	if d.Kind != DismissFinding && d.Kind != DismissLabel {
		return fmt.Errorf("dismiss: unknown kind %q", d.Kind)
	}
	err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO dismissals (workspace, file, kind, key, created_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`, d.Workspace, d.File, d.Kind, d.Key, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("dismiss: %w", err)
	}
	return nil
}

// Dismissed returns the dismissed finding ids and labels of one file.
func (s *Store) Dismissed(ctx context.Context, workspace, file string) (ids, labels map[string]bool, err error) {
	rows, err := s.r.QueryContext(ctx, `SELECT kind, key FROM dismissals WHERE workspace = ? AND file = ?`, workspace, file)
	if err != nil {
		return nil, nil, fmt.Errorf("read dismissals: %w", s.Fault(err))
	}
	defer rows.Close()
	ids, labels = map[string]bool{}, map[string]bool{}
	for rows.Next() {
		var kind, key string
		if err := rows.Scan(&kind, &key); err != nil {
			return nil, nil, fmt.Errorf("read dismissals: %w", s.Fault(err))
		}
		if kind == DismissLabel {
			labels[key] = true
		} else {
			ids[key] = true
		}
	}
	return ids, labels, rows.Err()
}
