package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func sample() *Report {
	r := &Report{Version: "test", Base: "HEAD", Files: []File{{Path: "b.go", Hunks: 1}, {Path: "a.go", Hunks: 2, CachedHunks: 1}, {Path: "go.sum", Skipped: "lock file"}}}
	r.Findings = []Finding{
		{ID: "2", Source: SourceReview, File: "b.go", StartLine: 3, EndLine: 3, StartColumn: 2, Severity: "medium", Label: "bug", Summary: "S2", Message: "explain", ImprovedCode: "fixed()"},
		{ID: "1", Source: SourceRule, File: "a.go", StartLine: 9, EndLine: 9, StartColumn: 5, Severity: "high", Label: "kody_rules", Summary: "Rule", RuleID: "r-1", RuleTitle: "Rule"},
		{ID: "3", Source: SourceReview, File: "a.go", StartLine: 1, EndLine: 1, Severity: "critical", Label: "bug", Summary: "dup", DuplicateOf: "2"},
	}
	r.Sort()
	return r
}

func TestTextIsCompilerStyleAndSkipsDuplicates(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"a.go:9:5: high kody_rules: Rule\n", "b.go:3:2: medium bug: S2\n    explain\n    suggested:\n      fixed()\n", "go.sum: not reviewed: lock file", "2 findings in 3 changed files (1 high, 1 medium)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dup") {
		t.Errorf("a linked duplicate is printed on its own:\n%s", out)
	}
}

// TestFailsCountsEveryFindingAndRanks: --fail-on counts each finding at
// its own severity, a repeat of another one included; a critical finding
// linked to a medium one still fails --fail-on critical.
func TestFailsCountsEveryFindingAndRanks(t *testing.T) {
	r := sample()
	if !r.Fails("high") || !r.Fails("critical") {
		t.Fatal("fail-on: high and critical must fail (the critical finding is a repeat of a medium one, and still critical)")
	}
	r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool { return f.Severity == "critical" })
	if r.Fails("critical") || !r.Fails("medium") {
		t.Fatal("fail-on: critical must not fail without a critical finding, medium must")
	}
	if Rank("CRITICAL") != 4 || Rank("low") != 1 || Rank("urgent") != 0 {
		t.Fatal("Rank")
	}
}

func TestSARIFShape(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string }
				}
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Level     string
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || len(run.Results) != 2 || len(run.Tool.Driver.Rules) != 2 {
		t.Fatalf("sarif %s", b.String())
	}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Fatalf("ruleIndex does not point at ruleId: %+v", r)
		}
	}
	if run.Results[0].Level != "error" || run.Results[1].Level != "warning" {
		t.Fatalf("levels %+v", run.Results)
	}
}

// TestSARIFURIsArePercentEncoded: artifact URIs are relative URI
// references, so a file name is encoded segment by segment: "#" would
// start a fragment, "%" an escape, a blank is no URI character, and a ":"
// in the first segment would read as a scheme.
func TestSARIFURIsArePercentEncoded(t *testing.T) {
	for path, want := range map[string]string{
		"a/b.go":              "a/b.go",
		"#hash.txt":           "%23hash.txt",
		"pct%20.txt":          "pct%2520.txt",
		"sp ace.txt":          "sp%20ace.txt",
		"c:x.txt":             "c%3Ax.txt",
		"dir/a:b?.txt":        "dir/a:b%3F.txt",
		"app/[slug]/page.tsx": "app/%5Bslug%5D/page.tsx",
		"naïve.go":            "na%C3%AFve.go",
	} {
		r := &Report{Findings: []Finding{{ID: "1", Source: SourceRule, File: path, StartLine: 1, Severity: "high", Label: "kody_rules", Summary: "s"}}}
		var b bytes.Buffer
		if err := r.WriteSARIF(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `"uri": "`+want+`"`) {
			t.Errorf("%q: want the URI %q in\n%s", path, want, b.String())
		}
	}
}
