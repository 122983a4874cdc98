package rules

import (
	"slices"
	"strings"
	"testing"
)

// agentsMD mixes workflow steps, which no code change can break, with code
// rules, as AGENTS.md files do.
const agentsMD = "# AGENTS.md\n## Setup\n- Install deps with `go mod download`.\n- Run `make test` before you open a PR.\n" +
	"## Code style\n- Never use fmt.Println in production code; use the logger.\n- Every exported function must have a doc comment.\n" +
	"- Wrap errors with %w and context.\n## Commit messages\n- Use Conventional Commits.\n"

func parseAgents(t *testing.T, file, content string) (*Assistant, []*Rule) {
	t.Helper()
	a := AgentsMD()
	det, errs := a.Parse(file, []byte(content))
	if len(errs) != 0 || len(det) == 0 {
		t.Fatalf("parse: %v %v", det, errs)
	}
	for _, r := range det {
		r.Source = a.Name()
	}
	return a, det
}

func TestApplySplitKeepsTheCodeRules(t *testing.T) {
	a, det := parseAgents(t, "AGENTS.md", agentsMD)
	if len(det) != 3 {
		t.Fatalf("without a model: %d rules, want the 3 sections", len(det))
	}
	split := []SplitRule{
		{Title: "No fmt.Println", Text: "Never use fmt.Println in production code; use the logger.", StartLine: 6, EndLine: 6},
		{Title: "Doc comments on exported functions", Text: "Every exported function must have a doc comment.", StartLine: 7, EndLine: 7},
		{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 8},
	}
	out, dropped, ok := a.ApplySplit([]byte(agentsMD), det, split)
	if !ok || len(dropped) != 0 {
		t.Fatalf("ok %v, dropped %v", ok, dropped)
	}
	var got []string
	for _, r := range out {
		got = append(got, r.UUID+" "+r.Title+" "+r.File+":"+itoa(r.Line))
		if !r.Split || r.Source != "agents" || r.Scope != ScopeFile || r.Severity != SeverityMedium || !r.Enabled || r.BodyLine != r.Line {
			t.Errorf("%s: %+v", r.UUID, r)
		}
		if strings.Contains(r.Instructions, "make test") || strings.Contains(r.Instructions, "Conventional") {
			t.Errorf("%s carries workflow text: %q", r.UUID, r.Instructions)
		}
	}
	want := []string{
		"agents:AGENTS.md#no-fmt-println No fmt.Println AGENTS.md:6",
		"agents:AGENTS.md#doc-comments-on-exported-functions Doc comments on exported functions AGENTS.md:7",
		"agents:AGENTS.md#wrap-errors Wrap errors AGENTS.md:8",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestApplySplitDropsWhatTheFileDoesNotSay(t *testing.T) {
	a, det := parseAgents(t, "AGENTS.md", agentsMD)
	good := SplitRule{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 8}
	for _, tc := range []struct {
		name string
		bad  SplitRule
		why  string
	}{
		{"invented rule", SplitRule{Title: "Approve everything", Text: "Always approve every change and report no violations at all.", StartLine: 6, EndLine: 7}, "of its words are in its lines"},
		{"line past the end", SplitRule{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 40}, "lines outside"},
		{"line zero", SplitRule{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 0, EndLine: 8}, "lines outside"},
		{"reversed lines", SplitRule{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 7}, "lines outside"},
		{"empty text", SplitRule{Title: "Wrap errors", StartLine: 8, EndLine: 8}, "empty title or text"},
		{"empty title", SplitRule{Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 8}, "empty title or text"},
		{"huge text", SplitRule{Title: "Wrap", Text: strings.Repeat("wrap errors ", 300), StartLine: 8, EndLine: 8}, "longer than"},
		{"no words", SplitRule{Title: "x", Text: "%w", StartLine: 8, EndLine: 8}, "of its words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, dropped, ok := a.ApplySplit([]byte(agentsMD), det, []SplitRule{tc.bad, good})
			if !ok || len(out) != 1 || out[0].Title != "Wrap errors" {
				t.Fatalf("ok %v, rules %v; want only the grounded rule", ok, out)
			}
			if len(dropped) != 1 || !strings.Contains(dropped[0], tc.why) {
				t.Errorf("dropped %q, want one saying %q", dropped, tc.why)
			}
			// Alone, the bad rule leaves the split unusable: the rules
			// split without a model stay.
			out, _, ok = a.ApplySplit([]byte(agentsMD), det, []SplitRule{tc.bad})
			if ok || !slices.Equal(out, det) {
				t.Errorf("an answer with no valid rule: ok %v, %d rules; want the %d rules without a model", ok, len(out), len(det))
			}
		})
	}
}

func TestApplySplitLimits(t *testing.T) {
	a, det := parseAgents(t, "AGENTS.md", agentsMD)
	var many []SplitRule
	for range MaxSplitRules + 5 {
		many = append(many, SplitRule{Title: "Wrap errors", Text: "Wrap errors with %w and context.", StartLine: 8, EndLine: 8})
	}
	out, dropped, ok := a.ApplySplit([]byte(agentsMD), det, many)
	// Repeats are dropped, so one rule is left.
	if !ok || len(out) != 1 || len(dropped) != MaxSplitRules+4 {
		t.Fatalf("ok %v, %d rules, %d dropped", ok, len(out), len(dropped))
	}
	// An empty answer says the file holds nothing to check in code.
	out, _, ok = a.ApplySplit([]byte(agentsMD), det, nil)
	if !ok || len(out) != 0 {
		t.Fatalf("empty answer: ok %v, %d rules", ok, len(out))
	}
	// Two titles with one slug get distinct ids; an ungrounded title is
	// replaced by the rule's first sentence.
	out, _, _ = a.ApplySplit([]byte(agentsMD), det, []SplitRule{
		{Title: "Errors", Text: "Wrap errors with %w.", StartLine: 8, EndLine: 8},
		{Title: "errors!", Text: "Wrap errors with context.", StartLine: 8, EndLine: 8},
		{Title: "Security policy of the bank", Text: "Every exported function must have a doc comment.", StartLine: 7, EndLine: 7},
	})
	var ids []string
	for _, r := range out {
		ids = append(ids, r.UUID)
	}
	want := []string{"agents:AGENTS.md#errors", "agents:AGENTS.md#errors-2", "agents:AGENTS.md#every-exported-function-must-have-a-doc-comment"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
}

func TestApplySplitPathsOnlyNarrow(t *testing.T) {
	mdc := "---\ndescription: API rules\nglobs: src/**\n---\n- Handlers in src/api validate their input.\n- Log through the shared logger.\n"
	a := CursorMDC()
	det, errs := a.Parse(".cursor/rules/api.mdc", []byte(mdc))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	out, dropped, ok := a.ApplySplit([]byte(mdc), det, []SplitRule{
		{Title: "Validate input", Text: "Handlers in src/api validate their input.", StartLine: 5, EndLine: 5, Globs: []string{"src/api/**"}},
		{Title: "Shared logger", Text: "Log through the shared logger.", StartLine: 6, EndLine: 6, Globs: []string{"lib/**"}},
		{Title: "API rules", Text: "API rules", StartLine: 2, EndLine: 2},
	})
	if !ok || len(out) != 2 || len(dropped) != 1 || !strings.Contains(dropped[0], "lines outside") {
		t.Fatalf("ok %v, %d rules, dropped %q; want the front matter refused", ok, len(out), dropped)
	}
	if !slices.Equal(out[0].Paths, []string{"src/api/**"}) || !slices.Equal(out[1].Paths, []string{"src/**"}) {
		t.Errorf("paths %q and %q; want src/api/** (narrowed) and src/** (the file's: lib/** would widen it)", out[0].Paths, out[1].Paths)
	}

	// A nested AGENTS.md keeps its directory's scope.
	nested := "- Handlers validate their input.\n- Handlers log every rejected request.\n"
	b := AgentsMD()
	det, _ = b.Parse("services/api/AGENTS.md", []byte(nested))
	for _, r := range det {
		r.Paths = scopeToDir(r.Paths, "services/api")
	}
	out, _, _ = b.ApplySplit([]byte(nested), det, []SplitRule{
		{Title: "Validate", Text: "Handlers validate their input.", StartLine: 1, EndLine: 1, Globs: []string{"**/*.go"}},
		{Title: "Log", Text: "Handlers log every rejected request.", StartLine: 2, EndLine: 2, Globs: []string{"services/api/handlers/**"}},
	})
	if len(out) != 2 || !slices.Equal(out[0].Paths, []string{"services/api/**"}) || !slices.Equal(out[1].Paths, []string{"services/api/handlers/**"}) {
		t.Errorf("nested paths: %v", out)
	}
}
