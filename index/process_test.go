package index

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTwoProcesses runs a second kodyls process (this test binary,
// re-executed) that writes to the same database and indexes into the same
// bleve index while this process does the same. Both start on an empty data
// dir, so they also race to create the database and the index.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	// The default wait is what users get; the tiny one makes most writes
	// miss the lock, so the queue and its flush by the other process are
	// exercised across processes too.
	t.Run("default wait", func(t *testing.T) { testTwoProcesses(t, 0) })
	t.Run("tiny wait forces queueing", func(t *testing.T) { testTwoProcesses(t, time.Millisecond) })
}

func testTwoProcesses(t *testing.T, wait time.Duration) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const n = 15

	var childOut, childErr bytes.Buffer
	cmd := startHelper(ctx, t, "writer", dir, "KODYLS_INDEX_HELPER_PREFIX=child",
		fmt.Sprintf("KODYLS_INDEX_HELPER_N=%d", n), "KODYLS_INDEX_HELPER_WAIT="+wait.String())
	cmd.Stdout, cmd.Stderr = &childOut, &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	// Two goroutines in the parent as well, so that in-process serialisation
	// and cross-process locking are exercised together.
	queuedByWriter.Store(0)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, prefix := range []string{"parentA", "parentB"} {
		wg.Go(func() { errs <- runWriter(ctx, dir, prefix, n, wait) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("parent writer: %v", err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\nstderr: %s", err, childErr.String())
	}
	for _, out := range []string{childErr.String(), childOut.String()} {
		if strings.Contains(out, "database is locked") {
			t.Errorf("child saw \"database is locked\": %s", out)
		}
	}

	var childQueued int64
	if _, err := fmt.Sscanf(strings.TrimSpace(childOut.String()), "queued=%d", &childQueued); err != nil {
		t.Errorf("child output %q: %v", childOut.String(), err)
	}
	parentQueued := queuedByWriter.Load()
	st, x := openTestSearch(t, dir)
	t.Logf("docs queued because the index was busy: parent %d, child %d; still queued at the end: %d",
		parentQueued, childQueued, mustPending(t, x))
	if wait > 0 && parentQueued+childQueued == 0 {
		t.Error("tiny wait: nothing was queued, so the queue path was not exercised")
	}
	// Count applies whatever is still queued.
	wantDocs := uint64(3 * n * batchSize)
	if got := mustCount(t, x); got != wantDocs {
		t.Errorf("Count = %d, want %d", got, wantDocs)
	}
	if p := mustPending(t, x); p != 0 {
		t.Errorf("Pending = %d after flush, want 0", p)
	}
	for _, prefix := range []string{"child", "parentA", "parentB"} {
		for i := 0; i < n; i++ {
			for j := 0; j < batchSize; j++ {
				id := docID(prefix, i, j)
				if got, _ := topID(t, x, token(id)); got != id {
					t.Errorf("search for %s: top hit %q", id, got)
				}
			}
		}
		if rows := countRows(t, st, `SELECT count(*) FROM meta WHERE key LIKE ?`, prefix+"-%"); rows != n {
			t.Errorf("%s meta rows = %d, want %d", prefix, rows, n)
		}
		if opens := countRows(t, st, `SELECT opens FROM workspaces WHERE path = ?`, "/ws/"+prefix); opens != n {
			t.Errorf("%s opens = %d, want %d", prefix, opens, n)
		}
	}
}

// TestHeldLockOtherProcess has a child process hold the index open longer
// than the wait: Index must queue (nothing lost), Search must fail promptly
// with ErrBusy, and once the child lets go the queue must be applied.
func TestHeldLockOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	_, x := openTestSearch(t, dir)
	mustIndex(t, x, errorDocs...)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	child := startPiped(ctx, t, "hold", dir)
	cmd, stdin, stdout, childErr := child.cmd, child.stdin, child.stdout, child.stderr
	released := false
	release := func() {
		if !released {
			released = true
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("hold child: %v\nstderr: %s", err, childErr.String())
			}
		}
	}
	defer release()

	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "READY" {
			err = fmt.Errorf("child said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("hold child: %v\nstderr: %s", err, childErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("hold child never got ready\nstderr: %s", childErr.String())
	}

	t.Logf("hold child ready")
	// Default waits: this is the behaviour users get.
	start := time.Now()
	held := []Doc{
		{ID: "h1", Fields: map[string]string{"message": "held while busy alpha"}},
		{ID: "h2", Fields: map[string]string{"message": "held while busy beta"}},
	}
	if err := x.Index(ctx, held); err != nil {
		t.Fatalf("Index while held: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Index took %s while held", d)
	} else {
		t.Logf("Index while held returned after %s", d.Round(time.Millisecond))
	}
	if p := mustPending(t, x); p != len(held) {
		t.Errorf("Pending = %d, want %d", p, len(held))
	}
	start = time.Now()
	_, err := x.Search(ctx, "alpha", 5)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("Search err = %v, want ErrBusy", err)
	}
	if err != nil && !strings.Contains(err.Error(), "try again") {
		t.Errorf("busy error does not say what to do: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Search took %s while held", d)
	} else {
		t.Logf("Search while held returned ErrBusy after %s", d.Round(time.Millisecond))
	}

	release()
	if id, _ := topID(t, x, "alpha"); id != "h1" {
		t.Errorf("after release: top hit %q, want h1", id)
	}
	if p := mustPending(t, x); p != 0 {
		t.Errorf("Pending after release = %d, want 0", p)
	}
	if n := mustCount(t, x); n != uint64(len(errorDocs)+len(held)) {
		t.Errorf("Count = %d, want %d", n, len(errorDocs)+len(held))
	}
}

// TestHistorySharedBetweenProcesses: the server holds the index for its
// lookups while a terminal's `kodyls explain` records an error, looks up
// errors like it and stores an explanation. The server does not let go
// for that process's writes: they wait in the queue, and the server's
// lookups find them once they are applyEvery old.
func TestHistorySharedBetweenProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	ctx := testCtx(t)
	dir := t.TempDir()
	h, holding := holdingHistory(t, dir, "serverWord")

	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	child := startPiped(cctx, t, "recorder", dir)
	cmd, stdin, stdout, childErr := child.cmd, child.stdin, child.stdout, child.stderr
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("recorder: %v\nstderr: %s", err, childErr.String())
		}
	}()
	if _, err := io.WriteString(stdin, "w\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ok ") {
		t.Fatalf("recorder said %q, %v\nstderr: %s", line, err, childErr.String())
	}
	if !holding() {
		t.Error("the server let go of the index for the other process's write")
	}
	if p := mustPending(t, h.x); p == 0 {
		t.Error("nothing queued: the other process wrote to the index the server was reading")
	}
	// Not searchable yet is fine; within applyEvery it must be.
	time.Sleep(applyEvery)
	hits, err := h.Search(ctx, "", "sharedName0", 1)
	if err != nil || len(hits) != 1 || hits[0].Fingerprint != "shared-sharedName0" {
		t.Errorf("server's search for the other process's error = %+v, %v", hits, err)
	} else if hits[0].Latest == nil || hits[0].Latest.RootCause != "sharedName0 is not declared" {
		t.Errorf("the other process's explanation is missing: %+v", hits[0].Latest)
	}
	if p := mustPending(t, h.x); p != 0 {
		t.Errorf("Pending = %d after the server's lookup, want 0", p)
	}
}
