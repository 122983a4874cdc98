package index

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock that moves forward 1ms on every reading, so that
// times written by consecutive calls are distinct and ordered.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func openTestHistory(t *testing.T) (*LocalHistory, *Store, *Search) {
	t.Helper()
	st, x := openTestSearch(t, t.TempDir())
	h := newLocalHistory(st, x)
	h.now = (&testClock{t: time.Now()}).now
	return h, st, x
}

func mustRecord(t *testing.T, h *LocalHistory, e ErrorRecord) int64 {
	t.Helper()
	id, err := h.Record(testCtx(t), e)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func goErr(ws, fp, msg string) ErrorRecord {
	return ErrorRecord{
		Workspace: ws, Fingerprint: fp, Tool: "go build", Language: "go", Code: "UndeclaredName",
		Message: msg, Template: msg, File: "main.go", Raw: "main.go:3:2: " + msg,
	}
}

func TestHistoryRecordCounts(t *testing.T) {
	h, st, x := openTestHistory(t)
	e := goErr("/ws/a", "fp1", "undefined: fooBar")
	id1 := mustRecord(t, h, e)
	id2 := mustRecord(t, h, e)
	if id1 != id2 {
		t.Fatalf("ids %d and %d, want the same error", id1, id2)
	}
	if n := countRows(t, st, `SELECT count FROM errors WHERE id = ?`, id1); n != 2 {
		t.Errorf("count = %d, want 2", n)
	}
	if n := countRows(t, st, `SELECT count(*) FROM errors`); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
	var first, last int64
	if err := st.Reader().QueryRow(`SELECT first_seen, last_seen FROM errors WHERE id = ?`, id1).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if last <= first {
		t.Errorf("last_seen %d not after first_seen %d", last, first)
	}
	if n := mustCount(t, x); n != 1 {
		t.Errorf("index has %d docs, want 1", n)
	}
	if _, err := h.Record(testCtx(t), ErrorRecord{Workspace: "/ws/a"}); err == nil {
		t.Error("Record without fingerprint succeeded")
	}
}

func TestHistoryExplainAndCached(t *testing.T) {
	h, _, _ := openTestHistory(t)
	ctx := testCtx(t)
	id := mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: fooBar"))
	ex := Explanation{
		RootCause: "fooBar is not declared", Steps: []string{"declare fooBar", "or import it"},
		Confidence: 0.8, Source: SourceModel, Model: "m1", ContentHash: "h1",
		Message: "undefined: fooBar", MessageHash: "m1",
	}
	if err := h.Explain(ctx, id, ex); err != nil {
		t.Fatal(err)
	}

	got, ok, err := h.Cached(ctx, "/ws/a", "fp1", "h1", "m1", time.Hour)
	if err != nil || !ok {
		t.Fatalf("Cached = %v, %v, want a hit", ok, err)
	}
	if got.RootCause != ex.RootCause || len(got.Steps) != 2 || got.Steps[1] != "or import it" ||
		got.Confidence != 0.8 || got.Source != SourceModel || got.Model != "m1" || got.ContentHash != "h1" || got.CreatedAt.IsZero() ||
		got.Message != "undefined: fooBar" || got.MessageHash != "m1" {
		t.Errorf("Cached = %+v", got)
	}

	for name, c := range map[string]struct {
		ws, fp, hash, msg string
		age               time.Duration
	}{
		"other hash":      {"/ws/a", "fp1", "h2", "m1", time.Hour},
		"other message":   {"/ws/a", "fp1", "h1", "m2", time.Hour},
		"no message":      {"/ws/a", "fp1", "h1", "", time.Hour},
		"other workspace": {"/ws/b", "fp1", "h1", "m1", time.Hour},
		"too old":         {"/ws/a", "fp1", "h1", "m1", time.Nanosecond},
	} {
		if _, ok, err := h.Cached(ctx, c.ws, c.fp, c.hash, c.msg, c.age); err != nil || ok {
			t.Errorf("%s: Cached = %v, %v, want a miss", name, ok, err)
		}
	}

	// An older explanation with a later one: the latest wins.
	old := ex
	old.RootCause, old.CreatedAt = "stale", time.Now().Add(-2*time.Hour)
	if err := h.Explain(ctx, id, old); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := h.Cached(ctx, "/ws/a", "fp1", "h1", "m1", 0); got == nil || got.RootCause != ex.RootCause {
		t.Errorf("Cached = %+v, want the latest", got)
	}
	// A downvoted explanation is not served again.
	bad := ex
	bad.RootCause, bad.Feedback = "wrong", -1
	if err := h.Explain(ctx, id, bad); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := h.Cached(ctx, "/ws/a", "fp1", "h1", "m1", 0); got == nil || got.RootCause != ex.RootCause {
		t.Errorf("Cached = %+v, want the one not voted down", got)
	}

	if err := h.Explain(ctx, id+100, ex); err == nil {
		t.Error("Explain of an unknown error succeeded")
	}
}

func TestHistorySimilar(t *testing.T) {
	h, _, _ := openTestHistory(t)
	ctx := testCtx(t)
	exact := mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: fooBar"))
	if err := h.Explain(ctx, exact, Explanation{RootCause: "fooBar missing", Source: SourceModel}); err != nil {
		t.Fatal(err)
	}
	like := mustRecord(t, h, goErr("/ws/a", "fp2", "undefined: fooBaz"))
	if err := h.Explain(ctx, like, Explanation{RootCause: "fooBaz missing", Source: SourceOffline}); err != nil {
		t.Fatal(err)
	}
	mustRecord(t, h, ErrorRecord{Workspace: "/ws/a", Fingerprint: "fp3", Tool: "tsc", Language: "typescript",
		Code: "TS2322", Message: "Type string is not assignable to type number", Template: "Type X is not assignable to type Y"})
	mustRecord(t, h, goErr("/ws/b", "fp4", "undefined: fooBar")) // other workspace

	got, err := h.Similar(ctx, "/ws/a", goErr("/ws/a", "fp1", "undefined: fooBar"), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("Similar returned %d entries, want >= 2: %+v", len(got), got)
	}
	if got[0].ErrorID != exact || !got[0].Exact || got[0].Score != 1 {
		t.Errorf("first = %+v, want the exact match", got[0])
	}
	if got[0].Latest == nil || got[0].Latest.RootCause != "fooBar missing" {
		t.Errorf("exact match explanation = %+v", got[0].Latest)
	}
	if got[1].ErrorID != like || got[1].Exact || got[1].Score <= 0 {
		t.Errorf("second = %+v, want the similar error with a score", got[1])
	}
	if got[1].Latest == nil || got[1].Latest.Source != SourceOffline {
		t.Errorf("similar explanation = %+v", got[1].Latest)
	}
	for _, en := range got {
		if en.Workspace != "/ws/a" {
			t.Errorf("entry from workspace %q", en.Workspace)
		}
	}
	seen := map[int64]bool{}
	for _, en := range got {
		if seen[en.ErrorID] {
			t.Errorf("error %d listed twice", en.ErrorID)
		}
		seen[en.ErrorID] = true
	}

	if got, err := h.Similar(ctx, "/ws/a", goErr("/ws/a", "fp1", "undefined: fooBar"), 1); err != nil || len(got) != 1 || !got[0].Exact {
		t.Errorf("Similar k=1 = %+v, %v", got, err)
	}
}

func TestHistorySimilarBusyReturnsExact(t *testing.T) {
	h, _, x := openTestHistory(t)
	ctx := testCtx(t)
	exact := mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: fooBar"))
	mustRecord(t, h, goErr("/ws/a", "fp2", "undefined: fooBaz"))
	x.lockWait = 50 * time.Millisecond
	release := holdIndex(t, x)
	defer release()

	got, err := h.Similar(ctx, "/ws/a", goErr("/ws/a", "fp1", "undefined: fooBar"), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ErrorID != exact || !got[0].Exact {
		t.Errorf("Similar with busy index = %+v, want the exact match only", got)
	}
	if _, err := h.Search(ctx, "", "fooBar", 5); !errors.Is(err, ErrBusy) {
		t.Errorf("Search with busy index: err = %v, want ErrBusy", err)
	}
	// Recording still works: the document is queued.
	if _, err := h.Record(ctx, goErr("/ws/a", "fp9", "undefined: queued")); err != nil {
		t.Fatal(err)
	}
	release()
	if hits, err := h.Search(ctx, "", "queued", 5); err != nil || len(hits) != 1 {
		t.Errorf("Search after release = %+v, %v, want the queued error", hits, err)
	}
}

func TestHistorySearch(t *testing.T) {
	h, _, x := openTestHistory(t)
	ctx := testCtx(t)
	id := mustRecord(t, h, ErrorRecord{Workspace: "/ws/a", Fingerprint: "fp1", Tool: "tsc", Language: "typescript",
		Code: "TS2322", Message: "Type 'string' is not assignable to type 'number'", Template: "Type X is not assignable to type Y"})
	mustRecord(t, h, goErr("/ws/b", "fp2", "undefined: fooBar"))
	// A document that is not part of the history must never come back.
	mustIndex(t, x, Doc{ID: "other", Fields: map[string]string{"message": "assignable number"}})

	got, err := h.Search(ctx, "", "assignable number", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ErrorID != id || got[0].Score <= 0 || got[0].Code != "TS2322" {
		t.Fatalf("Search = %+v, want the tsc error", got)
	}
	// The root cause becomes searchable once explained.
	if err := h.Explain(ctx, id, Explanation{RootCause: "widening mismatch", Source: SourceModel}); err != nil {
		t.Fatal(err)
	}
	got, err = h.Search(ctx, "", "widening", 10)
	if err != nil || len(got) != 1 || got[0].ErrorID != id || got[0].Latest == nil {
		t.Errorf("Search by root cause = %+v, %v", got, err)
	}
	// Recording again keeps the root cause in the document.
	mustRecord(t, h, ErrorRecord{Workspace: "/ws/a", Fingerprint: "fp1", Tool: "tsc", Message: "Type 'string' is not assignable"})
	if got, err := h.Search(ctx, "", "widening", 10); err != nil || len(got) != 1 {
		t.Errorf("Search by root cause after re-record = %+v, %v", got, err)
	}
	if got, err := h.Search(ctx, "", "  ", 10); err != nil || len(got) != 0 {
		t.Errorf("blank Search = %+v, %v", got, err)
	}
	// A search for one workspace leaves the others' errors out.
	mustRecord(t, h, goErr("/ws/b", "fp3", "cannot use x (not assignable to a number)"))
	if got, err := h.Search(ctx, "/ws/b", "assignable number", 10); err != nil || len(got) != 1 || got[0].Workspace != "/ws/b" {
		t.Errorf("Search in /ws/b = %+v, %v; want only its own error", got, err)
	}
	if got, err := h.Search(ctx, "", "assignable number", 10); err != nil || len(got) != 2 {
		t.Errorf("Search in every workspace = %+v, %v; want both", got, err)
	}
}

func TestHistoryStats(t *testing.T) {
	h, _, _ := openTestHistory(t)
	ctx := testCtx(t)
	a := mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: a"))
	mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: a"))
	mustRecord(t, h, ErrorRecord{Workspace: "/ws/a", Fingerprint: "fp2", Tool: "tsc", Message: "x"})
	for _, src := range []string{SourceModel, SourceModel, SourceHistory} {
		if err := h.Explain(ctx, a, Explanation{RootCause: "r", Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Errors != 2 || s.Occurrences != 3 || s.Explanations != 3 {
		t.Errorf("Stats = %+v", s)
	}
	if s.ByTool["go build"] != 1 || s.ByTool["tsc"] != 1 || s.BySource[SourceModel] != 2 || s.BySource[SourceHistory] != 1 {
		t.Errorf("Stats maps = %v, %v", s.ByTool, s.BySource)
	}
}

func TestHistoryForget(t *testing.T) {
	h, st, x := openTestHistory(t)
	ctx := testCtx(t)
	a := mustRecord(t, h, goErr("/ws/a", "fp1", "undefined: alpha"))
	if err := h.Explain(ctx, a, Explanation{RootCause: "r"}); err != nil {
		t.Fatal(err)
	}
	mustRecord(t, h, goErr("/ws/a", "fp2", "undefined: beta"))
	b := mustRecord(t, h, goErr("/ws/b", "fp1", "undefined: alpha"))

	n, err := h.Forget(ctx, "/ws/a")
	if err != nil || n != 2 {
		t.Fatalf("Forget = %d, %v, want 2", n, err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM errors WHERE workspace = '/ws/a'`); n != 0 {
		t.Errorf("%d errors left in /ws/a", n)
	}
	if n := countRows(t, st, `SELECT count(*) FROM explanations`); n != 0 {
		t.Errorf("%d explanations left, want them deleted with their error", n)
	}
	if n := mustCount(t, x); n != 1 {
		t.Errorf("index has %d docs, want 1", n)
	}
	got, err := h.Search(ctx, "", "alpha", 10)
	if err != nil || len(got) != 1 || got[0].ErrorID != b {
		t.Errorf("Search after Forget = %+v, %v, want only /ws/b", got, err)
	}

	if n, err := h.Forget(ctx, ""); err != nil || n != 1 {
		t.Errorf("Forget all = %d, %v, want 1", n, err)
	}
	if n := mustCount(t, x); n != 0 {
		t.Errorf("index has %d docs, want 0", n)
	}
}

func TestHistoryPrune(t *testing.T) {
	h, st, x := openTestHistory(t)
	ctx := testCtx(t)
	var ids []int64
	for i := range 5 {
		ids = append(ids, mustRecord(t, h, goErr("/ws/a", fmt.Sprintf("fp%d", i), fmt.Sprintf("undefined: v%d", i))))
	}
	// Seeing the oldest one again makes it recent.
	mustRecord(t, h, goErr("/ws/a", "fp0", "undefined: v0"))

	n, err := h.Prune(ctx, 2)
	if err != nil || n != 3 {
		t.Fatalf("Prune = %d, %v, want 3", n, err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM errors WHERE id IN (?, ?)`, ids[0], ids[4]); n != 2 {
		t.Errorf("the two most recently seen errors were not kept")
	}
	if n := countRows(t, st, `SELECT count(*) FROM errors`); n != 2 {
		t.Errorf("%d errors left, want 2", n)
	}
	if n := mustCount(t, x); n != 2 {
		t.Errorf("index has %d docs, want 2", n)
	}
	if n, err := h.Prune(ctx, 2); err != nil || n != 0 {
		t.Errorf("second Prune = %d, %v, want 0", n, err)
	}
	if _, err := h.Prune(ctx, 0); err == nil {
		t.Error("Prune(0) succeeded, want an error")
	}
}

// TestMigrationV3ToV4 opens a database left at v3 by an older kodyls and
// checks that the upgrade adds the history without losing old data.
func TestMigrationV3ToV4(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:3] {
		for _, stmt := range m {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, stmt := range []string{
		`INSERT INTO dismissals (workspace, file, kind, key, created_at) VALUES ('/ws', 'a.go', 'label', 'style', 1)`,
		`PRAGMA user_version = 3`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	st := openTestStore(t, dir)
	if v, err := st.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion || v < 4 {
		t.Fatalf("SchemaVersion = %d, %v, want %d", v, err, LatestSchemaVersion)
	}
	_, labels, err := st.Dismissed(ctx, "/ws", "a.go")
	if err != nil || !labels["style"] {
		t.Errorf("dismissal lost in migration: %v, %v", labels, err)
	}
	h := newLocalHistory(st, nil)
	id := mustRecord(t, h, goErr("/ws", "fp", "undefined: x"))
	if err := h.Explain(ctx, id, Explanation{RootCause: "r", ContentHash: "c", MessageHash: "m"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.Cached(ctx, "/ws", "fp", "c", "m", time.Hour); err != nil || !ok {
		t.Errorf("Cached after migration = %v, %v", ok, err)
	}
}

// TestOpenHistory covers the two ways the history is used: the agent's
// (prune to a limit, work on without the search index) and
// `kodyls history search`'s (the index is required).
func TestOpenHistory(t *testing.T) {
	ctx := testCtx(t)
	t.Run("prunes to the limit", func(t *testing.T) {
		st := openTestStore(t, t.TempDir())
		h, err := OpenHistory(ctx, st, HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h.now = (&testClock{t: time.Now()}).now
		for i := range 3 {
			mustRecord(t, h, goErr("/ws", fmt.Sprintf("fp%d", i), fmt.Sprintf("undefined: name%d", i)))
		}
		h, err = OpenHistory(ctx, st, HistoryOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := h.Stats(ctx); err != nil || s.Errors != 2 {
			t.Errorf("after opening with Limit 2: %d errors, %v; want 2", s.Errors, err)
		}
		if got, err := h.Search(ctx, "", "name2", 5); err != nil || len(got) != 1 || got[0].Fingerprint != "fp2" {
			t.Errorf("Search(name2) = %+v, %v; want the newest error", got, err)
		}
	})
	t.Run("without the index", func(t *testing.T) {
		dir := t.TempDir()
		st := openTestStore(t, dir)
		// A file where the index directory should be can be neither
		// opened nor replaced: kodyls does not delete what it did not make.
		if err := os.WriteFile(filepath.Join(dir, IndexDir), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenHistory(ctx, st, HistoryOptions{RequireIndex: true}); err == nil || !strings.Contains(err.Error(), "open the error index") {
			t.Fatalf("OpenHistory with RequireIndex = %v, want the index error", err)
		}
		var logged bytes.Buffer
		h, err := OpenHistory(ctx, st, HistoryOptions{Log: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatalf("OpenHistory without RequireIndex: %v", err)
		}
		if !strings.Contains(logged.String(), "error index unavailable") {
			t.Errorf("the degraded index was not logged: %q", logged.String())
		}
		mustRecord(t, h, goErr("/ws", "fp", "undefined: x"))
		if got, err := h.Similar(ctx, "/ws", goErr("/ws", "fp", "undefined: x"), 5); err != nil || len(got) != 1 || !got[0].Exact {
			t.Errorf("Similar without the index = %+v, %v; want the exact match", got, err)
		}
		if _, err := h.Search(ctx, "", "undefined", 5); err == nil {
			t.Error("Search without the index succeeded")
		}
	})
	if _, err := OpenHistory(ctx, nil, HistoryOptions{}); err == nil {
		t.Error("OpenHistory with no store succeeded")
	}
}

// TestSearchFindsAWorkspacesErrorAmongManyOthers: a workspace's only
// match is found though other workspaces' errors rank above it, many
// times over.
func TestSearchFindsAWorkspacesErrorAmongManyOthers(t *testing.T) {
	h, _, _ := openTestHistory(t)
	ctx := testCtx(t)
	for i := range 30 {
		mustRecord(t, h, goErr("/ws/other", fmt.Sprintf("o%d", i), fmt.Sprintf("undefined handler handler%d", i)))
	}
	mine := mustRecord(t, h, goErr("/ws/mine", "m1", "undefined handler for the route /orders"))
	if got, err := h.Search(ctx, "/ws/mine", "undefined handler", 5); err != nil || len(got) != 1 || got[0].ErrorID != mine {
		t.Errorf("Search in /ws/mine = %+v, %v; want its one error", got, err)
	}
	e := goErr("/ws/mine", "m2", "undefined handler handler7")
	if got, err := h.Similar(ctx, "/ws/mine", e, 5); err != nil || len(got) != 1 || got[0].ErrorID != mine {
		t.Errorf("Similar in /ws/mine = %+v, %v; want its one error", got, err)
	}
}
