package rules

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestKodusTeamFixture loads a workspace holding the rules a Kodus team
// keeps, written the way real users write them, and checks every rule that
// comes out of it.
func TestKodusTeamFixture(t *testing.T) {
	rep := DefaultRegistry().LoadReport(context.Background(), filepath.Join("testdata", "kodus-team"))
	if len(rep.Errors) != 0 {
		t.Errorf("broken rules: %v", rep.Errors)
	}
	// The only warning is the unknown key the fixture has on purpose.
	if len(rep.Warnings) != 1 || rep.Warnings[0].File != ".kody/rules/team-owned.md" || rep.Warnings[0].Line != 3 ||
		!strings.Contains(rep.Warnings[0].Msg, `unknown key "owner"`) {
		t.Errorf("warnings = %v, want one about the owner key of team-owned.md", rep.Warnings)
	}

	type row struct {
		source, file string
		line         int
		title        string
		scope        Scope
		severity     Severity
		paths        []string
	}
	want := []row{
		{"cursor-mdc", ".cursor/rules/react.mdc", 6, "React components are function components", ScopeFile, SeverityMedium, []string{"src/**/*.tsx", "src/components/**/*.{ts,js}"}},
		{"cursorrules", ".cursorrules", 3, "Prefer `const` over `let`; never use `var`", ScopeFile, SeverityMedium, nil},
		{"cursorrules", ".cursorrules", 4, "Use async/await instead of raw promise chains", ScopeFile, SeverityMedium, nil},
		{"cursorrules", ".cursorrules", 6, "Naming", ScopeFile, SeverityMedium, nil},
		{"copilot", ".github/copilot-instructions.md", 5, "Error handling", ScopeFile, SeverityMedium, nil},
		{"copilot", ".github/copilot-instructions.md", 9, "Tests", ScopeFile, SeverityMedium, nil},
		{"copilot-instructions", ".github/instructions/go.instructions.md", 4, "Run gofmt on every file", ScopeFile, SeverityMedium, []string{"**/*.go", "**/go.mod"}},
		{"copilot-instructions", ".github/instructions/go.instructions.md", 5, "Pass a context.Context as the first argument of functions that do I/O", ScopeFile, SeverityMedium, []string{"**/*.go", "**/go.mod"}},
		{"kody-memories", ".kody-rules/memories/learned.yml", 1, "Dates are stored in UTC", ScopeFile, SeverityLow, []string{"src/**"}},
		{"kody-yml", ".kody-rules/review/backend.yml", 2, "Use parameterized SQL queries", ScopeFile, SeverityCritical, []string{"src/db/**"}},
		{"kody-yml", ".kody-rules/review/backend.yml", 16, "Migrations are reversible", ScopePullRequest, SeverityHigh, []string{"migrations/**", "db/migrations/**"}},
		{"kody-md", ".kody/rules/api/validate-input.md", 1, "Handlers validate their input", ScopeFile, SeverityCritical, []string{"src/api/**/*.ts", "!src/api/**/*.test.ts"}},
		{"kody-md", ".kody/rules/no-console-log.md", 1, "No console.log in production code", ScopeFile, SeverityHigh, []string{"src/**/*.ts"}},
		{"kody-md", ".kody/rules/pr-explains-why.md", 1, "Every pull request explains why", ScopePullRequest, SeverityHigh, nil},
		{"kody-md", ".kody/rules/small-functions.md", 1, "Keep functions small", ScopeFile, SeverityMedium, nil},
		{"kody-md", ".kody/rules/team-owned.md", 1, "Feature flags are cleaned up", ScopeFile, SeverityMedium, nil},
		{"kody-md", ".kody/rules/windows-crlf.md", 1, "No hard-coded URLs", ScopeFile, SeverityMedium, []string{"src/**"}},
		{"kody-md", ".kody/rules/wrap-errors.md", 1, "Wrap errors", ScopePullRequest, SeverityLow, []string{"**/*.go"}},
		{"claude", "CLAUDE.md", 3, "Keep pull requests under 400 changed lines", ScopeFile, SeverityMedium, nil},
		{"claude", "CLAUDE.md", 4, "Update the changelog when behaviour changes", ScopeFile, SeverityMedium, nil},
	}
	var got []row
	byTitle := map[string]*Rule{}
	for _, r := range rep.Rules {
		got = append(got, row{r.Source, r.File, r.Line, r.Title, r.Scope, r.Severity, r.Paths})
		byTitle[r.Title] = r
		if !r.Enabled {
			t.Errorf("%s: disabled", r.Title)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d rules, want %d", len(got), len(want))
	}
	for i := range max(len(got), len(want)) {
		var g, w row
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("rule %d:\n got  %+v\n want %+v", i, g, w)
		}
	}

	// What the table does not show.
	checks := []struct {
		title string
		check func(r *Rule) bool
	}{
		{"No console.log in production code", func(r *Rule) bool {
			return r.UUID == "2b7c3f1e-5d4a-4c1b-9e8f-0a1b2c3d4e5f" && len(r.Examples) == 2 && r.Examples[0].Kind == "bad"
		}},
		{"Every pull request explains why", func(r *Rule) bool { return r.SeverityMin == SeverityHigh }},
		{"Handlers validate their input", func(r *Rule) bool {
			return reflect.DeepEqual(r.Buckets, []string{"security", "api"}) && reflect.DeepEqual(r.Languages, []string{"typescript"}) &&
				len(r.References) == 1 && r.References[0].Path == "docs/style.md" && r.References[0].StartLine == 2 && r.References[0].EndLine == 4 &&
				strings.HasPrefix(r.References[0].Text, "Errors are JSON objects") && strings.HasSuffix(r.References[0].Text, "may change.\n")
		}},
		{"Keep functions small", func(r *Rule) bool {
			return r.UUID == "path:.kody/rules/small-functions.md" && strings.HasPrefix(r.Instructions, "Functions longer than 50 lines")
		}},
		{"Feature flags are cleaned up", func(r *Rule) bool { return r.Extra["owner"] == "platform-team" }},
		{"No hard-coded URLs", func(r *Rule) bool {
			return r.Instructions == "Read service URLs from configuration, never from string literals."
		}},
		{"Use parameterized SQL queries", func(r *Rule) bool {
			return r.UUID == "7a0c1d52-8e3f-4b6a-9d21-5f4e3c2b1a00" && len(r.Examples) == 2 &&
				r.Examples[0].Kind == "bad" && r.Examples[1].Kind == "good" && strings.Contains(r.Examples[1].Code, "$1") &&
				strings.HasPrefix(r.Instructions, "Never build SQL") && r.BodyLine == 5
		}},
		{"Migrations are reversible", func(r *Rule) bool {
			inh, ok := r.Inheritance.(map[string]any)
			return r.UUID == "path:.kody-rules/review/backend.yml#migrations-are-reversible" && ok && inh["inheritable"] == true
		}},
		{"Dates are stored in UTC", func(r *Rule) bool {
			return len(r.Examples) == 1 && r.Examples[0].Kind == "good" && r.Examples[0].Code == "store(date.toISOString())\n"
		}},
		{"React components are function components", func(r *Rule) bool {
			return r.UUID == "cursor-mdc:.cursor/rules/react.mdc#react-components-are-function-components" &&
				r.Detector == nil && r.AppliesTo("src/components/Button.tsx") && !r.AppliesTo("server/main.go")
		}},
		{"Naming", func(r *Rule) bool {
			return r.UUID == "cursorrules:.cursorrules#naming" && r.Instructions == "**Naming**: components are PascalCase, hooks start with `use`."
		}},
		{"Use async/await instead of raw promise chains", func(r *Rule) bool {
			return r.Instructions == "Use async/await instead of raw promise chains. Keep the happy path\nunindented."
		}},
		{"Error handling", func(r *Rule) bool {
			return r.Instructions == "Throw `AppError` with a code; never throw plain strings." && r.BodyLine == 7
		}},
	}
	for _, c := range checks {
		r := byTitle[c.title]
		if r == nil || !c.check(r) {
			t.Errorf("%q loaded wrong: %+v", c.title, r)
		}
	}
	for _, r := range rep.Rules {
		if r.File == "AGENTS.md" || r.File == ".windsurfrules" {
			t.Errorf("%s should be skipped (@kody-ignore, only headings): %+v", r.File, r)
		}
	}

	// The old API leaves warnings out: nothing it returns is a warning.
	rules, errs := DefaultRegistry().Load(context.Background(), filepath.Join("testdata", "kodus-team"))
	if len(rules) != len(rep.Rules) || len(errs) != 0 {
		t.Errorf("Load = %d rules, %v; want %d rules and no errors", len(rules), errs, len(rep.Rules))
	}
}
