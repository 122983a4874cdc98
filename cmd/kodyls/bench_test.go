package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// BenchmarkStartupToInitialize measures process start to the initialize
// reply through the real binary.
func BenchmarkStartupToInitialize(b *testing.B) {
	bin := lsptest.BuildBinary(b)
	repo := fixtureRepo(b)
	env := testEnv(b)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		samples = append(samples, startupToInitialize(b, bin, repo.Dir, env))
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
}

// startupToInitialize starts `kodyls serve` and returns the time from the
// process start to its initialize reply; the process then exits.
func startupToInitialize(b *testing.B, bin, dir string, env []string) time.Duration {
	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Dir = env, dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	raw := lsptest.NewRaw(b, stdin, stdout)
	raw.Request(1, "initialize", map[string]any{"rootUri": "file://" + dir, "capabilities": map[string]any{}})
	raw.Response("1")
	d := time.Since(begin)
	raw.Notify("exit", nil)
	_ = cmd.Wait()
	return d
}

// BenchmarkDidChangeToDiagnostics5000Lines measures, through the real
// binary, the time from sending a didChange that adds or removes a rule
// violation in a 5,000-line file to receiving its publishDiagnostics: for a
// committed file (only changed lines are checked) and an untracked one
// (every line is), the latter also with 30 and 300 more detector rules.
func BenchmarkDidChangeToDiagnostics5000Lines(b *testing.B) {
	b.Run("committed", func(b *testing.B) { benchDidChange(b, true, false, false, 0) })
	b.Run("untracked", func(b *testing.B) { benchDidChange(b, false, false, false, 0) })
	b.Run("explanation-waiting", func(b *testing.B) { benchDidChange(b, true, true, false, 0) })
	b.Run("60-assistant-rules", func(b *testing.B) { benchDidChange(b, true, false, true, 0) })
	b.Run("untracked-30-detector-rules", func(b *testing.B) { benchDidChange(b, false, false, false, 30) })
	b.Run("untracked-300-detector-rules", func(b *testing.B) { benchDidChange(b, false, false, false, 300) })
}

// benchDetectorPatterns are the shapes of the extra detector rules of
// benchDidChange, %d replaced by the rule's number: common patterns that
// have no literal prefix for the regexp package to search for.
var benchDetectorPatterns = []string{
	`\bbadIdent%d\(`,
	`(log|fmt)\.Printf?\("debug%d`,
	`(?i)todo-%d\b`,
	`TODO%d|FIXME%d`,
}

// benchDidChange measures didChange → publishDiagnostics. With explaining,
// an "Explain this error" request is left waiting on an endpoint that never
// answers, to show it does not slow typing down. With assistantRules, an
// AGENTS.md of 60 rules (none with a detector, as assistants' rules are)
// sits beside the detector rule, to show the model's rules cost nothing per
// keystroke. detectorRules more rules with a detector, none matching, sit
// beside the fixture's.
func benchDidChange(b *testing.B, commit, explaining, assistantRules bool, detectorRules int) {
	repo := fixtureRepo(b)
	for i := 0; i < detectorRules; i++ {
		pat := benchDetectorPatterns[i%len(benchDetectorPatterns)]
		pat = strings.ReplaceAll(pat, "%d", strconv.Itoa(i))
		repo.Write(map[string]string{
			fmt.Sprintf(".kody/rules/extra-%03d.md", i): lsptest.RuleFile(fmt.Sprintf("Extra %d", i), fmt.Sprintf("extra-%d", i), "low", "**/*.go", pat),
		})
	}
	if assistantRules {
		var agents strings.Builder
		agents.WriteString("# Team rules\n\n")
		for i := 0; i < 60; i++ {
			fmt.Fprintf(&agents, "- Rule %d: keep module %d's handlers small and documented.\n", i, i)
		}
		repo.Write(map[string]string{"AGENTS.md": agents.String()})
	}
	var sb strings.Builder
	sb.WriteString("package main\n\n")
	for i := 0; i < 4998; i++ {
		fmt.Fprintf(&sb, "var v%d = fmt.Sprint(%d) // ordinary line\n", i, i)
	}
	repo.Write(map[string]string{"big.go": sb.String()})
	if commit {
		repo.Commit("big file")
	}
	env := testEnv(b)
	var fake *llmtest.Server
	if explaining {
		fake = llmtest.NewServer()
		b.Cleanup(fake.Close)
		fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
		env = append(env, "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
		defer func() {
			if fake.CountChat() == 0 {
				b.Error("the explanation never reached the endpoint")
			}
		}()
	}
	s := lsptest.StartBinary(b, lsptest.BuildBinary(b), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("big.go")
	// The baseline is loaded and the first check has run. This comes before
	// the explanation, which never ends and would keep the server busy.
	s.AwaitIdle("big.go")
	if explaining {
		go func() {
			_ = s.ExecuteCommand("kodyls.explainError", map[string]any{"text": "./big.go:10:2: undefined: foo\n"}, nil)
		}()
		// Measure while the explanation waits on the endpoint.
		if !fake.WaitRequests(1, 10*time.Second) {
			b.Fatal("the explanation never reached the endpoint")
		}
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := uint32(2500)
		begin := time.Now()
		if i%2 == 0 {
			s.Insert("big.go", protocol.Position{Line: line, Character: 0}, "var _ = fmt.Println(1)\n")
			s.AwaitDiagnostics("big.go", lsptest.HasCodeOnLine(printlnRule, line))
		} else {
			s.EditBuffer("big.go", lsptest.Edit{Range: protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line + 1}}, Text: ""})
			s.AwaitDiagnostics("big.go", lsptest.Empty)
		}
		samples = append(samples, time.Since(begin))
	}
	b.StopTimer()
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
	s.Shutdown()
}

// BenchmarkRSSAfter200Files opens 200 files of 300 lines through the real
// binary and reports the server's resident set size.
func BenchmarkRSSAfter200Files(b *testing.B) {
	repo := fixtureRepo(b)
	files := map[string]string{}
	for f := 0; f < 200; f++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\n", f)
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&sb, "func f%d() string { return fmt.Sprint(%d) }\n", i, i)
		}
		files[fmt.Sprintf("pkg%d/file.go", f)] = sb.String()
	}
	repo.Write(files)
	repo.Commit("many files")
	var rss float64
	for i := 0; i < b.N; i++ {
		s := lsptest.StartBinary(b, lsptest.BuildBinary(b), repo.Dir, testEnv(b))
		s.Initialize(lsptest.InitOptions{})
		for f := 0; f < 200; f++ {
			name := fmt.Sprintf("pkg%d/file.go", f)
			s.OpenFile(name)
			s.Insert(name, protocol.Position{Line: 2, Character: 0}, "var _ = fmt.Println(0)\n")
		}
		for f := 0; f < 200; f++ {
			s.AwaitDiagnostics(fmt.Sprintf("pkg%d/file.go", f), lsptest.Count(1))
		}
		rss = residentMB(b, s.Process.Pid)
		s.Shutdown()
	}
	b.ReportMetric(rss, "MB-rss")
}

func residentMB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// startReviewBinary starts the binary against a fake endpoint that answers
// every review with one suggestion, on a repository with reviewGo committed.
func startReviewBinary(b *testing.B) (*lsptest.Session, *llmtest.Server, reviewtest.Scripts) {
	fake := llmtest.NewServer()
	b.Cleanup(fake.Close)
	scripts := reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	repo := lsptest.NewRepo(b, map[string]string{"main.go": reviewGo})
	env := append(testEnv(b), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	s := lsptest.StartBinary(b, lsptest.BuildBinary(b), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	return s, fake, scripts
}

// BenchmarkSaveToReviewRequest measures the local latency from sending
// didSave to the first review request reaching the endpoint (the fake
// records when it arrives), through the real binary. Every iteration
// changes the buffer so the review is not served from the cache.
func BenchmarkSaveToReviewRequest(b *testing.B) {
	s, fake, _ := startReviewBinary(b)
	samples := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, fmt.Sprintf("\t_ = %d\n", i))
		// The previous review has ended (AwaitIdle below), so the next
		// request to arrive is this save's first.
		before := len(fake.Requests())
		sent := time.Now()
		s.Save("main.go")
		if !fake.WaitRequests(before+1, 10*time.Second) {
			b.Fatal("no review request after save")
		}
		samples = append(samples, fake.Requests()[before].Start.Sub(sent))
		// Let the review finish before the next edit.
		s.AwaitIdle("main.go")
		if len(s.Diagnostics("main.go")) == 0 {
			b.Fatal("the review published no finding")
		}
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
	s.Shutdown()
}

// BenchmarkLLMCallsFor20EditsAndSaves types 20 times into the same function
// and saves after each edit, then undoes back and forth: it reports the LLM
// requests the whole sequence cost.
func BenchmarkLLMCallsFor20EditsAndSaves(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, fake, _ := startReviewBinary(b)
		loop := s.RegexpRange("main.go", `for i := 0; i < len\(items\); i\+\+ \{`)
		for k := 0; k < 20; k++ {
			// Alternate between two versions of the loop: the second and
			// later visits of each version are cache hits.
			text := "for i := 0; i <= len(items); i++ {"
			if k%2 == 1 {
				text = "for i := 0; i < len(items)+1; i++ {"
			}
			s.EditBuffer("main.go", lsptest.Edit{Range: loop, Text: text})
			loop = s.RegexpRange("main.go", `for i := 0; i <?=? ?len\(items\)(\+1)?; i\+\+ \{`)
			s.Save("main.go")
			// The save's review done, not merely some findings shown (the
			// last review's already are): counted before it, its calls
			// would be missed.
			s.AwaitIdle("main.go")
		}
		b.ReportMetric(float64(fake.CountChat()), "llm-calls")
		s.Shutdown()
	}
}

// BenchmarkExplainOffline measures `kodyls explain --offline` end to end:
// process start, parsing, the history (sqlite and bleve), guidance, output.
func BenchmarkExplainOffline(b *testing.B) {
	repo := lsptest.NewRepo(b, map[string]string{
		"go.mod":  "module example.com/broken\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tunused := 42\n}\n",
	})
	build := exec.Command("go", "build", "./...")
	build.Dir = repo.Dir
	output, _ := build.CombinedOutput()
	bin := lsptest.BuildBinary(b)
	env := testEnv(b)
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "explain", "--offline", "--json")
		cmd.Env, cmd.Dir = env, repo.Dir
		cmd.Stdin = strings.NewReader(string(output))
		begin := time.Now()
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"source": "offline"`) {
			b.Fatalf("explain: %v\n%s", err, out)
		}
		samples = append(samples, time.Since(begin))
	}
	b.ReportMetric(float64(median(samples).Microseconds())/1000, "ms-median")
}
