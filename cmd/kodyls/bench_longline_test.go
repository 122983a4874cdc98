package main

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// BenchmarkLongLineViolations measures a keystroke → publishDiagnostics in
// an untracked file (every line checked) whose one long line (a 400 KB
// array, as generated or vendored code has) holds about 2,900 violations,
// typing on another line. The columns of a line's violations are counted
// in one pass over it, in UTF-16 as most editors ask.
func BenchmarkLongLineViolations(b *testing.B) {
	repo := lsptest.NewRepo(b, map[string]string{
		".kody/rules/no-console.md": lsptest.RuleFile("No console.log", printlnRule, "high", "**/*.js", `console\.log\(`),
		"main.js":                   "console.info(1)\n",
	})
	var sb strings.Builder
	for i := 0; i < 2000; i++ {
		sb.WriteString("const v = compute(1); // ordinary line é\n")
	}
	sb.WriteString("const calls = [")
	for sb.Len() < 2000*40+400_000 {
		sb.WriteString(" () => console.log('é', 1), 42, 'padding padding padding padding padding padding padding padding',")
	}
	sb.WriteString("];\n")
	repo.Write(map[string]string{"fixture.js": sb.String()})
	s := lsptest.StartBinary(b, lsptest.BuildBinary(b), repo.Dir, testEnv(b))
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("fixture.js")
	s.AwaitIdle("fixture.js")
	base := len(s.Diagnostics("fixture.js"))
	if base < 2000 {
		b.Fatalf("%d violations on the long line, want thousands", base)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begin := time.Now()
		if i%2 == 0 {
			s.Insert("fixture.js", protocol.Position{Line: 10}, "console.log(1);\n")
			s.AwaitDiagnostics("fixture.js", lsptest.Count(base+1))
		} else {
			s.EditBuffer("fixture.js", lsptest.Edit{Range: protocol.Range{Start: protocol.Position{Line: 10}, End: protocol.Position{Line: 11}}, Text: ""})
			s.AwaitDiagnostics("fixture.js", lsptest.Count(base))
		}
		samples = append(samples, time.Since(begin))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
	s.Shutdown()
}
