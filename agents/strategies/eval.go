package strategies

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
)

// CaseRun is one canonical case run with one strategy.
type CaseRun struct {
	Name     string `json:"name"`
	Language string `json:"language,omitempty"`
	Pass     bool   `json:"pass"`
	// Property is the expected property that did not hold ("" on a pass);
	// Reason says what was seen instead.
	Property         string `json:"failedProperty,omitempty"`
	Reason           string `json:"reason,omitempty"`
	Steps            int    `json:"steps"`
	PromptTokens     int    `json:"promptTokens"`
	CompletionTokens int    `json:"completionTokens"`
	Calls            int    `json:"modelCalls"`
	LatencyMs        int64  `json:"latencyMs"`
}

// Summary is the evaluation of one strategy: every case and the totals.
type Summary struct {
	Name string `json:"name"`
	// Step says what the steps count for this command.
	Step             string    `json:"step"`
	Passed           int       `json:"passed"`
	Total            int       `json:"total"`
	PassRate         float64   `json:"passRate"`
	MeanSteps        float64   `json:"stepsPerCase"`
	PromptTokens     int       `json:"promptTokens"`
	CompletionTokens int       `json:"completionTokens"`
	Tokens           int       `json:"tokens"` // prompt and completion, every case
	Calls            int       `json:"modelCalls"`
	P50LatencyMs     int64     `json:"p50LatencyMs"`
	MeanLatencyMs    float64   `json:"latencyMsPerCase"`
	Errors           int       `json:"agentErrors"`
	Cases            []CaseRun `json:"cases"`
}

// Summarize totals the cases of one strategy. The steps are averaged over
// every case, the latency's median is the upper one of an even count.
func Summarize(name, step string, cases []CaseRun) Summary {
	s := Summary{Name: name, Step: step, Cases: cases, Total: len(cases)}
	if s.Cases == nil {
		s.Cases = []CaseRun{}
	}
	var steps int
	var lat []int64
	var sum int64
	for _, c := range cases {
		if c.Pass {
			s.Passed++
		}
		steps += c.Steps
		s.PromptTokens += c.PromptTokens
		s.CompletionTokens += c.CompletionTokens
		s.Calls += c.Calls
		lat = append(lat, c.LatencyMs)
		sum += c.LatencyMs
	}
	s.Tokens = s.PromptTokens + s.CompletionTokens
	if n := len(cases); n > 0 {
		s.PassRate = float64(s.Passed) / float64(n)
		s.MeanSteps = float64(steps) / float64(n)
		s.MeanLatencyMs = float64(sum) / float64(n)
		slices.Sort(lat)
		s.P50LatencyMs = lat[n/2]
	}
	return s
}

// Meter measures what one case cost at the gateway: the calls of one
// feature between Start and the function it returns. Cases run one after
// another, so the difference of the totals is the case's own.
type Meter struct {
	Gateway *llm.Gateway
	Feature string
}

// Start begins measuring a case; the returned function fills c's tokens,
// calls and latency.
func (m Meter) Start() func(c *CaseRun) {
	before := m.Gateway.Totals()[m.Feature]
	start := time.Now()
	return func(c *CaseRun) {
		c.LatencyMs = time.Since(start).Milliseconds()
		after := m.Gateway.Totals()[m.Feature]
		c.PromptTokens = after.PromptTokens - before.PromptTokens
		c.CompletionTokens = after.CompletionTokens - before.CompletionTokens
		c.Calls = after.Calls - before.Calls
	}
}

// WriteText prints the strategy's cases and totals.
func (s Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "== %s (a step is %s)\n", s.Name, s.Step)
	width := len("case")
	for _, c := range s.Cases {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "%-*s %-10s %-6s %5s %15s %5s %9s\n", width, "case", "language", "result", "steps", "tokens (p+c)", "calls", "latency")
	for _, c := range s.Cases {
		result := "pass"
		if !c.Pass {
			result = "FAIL"
		}
		fmt.Fprintf(w, "%-*s %-10s %-6s %5d %15s %5d %7dms\n", width, c.Name, cmp.Or(c.Language, "-"), result, c.Steps,
			fmt.Sprintf("%d+%d", c.PromptTokens, c.CompletionTokens), c.Calls, c.LatencyMs)
		if !c.Pass {
			fmt.Fprintf(w, "%-*s   expected: %s; %s\n", width, "", c.Property, oneLine(c.Reason))
		}
	}
	pct := 0.0
	if s.Total > 0 {
		pct = 100 * s.PassRate
	}
	fmt.Fprintf(w, "pass rate: %d/%d (%.0f%%), steps %.1f per case, tokens %d (%d prompt + %d completion), model calls %d, p50 latency %d ms\n",
		s.Passed, s.Total, pct, s.MeanSteps, s.Tokens, s.PromptTokens, s.CompletionTokens, s.Calls, s.P50LatencyMs)
}

// WriteComparison prints one line per strategy.
func WriteComparison(w io.Writer, ss []Summary) {
	fmt.Fprintf(w, "%-14s %9s %8s %8s %7s %12s %12s\n", "strategy", "pass", "steps", "tokens", "calls", "p50 latency", "latency/case")
	for _, s := range ss {
		fmt.Fprintf(w, "%-14s %4d/%-4d %8.1f %8d %7d %10dms %10.0fms\n", s.Name, s.Passed, s.Total, s.MeanSteps, s.Tokens, s.Calls, s.P50LatencyMs, s.MeanLatencyMs)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
