package rules

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type fileLine struct {
	file string
	line int
}

func positions(rules []*Rule) []fileLine {
	var out []fileLine
	for _, r := range rules {
		out = append(out, fileLine{r.File, r.Line})
	}
	return out
}

func warningsText(rep Report) string {
	var b strings.Builder
	for _, w := range rep.Warnings {
		b.WriteString(w.Error() + "\n")
	}
	return b.String()
}

func TestClaudeImports(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "CLAUDE.md", strings.Join([]string{
		"# Project",
		"",
		"- Follow the style guide in @docs/style.md.",
		"- Run `make test` before pushing; see @~/.claude/personal.md",
		"- Never use `@docs/in-a-span.md`, ask @alice or use @angular/core.",
		"",
		"```",
		"@docs/in-a-fence.md",
		"```",
		"",
		"@docs/missing.md @/etc/passwd @../outside.md @.env",
		"",
	}, "\n"))
	// style.md imports testing.md relative to itself, and back (a cycle).
	writeFile(t, root, "docs/style.md", "## Naming\nShort names.\n\n## Errors\nWrap them, see @testing.md\n")
	writeFile(t, root, "docs/testing.md", "- Table tests.\n- No sleeps in tests; and @style.md again.\n")
	writeFile(t, root, "docs/in-a-span.md", "- Must not load.\n- Really.\n")
	writeFile(t, root, "docs/in-a-fence.md", "- Must not load.\n- Really.\n")
	writeFile(t, root, ".env", "SECRET=1\n")
	writeFile(t, filepath.Dir(root), "outside.md", "- Outside.\n- Workspace.\n")

	rep := NewRegistry(ClaudeMD()).LoadReport(context.Background(), root)
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	got := positions(rep.Rules)
	want := []fileLine{{"CLAUDE.md", 3}, {"CLAUDE.md", 4}, {"CLAUDE.md", 5}, {"docs/style.md", 1}, {"docs/style.md", 4}, {"docs/testing.md", 1}, {"docs/testing.md", 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("rules at %v, want %v", got, want)
	}
	for _, r := range rep.Rules {
		if r.Source != "claude" || len(r.Paths) != 0 {
			t.Errorf("%s:%d source %q paths %q", r.File, r.Line, r.Source, r.Paths)
		}
	}
	if r := rep.Rules[4]; r.Title != "Errors" || r.UUID != "claude:docs/style.md#errors" {
		t.Errorf("imported rule %+v", r)
	}
	warns := warningsText(rep)
	for _, w := range []string{
		"CLAUDE.md:4:",
		"import @~/.claude/personal.md: imports from the home directory are not followed",
		"CLAUDE.md:11:1: import @docs/missing.md: not found",
		"import @/etc/passwd: absolute paths are not followed",
		"import @../outside.md: the path leads outside the workspace",
		"import @.env: the file may hold secrets",
		"docs/testing.md:2:",
		"import @style.md: not imported: docs/style.md already imports it, directly or not (an import cycle)",
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	for _, not := range []string{"in-a-span", "in-a-fence", "alice", "angular"} {
		if strings.Contains(warns, not) {
			t.Errorf("%s is not an import, but warned:\n%s", not, warns)
		}
	}
	if n := len(rep.Warnings); n != 6 {
		t.Errorf("%d warnings, want 6:\n%s", n, warns)
	}
}

func TestClaudeImportsStopAtTheDepthLimit(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "CLAUDE.md", "Read @d1.md first.\n")
	for i := 1; i <= MaxImportDepth+1; i++ {
		n := string(rune('0' + i))
		writeFile(t, root, "d"+n+".md", "Rule "+n+" of the chain, then @d"+string(rune('0'+i+1))+".md\n")
	}
	rep := NewRegistry(ClaudeMD()).LoadReport(context.Background(), root)
	var files []string
	for _, r := range rep.Rules {
		files = append(files, r.File)
	}
	if want := []string{"CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md", "d5.md"}; !slices.Equal(files, want) {
		t.Errorf("rules from %q, want %q", files, want)
	}
	warns := warningsText(rep)
	if len(rep.Warnings) != 1 || !strings.Contains(warns, "d5.md:1:") || !strings.Contains(warns, "imports nest at most 5 deep") {
		t.Errorf("warnings:\n%s", warns)
	}
}

// A nested CLAUDE.md's imports apply to its subtree; a file imported from
// two directories applies to both; "@AGENTS.md" is left to the agents
// source, and a CLAUDE.md that only imports is no rule of its own.
func TestClaudeImportsFromNestedFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "AGENTS.md", "- Root rule one.\n- Root rule two.\n")
	writeFile(t, root, "CLAUDE.md", "@AGENTS.md\n")
	writeFile(t, root, "services/api/CLAUDE.md", "See @../../docs/go.md and @notes/local.md\n")
	writeFile(t, root, "services/api/notes/local.md", "Return 404 for unknown ids.\n")
	writeFile(t, root, "tools/CLAUDE.md", "- Follow @/docs/go.md... no: @../docs/go.md\n- Tools print to stderr.\n")
	writeFile(t, root, "docs/go.md", "Errors are values.\n")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	for _, r := range rep.Rules {
		if r.File == "CLAUDE.md" {
			t.Errorf("the import-only CLAUDE.md became a rule: %q", r.Body)
		}
		if r.Source == "claude" && r.File == "AGENTS.md" {
			t.Error("AGENTS.md imported by CLAUDE.md is read twice")
		}
	}
	if n := len(rulesOf(rep, "AGENTS.md")); n != 2 {
		t.Errorf("%d rules from AGENTS.md, want 2", n)
	}
	local := rulesOf(rep, "services/api/notes/local.md")
	if len(local) != 1 || !local[0].AppliesTo("services/api/h.go") || local[0].AppliesTo("tools/x.go") {
		t.Errorf("services/api import: %+v", local)
	}
	goRules := rulesOf(rep, "docs/go.md")
	if len(goRules) != 1 {
		t.Fatalf("docs/go.md gave %d rules, want 1 (read once)", len(goRules))
	}
	r := goRules[0]
	if !r.AppliesTo("services/api/h.go") || !r.AppliesTo("tools/x.go") || r.AppliesTo("web/x.ts") || r.Line != 1 {
		t.Errorf("docs/go.md rule paths %q line %d", r.Paths, r.Line)
	}
	if w := warningsText(rep); !strings.Contains(w, "tools/CLAUDE.md:1:") || !strings.Contains(w, "absolute paths") {
		t.Errorf("warnings:\n%s", w)
	}
}

func TestClaudeImportThroughSymlinkOutsideIsRefused(t *testing.T) {
	root := t.TempDir()
	outside := writeFile(t, t.TempDir(), "secret.md", "- Outside one.\n- Outside two.\n")
	if err := os.Symlink(outside, filepath.Join(root, "linked.md")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	writeFile(t, root, "CLAUDE.md", "Use @linked.md too.\n")
	rep := NewRegistry(ClaudeMD()).LoadReport(context.Background(), root)
	if got := positions(rep.Rules); !slices.Equal(got, []fileLine{{"CLAUDE.md", 1}}) {
		t.Errorf("rules at %v", got)
	}
	if w := warningsText(rep); len(rep.Warnings) != 1 || !strings.Contains(w, "import @linked.md: cannot read linked.md (it must be a file inside the workspace)") {
		t.Errorf("warnings:\n%s", w)
	}
}

// TestLinkToASecretIsNoRule: an import of a link to .env, and a rule file
// that is itself such a link, read nothing of the secret file.
func TestLinkToASecretIsNoRule(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".env", "- TOKEN=hunter2xyz\n- PASSWORD=hunter3xyz\n")
	if err := os.Symlink(".env", filepath.Join(root, "notes.md")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	if err := os.Symlink(".env", filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "CLAUDE.md", "- Wrap errors.\n\n@notes.md\n")
	rep := NewRegistry(ClaudeMD(), AgentsMD()).LoadReport(context.Background(), root)
	for _, r := range rep.Rules {
		if strings.Contains(r.Body+r.Instructions+r.Title, "hunter") {
			t.Errorf("a rule holds the secret file's text: %+v", r)
		}
	}
	all := warningsText(rep)
	for _, e := range rep.Errors {
		all += e.Error() + "\n"
	}
	for _, want := range []string{"notes.md", "AGENTS.md"} {
		if !strings.Contains(all, want) || !strings.Contains(all, "may hold secrets") {
			t.Errorf("no problem names %s as leading to a secret file:\n%s", want, all)
		}
	}
}
