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

// seedHistory fills a history with n generated errors in bulk (one
// transaction, index batches of 2,000): a mix of languages and kinds with
// varied identifiers, as a workspace accumulates over months.
func seedHistory(b *testing.B, n int) (*LocalHistory, []ErrorRecord) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
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
		recs[i] = ErrorRecord{Workspace: "/w", Fingerprint: fmt.Sprintf("fp%07d", i), Tool: k.tool, Language: k.lang, Code: k.code,
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
	for start := 0; start < n; start += 2000 {
		end := min(start+2000, n)
		docs := make([]Doc, 0, end-start)
		for i := start; i < end; i++ {
			r := recs[i]
			docs = append(docs, Doc{ID: errDocID(int64(i + 1)), Fields: map[string]string{
				"template": r.Template, "message": r.Message, "code": r.Code, "language": r.Language, "tool": r.Tool, docKindField: docKindValue,
			}})
		}
		if err := x.Index(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	return newLocalHistory(st, x), recs
}

// BenchmarkSimilarLookup measures History.Similar (exact fingerprint, then
// bleve) over a generated history; it reports the p50 and p99 latency.
func BenchmarkSimilarLookup(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("errors=%d", n), func(b *testing.B) {
			h, recs := seedHistory(b, n)
			ctx := context.Background()
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := recs[(i*7919)%len(recs)]
				q.Message = q.Message + " extra"
				begin := time.Now()
				if _, err := h.Similar(ctx, "/w", q, 5); err != nil {
					b.Fatal(err)
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
