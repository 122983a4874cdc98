package planexec_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/planexec"
)

// BenchmarkPlanExecute measures a whole run against the in-process fake
// endpoint with no latency and an instant tool: what the strategy, the
// graph engine, the executor and the gateway's HTTP round trips cost per
// step, with the model's own time taken out.
func BenchmarkPlanExecute(b *testing.B) {
	for _, steps := range []int{1, 4} {
		b.Run(map[int]string{1: "1-step", 4: "4-steps"}[steps], func(b *testing.B) {
			s, g := setup(b)
			var ps []map[string]any
			for i := range steps {
				ps = append(ps, step(string(rune('1'+i)), "noop", map[string]any{"n": i}))
			}
			s.On(isPlan, planReply(ps...))
			s.On(isAnswer, final(goodAnswer))
			tools := []agent.Tool{noop()}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := (planexec.Strategy[answer]{}).Run(context.Background(), task(g), tools, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(steps+2), "ns/node")
		})
	}
}

type noopArgs struct {
	N int `json:"n"`
}

func noop() agent.Tool {
	return agent.Tool{Name: "noop", Description: "does nothing", Parameters: noopArgs{}, Run: func(context.Context, json.RawMessage) (string, error) {
		return "ok", nil
	}}
}
