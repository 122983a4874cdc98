// Package strategies names the agent strategies a user may pick, per
// feature: `kodyls explain --strategy NAME`, `kodyls eval rca --strategy
// NAME` and the agent settings look them up here. It holds the
// root-cause analysis's (ReAct, plan-and-execute, ReWoo and the routed
// default, each worded for explaining an error), those of "Fix this error"
// (plan mode, with or without adjustment) and those of the review (the
// file pipeline, and ReWoo evidence for the pull-request rules). eval.go
// measures them on canonical cases for `kodyls eval`.
package strategies

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/planexec"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/rewoo"
)

// KindRCA is the registry kind of the root-cause analysis's strategies.
const KindRCA = "rca"

// The names of the RCA strategies.
const (
	ReAct       = "react"
	PlanExecute = planexec.Name
	ReWoo       = rewoo.Name
	// Routed starts on the ReAct fast path and escalates to plan-execute
	// when the fast path runs long, its tools keep failing or its
	// confidence stays low (agents/router).
	Routed = "routed"
)

// DefaultRCA is the strategy an explanation uses unless told otherwise.
const DefaultRCA = Routed

// rcaAnswer and rcaRepair word the answer turn of the planning strategies
// as the RCA's ReAct loop words its final_answer.
const (
	rcaAnswer = "Give the final answer: the root cause of the error, how to fix it, and your confidence."
	rcaRepair = `Call final_answer again with {"rootCause": non-empty string, "fixGuidelines": array of strings, "confidence": number from 0 to 1}.`
)

var registry = sync.OnceValue(func() *graph.Registry {
	var r graph.Registry
	add := func(name, desc string, s agent.Strategy[rca.ModelAnswer]) {
		if err := r.Register(KindRCA, name, desc, s); err != nil {
			panic(err) // names are constants: a duplicate is a programming error
		}
	}
	add(ReAct, "reason and act in a loop, one tool call at a time", rca.DefaultStrategy())
	planned := planexec.Strategy[rca.ModelAnswer]{
		Wording:  planexec.Wording{FinalAnswer: rcaAnswer, Repair: rcaRepair},
		Fallback: rca.DefaultStrategy(),
	}
	add(PlanExecute, "plan the tool calls first, run them in order, replan after a failure, then answer", planned)
	add(Routed, "ReAct first; escalate once to plan-execute when it runs long, its tools keep failing or it stays unsure (the default)", rca.RoutedStrategy(planned))
	add(ReWoo, "plan every tool call up front, run them concurrently, answer from the evidence", rewoo.Strategy[rca.ModelAnswer]{
		Wording:  rewoo.Wording{FinalAnswer: rcaAnswer + " List the evidence it rests on.", Repair: rcaRepair},
		Fallback: rca.DefaultStrategy(),
	})
	registerFeatures(&r)
	return &r
})

// Registry is the registry of named strategies.
func Registry() *graph.Registry { return registry() }

// RCANames lists the RCA strategies' names, sorted.
func RCANames() []string {
	var out []string
	for _, n := range registry().Names(KindRCA) {
		out = append(out, n[0])
	}
	return out
}

// RCADescriptions lists the RCA strategies as "name: description" lines.
func RCADescriptions() []string {
	var out []string
	for _, n := range registry().Names(KindRCA) {
		out = append(out, n[0]+": "+n[1])
	}
	return out
}

// ForRCA returns the RCA strategy called name; the error of an unknown
// name lists the known ones.
func ForRCA(name string) (agent.Strategy[rca.ModelAnswer], error) {
	s, ok := graph.Lookup[agent.Strategy[rca.ModelAnswer]](registry(), KindRCA, name)
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q; choose one of: %s", name, strings.Join(RCANames(), ", "))
	}
	return s, nil
}

// Run is one run of a measured strategy.
type Run struct {
	Iterations int
	ToolsUsed  []string
	Forced     bool
	Latency    time.Duration
	Err        error
}

// Measured wraps a strategy and records every run, for evaluations that
// compare strategies. It is safe for concurrent runs.
type Measured[A any] struct {
	agent.Strategy[A]
	mu   sync.Mutex
	runs []Run
}

// Measure wraps s.
func Measure[A any](s agent.Strategy[A]) *Measured[A] { return &Measured[A]{Strategy: s} }

// Run implements agent.Strategy.
func (m *Measured[A]) Run(ctx context.Context, task agent.Task, tools []agent.Tool, emit func(agent.Event)) (agent.Outcome[A], error) {
	start := time.Now()
	out, err := m.Strategy.Run(ctx, task, tools, emit)
	m.mu.Lock()
	m.runs = append(m.runs, Run{Iterations: out.Iterations, ToolsUsed: out.ToolsUsed, Forced: out.Forced, Latency: time.Since(start), Err: err})
	m.mu.Unlock()
	return out, err
}

// Runs returns the runs recorded so far.
func (m *Measured[A]) Runs() []Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Run(nil), m.runs...)
}
