package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CacheGet returns a cached LLM reply that has not expired.
func (s *Store) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.r.QueryRowContext(ctx, `SELECT value FROM llm_cache WHERE key = ? AND expires_at > ?`, key, time.Now().UnixMilli()).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read llm cache: %w", s.Fault(err))
	}
	return v, true, nil
}

// CachePut stores a reply for ttl, replacing an older entry, and drops
// expired entries so the table does not grow without bound.
func (s *Store) CachePut(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	now := time.Now().UnixMilli()
	err := s.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO llm_cache (key, value, created_at, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at, expires_at = excluded.expires_at`,
			key, value, now, now+ttl.Milliseconds()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM llm_cache WHERE expires_at <= ?`, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("write llm cache: %w", err)
	}
	return nil
}

// UsageRecord is one LLM call as the usage log keeps it.
type UsageRecord struct {
	At               time.Time
	Feature, Model   string
	PromptTokens     int
	CompletionTokens int
	Latency          time.Duration
	Cached           bool
	Attempts         int
	Err              string
}

// RecordUsage appends one call to the usage log.
func (s *Store) RecordUsage(ctx context.Context, u UsageRecord) error {
	if u.At.IsZero() {
		u.At = time.Now()
	}
	err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO llm_usage (at, feature, model, prompt_tokens, completion_tokens, latency_ms, cached, attempts, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.At.UnixMilli(), u.Feature, u.Model, u.PromptTokens, u.CompletionTokens, u.Latency.Milliseconds(), boolInt(u.Cached), u.Attempts, u.Err)
		return err
	})
	if err != nil {
		return fmt.Errorf("record llm usage: %w", err)
	}
	return nil
}

// UsageTotal sums the usage log for one feature.
type UsageTotal struct {
	Feature          string
	Calls            int // requests that reached the endpoint
	CachedCalls      int // answered from the cache, no request
	Failures         int
	PromptTokens     int
	CompletionTokens int
	AvgLatency       time.Duration
}

// UsageTotals sums the usage log per feature since a point in time (zero
// for all time), busiest feature first.
func (s *Store) UsageTotals(ctx context.Context, since time.Time) ([]UsageTotal, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT feature,
  SUM(CASE WHEN cached = 0 THEN 1 ELSE 0 END),
  SUM(cached),
  SUM(CASE WHEN error <> '' THEN 1 ELSE 0 END),
  SUM(prompt_tokens), SUM(completion_tokens),
  COALESCE(AVG(CASE WHEN cached = 0 THEN latency_ms END), 0)
FROM llm_usage WHERE at >= ? GROUP BY feature ORDER BY SUM(prompt_tokens + completion_tokens) DESC, feature`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("sum llm usage: %w", err)
	}
	defer rows.Close()
	var out []UsageTotal
	for rows.Next() {
		var t UsageTotal
		var avg float64
		if err := rows.Scan(&t.Feature, &t.Calls, &t.CachedCalls, &t.Failures, &t.PromptTokens, &t.CompletionTokens, &avg); err != nil {
			return nil, fmt.Errorf("sum llm usage: %w", err)
		}
		t.AvgLatency = time.Duration(avg * float64(time.Millisecond))
		out = append(out, t)
	}
	return out, rows.Err()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// KV is the store's expiring key-value cache, in the shape the LLM gateway
// and the review cache take.
type KV struct{ s *Store }

// KV returns the store's cache.
func (s *Store) KV() KV { return KV{s} }

// Get returns an unexpired value.
func (c KV) Get(ctx context.Context, key string) ([]byte, bool, error) { return c.s.CacheGet(ctx, key) }

// Put stores a value for ttl.
func (c KV) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return c.s.CachePut(ctx, key, value, ttl)
}
