package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
)

func TestCheckpointsKeepTheLatestPerThread(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	cps := openTestStore(t, dir).Checkpoints()
	if _, ok, err := cps.Get(ctx, "t1"); ok || err != nil {
		t.Fatalf("Get of an unknown thread: ok %v, err %v", ok, err)
	}
	for step := 1; step <= 3; step++ {
		cp := agent.Checkpoint{Thread: "t1", Graph: "react", Step: step, Next: "act", State: json.RawMessage(fmt.Sprintf(`{"n":%d}`, step))}
		if err := cps.Put(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	if err := cps.Put(ctx, agent.Checkpoint{Thread: "t2", Graph: "plan", Step: 1, Next: "execute", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	// Another process (a second store on the same data dir) sees them.
	other := openTestStore(t, dir).Checkpoints()
	got, ok, err := other.Get(ctx, "t1")
	if err != nil || !ok {
		t.Fatalf("Get: ok %v, err %v", ok, err)
	}
	if got.Graph != "react" || got.Step != 3 || got.Next != "act" || string(got.State) != `{"n":3}` || got.Done || time.Since(got.UpdatedAt) > time.Minute {
		t.Errorf("latest checkpoint = %+v", got)
	}
	if err := cps.Put(ctx, agent.Checkpoint{Thread: "t1", Graph: "react", Step: 4, Next: graph.End, State: json.RawMessage(`{"n":4}`), Done: true}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := other.Get(ctx, "t1"); !got.Done || got.Step != 4 {
		t.Errorf("finished thread = %+v, want marked done", got)
	}
	if err := cps.Delete(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := other.Get(ctx, "t2"); ok {
		t.Error("a deleted thread is still there")
	}
	if err := cps.Put(ctx, agent.Checkpoint{Graph: "react"}); err == nil {
		t.Error("a checkpoint without a thread was accepted")
	}
}

func TestCheckpointsPrune(t *testing.T) {
	ctx := testCtx(t)
	st := openTestStore(t, t.TempDir())
	cps := st.Checkpoints()
	put := func(thread string, done bool) {
		t.Helper()
		if err := cps.Put(ctx, agent.Checkpoint{Thread: thread, Graph: "react", Step: 1, Next: "reason", State: json.RawMessage(`{}`), Done: done}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		put(fmt.Sprintf("open-%d", i), false)
		time.Sleep(2 * time.Millisecond) // distinct updated_at, newest last
	}
	put("finished", true)
	put("stale", false)
	err := st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE checkpoints SET updated_at = ? WHERE thread = 'stale'`, time.Now().Add(-8*24*time.Hour).UnixMilli())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := cps.Prune(ctx, 3, CheckpointAge)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	rows, err := st.Reader().QueryContext(ctx, `SELECT thread FROM checkpoints ORDER BY thread`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var th string
		_ = rows.Scan(&th)
		kept = append(kept, th)
	}
	rows.Close()
	// The finished and the stale thread go, then the oldest open ones
	// beyond three.
	if fmt.Sprint(kept) != "[open-2 open-3 open-4]" || n != 4 {
		t.Errorf("kept %v after deleting %d, want [open-2 open-3 open-4] after 4", kept, n)
	}
	if _, err := cps.Prune(ctx, 0, CheckpointAge); err == nil {
		t.Error("Prune(0) was accepted: an unset limit must not wipe the checkpoints")
	}
}

// TestHistoryPruneTakesCheckpoints: the history's retention, applied when a
// process opens it, prunes the checkpoints as well.
func TestHistoryPruneTakesCheckpoints(t *testing.T) {
	ctx := testCtx(t)
	st := openTestStore(t, t.TempDir())
	cps := st.Checkpoints()
	_ = cps.Put(ctx, agent.Checkpoint{Thread: "done", Graph: "react", Next: graph.End, State: json.RawMessage(`{}`), Done: true})
	_ = cps.Put(ctx, agent.Checkpoint{Thread: "open", Graph: "react", Next: "reason", State: json.RawMessage(`{}`)})
	if _, err := OpenHistory(ctx, st, HistoryOptions{Limit: 100}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cps.Get(ctx, "done"); ok {
		t.Error("a finished thread survived the history's prune")
	}
	if _, ok, _ := cps.Get(ctx, "open"); !ok {
		t.Error("an unfinished thread was pruned")
	}
}

// counterState is the state of the graph in the resume test.
type counterState struct {
	Trail []string `json:"trail"`
}

// TestGraphResumesFromTheStore: a graph run that fails half-way resumes, in
// a store opened afresh on the same data dir, at the node that failed.
func TestGraphResumesFromTheStore(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	fail := true
	var ran []string
	node := func(name string) graph.Node[counterState] {
		return func(_ context.Context, s counterState, _ func(agent.Event)) (counterState, error) {
			ran = append(ran, name)
			if name == "c" && fail {
				return s, errors.New("crash")
			}
			s.Trail = append(s.Trail, name)
			return s, nil
		}
	}
	g := graph.New[counterState]("abc").Node("a", node("a")).Node("b", node("b")).Node("c", node("c")).
		Edge("a", "b").Edge("b", "c").Edge("c", graph.End).MustCompile()

	st1, err := OpenStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, counterState{}, graph.Options{Thread: "th", Checkpointer: st1.Checkpoints()}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	_ = st1.Close()

	fail = false
	ran = nil
	st2 := openTestStore(t, dir)
	res, err := g.Run(ctx, counterState{}, graph.Options{Thread: "th", Checkpointer: st2.Checkpoints()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.From != "c" || fmt.Sprint(ran) != "[c]" || strings.Join(res.State.Trail, "") != "abc" {
		t.Errorf("resumed run: %+v, nodes run %v", res, ran)
	}
}

// runCheckpointWriter plays a second kodyls process saving checkpoints:
// n steps of its own thread, each also saved to a thread shared with the
// other process.
func runCheckpointWriter(ctx context.Context, dir, prefix string, n int) error {
	st, err := OpenStore(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	cps := st.Checkpoints()
	for i := 1; i <= n; i++ {
		state := json.RawMessage(fmt.Sprintf(`{"writer":%q,"step":%d}`, prefix, i))
		for _, th := range []string{prefix, "shared"} {
			if err := cps.Put(ctx, agent.Checkpoint{Thread: th, Graph: "react", Step: i, Next: "act", State: state}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestCheckpointsTwoProcesses: two processes saving checkpoints to the
// same data dir at once both succeed, and each thread ends with a whole
// checkpoint of one writer.
func TestCheckpointsTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 40
	var childErr bytes.Buffer
	cmd := startHelper(ctx, t, "checkpoints", dir, "KODYLS_INDEX_HELPER_PREFIX=child", fmt.Sprintf("KODYLS_INDEX_HELPER_N=%d", n))
	cmd.Stderr = &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var parentErr error
	wg.Go(func() { parentErr = runCheckpointWriter(ctx, dir, "parent", n) })
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, childErr.String())
	}
	if parentErr != nil {
		t.Fatalf("parent: %v", parentErr)
	}
	cps := openTestStore(t, dir).Checkpoints()
	for _, th := range []string{"child", "parent"} {
		cp, ok, err := cps.Get(ctx, th)
		if err != nil || !ok || cp.Step != n || string(cp.State) != fmt.Sprintf(`{"writer":%q,"step":%d}`, th, n) {
			t.Errorf("thread %s: %+v ok %v err %v", th, cp, ok, err)
		}
	}
	cp, _, _ := cps.Get(ctx, "shared")
	var s struct {
		Writer string `json:"writer"`
		Step   int    `json:"step"`
	}
	if err := json.Unmarshal(cp.State, &s); err != nil || s.Step != cp.Step || (s.Writer != "child" && s.Writer != "parent") {
		t.Errorf("shared thread holds a torn checkpoint: %+v (%s)", cp, cp.State)
	}
}

// BenchmarkCheckpointPut measures saving one checkpoint of an agent run of
// a realistic size (about 8 KB of conversation) to the store.
func BenchmarkCheckpointPut(b *testing.B) {
	ctx := context.Background()
	st, err := OpenStore(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cps := st.Checkpoints()
	state, _ := json.Marshal(map[string]any{"messages": strings.Repeat("func main() { m[k] = v }\n", 320), "iteration": 3})
	b.SetBytes(int64(len(state)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := cps.Put(ctx, agent.Checkpoint{Thread: fmt.Sprintf("t%d", i%50), Graph: "react", Step: i, Next: "act", State: state}); err != nil {
			b.Fatal(err)
		}
	}
}
