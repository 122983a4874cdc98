package index

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// runRecorder plays `kodyls explain --offline` run again and again in
// another process: for each line on stdin it opens the history as the
// CLI does (holding the index, opened in the background), records a new
// error, looks up errors like it, stores an explanation of it, closes the
// history and prints "ok" and how many similar errors it found. A line
// "s" instead plays a second language server: a lookup through a history
// it keeps open.
func runRecorder(ctx context.Context, dir string) error {
	st, err := OpenStore(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	var server *LocalHistory
	defer func() {
		if server != nil {
			server.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	for i, looked := 0, 0; in.Scan(); {
		var found int
		var err error
		if in.Text() == "s" {
			if server == nil {
				if server, err = OpenHistory(ctx, st, HistoryOptions{Hold: true}); err != nil {
					return err
				}
			}
			var got []HistoryEntry
			got, err = server.Similar(ctx, "/w", ErrorRecord{Workspace: "/w", Fingerprint: fmt.Sprintf("look-%d", looked), Tool: "go", Language: "go",
				Message: fmt.Sprintf("undefined: lookedUp%d", looked), Template: "undefined: %s", File: "main.go"}, 5)
			found = len(got)
			looked++
		} else {
			found, err = recordOnce(ctx, st, i)
			i++
		}
		if err != nil {
			return err
		}
		fmt.Println("ok", found)
	}
	return in.Err()
}

func recordOnce(ctx context.Context, st *Store, i int) (int, error) {
	h, err := OpenHistory(ctx, st, HistoryOptions{Hold: true})
	if err != nil {
		return 0, err
	}
	defer h.Close()
	name := fmt.Sprintf("sharedName%d", i)
	rec := ErrorRecord{Workspace: "/w", Fingerprint: "shared-" + name, Tool: "go", Language: "go",
		Message: "undefined: " + name, Template: "undefined: %s", File: "main.go"}
	id, err := h.Record(ctx, rec)
	if err != nil {
		return 0, err
	}
	similar, err := h.Similar(ctx, "/w", rec, 5)
	if err != nil {
		return 0, err
	}
	return len(similar), h.Explain(ctx, id, Explanation{RootCause: name + " is not declared", Source: SourceOffline})
}

// BenchmarkSimilarLookupShared measures History.Similar in the language
// server (index held open) over 100,000 stored errors while another
// process records a new error, looks up errors like it and stores its
// explanation every N lookups, as `kodyls explain --offline` in a
// terminal does. The other process reads beside the server; its writes
// wait in the queue, which a lookup applies about once per applyEvery
// (the server letting go of its handle for it). It reports p50, p99 and
// the slowest lookup, and how many answers were degraded to the exact
// matches alone because the index was busy.
func BenchmarkSimilarLookupShared(b *testing.B) {
	if testing.Short() {
		b.Skip("spawns a process")
	}
	const n = 100_000
	seeded, recs := seedHistory(b, n)
	for _, c := range []struct {
		op    string // what the other process does: w records, s looks up
		every int
	}{{"w", 10}, {"w", 100}, {"s", 1}} {
		every := c.every
		name := fmt.Sprintf("errors=%d/write-every=%d", n, every)
		if c.op == "s" {
			name = fmt.Sprintf("errors=%d/other-server-lookups", n)
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			copyDir(b, seeded, dir)
			ctx := context.Background()
			st, err := OpenStore(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true, Hold: true})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			if err := h.x.Flush(ctx); err != nil {
				b.Fatal(err)
			}

			cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
			defer cancel()
			child := startPiped(cctx, b, "recorder", dir)
			cmd, stdin, stdout, childErr := child.cmd, child.stdin, child.stdout, child.stderr
			acks := make(chan error, 1)
			lines := bufio.NewScanner(stdout)
			ack := func() {
				// A recorded error finds at least itself.
				if lines.Scan() && strings.HasPrefix(lines.Text(), "ok ") && (c.op == "s" || lines.Text() != "ok 0") {
					acks <- nil
					return
				}
				acks <- fmt.Errorf("recorder: %q %v\nstderr: %s", lines.Text(), lines.Err(), childErr.String())
			}
			writes, pending := 0, false
			write := func() {
				if pending {
					if err := <-acks; err != nil {
						b.Fatal(err)
					}
				}
				if _, err := io.WriteString(stdin, c.op+"\n"); err != nil {
					b.Fatal(err)
				}
				if c.op == "w" {
					writes++
				}
				pending = true
				go ack()
			}

			samples := make([]time.Duration, 0, b.N)
			degraded := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%every == every-1 {
					// The write runs while the next lookups do: the
					// server is not told, it finds out as it would.
					write()
				}
				q := recs[(i*7919)%len(recs)]
				q.Message += " extra"
				begin := time.Now()
				got, err := h.Similar(ctx, "/w", q, 5)
				d := time.Since(begin)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) == 0 || !got[0].Exact {
					b.Fatalf("Similar(%s) found no exact match", q.Fingerprint)
				}
				if len(got) < 5 {
					degraded++
				}
				samples = append(samples, d)
			}
			b.StopTimer()
			if pending {
				if err := <-acks; err != nil {
					b.Fatal(err)
				}
			}
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				b.Fatalf("recorder: %v\nstderr: %s", err, childErr.String())
			}
			// No write of the other process was lost: the server finds
			// every error it recorded, through the index.
			s, err := h.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if s.Errors != n+writes {
				b.Errorf("history has %d errors after %d writes, want %d", s.Errors, writes, n+writes)
			}
			if writes > 0 {
				// Errors other processes record become searchable
				// within applyEvery, at the server's next lookup.
				time.Sleep(applyEvery)
				last := fmt.Sprintf("sharedName%d", writes-1)
				hits, err := h.Search(ctx, "", last, 1)
				if err != nil || len(hits) == 0 || hits[0].Fingerprint != "shared-"+last {
					b.Errorf("search for the last write %s: %+v, %v", last, hits, err)
				}
			}
			sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(samples[len(samples)/2]), "ms-p50")
			b.ReportMetric(ms(samples[len(samples)*99/100]), "ms-p99")
			b.ReportMetric(ms(samples[len(samples)-1]), "ms-max")
			b.ReportMetric(float64(degraded), "exact-only")
			b.ReportMetric(float64(writes), "writes")
		})
	}
}

// copyDir copies the data directory src (sqlite and the bleve index,
// closed) into dst, so that each run starts from the same history.
func copyDir(b *testing.B, src, dst string) {
	b.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenIndex measures what a process pays to open the search
// index of 100,000 errors, read the (empty) queue and close it again:
// the cost a one-shot command adds to each operation, and the server to
// the first lookup after another process has written.
func BenchmarkOpenIndex(b *testing.B) {
	const n = 100_000
	dir, _ := seedHistory(b, n)
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
	if got, err := x.Count(ctx); err != nil || got != n {
		b.Fatalf("Count = %d, %v; want %d", got, err, n)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		if err := x.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(begin))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "ms-p99")
}
