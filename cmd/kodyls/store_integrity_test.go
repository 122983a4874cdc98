package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// runBinAt is runBinStdin with the binary at bin.
func runBinAt(t *testing.T, bin string, env []string, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// storeCtx is a context for opening the store from a test.
func storeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// damageTable overwrites the root page of table in the store of env with
// 0xdead: the header and the schema stay sound, so the file opens, and
// only a query that reaches the table finds the damage.
func damageTable(t *testing.T, env []string, table string) string {
	t.Helper()
	ctx := storeCtx(t)
	st, err := index.OpenStore(ctx, dataDir(t, env))
	if err != nil {
		t.Fatal(err)
	}
	var root, size int64
	if err := st.Reader().QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := st.Reader().QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	db := st.Path()
	if err := st.Close(); err != nil { // the last close checkpoints the WAL into the file
		t.Fatal(err)
	}
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xde, 0xad}, int(size/2)), (root-1)*size); err != nil {
		t.Fatal(err)
	}
	return db
}

// storeMessages returns the window/showMessage texts of s that contain
// want.
func storeMessages(s interface{ Messages() []string }, want string) []string {
	var out []string
	for _, m := range s.Messages() {
		if strings.Contains(m, want) {
			out = append(out, m)
		}
	}
	return out
}

// TestStoreFaultDamagedInTheMiddle: a kodyls.db damaged in the middle
// (the root page of the errors table overwritten; the header is sound, so
// it opens) is reported as damaged, with what to do, by every command
// that meets the damage, by doctor, which checks every page, and once by
// the language server when an explanation meets it.
func TestStoreFaultDamagedInTheMiddle(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	for _, ws := range []string{repo.Dir, brokenGoRepo(t).Dir, brokenGoRepo(t).Dir} {
		explainOffline(t, env, ws, "someName")
	}
	db := damageTable(t, env, "errors")
	says := func(what, text string) {
		t.Helper()
		if !strings.Contains(text, "kodyls database is damaged") || !strings.Contains(text, db) || !strings.Contains(text, "move it aside or delete it") {
			t.Errorf("%s does not say the database is damaged and what to do:\n%s", what, text)
		}
	}

	says("explain", explainOffline(t, env, repo.Dir, "otherName"))
	out, errOut, code := runBin(t, env, repo.Dir, "history", "stats")
	if code != 1 {
		t.Errorf("history stats: code %d, want 1\n%s%s", code, out, errOut)
	}
	says("history stats", errOut)
	out, errOut, code = runBin(t, env, repo.Dir, "doctor")
	if code != 1 || strings.Contains(out, "no problems found") {
		t.Errorf("doctor: code %d, want 1 with a problem\n%s%s", code, out, errOut)
	}
	says("doctor", out)

	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	for range 2 {
		var res contract.ExplainResult
		if err := s.ExecuteCommand(contract.CommandExplainError, contract.ExplainArgs{Text: undefinedOutput("serverName"), Offline: true}, &res); err != nil {
			t.Fatalf("explain through the server: %v", err)
		}
	}
	s.AwaitIdle("")
	if got := storeMessages(s, "kodyls database is damaged"); len(got) != 1 {
		t.Errorf("the editor was told of the damage %d times, want once: %q", len(got), s.Messages())
	} else {
		says("the server", got[0])
	}
	s.Shutdown()
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the damaged database is gone: %v", err)
	}
}

// readOnlyDatabase makes the kodyls.db of env read-only, its directory
// staying writable, and returns the kodyls binary to run against it.
// Without root the file is chmod 444. Root writes such a file all the
// same, so there the binary returned is a script that runs kodyls in a
// private mount namespace where the file is bind-mounted read-only.
func readOnlyDatabase(t *testing.T, db string) string {
	t.Helper()
	bin := lsptest.BuildBinary(t)
	if os.Geteuid() != 0 {
		if err := os.Chmod(db, 0o444); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(db, 0o600) })
		return bin
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("root, and unshare is not installed to make the database read-only")
	}
	ns := []string{"--mount", "--propagation", "private", "sh", "-c", `mount -o bind,ro "$1" "$1" && shift && exec "$@"`, "sh", db}
	if out, err := exec.Command(unshare, append(ns, "true")...).CombinedOutput(); err != nil {
		t.Skipf("root, and no private mount namespace to make the database read-only (%v: %s)", err, bytes.TrimSpace(out))
	}
	script := filepath.Join(t.TempDir(), "kodyls-readonly-db")
	quoted := make([]string, len(ns))
	for i, a := range ns {
		quoted[i] = shQuote(a)
	}
	body := "#!/bin/sh\nexec " + shQuote(unshare) + " " + strings.Join(quoted, " ") + " " + shQuote(bin) + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestStoreFaultReadOnlyDatabase: a kodyls.db that cannot be written, in
// a data directory that can, is reported as such with what to do, by
// every command (not as sqlite's "attempt to write a readonly database"),
// by doctor and once by the language server; explaining works without
// the store.
func TestStoreFaultReadOnlyDatabase(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	explainOffline(t, env, repo.Dir, "firstName")
	db := filepath.Join(dataDir(t, env), index.DBFile)
	bin := readOnlyDatabase(t, db)
	says := func(what, text string) {
		t.Helper()
		if !strings.Contains(text, "kodyls database is not writable") || !strings.Contains(text, db) || !strings.Contains(text, "KODYLS_DATA_DIR") {
			t.Errorf("%s does not say the database is not writable and what to do:\n%s", what, text)
		}
		if strings.Contains(text, "readonly database") {
			t.Errorf("%s shows sqlite's own error:\n%s", what, text)
		}
	}

	out, errOut, code := runBinAt(t, bin, env, repo.Dir, undefinedOutput("secondName"), "explain", "--offline", "--json")
	if code != 0 || !strings.Contains(out, `"source": "offline"`) {
		t.Fatalf("explain with a read-only database: code %d\n%s%s", code, out, errOut)
	}
	says("explain", errOut)
	for _, args := range [][]string{{"history", "stats"}, {"history", "forget", "--all"}} {
		out, errOut, code := runBinAt(t, bin, env, repo.Dir, "", args...)
		if code != 1 {
			t.Errorf("%v: code %d, want 1\n%s%s", args, code, out, errOut)
		}
		says(strings.Join(args, " "), errOut)
	}
	out, errOut, code = runBinAt(t, bin, env, repo.Dir, "", "doctor")
	if code != 1 {
		t.Errorf("doctor: code %d, want 1\n%s%s", code, out, errOut)
	}
	says("doctor", out)

	s := lsptest.StartBinary(t, bin, fixtureRepo(t).Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	if got := storeMessages(s, "kodyls database is not writable"); len(got) != 1 {
		t.Errorf("the editor was told %d times, want once: %q", len(got), s.Messages())
	} else {
		says("the server", got[0])
	}
	s.Shutdown()
}

// seedHistory writes n distinct errors straight into the store of env, in
// one transaction: explaining that many through the binary would take
// hours.
func seedHistory(t *testing.T, env []string, n int) {
	t.Helper()
	ctx := storeCtx(t)
	st, err := index.OpenStore(ctx, dataDir(t, env))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().Add(-time.Hour).UnixMilli()
	err = st.Write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO errors (workspace, fingerprint, tool, message, template, first_seen, last_seen)
VALUES (?, ?, 'go', ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := range n {
			msg := fmt.Sprintf("undefined: seeded%d", i)
			if _, err := stmt.ExecContext(ctx, fmt.Sprintf("/ws/%d", i%7), fmt.Sprintf("seed%d", i), msg, msg, now+int64(i), now+int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// historyErrors is the distinct-error count of `kodyls history stats`.
func historyErrors(t *testing.T, env []string, dir string) int {
	t.Helper()
	out, errOut, code := runBin(t, env, dir, "history", "stats", "--json")
	var st struct {
		Errors int `json:"errors"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("history stats: code %d\n%s%s", code, out, errOut)
	}
	return st.Errors
}

// TestHistoryRetention: the history keeps rca.HistoryLimit errors over
// all workspaces, pruned by the processes that record errors; reading it
// (history stats, doctor) deletes nothing.
func TestHistoryRetention(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	over := rca.HistoryLimit + 50
	seedHistory(t, env, over)
	if n := historyErrors(t, env, repo.Dir); n != over {
		t.Fatalf("history stats counts %d errors of %d stored: reading the history pruned it", n, over)
	}
	if out, errOut, code := runBin(t, env, repo.Dir, "doctor"); code != 0 {
		t.Fatalf("doctor: code %d\n%s%s", code, out, errOut)
	}
	if n := historyErrors(t, env, repo.Dir); n != over {
		t.Fatalf("after doctor, history stats counts %d errors of %d stored", n, over)
	}
	// Explaining records: the history is pruned to the limit as it is
	// opened, then the new error is added.
	explainOffline(t, env, repo.Dir, "newName")
	if n := historyErrors(t, env, repo.Dir); n < rca.HistoryLimit || n > rca.HistoryLimit+1 {
		t.Errorf("after explain, %d errors; want the limit, %d (+1, the error just recorded)", n, rca.HistoryLimit)
	}
}

// TestHistoryForgetFromSubdirectory: `history forget --workspace .` in a
// subdirectory of a repository forgets the errors explain recorded under
// the repository's root.
func TestHistoryForgetFromSubdirectory(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	explainOffline(t, env, repo.Dir, "someName")
	sub := filepath.Join(repo.Dir, "pkg", "inner")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBin(t, env, sub, "history", "forget", "--workspace", ".")
	if code != 0 || !strings.Contains(out, "Forgot 1 error(s)") {
		t.Fatalf("forget from a subdirectory: code %d\n%s%s", code, out, errOut)
	}
	if n := historyErrors(t, env, repo.Dir); n != 0 {
		t.Errorf("%d errors left after forgetting the workspace", n)
	}
}

// TestStoreFaultEmptiedDatabase: a kodyls.db emptied to 0 bytes is said
// to have lost its history, and the search index is made new with it
// rather than keeping documents of errors that are gone.
func TestStoreFaultEmptiedDatabase(t *testing.T) {
	env := testEnv(t)
	for _, n := range []string{"alphaThing", "betaThing", "gammaThing"} {
		explainOffline(t, env, brokenGoRepo(t).Dir, n)
	}
	db := filepath.Join(dataDir(t, env), index.DBFile)
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	errOut := explainOffline(t, env, brokenGoRepo(t).Dir, "deltaThing")
	if !strings.Contains(errOut, db+" was empty") || !strings.Contains(errOut, "history it held is lost") {
		t.Errorf("explain does not say the history was lost:\n%s", errOut)
	}
	ctx := storeCtx(t)
	st, err := index.OpenStore(ctx, dataDir(t, env))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := index.OpenHistory(ctx, st, index.HistoryOptions{RequireIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ix, err := h.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Documents != 1 {
		t.Errorf("the search index holds %d documents beside the 1 error of the new history", ix.Documents)
	}
}
