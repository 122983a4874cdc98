package planmode_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/graph"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/agents/planmode"
)

type fixedGenerator struct{}

func (fixedGenerator) Generate(context.Context, string) (planmode.Plan, error) {
	return planmode.Plan{ID: "p", Version: 1, Status: planmode.PlanDraft, Steps: []planmode.Step{
		{ID: "first", Tool: "lookup", Input: json.RawMessage(`{"key":"a"}`), Status: planmode.StepPending},
		{ID: "second", Tool: "lookup", Input: json.RawMessage(`{"key":"wrong"}`), DependsOn: []string{"first"}, Status: planmode.StepPending},
	}}, nil
}

// retryReflector asks for the failed step again until the last cycle.
type retryReflector struct{ cycles int }

func (r retryReflector) Reflect(_ context.Context, s planmode.State) (planmode.Reflection, error) {
	if s.Cycles+1 >= r.cycles {
		return planmode.Reflection{Assessment: planmode.AssessComplete, Reasoning: "done"}, nil
	}
	return planmode.Reflection{Assessment: planmode.AssessNeedsAdjustment, Reasoning: "again", Adjustments: []planmode.Adjustment{
		{Type: planmode.AdjustModify, StepID: "second", Input: json.RawMessage(`{"key":"b"}`)},
	}}, nil
}

// BenchmarkRound measures what plan mode itself costs per round (execute,
// reflect, adjust, with the state copied and checkpointed after every
// node), with a generator and reflector that answer at once.
func BenchmarkRound(b *testing.B) {
	const cycles = 3
	w := &world{values: map[string]string{"a": "b", "b": "42"}}
	x, err := planmode.NewExecutor([]agent.Tool{w.tool()}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, withCheckpoints := range []bool{false, true} {
		name := "no-checkpoints"
		if withCheckpoints {
			name = "memory-checkpoints"
		}
		b.Run(name, func(b *testing.B) {
			o := &planmode.Orchestrator{Generator: fixedGenerator{}, Executor: x, Reflector: retryReflector{cycles: cycles}, MaxCycles: cycles}
			if withCheckpoints {
				o.Checkpoints = &graph.MemoryCheckpointer{}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if withCheckpoints {
					o.Thread = "t" + string(rune('a'+i%26))
				}
				st, err := o.Run(context.Background(), "goal", nil)
				if err != nil || st.Cycles != cycles {
					b.Fatalf("%v after %d cycles", err, st.Cycles)
				}
				w.calls = w.calls[:0]
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cycles), "ns/round")
		})
	}
}

// BenchmarkRoundFakeEndpoint adds the structured model calls (HTTP, JSON
// Schema validation) against an endpoint that answers at once.
func BenchmarkRoundFakeEndpoint(b *testing.B) {
	s, g := llmtest.Start(b)
	s.On(llmtest.SchemaName("plan"), llmtest.Text(twoStepPlan))
	s.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"needs_adjustment","reasoning":"again","adjustments":[{"type":"MODIFY","stepId":"second","input":{"key":"b"},"reason":"r"}]}`))
	w := &world{values: map[string]string{"a": "b", "b": "42"}}
	x, err := planmode.NewExecutor([]agent.Tool{w.tool()}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	const cycles = 3
	o := &planmode.Orchestrator{
		Generator: &planmode.ModelGenerator{Gateway: g, Feature: "bench", User: "find", Tools: []string{"lookup"}},
		Executor:  x,
		Reflector: &planmode.ModelReflector{Gateway: g, Feature: "bench", Prompt: func(s planmode.State) (string, string, error) { return "", s.Plan.String(), nil }},
		MaxCycles: cycles,
	}
	b.ReportAllocs()
	for b.Loop() {
		st, err := o.Run(context.Background(), "goal", nil)
		if err != nil || st.Cycles != cycles {
			b.Fatalf("%v after %d cycles", err, st.Cycles)
		}
		w.calls = w.calls[:0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cycles), "ns/round")
}
