package prompts

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// workspace creates a temporary workspace holding files (path → content).
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func builtinVersion(t *testing.T, name string) int {
	t.Helper()
	p, ok := Builtin().Get(name)
	if !ok {
		t.Fatalf("no builtin %s", name)
	}
	return p.Version
}

func TestLoadWorkspaceWithoutOverrides(t *testing.T) {
	for _, root := range []string{"", workspace(t, map[string]string{"main.go": "package main\n"})} {
		s, probs := LoadWorkspace(root)
		if len(probs) != 0 {
			t.Errorf("%q: problems %v", root, probs)
		}
		if len(s.List()) != len(builtinNames) {
			t.Errorf("%q: %d prompts", root, len(s.List()))
		}
		for _, p := range s.List() {
			if p.Source != BuiltinSource {
				t.Errorf("%q: %s comes from %s", root, p.Name, p.Source)
			}
		}
	}
	_, probs := LoadWorkspace(filepath.Join(t.TempDir(), "missing"))
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "cannot open the workspace") {
		t.Errorf("missing workspace: %v", probs)
	}
}

func TestOverrideReplacesBuiltin(t *testing.T) {
	b := builtinVersion(t, "doctor_ping")
	tests := []struct {
		name, src   string
		wantVersion int
		wantPurpose string
	}{
		{"no header", "Reply {\"ok\": true} and nothing else.\n", 1000 + b, ""},
		{"header without a name", "{{/* version: 3; purpose: shorter ping for tiny models */}}\nReply {\"ok\": true} and nothing else.\n",
			3000 + b, "shorter ping for tiny models"},
		{"header with the name", "{{/* name: doctor_ping */}}\nReply {\"ok\": true} and nothing else.\n", 1000 + b, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, map[string]string{".kody/prompts/doctor_ping.tmpl": tt.src})
			s, probs := LoadWorkspace(root)
			if len(probs) != 0 {
				t.Fatalf("problems: %v", probs)
			}
			r, err := s.Render("doctor_ping", DoctorPingData{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != `Reply {"ok": true} and nothing else.` {
				t.Errorf("text = %q", r.Text)
			}
			const src = ".kody/prompts/doctor_ping.tmpl"
			if r.Source != src || r.Version != tt.wantVersion {
				t.Errorf("Rendered = %+v, want source %s version %d", r, src, tt.wantVersion)
			}
			p, _ := s.Get("doctor_ping")
			if want := tt.wantPurpose; want == "" {
				if bp, _ := Builtin().Get("doctor_ping"); p.Purpose != bp.Purpose {
					t.Errorf("purpose %q, want the builtin's", p.Purpose)
				}
			} else if p.Purpose != want {
				t.Errorf("purpose %q, want %q", p.Purpose, want)
			}
			// Other prompts and the shared builtin Set are untouched.
			if q, _ := s.Get("rca_system"); q.Source != BuiltinSource {
				t.Errorf("rca_system comes from %s", q.Source)
			}
			if q, _ := Builtin().Get("doctor_ping"); q.Source != BuiltinSource {
				t.Error("the override leaked into Builtin()")
			}
		})
	}
}

func TestBrokenOverrideKeepsBuiltin(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"syntax error", "{{/* version: 2 */}}\nReview {{.FileName}}.\n{{if .Heavy}}\nwhole file\n{{end}\n", 5, "the builtin review_analyze_user stays in force"},
		{"unknown field", "Review {{.FileName}}.\n\nThe patch:\n{{.Diff}}\n", 4, "can't evaluate field Diff"},
		{"unknown function", "Review {{.FileName | shout}}.\n", 1, `function "shout" not defined`},
		{"bad header", "{{/* version: latest */}}\nReview {{.FileName}}.\n", 1, `version "latest"`},
		{"header names another prompt", "{{/* name: review_analyze_system */}}\nReview.\n", 1, `header name "review_analyze_system" differs from the file name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const file = ".kody/prompts/review_analyze_user.tmpl"
			root := workspace(t, map[string]string{file: tt.src})
			s, probs := LoadWorkspace(root)
			if len(probs) != 1 {
				t.Fatalf("problems = %v, want one", probs)
			}
			p := probs[0]
			if p.File != file || p.Line != tt.line || p.Warning || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("problem = %+v (%s), want %s:%d containing %q", p, p, file, tt.line, tt.msg)
			}
			if !strings.Contains(p.Msg, "stays in force") {
				t.Errorf("problem does not say the builtin is kept: %s", p)
			}
			got, _ := s.Get("review_analyze_user")
			if got.Source != BuiltinSource {
				t.Errorf("review_analyze_user comes from %s, want the builtin", got.Source)
			}
			ex, _ := Example("review_analyze_user")
			if _, err := s.Render("review_analyze_user", ex); err != nil {
				t.Errorf("builtin no longer renders: %v", err)
			}
		})
	}
}

func TestOverrideUnknownNameWarns(t *testing.T) {
	root := workspace(t, map[string]string{
		".kody/prompts/review_analyse_user.tmpl": "Review {{.FileName}}\n",
		".kody/prompts/README.md":                "notes about our prompts",
		".kody/prompts/old/rca_system.tmpl":      "ignored: in a sub-directory",
	})
	s, probs := LoadWorkspace(root)
	if len(probs) != 1 {
		t.Fatalf("problems = %v, want one", probs)
	}
	p := probs[0]
	if !p.Warning || p.File != ".kody/prompts/review_analyse_user.tmpl" ||
		!strings.Contains(p.Msg, `no builtin prompt is called "review_analyse_user"`) ||
		!strings.Contains(p.Msg, "review_analyze_user") {
		t.Errorf("problem = %s", p)
	}
	if !strings.Contains(p.String(), "warning: ") {
		t.Errorf("String() = %q lacks the warning mark", p.String())
	}
	if _, ok := s.Get("review_analyse_user"); ok {
		t.Error("unknown override became a prompt")
	}
	if q, _ := s.Get("rca_system"); q.Source != BuiltinSource {
		t.Error("a template in a sub-directory was used")
	}
}

func TestOverrideOutsideWorkspaceRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := filepath.Join(t.TempDir(), "secret.tmpl")
	if err := os.WriteFile(outside, []byte("SECRET {{.Reason}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := workspace(t, map[string]string{".kody/prompts/.keep": ""})
	if err := os.Symlink(outside, filepath.Join(root, ".kody", "prompts", "rca_final.tmpl")); err != nil {
		t.Fatal(err)
	}
	s, probs := LoadWorkspace(root)
	if len(probs) != 1 || probs[0].File != ".kody/prompts/rca_final.tmpl" {
		t.Errorf("problems = %v, want one about the link", probs)
	}
	r, err := s.Render("rca_final", RCAFinalData{Reason: "x"})
	if err != nil || strings.Contains(r.Text, "SECRET") || r.Source != BuiltinSource {
		t.Errorf("a file outside the workspace was used: %+v, %v", r, err)
	}
}

const kodusConfig = `# Kodus configuration
ignorePaths:
  - "**/*.pb.go"
v2PromptOverrides:
  categories:
    descriptions:
      bug: |
        - Anything that can lose a customer's money
        - Unchecked errors from the payments client
      security: ""
  severity:
    flags:
      critical: "- Money moves twice or not at all"
  generation:
    main: Always check that amounts are integers in cents.
`

func TestKodusConfigOverridesRenderedInReview(t *testing.T) {
	for _, name := range kodusConfigNames {
		t.Run(name, func(t *testing.T) {
			s, probs := LoadWorkspace(workspace(t, map[string]string{name: kodusConfig}))
			if len(probs) != 0 {
				t.Fatalf("problems: %v", probs)
			}
			o := s.Overrides()
			if !strings.Contains(o.Categories["bug"], "lose a customer's money") ||
				o.Categories["performance"] != defaults.Categories["performance"] ||
				o.Categories["security"] != defaults.Categories["security"] || // "" means the default
				o.SeverityFlags["critical"] != "- Money moves twice or not at all" ||
				o.SeverityFlags["low"] != defaults.SeverityFlags["low"] ||
				o.GenerationMain != "Always check that amounts are integers in cents." {
				t.Errorf("Overrides() = %+v", o)
			}

			sys, err := s.Render("review_analyze_system", ReviewSystemData{})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"### bug\n- Anything that can lose a customer's money\n- Unchecked errors from the payments client\n",
				"### performance\n" + defaults.Categories["performance"],
				"### security\n" + defaults.Categories["security"],
				"### critical\n- Money moves twice or not at all\n",
				"### high\n" + defaults.SeverityFlags["high"],
			} {
				if !strings.Contains(sys.Text, want) {
					t.Errorf("review_analyze_system lacks %q", want)
				}
			}
			if strings.Contains(sys.Text, defaults.Categories["bug"]) {
				t.Error("review_analyze_system still shows the default bug description")
			}

			ex, _ := Example("review_analyze_user")
			user, err := s.Render("review_analyze_user", ex)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(user.Text, "## Additional instructions from the team\nAlways check that amounts are integers in cents.") {
				t.Error("review_analyze_user lacks generation.main")
			}

			sev, err := s.Render("review_severity", SeverityData{Suggestions: exampleSuggestions()})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sev.Text, "Money moves twice") {
				t.Error("review_severity lacks the configured critical flags")
			}

			// The builtins keep the defaults.
			def, _ := Builtin().Render("review_analyze_user", ex)
			if strings.Contains(def.Text, "Additional instructions") {
				t.Error("Builtin() renders generation.main of a workspace")
			}
		})
	}
}

func TestKodusConfigBothNames(t *testing.T) {
	s, probs := LoadWorkspace(workspace(t, map[string]string{
		"kodus-config.yml":  kodusConfig,
		"kodus-config.yaml": "v2PromptOverrides:\n  generation:\n    main: from yaml\n",
	}))
	if len(probs) != 1 || probs[0].File != "kodus-config.yaml" || !probs[0].Warning {
		t.Errorf("problems = %v", probs)
	}
	if got := s.Overrides().GenerationMain; !strings.HasPrefix(got, "Always check") {
		t.Errorf("generation.main = %q, want the .yml one", got)
	}
}

func TestKodusConfigProblems(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		line    int
		msg     string
		warning bool
	}{
		{"unclosed flow list", "ignorePaths: [a, b\nv2PromptOverrides:\n  generation:\n    main: x\n", 2, "invalid YAML", false},
		{"bad indentation", "v2PromptOverrides:\n  categories:\n    descriptions:\n      bug: x\n     performance: y\n", 5, "invalid YAML", false},
		{"missing dash", "v2PromptOverrides:\n  categories:\n    - a\n    b: c\n", 4, "invalid YAML", false},
		{"unterminated quote", "v2PromptOverrides:\n  categories:\n    descriptions:\n      bug: \"unterminated\n", 4, "found unexpected end of stream", false},
		{"unclosed flow mapping", "v2PromptOverrides:\n  severity: {flags: {low: x}\n  generation:\n    main: y\n", 2, "invalid YAML", false},
		{"tab", "v2PromptOverrides:\n\tgeneration: x\n", 2, "invalid YAML", false},
		{"list instead of text", "v2PromptOverrides:\n  severity:\n    flags:\n      high:\n        - a\n        - b\n", 5, "expected text, found a list", false},
		{"number instead of text", "v2PromptOverrides:\n  generation:\n    main: 42\n", 3, "expected text, found a number", false},
		{"text instead of mapping", "v2PromptOverrides:\n  categories: all of them\n", 2, "expected a mapping, found text", false},
		{"unknown category", "v2PromptOverrides:\n  categories:\n    descriptions:\n      style: naming\n", 4, "unknown key style is ignored (known: bug, performance, security)", true},
		{"misspelt section", "v2PromptOverrides:\n  severty:\n    flags: {}\n", 2, "unknown key severty", true},
		{"duplicate key", "v2PromptOverrides:\n  generation:\n    main: a\n    main: b\n", 4, "main is set twice", false},
		{"not a mapping", "- a\n- b\n", 1, "expected a mapping at the top", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, probs := LoadWorkspace(workspace(t, map[string]string{"kodus-config.yml": tt.config}))
			if len(probs) != 1 {
				t.Fatalf("problems = %v, want one", probs)
			}
			p := probs[0]
			if p.File != "kodus-config.yml" || p.Line != tt.line || p.Warning != tt.warning || !strings.Contains(p.Msg, tt.msg) {
				t.Errorf("problem = %s (warning %v), want line %d containing %q (warning %v)", p, p.Warning, tt.line, tt.msg, tt.warning)
			}
			// Whatever is broken, every category and level still has text.
			for _, e := range append(s.Overrides().CategoryEntries(), s.Overrides().SeverityEntries()...) {
				if e.Text == "" {
					t.Errorf("%s has no text", e.Name)
				}
			}
		})
	}
}

func TestKodusConfigEmptyOrUnrelated(t *testing.T) {
	for _, c := range []string{"", "# nothing\n", "ignorePaths: [\"a\"]\n", "v2PromptOverrides:\n", "v2PromptOverrides: ~\n"} {
		s, probs := LoadWorkspace(workspace(t, map[string]string{"kodus-config.yml": c}))
		if len(probs) != 0 {
			t.Errorf("%q: problems %v", c, probs)
		}
		if o := s.Overrides(); o.Categories["bug"] != defaults.Categories["bug"] {
			t.Errorf("%q: bug = %q", c, o.Categories["bug"])
		}
	}
}

func TestOverridesIsACopy(t *testing.T) {
	o := Builtin().Overrides()
	o.Categories["bug"] = "changed"
	if Builtin().Overrides().Categories["bug"] == "changed" {
		t.Error("Overrides() returns the Set's own map")
	}
	d := DefaultOverrides()
	d.SeverityFlags["low"] = "changed"
	if DefaultOverrides().SeverityFlags["low"] == "changed" {
		t.Error("DefaultOverrides() returns the shared map")
	}
}

func TestProblemString(t *testing.T) {
	for p, want := range map[Problem]string{
		{File: "a.yml", Line: 3, Msg: "bad"}:                 "a.yml:3: bad",
		{File: "a.yml", Msg: "bad"}:                          "a.yml: bad",
		{File: "x.tmpl", Line: 1, Msg: "odd", Warning: true}: "x.tmpl:1: warning: odd",
	} {
		if got := p.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
