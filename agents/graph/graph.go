// Package graph is the engine the kodyls agent strategies run on: a graph
// of named nodes over a typed state, joined by plain and conditional
// edges, run step by step under a max-step guard, reporting its progress
// as agent events and saving its state after every node to a
// [Checkpointer] so that an interrupted run resumes where it stopped.
//
// A node returns an update of the state; the graph's reducer merges it
// into the current state (by default the update replaces it). Parallel
// nodes run several branches on the same state concurrently and merge
// their updates with the same reducer, in branch order, so a run is
// deterministic whatever the scheduling.
//
// The state must survive a JSON round trip when a checkpointer is used:
// that is what is saved and what a resumed run starts from.
package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
)

// End is the target of an edge that ends the run.
const End = "__end__"

// DefaultMaxSteps bounds a run whose graph sets no MaxSteps.
const DefaultMaxSteps = 100

// Event kinds the engine reports, besides the agent events its nodes emit.
const (
	EventNodeStarted  = "node_started"
	EventNodeFinished = "node_finished"
	EventResumed      = "resumed" // a run continues from a checkpoint
)

// Node computes an update of the state. emit reports progress (tool
// calls, plan events) and is never nil.
type Node[S any] func(ctx context.Context, s S, emit func(agent.Event)) (S, error)

// Router picks the next node after a conditional edge's source ran.
type Router[S any] func(s S) string

// Reducer merges a node's update into the current state.
type Reducer[S any] func(cur, update S) S

// ErrMaxSteps means a run took more steps than its graph allows: a loop
// that did not converge.
var ErrMaxSteps = errors.New("graph: step limit reached")

type node[S any] struct {
	run      Node[S]
	branches []Node[S] // parallel nodes
	limit    int       // parallel nodes: concurrency cap
	next     string
	route    Router[S]
	targets  []string // a router's possible targets
}

// Graph is a compiled graph, safe for concurrent runs.
type Graph[S any] struct {
	name     string
	entry    string
	nodes    map[string]*node[S]
	order    []string
	reduce   Reducer[S]
	maxSteps int
}

// Builder assembles a graph. Errors are collected and reported by Compile.
type Builder[S any] struct {
	g    Graph[S]
	errs []error
}

// New starts a graph with a name (the checkpoint records it, so a
// checkpoint is never resumed on another graph).
func New[S any](name string) *Builder[S] {
	return &Builder[S]{g: Graph[S]{name: name, nodes: map[string]*node[S]{}}}
}

func (b *Builder[S]) add(name string, n *node[S]) *Builder[S] {
	switch {
	case name == "" || name == End:
		b.errs = append(b.errs, fmt.Errorf("graph %s: invalid node name %q", b.g.name, name))
	case b.g.nodes[name] != nil:
		b.errs = append(b.errs, fmt.Errorf("graph %s: node %q added twice", b.g.name, name))
	default:
		b.g.nodes[name] = n
		b.g.order = append(b.g.order, name)
		if b.g.entry == "" {
			b.g.entry = name
		}
	}
	return b
}

// Node adds a node. The first node added is the entry unless Entry says
// otherwise.
func (b *Builder[S]) Node(name string, fn Node[S]) *Builder[S] {
	return b.add(name, &node[S]{run: fn})
}

// Parallel adds a node that runs branches concurrently, at most limit at
// a time (<= 0: all at once), each on the state as it was before the node,
// and merges their updates with the reducer in branch order.
func (b *Builder[S]) Parallel(name string, limit int, branches ...Node[S]) *Builder[S] {
	return b.add(name, &node[S]{branches: branches, limit: limit})
}

// Edge joins from to to: after from runs, to runs (End ends the run).
func (b *Builder[S]) Edge(from, to string) *Builder[S] {
	n := b.g.nodes[from]
	if n == nil {
		b.errs = append(b.errs, fmt.Errorf("graph %s: edge from unknown node %q", b.g.name, from))
		return b
	}
	if n.next != "" || n.route != nil {
		b.errs = append(b.errs, fmt.Errorf("graph %s: node %q has two outgoing edges", b.g.name, from))
	}
	n.next = to
	return b
}

// Conditional joins from to the node route picks, one of targets.
func (b *Builder[S]) Conditional(from string, route Router[S], targets ...string) *Builder[S] {
	n := b.g.nodes[from]
	if n == nil {
		b.errs = append(b.errs, fmt.Errorf("graph %s: edge from unknown node %q", b.g.name, from))
		return b
	}
	if n.next != "" || n.route != nil {
		b.errs = append(b.errs, fmt.Errorf("graph %s: node %q has two outgoing edges", b.g.name, from))
	}
	n.route, n.targets = route, targets
	return b
}

// Entry sets the node a run starts at.
func (b *Builder[S]) Entry(name string) *Builder[S] { b.g.entry = name; return b }

// Reduce sets the reducer; the default replaces the state by the update.
func (b *Builder[S]) Reduce(r Reducer[S]) *Builder[S] { b.g.reduce = r; return b }

// MaxSteps bounds the number of node runs of one run (default
// DefaultMaxSteps).
func (b *Builder[S]) MaxSteps(n int) *Builder[S] { b.g.maxSteps = n; return b }

// Compile checks the graph: an entry, every edge's target known, every
// node with an outgoing edge.
func (b *Builder[S]) Compile() (*Graph[S], error) {
	errs := slices.Clone(b.errs)
	g := b.g
	known := func(t string) bool { return t == End || g.nodes[t] != nil }
	if g.nodes[g.entry] == nil {
		errs = append(errs, fmt.Errorf("graph %s: no entry node", g.name))
	}
	for _, name := range g.order {
		n := g.nodes[name]
		switch {
		case n.next == "" && n.route == nil:
			errs = append(errs, fmt.Errorf("graph %s: node %q has no outgoing edge", g.name, name))
		case n.route != nil && len(n.targets) == 0:
			errs = append(errs, fmt.Errorf("graph %s: conditional edge from %q lists no targets", g.name, name))
		case n.next != "" && !known(n.next):
			errs = append(errs, fmt.Errorf("graph %s: edge %s → unknown node %q", g.name, name, n.next))
		}
		for _, t := range n.targets {
			if !known(t) {
				errs = append(errs, fmt.Errorf("graph %s: edge %s → unknown node %q", g.name, name, t))
			}
		}
		if n.run == nil && len(n.branches) == 0 {
			errs = append(errs, fmt.Errorf("graph %s: node %q does nothing", g.name, name))
		}
	}
	if g.reduce == nil {
		g.reduce = func(_, update S) S { return update }
	}
	if g.maxSteps <= 0 {
		g.maxSteps = DefaultMaxSteps
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &g, nil
}

// MustCompile is Compile for graphs built from constants: it panics on an
// error, which is a programming error.
func (b *Builder[S]) MustCompile() *Graph[S] {
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	return g
}

// Name is the graph's name.
func (g *Graph[S]) Name() string { return g.name }

// Nodes lists the node names in the order they were added.
func (g *Graph[S]) Nodes() []string { return slices.Clone(g.order) }

// Options are the per-run settings of [Graph.Run].
type Options struct {
	// Thread names the run for the checkpointer; empty: no checkpoints.
	Thread string
	// Checkpointer saves the state after every node; nil: none.
	Checkpointer Checkpointer
	// Emit receives the engine's and the nodes' events, synchronously;
	// nil discards them.
	Emit func(agent.Event)
	// Fresh ignores an unfinished checkpoint of the thread and starts over.
	Fresh bool
	// Log receives the warning when checkpoints cannot be read or saved;
	// nil discards it.
	Log *slog.Logger
}

// Result is what a run ends with.
type Result[S any] struct {
	State   S
	Steps   int    // node runs, counting those before a resume
	Resumed bool   // the run continued from a checkpoint
	From    string // the node a resumed run continued at
}

// Run runs the graph from its entry on init, or, when opt names a thread
// with an unfinished checkpoint of this graph, from that checkpoint. The
// state reached so far is returned with any error.
//
// Checkpoints are a convenience, not the work: when the checkpointer
// cannot read the thread (a damaged store) the run starts over, and when
// it cannot save (a full disk) the run logs it once and goes on without
// checkpoints.
func (g *Graph[S]) Run(ctx context.Context, init S, opt Options) (Result[S], error) {
	emit := opt.Emit
	if emit == nil {
		emit = func(agent.Event) {}
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cp := opt.Checkpointer
	if opt.Thread == "" {
		cp = nil
	}
	res := Result[S]{State: init}
	at := g.entry
	if cp != nil && !opt.Fresh {
		saved, ok, err := cp.Get(ctx, opt.Thread)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			log.Warn("cannot read the checkpoint; the run starts over", "graph", g.name, "thread", opt.Thread, "error", err)
			ok = false
		}
		if ok && saved.Graph == g.name && !saved.Done && g.nodes[saved.Next] != nil {
			var s S
			if err := json.Unmarshal(saved.State, &s); err == nil {
				res.State, res.Steps, res.Resumed, res.From = s, saved.Step, true, saved.Next
				at = saved.Next
				emit(agent.Event{Kind: EventResumed, Node: at, Iteration: saved.Step, Text: fmt.Sprintf("continuing %s at %s after step %d", g.name, at, saved.Step)})
			}
		}
	}
	for at != End {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if res.Steps >= g.maxSteps {
			return res, fmt.Errorf("%w: graph %s ran %d steps", ErrMaxSteps, g.name, res.Steps)
		}
		n := g.nodes[at]
		res.Steps++
		emit(agent.Event{Kind: EventNodeStarted, Node: at, Iteration: res.Steps})
		start := time.Now()
		next, err := g.step(ctx, n, res.State, emit)
		if err != nil {
			return res, fmt.Errorf("graph %s: node %s: %w", g.name, at, err)
		}
		res.State = next
		to := n.next
		if n.route != nil {
			to = n.route(res.State)
			if !slices.Contains(n.targets, to) {
				return res, fmt.Errorf("graph %s: node %s routed to %q, not one of %v", g.name, at, to, n.targets)
			}
		}
		emit(agent.Event{Kind: EventNodeFinished, Node: at, Iteration: res.Steps, Text: time.Since(start).Round(time.Microsecond).String()})
		if cp != nil {
			if err := g.save(ctx, cp, opt.Thread, res.Steps, to, res.State); err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if errors.Is(err, errUnserializable) {
					return res, err
				}
				log.Warn("cannot save the checkpoint; the run goes on without checkpoints", "graph", g.name, "thread", opt.Thread, "error", err)
				cp = nil
			}
		}
		at = to
	}
	return res, nil
}

func (g *Graph[S]) step(ctx context.Context, n *node[S], s S, emit func(agent.Event)) (S, error) {
	if n.run != nil {
		up, err := n.run(ctx, s, emit)
		if err != nil {
			return s, err
		}
		return g.reduce(s, up), nil
	}
	ups := make([]S, len(n.branches))
	errs := make([]error, len(n.branches))
	// Branch events are delivered in order, on the caller's goroutine
	// contract: collect them per branch and replay after the join.
	evs := make([][]agent.Event, len(n.branches))
	limit := n.limit
	if limit <= 0 || limit > len(n.branches) {
		limit = len(n.branches)
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, br := range n.branches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			ups[i], errs[i] = br(ctx, s, func(e agent.Event) { evs[i] = append(evs[i], e) })
		}()
	}
	wg.Wait()
	for _, es := range evs {
		for _, e := range es {
			emit(e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	for _, up := range ups {
		s = g.reduce(s, up)
	}
	return s, nil
}

func (g *Graph[S]) save(ctx context.Context, cp Checkpointer, thread string, step int, next string, s S) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("graph %s: %w: %w", g.name, errUnserializable, err)
	}
	c := Checkpoint{Thread: thread, Graph: g.name, Step: step, Next: next, State: data, Done: next == End}
	if err := cp.Put(ctx, c); err != nil {
		return fmt.Errorf("graph %s: saving checkpoint: %w", g.name, err)
	}
	return nil
}

// errUnserializable is a state that JSON cannot hold: a fault of the
// graph's definition, reported rather than run past.
var errUnserializable = errors.New("the state cannot be checkpointed")

// Checkpoint and Checkpointer are the agent core's (package agent), so that
// a strategy's task can carry one without importing the engine.
type (
	Checkpoint   = agent.Checkpoint
	Checkpointer = agent.Checkpointer
)

// MemoryCheckpointer keeps checkpoints in memory, for tests and for runs
// that need no resume across processes.
type MemoryCheckpointer struct {
	mu  sync.Mutex
	cps map[string]Checkpoint
	// Puts counts the checkpoints saved.
	Puts int
}

// Put implements Checkpointer.
func (m *MemoryCheckpointer) Put(_ context.Context, c Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cps == nil {
		m.cps = map[string]Checkpoint{}
	}
	c.State = slices.Clone(c.State)
	c.UpdatedAt = time.Now()
	m.cps[c.Thread] = c
	m.Puts++
	return nil
}

// Get implements Checkpointer.
func (m *MemoryCheckpointer) Get(_ context.Context, thread string) (Checkpoint, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cps[thread]
	return c, ok, nil
}

// Delete implements Checkpointer.
func (m *MemoryCheckpointer) Delete(_ context.Context, thread string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cps, thread)
	return nil
}
