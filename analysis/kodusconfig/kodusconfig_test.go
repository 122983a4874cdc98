package kodusconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	// want edits the default configuration: every case states only what
	// differs from it.
	type want struct {
		edit     func(c *Config)
		file     string
		problems []string // "line: substring"; exact count
	}
	tests := []struct {
		name  string
		files map[string]string
		want  want
	}{
		{
			name: "no file gives the defaults",
		},
		{
			name:  "empty file gives the defaults",
			files: map[string]string{"kodus-config.yml": ""},
			want:  want{file: "kodus-config.yml"},
		},
		{
			name:  "comments only",
			files: map[string]string{"kodus-config.yml": "# nothing here\n"},
			want:  want{file: "kodus-config.yml"},
		},
		{
			name: "a complete Kodus file",
			files: map[string]string{"kodus-config.yml": `
automatedReviewActive: true
ignorePaths:
  - "yarn.lock"
  - "dist/**"
  - "./vendor/**"
reviewOptions:
  security: false
  bug: true
  performance: true
  kody_rules: true
suggestionControl:
  groupingMode: minimal
  limitationType: file
  maxSuggestions: 5
  severityLevelFilter: high
  applyFiltersToKodyRules: true
  severityLimits:
    low: 0
    critical: 0
v2PromptOverrides:
  generation:
    main: "be brief"
`},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.IgnorePaths = []string{"yarn.lock", "dist/**", "vendor/**"}
				c.ReviewOptions["security"] = false
				c.SuggestionControl = SuggestionControl{GroupingMode: "minimal", LimitationType: "file", MaxSuggestions: 5, SeverityLevelFilter: "high", ApplyFiltersToKodyRules: true}
			}},
		},
		{
			name:  "yaml extension",
			files: map[string]string{"kodus-config.yaml": "suggestionControl:\n  maxSuggestions: 3\n"},
			want: want{file: "kodus-config.yaml", edit: func(c *Config) {
				c.SuggestionControl.MaxSuggestions = 3
			}},
		},
		{
			name: "both names: yml wins and yaml is reported",
			files: map[string]string{
				"kodus-config.yml":  "suggestionControl:\n  maxSuggestions: 3\n",
				"kodus-config.yaml": "suggestionControl:\n  maxSuggestions: 7\n",
			},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.SuggestionControl.MaxSuggestions = 3
			}, problems: []string{"0: ignored: kodus-config.yml is used"}},
		},
		{
			name:  "values are case-insensitive",
			files: map[string]string{"kodus-config.yml": "suggestionControl:\n  severityLevelFilter: MEDIUM\n  limitationType: File\n"},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.SuggestionControl.SeverityLevelFilter = "medium"
				c.SuggestionControl.LimitationType = "file"
			}},
		},
		{
			name: "legacy categories turn the current ones off",
			files: map[string]string{"kodus-config.yml": `reviewOptions:
  performance_and_optimization: false
  potential_issues: false
  bug: true
`},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.ReviewOptions["performance_and_optimization"] = false
				c.ReviewOptions["potential_issues"] = false
				c.ReviewOptions["performance"] = false
			}},
		},
		{
			name: "bad values are reported with their lines and defaults kept",
			files: map[string]string{"kodus-config.yml": `ignorePaths:
  - "src/[abc"
  - ok/**
  - 
reviewOptions:
  security: "no"
  secruity: false
suggestionControl:
  groupingMode: clever
  limitationType: severity
  maxSuggestions: -2
  severityLevelFilter: urgent
  applyFiltersToKodyRules: 1
  maxSugestions: 4
`},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.IgnorePaths = []string{"ok/**"}
			}, problems: []string{
				"2: not a valid glob pattern",
				"4: expected a glob pattern, found nothing",
				"6: reviewOptions.security: expected true or false, found text",
				"7: unknown key secruity",
				"9: \"clever\" is not one of full, minimal, smart; full is used",
				"10: \"severity\" is not one of file, pr; pr is used",
				"11: -2 is negative",
				"12: \"urgent\" is not one of low, medium, high, critical; low is used",
				"13: applyFiltersToKodyRules: expected true or false, found a number",
				"14: unknown key maxSugestions",
			}},
		},
		{
			name:  "maxSuggestions must be a whole number",
			files: map[string]string{"kodus-config.yml": "suggestionControl:\n  maxSuggestions: \"9\"\n"},
			want:  want{file: "kodus-config.yml", problems: []string{"2: expected a whole number, found text"}},
		},
		{
			name:  "wrong shapes",
			files: map[string]string{"kodus-config.yml": "ignorePaths: dist/**\nreviewOptions: [security]\nsuggestionControl: 3\n"},
			want: want{file: "kodus-config.yml", problems: []string{
				"1: ignorePaths: expected a list",
				"2: expected a mapping, found a list",
				"3: expected a mapping, found a number",
			}},
		},
		{
			name:  "a list at the top",
			files: map[string]string{"kodus-config.yml": "- a\n- b\n"},
			want:  want{file: "kodus-config.yml", problems: []string{"1: expected a mapping at the top of the file"}},
		},
		{
			name:  "invalid YAML points at the line",
			files: map[string]string{"kodus-config.yml": "ignorePaths:\n  - a\nsuggestionControl:\n  maxSuggestions: 3\n   groupingMode: full\n"},
			want:  want{file: "kodus-config.yml", problems: []string{"5: invalid YAML"}},
		},
		{
			name:  "invalid YAML with a tab",
			files: map[string]string{"kodus-config.yml": "ignorePaths:\n\t- a\n"},
			want:  want{file: "kodus-config.yml", problems: []string{"2: invalid YAML"}},
		},
		{
			name:  "duplicate key",
			files: map[string]string{"kodus-config.yml": "suggestionControl:\n  maxSuggestions: 3\n  maxSuggestions: 4\n"},
			want: want{file: "kodus-config.yml", edit: func(c *Config) {
				c.SuggestionControl.MaxSuggestions = 3
			}, problems: []string{"3: maxSuggestions is set twice; the first one is used"}},
		},
		{
			name:  "a directory named like the file",
			files: map[string]string{"kodus-config.yml/x": "a: 1\n"},
			want:  want{file: "kodus-config.yml", problems: []string{"0: not a regular file"}},
		},
		{
			name: "anchors and aliases",
			files: map[string]string{"kodus-config.yml": `defaults: &off false
reviewOptions:
  security: *off
`},
			want: want{file: "kodus-config.yml", edit: func(c *Config) { c.ReviewOptions["security"] = false }},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := Load(root)
			exp := Default()
			exp.File = tt.want.file
			if tt.want.edit != nil {
				tt.want.edit(&exp)
			}
			probs := got.Problems
			got.Problems, exp.Problems = nil, nil
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("config:\n got %+v\nwant %+v", got, exp)
			}
			if len(probs) != len(tt.want.problems) {
				t.Fatalf("problems: got %d, want %d:\n%s", len(probs), len(tt.want.problems), joinProblems(probs))
			}
			for i, w := range tt.want.problems {
				line, sub, _ := strings.Cut(w, ": ")
				p := probs[i]
				if got := strings.TrimSpace(line); got != strconv.Itoa(p.Line) || !strings.Contains(p.Msg, sub) {
					t.Errorf("problem %d = %s, want line %s containing %q", i, p, line, sub)
				}
				if p.File == "" {
					t.Errorf("problem %d has no file", i)
				}
			}
		})
	}
}

func joinProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func TestLoadEmptyRootAndMissingDir(t *testing.T) {
	if got := Load(""); !reflect.DeepEqual(got, Default()) {
		t.Errorf("Load(\"\") = %+v, want the defaults", got)
	}
	got := Load(filepath.Join(t.TempDir(), "missing"))
	if len(got.Problems) != 1 || !strings.Contains(got.Problems[0].Msg, "cannot open the workspace") {
		t.Errorf("problems = %v, want one saying the workspace cannot be opened", got.Problems)
	}
	got.Problems = nil
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("config = %+v, want the defaults", got)
	}
}

// A symbolic link must not pull a file from outside the workspace into the
// configuration: os.Root refuses to follow it.
func TestLoadRefusesSymlinkOutOfWorkspace(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "kodus-config.yml"), []byte("suggestionControl:\n  maxSuggestions: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "kodus-config.yml"), filepath.Join(root, "kodus-config.yml")); err != nil {
		t.Fatal(err)
	}
	got := Load(root)
	if got.SuggestionControl.MaxSuggestions != 0 {
		t.Errorf("MaxSuggestions = %d: the file outside the workspace was read", got.SuggestionControl.MaxSuggestions)
	}
	if len(got.Problems) != 1 {
		t.Errorf("problems = %v, want one about the link", got.Problems)
	}
}

func TestLoadTooLarge(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("# padding\n", maxFileSize/10+1)
	if err := os.WriteFile(filepath.Join(root, "kodus-config.yml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Load(root)
	if len(got.Problems) != 1 || !strings.Contains(got.Problems[0].Msg, "larger than") {
		t.Errorf("problems = %v, want one about the size", got.Problems)
	}
}

func TestEnabled(t *testing.T) {
	c := Default()
	c.ReviewOptions["security"] = false
	for label, want := range map[string]bool{
		"security":     false,
		" Security ":   false,
		"bug":          true,
		"kody_rules":   true,
		"future_thing": true, // unknown labels stay on
	} {
		if got := c.Enabled(label); got != want {
			t.Errorf("Enabled(%q) = %v, want %v", label, got, want)
		}
	}
}

func TestIgnored(t *testing.T) {
	c := Config{IgnorePaths: []string{"yarn.lock", "dist/**", "*.min.js", "docs/*.md"}}
	for rel, want := range map[string]bool{
		"yarn.lock":          true,
		"web/yarn.lock":      true, // a pattern without a slash matches the base name anywhere
		"dist/app.js":        true,
		"dist/sub/app.js":    true,
		"src/dist/app.js":    false,
		"lib/x.min.js":       true,
		"docs/a.md":          true,
		"docs/deep/a.md":     false,
		"./dist/app.js":      true,
		"src/main.go":        false,
		`dist\windows\x.js`:  true,
		"yarn.lock.template": false,
	} {
		if got := c.Ignored(rel); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestSeverityRank(t *testing.T) {
	if !(SeverityRank("critical") > SeverityRank("high") && SeverityRank("high") > SeverityRank("medium") &&
		SeverityRank("medium") > SeverityRank("low") && SeverityRank("low") > SeverityRank("bogus")) {
		t.Error("severity ranks are not ordered critical > high > medium > low > unknown")
	}
	if SeverityRank(" HIGH ") != SeverityRank("high") {
		t.Error("SeverityRank is not case-insensitive")
	}
}

// TestIgnorePathsProblems: a pattern kodyls cannot use is reported on its
// line and left out, the others kept; IgnoreLost lists the problems that
// may have dropped a path to ignore, and a negation, whose absence
// ignores more, is not one of them.
func TestIgnorePathsProblems(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		paths      []string
		problem    string // part of the one problem, "" for none
		lost       bool
	}{
		{"negation", "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n", []string{"private/**"}, `ignorePaths: "!private/README.md": negation with "!" is not supported`, false},
		{"root", "ignorePaths:\n  - private/**\n  - /\n", []string{"private/**"}, `ignorePaths: "/" names the workspace root`, true},
		{"leading slash", "ignorePaths:\n  - /private/**\n", []string{"/private/**"}, "", false},
		{"bad glob", "ignorePaths:\n  - private/**\n  - \"a/[b\"\n", []string{"private/**"}, "ignorePaths: \"a/[b\" is not a valid glob pattern", true},
		{"empty", "ignorePaths:\n  - private/**\n  - \"\"\n", []string{"private/**"}, "ignorePaths: empty pattern is ignored", false},
		{"not a list", "ignorePaths: private/**\n", nil, "ignorePaths: expected a list", true},
		{"set twice", "ignorePaths: [a/**]\nignorePaths: [b/**]\n", []string{"a/**"}, "ignorePaths is set twice", true},
		{"invalid YAML", "ignorePaths:\n\t- a\n", nil, "invalid YAML", true},
		{"not a mapping", "- a\n", nil, "expected a mapping at the top", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "kodus-config.yml"), []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			c := Load(root)
			if !slices.Equal(c.IgnorePaths, tt.paths) {
				t.Errorf("IgnorePaths = %q, want %q", c.IgnorePaths, tt.paths)
			}
			if tt.problem == "" {
				if len(c.Problems) != 0 || len(c.IgnoreLost()) != 0 {
					t.Errorf("problems %v", c.Problems)
				}
				return
			}
			if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Msg, tt.problem) {
				t.Fatalf("problems %v, want one containing %q", c.Problems, tt.problem)
			}
			if got := len(c.IgnoreLost()) == 1; got != tt.lost {
				t.Errorf("IgnoreLost() = %v, want lost: %v", c.IgnoreLost(), tt.lost)
			}
		})
	}
}
