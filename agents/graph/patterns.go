package graph

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Node names the pattern builders use; strategies and tests refer to them.
const (
	NodeReason  = "reason"
	NodeAct     = "act"
	NodeForce   = "force"
	NodeAnswer  = "answer"
	NodePlan    = "plan"
	NodeExecute = "execute"
	NodeReplan  = "replan"
	NodeWork    = "work"
	NodeSolve   = "solve"
	NodeReflect = "reflect"
	NodeAdjust  = "adjust"
)

// ReActNodes are the pieces of a ReAct loop: Reason calls the model; Next
// says, after it, whether to act on its tool calls (NodeAct), to stop and
// force an answer (NodeForce), to reason again (NodeReason) or that the
// answer is in (End). Act runs the tool calls and loops back to Reason
// unless Next says otherwise; Force makes the last answer-only call.
type ReActNodes[S any] struct {
	Reason, Act, Force Node[S]
	Next               Router[S]
	MaxSteps           int
}

// ReAct builds reason → (act → reason)* → end, with a forced answer when
// a guard fires.
func ReAct[S any](name string, n ReActNodes[S]) (*Graph[S], error) {
	return New[S](name).
		Node(NodeReason, n.Reason).
		Node(NodeAct, n.Act).
		Node(NodeForce, n.Force).
		Conditional(NodeReason, n.Next, NodeAct, NodeForce, NodeReason, End).
		Conditional(NodeAct, n.Next, NodeReason, NodeForce, End).
		Conditional(NodeForce, n.Next, NodeForce, End).
		MaxSteps(n.MaxSteps).
		Compile()
}

// PlanExecuteNodes are the pieces of plan-and-execute: Plan writes the
// plan, Execute runs its next step, Next routes after a step (NodeExecute
// for the next step, NodeReplan after a failure, NodeAnswer when done),
// Replan revises the plan, Answer writes the answer from the results.
type PlanExecuteNodes[S any] struct {
	Plan, Execute, Replan, Answer Node[S]
	Next                          Router[S]
	MaxSteps                      int
}

// PlanExecute builds plan → execute* (→ replan → execute*)* → answer.
func PlanExecute[S any](name string, n PlanExecuteNodes[S]) (*Graph[S], error) {
	return New[S](name).
		Node(NodePlan, n.Plan).
		Node(NodeExecute, n.Execute).
		Node(NodeReplan, n.Replan).
		Node(NodeAnswer, n.Answer).
		Conditional(NodePlan, n.Next, NodeExecute, NodeAnswer).
		Conditional(NodeExecute, n.Next, NodeExecute, NodeReplan, NodeAnswer).
		Conditional(NodeReplan, n.Next, NodeExecute, NodeAnswer).
		Edge(NodeAnswer, End).
		MaxSteps(n.MaxSteps).
		Compile()
}

// ReWooNodes are the pieces of ReWoo (reasoning without observation): Plan
// writes every tool call up front, Work runs them (concurrently, inside
// the node), Solve answers from the evidence.
type ReWooNodes[S any] struct {
	Plan, Work, Solve Node[S]
}

// ReWoo builds plan → work → solve.
func ReWoo[S any](name string, n ReWooNodes[S]) (*Graph[S], error) {
	return New[S](name).
		Node(NodePlan, n.Plan).
		Node(NodeWork, n.Work).
		Node(NodeSolve, n.Solve).
		Edge(NodePlan, NodeWork).
		Edge(NodeWork, NodeSolve).
		Edge(NodeSolve, End).
		Compile()
}

// PlanModeNodes are the pieces of plan mode: Generate writes the first
// plan version, Execute runs it, Reflect assesses the outcome, Next routes
// after reflection (NodeAdjust or End), Adjust derives the next plan
// version.
type PlanModeNodes[S any] struct {
	Generate, Execute, Reflect, Adjust Node[S]
	Next                               Router[S]
	MaxSteps                           int
}

// PlanMode builds generate → execute → reflect (→ adjust → execute →
// reflect)* → end.
func PlanMode[S any](name string, n PlanModeNodes[S]) (*Graph[S], error) {
	return New[S](name).
		Node(NodePlan, n.Generate).
		Node(NodeExecute, n.Execute).
		Node(NodeReflect, n.Reflect).
		Node(NodeAdjust, n.Adjust).
		Edge(NodePlan, NodeExecute).
		Edge(NodeExecute, NodeReflect).
		Conditional(NodeReflect, n.Next, NodeAdjust, End).
		Edge(NodeAdjust, NodeExecute).
		MaxSteps(n.MaxSteps).
		Compile()
}

// Registry names things a user may pick by name (strategies, graphs):
// `kodyls eval --strategy NAME` and the agent settings look them up here.
type Registry struct {
	mu    sync.RWMutex
	items map[string]entry
}

type entry struct {
	kind, desc string
	v          any
}

// Register adds v under kind/name; registering a name twice is an error.
func (r *Registry) Register(kind, name, desc string, v any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.items == nil {
		r.items = map[string]entry{}
	}
	key := kind + "/" + name
	if _, dup := r.items[key]; dup {
		return fmt.Errorf("registry: %s registered twice", key)
	}
	r.items[key] = entry{kind: kind, desc: desc, v: v}
	return nil
}

// Names lists the names registered under kind, sorted, with their
// descriptions.
func (r *Registry) Names(kind string) [][2]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out [][2]string
	for k, e := range r.items {
		if e.kind == kind {
			out = append(out, [2]string{k[len(kind)+1:], e.desc})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Lookup returns the value registered under kind/name when it has type T.
func Lookup[T any](r *Registry, kind, name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var zero T
	e, ok := r.items[kind+"/"+name]
	if !ok {
		return zero, false
	}
	v, ok := e.v.(T)
	return v, ok
}

// Has reports whether kind/name is registered.
func (r *Registry) Has(kind, name string) bool {
	return slices.ContainsFunc(r.Names(kind), func(n [2]string) bool { return n[0] == name })
}
