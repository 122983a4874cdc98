package rules

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestParseKodyYAML(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		titles []string // "title uuid line"
		errs   []string // "line:msg part", warnings marked "w"
		check  func(t *testing.T, rs []*Rule)
	}{
		{
			name:   "one rule",
			src:    "title: T\nrule: Do it.\nseverity: HIGH\nscope: pull-request\npath: src/**\n",
			titles: []string{"T path:r.yml 1"},
			check: func(t *testing.T, rs []*Rule) {
				r := rs[0]
				if r.Severity != SeverityHigh || r.Scope != ScopePullRequest || !reflect.DeepEqual(r.Paths, []string{"src/**"}) ||
					r.Instructions != "Do it." || r.BodyLine != 2 || !r.Enabled {
					t.Errorf("rule = %+v", r)
				}
			},
		},
		{
			name:   "a list under rules:, with ids from the titles",
			src:    "rules:\n  - title: A\n    rule: a\n  - title: A\n    rule: b\n",
			titles: []string{"A path:r.yml#a 2", "A path:r.yml#a-2 4"},
		},
		{
			name:   "several documents",
			src:    "title: A\nrule: a\n---\ntitle: B\nrule: b\n",
			titles: []string{"A path:r.yml#a 1", "B path:r.yml#b 4"},
		},
		{
			name:   "title from the rule text, severity_min, examples as code/good and plain",
			src:    "rule: Use UTC everywhere. Really.\nseverity_min: low\nexamples:\n  - code: a\n    good: false\n  - plain\n",
			titles: []string{"Use UTC everywhere path:r.yml 1"},
			check: func(t *testing.T, rs []*Rule) {
				want := []Example{{Kind: "bad", Code: "a\n"}, {Code: "plain\n"}}
				if rs[0].Severity != SeverityLow || rs[0].SeverityMin != SeverityLow || !reflect.DeepEqual(rs[0].Examples, want) {
					t.Errorf("rule = %+v", rs[0])
				}
			},
		},
		{
			name:   "a rejected rule is off, unless enabled says otherwise",
			src:    "- {title: A, rule: a, status: rejected}\n- {title: B, rule: b, status: deleted, enabled: true}\n",
			titles: []string{"A path:r.yml#a 1", "B path:r.yml#b 2"},
			check: func(t *testing.T, rs []*Rule) {
				if rs[0].Enabled || !rs[1].Enabled || rs[0].Extra["status"] != "rejected" {
					t.Errorf("Enabled = %v, %v", rs[0].Enabled, rs[1].Enabled)
				}
			},
		},
		{
			name:   "a broken rule of a list leaves the others",
			src:    "- title: A\n  rule: a\n- title: B\n  severity: urgent\n- title\n- title: C\n  rule: c\n",
			titles: []string{"A path:r.yml#a 1", "C path:r.yml#c 6"},
			errs:   []string{`4:invalid severity "urgent"`, "5:every rule of the list must be a mapping"},
		},
		{
			name:   "broken YAML in one item of a list",
			src:    "# rules\n- title: A\n  rule: a\n- title: B\n  rule: \"unclosed\n- title: C\n  rule: c\n",
			titles: []string{"A path:r.yml#a 2", "C path:r.yml#c 6"},
			errs:   []string{"5:invalid YAML: found unexpected end of stream"},
		},
		{
			name: "broken YAML in a mapping",
			src:  "title: A\nrule: a\n\tseverity: high\n",
			errs: []string{"3:indent with spaces"},
		},
		{
			name: "not a rule",
			src:  "just text\n",
			errs: []string{"1:a Kodus YAML rule file holds a rule"},
		},
		{
			name:   "unknown keys warn, platform metadata does not",
			src:    "title: A\nrule: a\norigin: generated\ncreatedAt: 2025-01-01\nfavourite: yes\n",
			titles: []string{"A path:r.yml 1"},
			errs:   []string{`5:w:unknown key "favourite"`},
		},
		{
			name:   "no rule text",
			src:    "title: A\n",
			titles: []string{"A path:r.yml 1"},
			errs:   []string{`1:w:has no "rule:" text`},
		},
		{
			name: "bad examples",
			src:  "title: A\nrule: a\nexamples:\n  - snippet: x\n    isCorrect: perhaps\n",
			errs: []string{`5:examples.isCorrect must be true or false, not "perhaps"`},
		},
		{name: "empty", src: "\n", errs: []string{"0:w:empty rule file"}},
		{name: "only a comment", src: "# nothing yet\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, errs := ParseKodyYAML("r.yml", []byte(tt.src))
			var titles []string
			for _, r := range rs {
				titles = append(titles, r.Title+" "+r.UUID+" "+itoa(r.Line))
				if r.File != "r.yml" {
					t.Errorf("File = %q", r.File)
				}
			}
			if !reflect.DeepEqual(titles, tt.titles) {
				t.Errorf("rules = %q, want %q", titles, tt.titles)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors = %v, want %q", errs, tt.errs)
			}
			for i, e := range errs {
				line, msg, _ := strings.Cut(tt.errs[i], ":")
				warn := strings.HasPrefix(msg, "w:")
				msg = strings.TrimPrefix(msg, "w:")
				if itoa(e.Line) != line || e.Warning != warn || !strings.Contains(e.Msg, msg) || e.File != "r.yml" {
					t.Errorf("error %d = %v (warning %v), want %q", i, e, e.Warning, tt.errs[i])
				}
			}
			if tt.check != nil && len(rs) > 0 {
				tt.check(t, rs)
			}
		})
	}
}

// A broken YAML file is reported with its line while the other rules, of
// every source, still load.
func TestKodyYAMLBrokenFile(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody-rules/review/good.yml", "title: Good\nrule: g\n")
	writeFile(t, root, ".kody-rules/review/broken.yml", "title: Broken\nrule: [unclosed\nseverity: high\n")
	writeFile(t, root, ".kody-rules/review/sub/ignored.yml", "title: In a sub-directory\nrule: x\n")
	writeFile(t, root, ".kody-rules/review/notes.txt", "not a rule")
	writeFile(t, root, ".kody-rules/memories/m.yaml", "- title: Memory\n  rule: m\n")
	writeFile(t, root, ".kody/rules/a.md", okRule)
	rules, errs := DefaultRegistry().Load(context.Background(), root)
	var got []string
	for _, r := range rules {
		got = append(got, r.Source+" "+r.Title)
	}
	want := []string{"kody-memories Memory", "kody-yml Good", "kody-md OK"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	if len(errs) != 1 || errs[0].File != ".kody-rules/review/broken.yml" || errs[0].Line != 2 || !strings.Contains(errs[0].Error(), "invalid YAML") {
		t.Errorf("errors = %v, want one for broken.yml:2", errs)
	}
}
