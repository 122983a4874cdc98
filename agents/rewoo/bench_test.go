package rewoo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/rewoo"
)

// BenchmarkReWoo measures a whole run (plan, work, solve) against the
// in-process fake endpoint with no latency and instant tools: the cost of
// the strategy, the engine, the executor and the HTTP round trips, per
// evidence step.
func BenchmarkReWoo(b *testing.B) {
	for _, steps := range []int{1, 4} {
		b.Run(fmt.Sprintf("%d-steps", steps), func(b *testing.B) {
			s, g := setup(b)
			var ps []map[string]any
			for i := range steps {
				ps = append(ps, ev(fmt.Sprintf("E%d", i+1), "fetch", fmt.Sprint("k", i)))
			}
			s.On(isPlan, planReply(ps...))
			s.On(isSolve, final(`{"rootCause":"x","fixGuidelines":[],"confidence":0.5,"evidence":["E1"]}`))
			tools := newLab().tools(0)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := (rewoo.Strategy[answer]{}).Run(context.Background(), task(g), tools, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(steps), "ns/evidence")
		})
	}
}
