package rules

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rulesOf returns the rules of rep read from file.
func rulesOf(rep Report, file string) []*Rule {
	var out []*Rule
	for _, r := range rep.Rules {
		if r.File == file {
			out = append(out, r)
		}
	}
	return out
}

func TestNestedInstructionFilesApplyToTheirSubtree(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "AGENTS.md", "- Wrap errors with context.\n- Keep functions short.\n")
	writeFile(t, root, "services/api/AGENTS.md", "# API\n\nIntro.\n\n- Handlers validate their input.\n- Every endpoint has a test.\n")
	writeFile(t, root, "web/CLAUDE.md", "Components are function components.\n")
	writeFile(t, root, "app/[slug]/AGENTS.md", "Pages fetch data on the server.\n")
	// None of these is read: dependencies, vendored and generated code,
	// hidden directories, test fixtures, ignorePaths, and a file deeper
	// than the limit.
	for _, rel := range []string{
		"node_modules/pkg/AGENTS.md", "web/node_modules/pkg/CLAUDE.md", "vendor/github.com/x/AGENTS.md",
		"third_party/lib/AGENTS.md", ".git/AGENTS.md", ".venv/lib/AGENTS.md", "dist/AGENTS.md",
		"legacy/old/AGENTS.md", "1/2/3/4/5/6/7/8/9/AGENTS.md", "pkg/testdata/repo/CLAUDE.md",
	} {
		writeFile(t, root, rel, "- Skipped rule one in "+rel+".\n- Skipped rule two.\n")
	}
	writeFile(t, root, "kodus-config.yml", "ignorePaths:\n  - legacy/**\n")
	writeFile(t, root, "1/2/3/4/5/6/7/8/AGENTS.md", "Deepest directory read.\n")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	if len(rep.Errors) > 0 || len(rep.Warnings) > 0 {
		t.Fatalf("errors %v, warnings %v", rep.Errors, rep.Warnings)
	}
	var files []string
	for _, r := range rep.Rules {
		if !slices.Contains(files, r.File) {
			files = append(files, r.File)
		}
	}
	want := []string{"1/2/3/4/5/6/7/8/AGENTS.md", "AGENTS.md", "app/[slug]/AGENTS.md", "services/api/AGENTS.md", "web/CLAUDE.md"}
	if !slices.Equal(files, want) {
		t.Fatalf("rules read from %q, want %q", files, want)
	}

	api := rulesOf(rep, "services/api/AGENTS.md")
	if len(api) != 2 || api[0].Line != 5 || api[0].Title != "Handlers validate their input" || api[1].Line != 6 || api[0].Source != "agents" {
		t.Fatalf("services/api rules = %+v", api)
	}
	for _, r := range api {
		if !r.AppliesTo("services/api/x.go") || !r.AppliesTo("services/api/v1/h.go") {
			t.Errorf("%q does not apply in its subtree", r.Title)
		}
		if r.AppliesTo("web/y.ts") || r.AppliesTo("services/apix/z.go") || r.AppliesTo("main.go") {
			t.Errorf("%q applies outside services/api: paths %q", r.Title, r.Paths)
		}
	}
	if r := rulesOf(rep, "web/CLAUDE.md"); len(r) != 1 || r[0].Source != "claude" || !r[0].AppliesTo("web/y.ts") || r[0].AppliesTo("services/api/x.go") {
		t.Errorf("web/CLAUDE.md rules = %+v", r)
	}
	if r := rulesOf(rep, "app/[slug]/AGENTS.md"); len(r) != 1 || !r[0].AppliesTo("app/[slug]/page.tsx") || r[0].AppliesTo("app/s/page.tsx") {
		t.Errorf("a directory with glob characters in its name: %+v", r[0].Paths)
	}
	// The root file keeps applying everywhere.
	for _, r := range rulesOf(rep, "AGENTS.md") {
		if len(r.Paths) != 0 || !r.AppliesTo("web/y.ts") || !r.AppliesTo("services/api/x.go") {
			t.Errorf("root rule %q has paths %q", r.Title, r.Paths)
		}
	}
}

func TestScopeToDirKeepsTheRulesOwnGlobs(t *testing.T) {
	got := scopeToDir([]string{"**/*.go", "!**/*_test.go"}, "services/api")
	r := &Rule{Enabled: true, Scope: ScopeFile, Paths: got}
	for p, want := range map[string]bool{
		"services/api/h.go": true, "services/api/h_test.go": false, "services/api/README.md": false, "web/h.go": false,
	} {
		if r.AppliesTo(p) != want {
			t.Errorf("paths %q: AppliesTo(%q) = %v, want %v", got, p, !want, want)
		}
	}
}

func TestNestedWalkStopsAtItsLimit(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b", "c", "d"} {
		writeFile(t, root, d+"/AGENTS.md", "Rule of "+d+".\n")
	}
	defer func(n int) { nestedDirLimit = n }(nestedDirLimit)
	nestedDirLimit = 2
	rep := NewRegistry(AgentsMD()).LoadReport(context.Background(), root)
	if len(rep.Rules) != 2 || rep.Rules[0].File != "a/AGENTS.md" || rep.Rules[1].File != "b/AGENTS.md" {
		t.Errorf("rules = %d", len(rep.Rules))
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Msg, "after 2 directories") || len(rep.Errors) != 0 {
		t.Errorf("warnings %v, errors %v", rep.Warnings, rep.Errors)
	}
}

// The watcher reloads the rules when a path the registry owns changes,
// watches the directories NestedDirs lists and starts watching a new one
// that WalksDir accepts.
func TestNestedFilesAreWatched(t *testing.T) {
	reg := DefaultRegistry()
	for _, p := range []string{"services/api/AGENTS.md", "web/CLAUDE.md", "./a/b/AGENTS.md", "AGENTS.md"} {
		if src, ok := reg.SourceOf(p); !ok || !strings.Contains("agents claude", src.Name()) {
			t.Errorf("SourceOf(%q) = %v, %v", p, src, ok)
		}
	}
	for _, p := range []string{"node_modules/x/AGENTS.md", "services/api/agents.md", "services/api/AGENTS.md~", ".git/AGENTS.md", "dist/CLAUDE.md", "../AGENTS.md"} {
		if reg.Owns(p) {
			t.Errorf("Owns(%q) = true", p)
		}
	}
	if !reg.WalksDir("services/new") || reg.WalksDir("node_modules/x") || reg.WalksDir(".") || reg.WalksDir("1/2/3/4/5/6/7/8/9") {
		t.Error("WalksDir accepts the wrong directories")
	}

	root := t.TempDir()
	for _, d := range []string{"services/api/v1", "web", "node_modules/x", ".git/objects", "legacy/old"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, root, "kodus-config.yml", "ignorePaths: [legacy]\n")
	got := reg.NestedDirs(context.Background(), root, ".")
	if want := []string{"services", "services/api", "services/api/v1", "web"}; !slices.Equal(got, want) {
		t.Errorf("NestedDirs = %q, want %q", got, want)
	}
	if got := reg.NestedDirs(context.Background(), root, "services/api"); !slices.Equal(got, []string{"services/api", "services/api/v1"}) {
		t.Errorf("NestedDirs under services/api = %q", got)
	}
	if got := NewRegistry(KodyMarkdown{}).NestedDirs(context.Background(), root, "."); got != nil {
		t.Errorf("a registry without nested sources lists %q", got)
	}
}

// BenchmarkLoadWithNestedWalk measures a full load of the default registry
// over a workspace of 2,000 directories with three nested AGENTS.md.
func BenchmarkLoadWithNestedWalk(b *testing.B) {
	root := b.TempDir()
	for i := range 2000 {
		d := filepath.Join(root, "pkg", string(rune('a'+i%20)), "m"+strings.Repeat("x", i%7)+string(rune('a'+i/20%26))+string(rune('a'+i/520)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.go"), []byte("package p\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range []string{"pkg/a", "pkg/b", "pkg/c"} {
		if err := os.WriteFile(filepath.Join(root, d, "AGENTS.md"), []byte("- One.\n- Two.\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	reg := DefaultRegistry()
	b.ResetTimer()
	for b.Loop() {
		if rep := reg.LoadReport(context.Background(), root); len(rep.Rules) != 6 {
			b.Fatalf("%d rules", len(rep.Rules))
		}
	}
}

// TestNestedFilesIgnoredByIgnorePathsAreTold: an AGENTS.md or CLAUDE.md in
// a subdirectory that kodus-config.yml ignorePaths ignores is not read, and
// a warning marked Skipped names it, as it does a root one: whether a
// pattern names the file (**/*.md) or the directory it is in (legacy/).
// Nothing is told of a file below the top of an ignored directory (the
// search does not go into it) nor of one in a hidden, generated or
// vendored directory.
func TestNestedFilesIgnoredByIgnorePathsAreTold(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "kodus-config.yml", "ignorePaths:\n  - legacy/\n  - \"**/*.md\"\n")
	for _, rel := range []string{
		"svc/a/AGENTS.md", "web/CLAUDE.md", ".kody/rules/x.md", "legacy/AGENTS.md",
		"legacy/old/AGENTS.md", "node_modules/pkg/AGENTS.md", ".venv/AGENTS.md", "dist/CLAUDE.md",
		"vendor/x/AGENTS.md", "1/2/3/4/5/6/7/8/9/AGENTS.md",
	} {
		writeFile(t, root, rel, "- "+privateMarker+" in "+rel+".\n- Two.\n")
	}
	writeFile(t, root, "svc/a/main.go", "package a\n")
	rep := DefaultRegistry().LoadReport(context.Background(), root)
	leaked(t, rep)
	if len(rep.Rules) != 0 || len(rep.Errors) != 0 {
		t.Errorf("rules %+v, errors %v", rep.Rules, rep.Errors)
	}
	skipped := map[string]string{}
	for _, w := range rep.Warnings {
		if !w.Skipped || !w.Warning {
			t.Errorf("a warning not marked skipped: %v", w)
			continue
		}
		skipped[w.File] = w.Msg
	}
	want := map[string]string{
		"svc/a/AGENTS.md":  "not read: the file is ignored by kodus-config ignorePaths (**/*.md), and no file on the ignore list is sent to the model",
		"web/CLAUDE.md":    "not read: the file is ignored by kodus-config ignorePaths (**/*.md)",
		".kody/rules/x.md": "not read: the file is ignored by kodus-config ignorePaths (**/*.md)",
		"legacy/AGENTS.md": "not read: the file is ignored by kodus-config ignorePaths (legacy/)",
	}
	for file, msg := range want {
		if !strings.Contains(skipped[file], msg) {
			t.Errorf("%s: skipped %q, want %q", file, skipped[file], msg)
		}
	}
	if len(skipped) != len(want) {
		t.Errorf("skipped files told:\n%s", warningsText(rep))
	}

	// The watcher watches the directories whose files are told, so that
	// a new AGENTS.md there is told too; not the ignored directory.
	got := DefaultRegistry().NestedDirs(context.Background(), root, ".")
	if want := []string{"1", "1/2", "1/2/3", "1/2/3/4", "1/2/3/4/5", "1/2/3/4/5/6", "1/2/3/4/5/6/7", "1/2/3/4/5/6/7/8", "svc", "svc/a", "web"}; !slices.Equal(got, want) {
		t.Errorf("NestedDirs = %q, want %q", got, want)
	}
}
