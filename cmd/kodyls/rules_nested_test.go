package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestRulesListNestedAndImported: `kodyls rules list --json` lists the
// rules of an AGENTS.md in a subdirectory, scoped to it, and those a
// CLAUDE.md imports with "@path", each with its own file and line; a
// vendored AGENTS.md is not read, and `rules check` reports a missing
// import as a warning that does not fail it.
func TestRulesListNestedAndImported(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":                      mainGo,
		"CLAUDE.md":                    "# Project\n\n- Read @docs/style.md before changing code.\n- Keep `@not/an-import.md` in mind.\n- Also @docs/gone.md\n",
		"docs/style.md":                "## Naming\nShort names.\n\n## Errors\nWrap errors with context.\n",
		"services/api/AGENTS.md":       "- Handlers validate their input.\n- Every endpoint has a test.\n",
		"vendor/example.com/AGENTS.md": "- Vendored one.\n- Vendored two.\n",
	})
	env := testEnv(t)
	out, errOut, code := runBin(t, env, repo.Dir, "rules", "list", "--json")
	if code != 0 {
		t.Fatalf("rules list --json: code %d\n%s%s", code, out, errOut)
	}
	var got rulesListJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	type row struct {
		source, file string
		line         int
		title        string
		paths        string
	}
	var rows []row
	for _, r := range got.Rules {
		rows = append(rows, row{r.Source, r.File, r.Line, r.Title, strings.Join(r.Paths, ",")})
	}
	want := []row{
		{"claude", "CLAUDE.md", 3, "Read @docs/style.md before changing code", ""},
		{"claude", "CLAUDE.md", 4, "Keep `@not/an-import.md` in mind", ""},
		{"claude", "CLAUDE.md", 5, "Also @docs/gone.md", ""},
		{"claude", "docs/style.md", 1, "Naming", ""},
		{"claude", "docs/style.md", 4, "Errors", ""},
		{"agents", "services/api/AGENTS.md", 1, "Handlers validate their input", "services/api/**"},
		{"agents", "services/api/AGENTS.md", 2, "Every endpoint has a test", "services/api/**"},
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("rules:\n%+v\nwant\n%+v", rows, want)
	}

	out, errOut, code = runBin(t, env, repo.Dir, "rules", "check", "--json")
	if code != 0 {
		t.Fatalf("a missing import must not fail rules check: code %d\n%s%s", code, out, errOut)
	}
	var check struct {
		Rules    int `json:"rules"`
		Problems []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Message string `json:"message"`
			Warning bool   `json:"warning"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &check); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if check.Rules != 7 || len(check.Problems) != 1 {
		t.Fatalf("rules check: %s", out)
	}
	if p := check.Problems[0]; p.File != "CLAUDE.md" || p.Line != 5 || !p.Warning || !strings.Contains(p.Message, "import @docs/gone.md: not found") {
		t.Errorf("problem %+v", p)
	}
}
