package graph

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
)

type counter struct {
	N     int
	Trail []string
}

func appendReducer(cur, up counter) counter {
	cur.N += up.N
	cur.Trail = append(cur.Trail, up.Trail...)
	return cur
}

func step(name string) Node[counter] {
	return func(_ context.Context, _ counter, _ func(agent.Event)) (counter, error) {
		return counter{N: 1, Trail: []string{name}}, nil
	}
}

func TestConditionalLoopAndReducer(t *testing.T) {
	g, err := New[counter]("loop").
		Node("a", step("a")).
		Node("b", step("b")).
		Edge("a", "b").
		Conditional("b", func(s counter) string {
			if s.N < 6 {
				return "a"
			}
			return End
		}, "a", End).
		Reduce(appendReducer).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	res, err := g.Run(context.Background(), counter{}, Options{Emit: func(e agent.Event) { kinds = append(kinds, e.Kind+":"+e.Node) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.State.Trail, ""); got != "ababab" || res.Steps != 6 {
		t.Fatalf("trail %q steps %d, want ababab in 6 steps", got, res.Steps)
	}
	if kinds[0] != "node_started:a" || kinds[1] != "node_finished:a" || len(kinds) != 12 {
		t.Fatalf("events %v", kinds)
	}
}

func TestMaxStepsStopsALoop(t *testing.T) {
	g := New[counter]("spin").Node("a", step("a")).Edge("a", "a").Reduce(appendReducer).MaxSteps(5).MustCompile()
	res, err := g.Run(context.Background(), counter{}, Options{})
	if !errors.Is(err, ErrMaxSteps) || res.State.N != 5 {
		t.Fatalf("err %v after %d steps, want ErrMaxSteps after 5", err, res.State.N)
	}
}

func TestRouterOutsideItsTargetsIsAnError(t *testing.T) {
	g := New[counter]("bad").Node("a", step("a")).Node("b", step("b")).
		Conditional("a", func(counter) string { return "c" }, "b").Edge("b", End).MustCompile()
	if _, err := g.Run(context.Background(), counter{}, Options{}); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Fatalf("err %v", err)
	}
}

func TestCompileRejectsBrokenGraphs(t *testing.T) {
	_, err := New[counter]("broken").
		Node("a", step("a")).
		Node("a", step("a")).
		Node("b", step("b")).
		Edge("a", "nowhere").
		Edge("x", "a").
		Compile()
	if err == nil {
		t.Fatal("compiled")
	}
	for _, want := range []string{`"a" added twice`, `unknown node "nowhere"`, `edge from unknown node "x"`, `"b" has no outgoing edge`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestParallelBranchesOverlapAndMergeInOrder(t *testing.T) {
	var running, peak atomic.Int32
	branch := func(name string) Node[counter] {
		return func(ctx context.Context, _ counter, emit func(agent.Event)) (counter, error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			emit(agent.Event{Kind: agent.EventAction, Tool: name})
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
			return counter{N: 1, Trail: []string{name}}, nil
		}
	}
	g := New[counter]("fan").Parallel("fan", 2, branch("x"), branch("y"), branch("z")).Edge("fan", End).Reduce(appendReducer).MustCompile()
	var tools []string
	res, err := g.Run(context.Background(), counter{}, Options{Emit: func(e agent.Event) {
		if e.Kind == agent.EventAction {
			tools = append(tools, e.Tool)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.State.Trail, ""); got != "xyz" {
		t.Fatalf("merged %q, want branch order xyz", got)
	}
	if strings.Join(tools, "") != "xyz" {
		t.Fatalf("events %v not in branch order", tools)
	}
	if peak.Load() != 2 {
		t.Fatalf("peak concurrency %d, want the cap of 2", peak.Load())
	}
}

// A run that fails at a node resumes there: the nodes before it do not run
// again, and a finished thread is not resumed.
func TestResumeFromCheckpoint(t *testing.T) {
	var runs []string
	fail := true
	node := func(name string) Node[counter] {
		return func(_ context.Context, _ counter, _ func(agent.Event)) (counter, error) {
			runs = append(runs, name)
			if name == "c" && fail {
				return counter{}, errors.New("crash")
			}
			return counter{N: 1, Trail: []string{name}}, nil
		}
	}
	g := New[counter]("chain").Node("a", node("a")).Node("b", node("b")).Node("c", node("c")).
		Edge("a", "b").Edge("b", "c").Edge("c", End).Reduce(appendReducer).MustCompile()
	cp := &MemoryCheckpointer{}
	if _, err := g.Run(context.Background(), counter{}, Options{Thread: "t1", Checkpointer: cp}); err == nil {
		t.Fatal("no error from the crashing node")
	}
	fail = false
	runs = nil
	var resumed []agent.Event
	res, err := g.Run(context.Background(), counter{}, Options{Thread: "t1", Checkpointer: cp, Emit: func(e agent.Event) {
		if e.Kind == EventResumed {
			resumed = append(resumed, e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(runs, "") != "c" || !res.Resumed || res.From != "c" || res.Steps != 3 {
		t.Fatalf("ran %v resumed=%v from %q steps %d; want only c, resumed from c at step 3", runs, res.Resumed, res.From, res.Steps)
	}
	if strings.Join(res.State.Trail, "") != "abc" || len(resumed) != 1 {
		t.Fatalf("state %v, resumed events %v", res.State.Trail, resumed)
	}
	// Finished: the next run with the same thread starts over.
	runs = nil
	if res, err = g.Run(context.Background(), counter{}, Options{Thread: "t1", Checkpointer: cp}); err != nil || res.Resumed || strings.Join(runs, "") != "abc" {
		t.Fatalf("after completion: resumed=%v ran %v err %v", res.Resumed, runs, err)
	}
	// A checkpoint of another graph is never resumed.
	other := New[counter]("other").Node("c", node("c")).Edge("c", End).MustCompile()
	_ = cp.Put(context.Background(), Checkpoint{Thread: "t2", Graph: "chain", Next: "c", State: []byte(`{}`)})
	if res, err := other.Run(context.Background(), counter{}, Options{Thread: "t2", Checkpointer: cp}); err != nil || res.Resumed {
		t.Fatalf("resumed a checkpoint of another graph: %v %v", res.Resumed, err)
	}
}

func TestRegistry(t *testing.T) {
	var r Registry
	if err := r.Register("rca", "react", "fast path", 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("rca", "react", "again", 2); err == nil {
		t.Fatal("registered twice")
	}
	_ = r.Register("rca", "plan-execute", "planned", 3)
	if v, ok := Lookup[int](&r, "rca", "plan-execute"); !ok || v != 3 {
		t.Fatalf("lookup %v %v", v, ok)
	}
	if _, ok := Lookup[string](&r, "rca", "react"); ok {
		t.Fatal("lookup ignored the type")
	}
	if n := r.Names("rca"); len(n) != 2 || n[0][0] != "plan-execute" {
		t.Fatalf("names %v", n)
	}
}

func BenchmarkNode(b *testing.B) {
	g := New[counter]("bench").Node("a", step("a")).Edge("a", End).MustCompile()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Run(context.Background(), counter{}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNodeWithMemoryCheckpoint(b *testing.B) {
	g := New[counter]("bench").Node("a", step("a")).Edge("a", End).MustCompile()
	cp := &MemoryCheckpointer{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Run(context.Background(), counter{}, Options{Thread: "t", Checkpointer: cp}); err != nil {
			b.Fatal(err)
		}
	}
}
