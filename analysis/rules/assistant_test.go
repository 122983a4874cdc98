package rules

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestAssistantSplit(t *testing.T) {
	type split struct {
		line  int
		title string
		text  string
	}
	long := strings.Repeat("word ", 30)
	tests := []struct {
		name    string
		src     *Assistant
		content string
		want    []split
	}{
		{
			name:    "sections win over bullets, preamble left out",
			src:     CopilotInstructions(),
			content: "# Title\nIntro.\n\n## One\n- a\n- b\n\n## Two\nText two.\n### Sub\nmore\n",
			want:    []split{{4, "One", "- a\n- b"}, {8, "Two", "Text two.\n### Sub\nmore"}},
		},
		{
			name:    "a section with only a heading is a rule in so many words",
			src:     ClaudeMD(),
			content: "## Use tabs\n## Short lines\nKeep lines short.\n",
			want:    []split{{1, "Use tabs", "Use tabs"}, {2, "Short lines", "Keep lines short."}},
		},
		{
			name:    "one section: bullets",
			src:     ClaudeMD(),
			content: "## Rules\n\n* first. Second sentence.\n  continued\n    - nested\n+ third\n10. tenth\n",
			want: []split{
				{3, "first", "first. Second sentence.\ncontinued\n  - nested"},
				{6, "third", "third"},
				{7, "tenth", "tenth"},
			},
		},
		{
			name:    "a paragraph after the list ends the item; fences hide bullets",
			src:     CursorRules(),
			content: "- one\n\n  still one\n\nProse between.\n- two\n  ```\n- not a bullet\n  ```\n",
			want:    []split{{1, "one", "one\n\nstill one"}, {6, "two", "two\n```\n- not a bullet\n```"}},
		},
		{
			name:    "one bullet: the whole file",
			src:     WindsurfRules(),
			content: "\n\nAlways write tests.\n- only bullet\n",
			want:    []split{{3, "Always write tests", "Always write tests.\n- only bullet"}},
		},
		{
			name:    "whole file titled by its heading",
			src:     AgentsMD(),
			content: "# Build\nRun make before pushing.\n",
			want:    []split{{1, "Build", "# Build\nRun make before pushing."}},
		},
		{
			name:    "long bullet titles are cut at a word",
			src:     CursorRules(),
			content: "- " + long + "\n- b\n",
			want:    []split{{1, strings.TrimSpace(strings.Repeat("word ", 15)) + "…", strings.TrimSpace(long)}, {2, "b", "b"}},
		},
		{name: "empty", src: ClaudeMD(), content: "", want: nil},
		{name: "only headings", src: ClaudeMD(), content: "# A\n\n## B\n## C\n", want: nil},
		{
			name:    "@kody-sync keeps a file of headings",
			src:     ClaudeMD(),
			content: "<!-- @kody-sync -->\n# Prefer composition\n",
			want:    []split{{2, "Prefer composition", "# Prefer composition"}},
		},
		{
			name:    "@kody-ignore in the last lines",
			src:     ClaudeMD(),
			content: "- a\n- b\n" + strings.Repeat("\n", 5) + "@kody-ignore\n",
			want:    nil,
		},
		{
			name:    "@kody-ignore on the tenth line from the end",
			src:     AgentsMD(),
			content: strings.Repeat("- rule\n", 15) + "<!-- @kody-ignore -->\n" + strings.Repeat("- rule\n", 9),
			want:    nil,
		},
		{
			name:    "@kody-ignore in the middle of a long file does not count",
			src:     ClaudeMD(),
			content: strings.Repeat("\n", 12) + "- see @kody-ignore\n- b\n" + strings.Repeat("\n", 12),
			want:    []split{{13, "see @kody-ignore", "see @kody-ignore"}, {14, "b", "b"}},
		},
		{
			name:    "front matter lines count",
			src:     CursorMDC(),
			content: "---\ndescription: x\n---\n- a\n- b\n",
			want:    []split{{4, "a", "a"}, {5, "b", "b"}},
		},
		{
			name:    "a file that is one rule takes the description as title",
			src:     CursorMDC(),
			content: "---\ndescription: Use zod for validation\nglobs:\n---\n\nValidate with zod.\n",
			want:    []split{{6, "Use zod for validation", "Validate with zod."}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "x.md"
			rules, errs := tt.src.Parse(file, []byte(tt.content))
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			var got []split
			for _, r := range rules {
				got = append(got, split{r.Line, r.Title, r.Instructions})
				if r.Scope != ScopeFile || r.Severity != SeverityMedium || r.Detector != nil || !r.Enabled || r.File != file {
					t.Errorf("imported rule defaults wrong: %+v", r)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("split =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestAssistantUUIDs(t *testing.T) {
	uuids := func(content string) []string {
		rules, errs := ClaudeMD().Parse("CLAUDE.md", []byte(content))
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		var out []string
		for _, r := range rules {
			out = append(out, r.UUID)
		}
		return out
	}
	before := uuids("- Use tabs.\n- Use tabs!\n- Name things well\n")
	want := []string{"claude:CLAUDE.md#use-tabs", "claude:CLAUDE.md#use-tabs-2", "claude:CLAUDE.md#name-things-well"}
	if !reflect.DeepEqual(before, want) {
		t.Errorf("uuids = %q, want %q", before, want)
	}
	// Edits elsewhere in the file keep the ids.
	after := uuids("# Notes\nIntro.\n\n- Prefer small PRs\n- Use tabs.\n- Use tabs!\n- Name things well\n\nClosing words.\n")
	if !reflect.DeepEqual(after[1:], want) {
		t.Errorf("after an edit uuids = %q, want %q after the new one", after, want)
	}
	// A title whose slug is already taken by a suffixed one.
	if got := uuids("- a\n- a\n- a-2\n"); !reflect.DeepEqual(got, []string{"claude:CLAUDE.md#a", "claude:CLAUDE.md#a-2", "claude:CLAUDE.md#a-2-2"}) {
		t.Errorf("uuids = %q", got)
	}
}

func TestAssistantFrontMatter(t *testing.T) {
	tests := []struct {
		name    string
		src     *Assistant
		content string
		paths   []string
		err     string // "" for none; else "line:msg"
	}{
		{"globs list", CursorMDC(), "---\nglobs: [\"a/**\", b/*.go]\n---\nx\n", []string{"a/**", "b/*.go"}, ""},
		{"globs with braces", CursorMDC(), "---\nglobs: \"**/*.{ts,tsx}, ./docs/**\"\n---\nx\n", []string{"**/*.{ts,tsx}", "docs/**"}, ""},
		{"alwaysApply drops the globs", CursorMDC(), "---\nglobs: a/**\nalwaysApply: true\n---\nx\n", nil, ""},
		{"applyTo", CopilotPathInstructions(), "---\napplyTo: '**/*.ts,**/*.tsx'\n---\nx\n", []string{"**/*.ts", "**/*.tsx"}, ""},
		{"globs is not a Copilot key", CopilotPathInstructions(), "---\nglobs: a/**\n---\nx\n", nil, ""},
		{"bad glob", CursorMDC(), "---\ndescription: d\nglobs: src/[a.go\n---\nx\n", nil, `3:invalid glob "src/[a.go"`},
		{"bad YAML", CursorMDC(), "---\ndescription: [x\n---\nx\n", nil, "2:invalid YAML in front matter"},
		{"unterminated", CursorMDC(), "---\nglobs: a\nx\n", nil, "1:unterminated front matter"},
		{"bad alwaysApply", CursorMDC(), "---\nalwaysApply: sometimes\n---\nx\n", nil, "2:alwaysApply must be true or false"},
		{"no front matter for CLAUDE.md", ClaudeMD(), "---\nglobs: a\n---\nx\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, errs := tt.src.Parse("f", []byte(tt.content))
			if tt.err != "" {
				line, msg, _ := strings.Cut(tt.err, ":")
				if len(errs) != 1 || len(rules) != 0 || errs[0].Warning || !strings.Contains(errs[0].Msg, msg) || line != strconv.Itoa(errs[0].Line) {
					t.Errorf("Parse = %v, %v; want the error %s", rules, errs, tt.err)
				}
				return
			}
			if len(errs) != 0 || len(rules) == 0 {
				t.Fatalf("Parse = %v, %v", rules, errs)
			}
			if !reflect.DeepEqual(rules[0].Paths, tt.paths) {
				t.Errorf("Paths = %q, want %q", rules[0].Paths, tt.paths)
			}
		})
	}
}

func TestAssistantSourcesOwnAndWatch(t *testing.T) {
	tests := []struct {
		src   Source
		watch []string
		owns  []string
		not   []string
	}{
		{KodyMarkdown{}, []string{".kody/rules"}, []string{".kody/rules", ".kody/rules/a.md", ".kody/rules/sub"}, []string{".kody/rules/a.yml", ".kody"}},
		{KodyYAML{}, []string{".kody-rules/review"}, []string{".kody-rules/review", ".kody-rules/review/a.yml", "./.kody-rules/review/B.YAML"},
			[]string{".kody-rules/review/sub/a.yml", ".kody-rules/review/.a.yml", ".kody-rules/review/a.md", ".kody-rules/memories/a.yml", ".kody-rules"}},
		{KodyYAML{Memories: true}, []string{".kody-rules/memories"}, []string{".kody-rules/memories", ".kody-rules/memories/m.yml"}, []string{".kody-rules/review/a.yml"}},
		{CursorRules(), []string{".cursorrules"}, []string{".cursorrules", "./.cursorrules"}, []string{"sub/.cursorrules", ".cursorrules.bak"}},
		{CursorMDC(), []string{".cursor/rules"}, []string{".cursor/rules", ".cursor/rules/a.mdc", ".cursor/rules/web/b.MDC", ".cursor/rules/web"},
			[]string{".cursor/rules/a.md", ".cursor/rules/.x/a.mdc", ".cursor/mcp.json", ".cursor"}},
		{CopilotInstructions(), []string{".github/copilot-instructions.md"}, []string{".github/copilot-instructions.md"}, []string{".github", "copilot-instructions.md"}},
		{CopilotPathInstructions(), []string{".github/instructions"}, []string{".github/instructions", ".github/instructions/go.instructions.md", ".github/instructions/web/ts.instructions.md"},
			[]string{".github/instructions/readme.md", ".github/instructions/.instructions.md", ".github/workflows/ci.yml"}},
		{ClaudeMD(), []string{"CLAUDE.md"}, []string{"CLAUDE.md"}, []string{"claude.md", "docs/claude.md", "node_modules/x/CLAUDE.md", ".git/CLAUDE.md"}},
		{AgentsMD(), []string{"AGENTS.md"}, []string{"AGENTS.md"}, []string{"vendor/AGENTS.md", ".github/AGENTS.md", "sub/AGENTS.md.bak", "1/2/3/4/5/6/7/8/9/AGENTS.md"}},
		{WindsurfRules(), []string{".windsurfrules"}, []string{".windsurfrules"}, []string{".windsurf"}},
	}
	names := map[string]bool{}
	for _, tt := range tests {
		name := tt.src.Name()
		if names[name] {
			t.Errorf("two sources are named %q", name)
		}
		names[name] = true
		if got := tt.src.WatchPaths(); !reflect.DeepEqual(got, tt.watch) {
			t.Errorf("%s: WatchPaths = %q, want %q", name, got, tt.watch)
		}
		for _, p := range tt.owns {
			if !tt.src.Owns(p) {
				t.Errorf("%s: Owns(%q) = false", name, p)
			}
		}
		for _, p := range tt.not {
			if tt.src.Owns(p) {
				t.Errorf("%s: Owns(%q) = true", name, p)
			}
		}
	}
	// The default registry has every one of them, and its watch paths
	// cover every file they own.
	reg := DefaultRegistry()
	if len(reg.Sources()) != len(tests) {
		t.Errorf("DefaultRegistry has %d sources, want %d", len(reg.Sources()), len(tests))
	}
	for _, tt := range tests {
		for _, p := range tt.owns {
			src, ok := reg.SourceOf(p)
			if !ok || src.Name() != tt.src.Name() {
				t.Errorf("DefaultRegistry.SourceOf(%q) = %v, want %s", p, src, tt.src.Name())
			}
			p = normalizeRelPath(p)
			covered := false
			for _, w := range reg.WatchPaths() {
				if p == w || strings.HasPrefix(p, w+"/") {
					covered = true
				}
			}
			if !covered {
				t.Errorf("%s is owned but under no watch path", p)
			}
		}
	}
}

func TestAssistantLoadFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".cursor/rules/a.mdc", "- one\n- two\n")
	writeFile(t, root, ".cursor/rules/deep/b.mdc", "Just one rule.\n")
	writeFile(t, root, ".cursor/rules/notes.md", "- not\n- read\n")
	writeFile(t, root, ".cursor/rules/broken.mdc", "---\nglobs: [\n---\nx\n")
	writeFile(t, root, ".github", "a file, not a directory")
	writeFile(t, root, "CLAUDE.md", "")
	reg := NewRegistry(CursorMDC(), CopilotInstructions(), CopilotPathInstructions(), ClaudeMD())
	rep := reg.LoadReport(context.Background(), root)
	var got []string
	for _, r := range rep.Rules {
		got = append(got, r.File+" "+r.Title)
	}
	want := []string{".cursor/rules/a.mdc one", ".cursor/rules/a.mdc two", ".cursor/rules/deep/b.mdc Just one rule"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	// A .github that is a file holds no instructions, which is no error.
	if len(rep.Errors) != 1 || rep.Errors[0].File != ".cursor/rules/broken.mdc" || rep.Errors[0].Line != 2 {
		t.Errorf("errors = %v", rep.Errors)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings = %v", rep.Warnings)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestAssistantTitleCutKeepsNoPartOfASecret: a long bullet whose title is
// cut inside a token keeps none of it (the title is sent to the model, and
// half a token is no longer recognised as one there); the rule's text
// keeps the whole line for the model's redaction.
func TestAssistantTitleCutKeepsNoPartOfASecret(t *testing.T) {
	token := "ghp_STRADDLEabcdefghijklmnopqrstuvwx1234"
	// 40 characters, then the token: the cut at 79 falls inside it, and
	// no blank after the first half of the title lets the cut move back.
	bullet := "The deploy bot of staging authenticates " + token + " and nothing else ever uses it"
	rules, errs := ClaudeMD().Parse("CLAUDE.md", []byte("- "+bullet+"\n- Keep functions short.\n"))
	if len(errs) != 0 || len(rules) != 2 {
		t.Fatalf("rules %v, errors %v", rules, errs)
	}
	if title := rules[0].Title; strings.Contains(title, "ghp_") || strings.Contains(title, "Ab1Ab1") {
		t.Errorf("the title keeps part of the token: %q", title)
	}
}
