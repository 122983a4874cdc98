package index

import (
	"cmp"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/similar_order.golden with what Similar returns now")

// TestSimilarOrderGolden pins what Similar returns on a realistic history
// (2,000 errors of ten kinds in three workspaces, a third of them
// explained): which errors, in which order, with which scores, for the
// lookups an editor makes (the error itself; the same error reworded; a new
// identifier in a known kind of error; every workspace; small and large k).
// Any change to the lookup's candidates or scoring shows up here.
//
// The index is built in one batch (a rebuild from sqlite), so it is one
// segment and bleve's order among equal scores is its insertion order,
// which no background merge can change.
func TestSimilarOrderGolden(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, recs := seedHistoryIn(t, dir, flushChunk, []string{"/w", "/other", "/third"})
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Explanations change what is found (root causes are indexed) and what
	// is returned (the latest explanation of each error).
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	if err := st.Write(ctx, func(tx *sql.Tx) error {
		for id := int64(1); id <= int64(len(recs)); id += 3 {
			for v := int64(0); v < 1+id%2; v++ {
				if _, err := tx.ExecContext(ctx, `INSERT INTO explanations
  (error_id, root_cause, steps, confidence, source, model, created_at, feedback, content_hash)
VALUES (?, ?, '["look at the call"]', 0.5, 'model', 'm', ?, 0, '')`,
					id, fmt.Sprintf("cause %d version %d", id%17, v), base+id*1000+v); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Rebuild the index from sqlite so the root causes are in it.
	if err := os.RemoveAll(filepath.Join(dir, IndexDir)); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	var b strings.Builder
	lookup := func(name, ws string, e ErrorRecord, k int) {
		t.Helper()
		got, err := h.Similar(ctx, ws, e, k)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Fprintf(&b, "# %s (workspace %q, k=%d): %d found\n", name, ws, k, len(got))
		writeGroups(&b, got)
	}
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 117, 444, 1001, 1999} {
		r := recs[i]
		lookup(fmt.Sprintf("error %d itself", i), r.Workspace, r, 5)
		reworded := r
		reworded.Message += " extra"
		lookup(fmt.Sprintf("error %d reworded", i), r.Workspace, reworded, 5)
		renamed := r
		renamed.Fingerprint = "new-" + r.Fingerprint
		renamed.Message = strings.Replace(r.Message, firstWord(r.Message), "zzzfresh", 1)
		lookup(fmt.Sprintf("error %d with a new identifier", i), r.Workspace, renamed, 5)
		lookup(fmt.Sprintf("error %d reworded, every workspace", i), "", reworded, 10)
	}
	// Words of several errors at once: candidates that match more of
	// them, or rarer ones, score higher, so the order is not one tie.
	for _, ij := range [][3]int{{0, 10, 20}, {3, 13, 33}, {8, 18, 1018}, {5, 6, 7}, {1, 11, 1500}, {4, 24, 104}} {
		a, b2, c := recs[ij[0]], recs[ij[1]], recs[ij[2]]
		mixed := a
		mixed.Fingerprint = "mixed"
		mixed.Message = a.Message + " " + firstWord(b2.Message) + " " + firstWord(c.Message) + " " + firstWord(c.Message)
		lookup(fmt.Sprintf("words of errors %v", ij), "", mixed, 8)
		lookup(fmt.Sprintf("words of errors %v, own workspace", ij), a.Workspace, mixed, 8)
	}
	lookup("k=1", "/w", recs[12], 1)
	lookup("k=20", "/other", ErrorRecord{Fingerprint: "none", Tool: "tsc", Language: "typescript", Code: "TS2339",
		Message: "Property 'x' does not exist on type 'Window'.", Template: "Property '%s' does not exist on type '%s'."}, 20)
	lookup("no template", "/w", ErrorRecord{Fingerprint: "none", Message: "undefined: foo"}, 5)

	golden := filepath.Join("testdata", "similar_order.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSimilarOrderGolden -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("Similar changed at line %d of %s:\n got: %s\nwant: %s", i+1, golden, gl[i], wl[i])
			}
		}
		t.Fatalf("Similar returned %d lines, %s has %d", len(gl), golden, len(wl))
	}
}

// writeGroups writes entries as groups of equal score, in order. Bleve
// orders equal scores by its internal document numbers, which depend on
// the order its analysis workers finished in, so only the members of a
// group are pinned, not their order; and the last group may have been cut
// at k among equals, so only its size is. Scores are compared to 12
// digits: bleve sums the scores of a disjunction in the order its heap
// yields them, so the last bits of equal scores vary between runs.
func writeGroups(b *strings.Builder, got []HistoryEntry) {
	for start := 0; start < len(got); {
		end := start + 1
		score := roundScore(got[start].Score)
		for end < len(got) && roundScore(got[end].Score) == score && got[end].Exact == got[start].Exact {
			end++
		}
		if end == len(got) && !got[start].Exact {
			fmt.Fprintf(b, "%s: %d of equal score\n", score, end-start)
			return
		}
		group := slices.Clone(got[start:end])
		if !got[start].Exact {
			slices.SortFunc(group, func(x, y HistoryEntry) int { return cmp.Compare(x.ErrorID, y.ErrorID) })
		}
		fmt.Fprintf(b, "%s exact=%v:\n", score, got[start].Exact)
		for _, en := range group {
			latest := "-"
			if en.Latest != nil {
				latest = en.Latest.RootCause
			}
			fmt.Fprintf(b, "  %d %s %s | %s\n", en.ErrorID, en.Workspace, en.Message, latest)
		}
		start = end
	}
}

// firstWord is the first identifier-like word of a message after its
// first separator, the part of an error a rename changes.
func firstWord(msg string) string {
	f := strings.FieldsFunc(msg, func(r rune) bool {
		return !(r >= 'a' && r <= 'z')
	})
	for _, w := range f {
		if len(w) >= 4 && !strings.Contains("undefined declared used runtime error index range with length property does exist type assignable borrow moved value name defined cannot find symbol function undeclared first this", w) {
			return w
		}
	}
	return msg
}

func roundScore(s float64) string { return strconv.FormatFloat(s, 'g', 12, 64) }

// TestTextStatsMatchIndex checks what textTerm relies on: the frequency
// and norm docTexts derives from a document's stored text are the ones
// bleve stored when it indexed the document, for every term of every
// document in the fields Similar searches, including repeated words,
// non-ASCII letters, digits and underscores.
func TestTextStatsMatchIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	seedHistoryIn(t, dir, 300, []string{"/w"})
	st, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i, msg := range []string{
		"x x x y: x",
		"Ünïcode naïve CAFÉ café Café_2 İstanbul ΣΊΣΥΦΟΣ",
		"E0382 e0382 use of moved value: `v` (v v)",
		"  leading, trailing, and--double--separators  ",
		"数字 ١٢٣ 123 under_score __init__",
	} {
		mustRecord(t, h, ErrorRecord{Workspace: "/w", Fingerprint: fmt.Sprintf("odd%d", i), Tool: "t",
			Code: "C" + strconv.Itoa(i) + " c" + strconv.Itoa(i), Message: msg, Template: msg + " %s %s"})
	}
	checked := 0
	err = h.x.with(ctx, func(idx bleve.Index) error {
		ai, err := idx.Advanced()
		if err != nil {
			return err
		}
		r, err := ai.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		a := idx.Mapping().AnalyzerNamed(analyzerName)
		for _, f := range similarFields {
			dict, err := r.FieldDict(f)
			if err != nil {
				return err
			}
			var terms []string
			for e, err := dict.Next(); e != nil || err != nil; e, err = dict.Next() {
				if err != nil {
					return err
				}
				terms = append(terms, e.Term)
			}
			_ = dict.Close()
			for _, term := range terms {
				texts := newDocTexts(a, []string{term}, similarFields)
				if err := texts.find(ctx, r); err != nil {
					return err
				}
				tfr, err := r.TermFieldReader(ctx, []byte(term), f, true, true, false)
				if err != nil {
					return err
				}
				for d, err := tfr.Next(nil); d != nil || err != nil; d, err = tfr.Next(nil) {
					if err != nil {
						return err
					}
					freq, norm, err := texts.stats(d.ID, f, term)
					if err != nil {
						return err
					}
					if freq != d.Freq || norm != d.Norm {
						id, _ := r.ExternalID(d.ID)
						t.Errorf("%s %s:%q: from the text freq %d norm %v, in the index freq %d norm %v", id, f, term, freq, norm, d.Freq, d.Norm)
					}
					checked++
				}
				_ = tfr.Close()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 3000 {
		t.Fatalf("checked only %d postings", checked)
	}
}
