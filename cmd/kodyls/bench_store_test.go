package main

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// BenchmarkStartupWithHistory measures process start to the initialize
// reply through the real binary with an empty data dir and with 100,000
// remembered errors (sqlite and a filled search index): a large history
// must not slow startup down.
func BenchmarkStartupWithHistory(b *testing.B) {
	for _, n := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("errors=%d", n), func(b *testing.B) {
			bin := lsptest.BuildBinary(b)
			repo := fixtureRepo(b)
			env := testEnv(b)
			seedErrors(b, dataDir(b, env), n)
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				samples = append(samples, startupToInitialize(b, bin, repo.Dir, env))
			}
			b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
		})
	}
}

// seedErrors writes n distinct errors to the store in dir and fills the
// search index from them.
func seedErrors(b *testing.B, dir string, n int) {
	ctx := context.Background()
	st, err := index.OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if n == 0 {
		return
	}
	now := time.Now().UnixMilli()
	err = st.Write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO errors (workspace, fingerprint, tool, language, code, message, template, file, raw, first_seen, last_seen, count) VALUES ('/w', ?, 'go', 'go', '', ?, 'undefined: %s', 'main.go', '', ?, ?, 1)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := 0; i < n; i++ {
			if _, err := stmt.ExecContext(ctx, fmt.Sprintf("fp%07d", i), fmt.Sprintf("undefined: name%d", i), now, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	h, err := index.OpenHistory(ctx, st, index.HistoryOptions{RequireIndex: true})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Search(ctx, "", "name1", 1); err != nil {
		b.Fatal(err)
	}
}
