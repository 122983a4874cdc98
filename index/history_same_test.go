package index

import (
	"bytes"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestCachedServesTheSameErrorOnly: one fingerprint names a kind of
// error ("No module named <id>"); an explanation of one error of the
// kind is not the cached answer to another in the same code.
func TestCachedServesTheSameErrorOnly(t *testing.T) {
	h, _, _ := openTestHistory(t)
	ctx := testCtx(t)
	req := goErr("/ws", "fp", "No module named 'requests'")
	id := mustRecord(t, h, req)
	if err := h.Explain(ctx, id, Explanation{RootCause: "ROOT-REQ", Source: SourceModel, ContentHash: "c",
		Message: req.Message, MessageHash: "req@1"}); err != nil {
		t.Fatal(err)
	}
	np := goErr("/ws", "fp", "No module named 'numpy'")
	if id2 := mustRecord(t, h, np); id2 != id {
		t.Fatalf("ids %d and %d, want the one error row of the kind", id, id2)
	}
	if ex, ok, err := h.Cached(ctx, "/ws", "fp", "c", "np@2", time.Hour); err != nil || ok {
		t.Fatalf("Cached for numpy = %+v, %v, %v; want a miss", ex, ok, err)
	}
	if ex, ok, err := h.Cached(ctx, "/ws", "fp", "c", "req@1", time.Hour); err != nil || !ok || ex.RootCause != "ROOT-REQ" {
		t.Fatalf("Cached for requests = %+v, %v, %v; want ROOT-REQ", ex, ok, err)
	}

	// The row now holds numpy's message; its explanation still says
	// which error it was given for.
	got, err := h.Similar(ctx, "/ws", np, 5)
	if err != nil || len(got) == 0 || got[0].Latest == nil {
		t.Fatalf("Similar = %+v, %v", got, err)
	}
	if got[0].Message != np.Message || got[0].Latest.Message != req.Message || got[0].Latest.RootCause != "ROOT-REQ" {
		t.Errorf("Similar = message %q, explanation %q given for %q", got[0].Message, got[0].Latest.RootCause, got[0].Latest.Message)
	}

	// With numpy explained too, each message finds its own explanation
	// among the row's, whichever is the latest.
	if err := h.Explain(ctx, id, Explanation{RootCause: "ROOT-NP", Source: SourceModel, ContentHash: "c",
		Message: np.Message, MessageHash: "np@2"}); err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]string{req.Message: "ROOT-REQ", np.Message: "ROOT-NP", "No module named 'pandas'": "ROOT-NP"} {
		got, err := h.Similar(ctx, "/ws", goErr("/ws", "fp", msg), 5)
		if err != nil || len(got) == 0 || got[0].Latest == nil || got[0].Latest.RootCause != want {
			t.Errorf("Similar(%q) = %+v, %v; want the explanation %s", msg, got, err, want)
		}
	}
}

// TestMigrationKeepsOldExplanationsFromBeingServedAsTheSameError: an
// explanation stored before kodyls kept what it was given for could be
// of any error of its kind, so it is no cached answer after the upgrade;
// it is still listed, without a message of its own.
func TestMigrationKeepsOldExplanationsFromBeingServedAsTheSameError(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:6] {
		for _, stmt := range m {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now().UnixMilli()
	for _, stmt := range []string{
		`INSERT INTO errors (id, workspace, fingerprint, tool, message, template, first_seen, last_seen, count)
		 VALUES (1, '/ws', 'fp', 'python', 'No module named ''numpy''', 'No module named <id>', 1, 1, 2)`,
		`INSERT INTO explanations (error_id, root_cause, steps, source, created_at, content_hash)
		 VALUES (1, 'ROOT-REQ', '[]', 'model', ` + strconv.FormatInt(now, 10) + `, 'c')`,
		`PRAGMA user_version = 6`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t, dir)
	if v, err := st.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
	h := newLocalHistory(st, nil)
	for _, key := range []string{"", "anything"} {
		if ex, ok, err := h.Cached(ctx, "/ws", "fp", "c", key, time.Hour); err != nil || ok {
			t.Errorf("Cached(%q) after the upgrade = %+v, %v, %v; want a miss", key, ex, ok, err)
		}
	}
	got, err := h.Similar(ctx, "/ws", ErrorRecord{Workspace: "/ws", Fingerprint: "fp", Message: "No module named 'numpy'"}, 5)
	if err != nil || len(got) != 1 || got[0].Latest == nil || got[0].Latest.RootCause != "ROOT-REQ" || got[0].Latest.Message != "" || got[0].Latest.MessageHash != "" {
		t.Fatalf("Similar after the upgrade = %+v, %v", got, err)
	}
}

// TestForgetRemovesTheBytes: forgetting the history leaves no copy of
// the forgotten errors' text in kodyls.db, its write-ahead log or the
// files of the search index, and keeps what is not forgotten.
func TestForgetRemovesTheBytes(t *testing.T) {
	h, st, _ := openTestHistory(t)
	ctx := testCtx(t)
	const marker = "zanzibar-quokka-7731"
	mustRecord(t, h, goErr("/ws/c", "kept", "undefined: keptName"))
	for i, ws := range []string{"/ws/a", "/ws/b"} {
		e := goErr(ws, "fp"+string(rune('0'+i)), "undefined: "+marker)
		e.Raw = "main.go:3:2: undefined: " + marker + "\n"
		id := mustRecord(t, h, e)
		if err := h.Explain(ctx, id, Explanation{RootCause: marker + " is not declared", Source: SourceModel, Message: e.Message}); err != nil {
			t.Fatal(err)
		}
	}
	holds := func() []string {
		var in []string
		err := filepath.WalkDir(st.Dir(), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(marker)) {
				in = append(in, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	if len(holds()) == 0 {
		t.Fatal("the marker is in no file before forgetting: the test proves nothing")
	}
	for _, ws := range []string{"/ws/a", "/ws/b"} {
		if n, err := h.Forget(ctx, ws); err != nil || n != 1 {
			t.Fatalf("Forget(%s) = %d, %v", ws, n, err)
		}
	}
	if in := holds(); len(in) > 0 {
		t.Errorf("the forgotten text is still in %v", in)
	}
	if got, err := h.Search(ctx, "", "keptName", 5); err != nil || len(got) != 1 {
		t.Errorf("the error not forgotten: %+v, %v", got, err)
	}
}
