package index

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// seedHistory fills a data dir with n generated errors in bulk (one
// transaction; the index is then filled from sqlite, as a rebuild does): a
// mix of languages and kinds with varied identifiers, as a workspace
// accumulates over months. It returns the dir and the records.
func seedHistory(b testing.TB, n int) (string, []ErrorRecord) {
	b.Helper()
	return seedHistoryIn(b, b.TempDir(), n, []string{"/w"})
}

// seedHistoryIn is seedHistory in dir, spreading the errors round-robin
// over workspaces.
func seedHistoryIn(b testing.TB, dir string, n int, workspaces []string) (string, []ErrorRecord) {
	b.Helper()
	ctx := context.Background()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x, err := OpenSearch(st, dir)
	if err != nil {
		b.Fatal(err)
	}
	kinds := []struct{ tool, lang, code, tmpl string }{
		{"go", "go", "", "undefined: %s"},
		{"go", "go", "", "declared and not used: %s"},
		{"go panic", "go", "panic", "runtime error: index out of range [%d] with length %d"},
		{"tsc", "typescript", "TS2339", "Property '%s' does not exist on type '%s'."},
		{"tsc", "typescript", "TS2322", "Type '%s' is not assignable to type '%s'."},
		{"rustc", "rust", "E0382", "borrow of moved value: `%s`"},
		{"python", "python", "NameError", "name '%s' is not defined"},
		{"javac", "java", "", "cannot find symbol %s"},
		{"node", "javascript", "TypeError", "%s.%s is not a function"},
		{"gcc", "c", "", "'%s' undeclared (first use in this function)"},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		w := make([]byte, 4+rng.IntN(8))
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		return string(w)
	}
	recs := make([]ErrorRecord, n)
	for i := range recs {
		k := kinds[i%len(kinds)]
		var msg string
		switch k.tmpl {
		case "runtime error: index out of range [%d] with length %d":
			msg = fmt.Sprintf(k.tmpl, rng.IntN(100), rng.IntN(100))
		case "Property '%s' does not exist on type '%s'.", "Type '%s' is not assignable to type '%s'.", "%s.%s is not a function":
			msg = fmt.Sprintf(k.tmpl, word(), word())
		default:
			msg = fmt.Sprintf(k.tmpl, word())
		}
		// Each record is its own fingerprint: a distinct error in history.
		recs[i] = ErrorRecord{Workspace: workspaces[i%len(workspaces)], Fingerprint: fmt.Sprintf("fp%07d", i), Tool: k.tool, Language: k.lang, Code: k.code,
			Message: msg, Template: k.tmpl, File: fmt.Sprintf("pkg%d/file%d.x", i%50, i%7)}
	}
	now := time.Now().UnixMilli()
	if err := st.Write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO errors (workspace, fingerprint, tool, language, code, message, template, file, raw, first_seen, last_seen, count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, 1)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range recs {
			if _, err := stmt.ExecContext(ctx, r.Workspace, r.Fingerprint, r.Tool, r.Language, r.Code, r.Message, r.Template, r.File, now, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := newLocalHistory(st, x).x.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return dir, recs
}

// BenchmarkSimilarLookup measures History.Similar (exact fingerprint, then
// bleve) over a generated history and reports the p50 and p99 latency:
// "held" is the language server, which keeps the index open (Hold);
// "per-op" opens it for every lookup, as a one-shot command does.
func BenchmarkSimilarLookup(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		dir, recs := seedHistory(b, n)
		for _, mode := range []string{"held", "per-op"} {
			b.Run(fmt.Sprintf("errors=%d/%s", n, mode), func(b *testing.B) {
				ctx := context.Background()
				st, err := OpenStore(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true, Hold: mode == "held"})
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
				// The server opens the index in the background when it
				// opens the history; measure lookups, not that.
				if err := h.x.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				samples := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					q := recs[(i*7919)%len(recs)]
					q.Message = q.Message + " extra"
					begin := time.Now()
					got, err := h.Similar(ctx, "/w", q, 5)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) == 0 || !got[0].Exact {
						b.Fatalf("Similar(%s) found no exact match", q.Fingerprint)
					}
					samples = append(samples, time.Since(begin))
				}
				b.StopTimer()
				sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
				b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-p50")
				b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "ms-p99")
			})
		}
	}
}
