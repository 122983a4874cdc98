package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// badRuleFile is a Kody Rule whose detector flags "BAD" in every file.
var badRuleFile = lsptest.RuleFile("No BAD", "bad00000-0000-4000-8000-000000000000", "high", "**", "BAD")

// numbered is n lines "<prefix> i".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// reviewJSON runs `kodyls review --offline --format json` and decodes it.
func reviewJSON(t *testing.T, env []string, dir string, args ...string) (report.Report, string, int) {
	t.Helper()
	out, errOut, code := runBin(t, env, dir, append([]string{"review", "--offline", "--format", "json"}, args...)...)
	var rep report.Report
	if code != 2 {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("review %q: exit %d, not JSON: %v\n%s%s", args, code, err, out, errOut)
		}
	}
	return rep, errOut, code
}

// where lists the findings as file:line.
func where(rep report.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s:%d", f.File, f.StartLine))
	}
	slices.Sort(out)
	return out
}

// skipped maps each file not reviewed to why.
func skipped(rep report.Report) map[string]string {
	out := map[string]string{}
	for _, f := range rep.Files {
		if f.Skipped != "" {
			out[f.Path] = f.Skipped
		}
	}
	return out
}

// TestReviewRenamedFileIsComparedWithItsOrigin: a file renamed or moved
// (with git mv, or a plain mv git does not know of yet) is reviewed for
// what changed in it, not as a new file whose every line is a finding.
func TestReviewRenamedFileIsComparedWithItsOrigin(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/bad.md": badRuleFile,
		"old.txt":            numbered("BAD old", 20),
		"plain.txt":          numbered("BAD plain", 20),
	})
	repo.Git("mv", "old.txt", "renamed.go")
	repo.Write(map[string]string{"renamed.go": numbered("BAD old", 20) + "BAD extra\n"})
	if err := os.Rename(filepath.Join(repo.Dir, "plain.txt"), filepath.Join(repo.Dir, "moved.txt")); err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{"moved.txt": numbered("BAD plain", 20) + "BAD more\n"})
	env := testEnv(t)

	rep, errOut, code := reviewJSON(t, env, repo.Dir)
	if want := []string{"moved.txt:21", "renamed.go:21"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Fatalf("exit %d, findings %v, want %v\n%s", code, where(rep), want, errOut)
	}
	rep, errOut, code = reviewJSON(t, env, repo.Dir, "renamed.go")
	if want := []string{"renamed.go:21"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Fatalf("review renamed.go: exit %d, findings %v, want %v\n%s", code, where(rep), want, errOut)
	}
	repo.Git("add", "-A")
	rep, errOut, code = reviewJSON(t, env, repo.Dir, "--staged")
	if want := []string{"moved.txt:21", "renamed.go:21"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Fatalf("--staged: exit %d, findings %v, want %v\n%s", code, where(rep), want, errOut)
	}

	// The model is asked about the added line, with the rest as context.
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	menv := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	if out, errOut, code := runBin(t, menv, repo.Dir, "review", "renamed.go"); code != 0 {
		t.Fatalf("review with a model: exit %d\n%s%s", code, out, errOut)
	}
	asked := false
	for _, q := range fake.ChatRequests() {
		if q.Chat.SchemaName() != review.SchemaAnalyze {
			continue
		}
		asked = true
		if text := q.Chat.Text(); strings.Contains(text, "@@ -0,0 +1,21 @@") || !strings.Contains(text, "BAD extra") {
			t.Errorf("the renamed file reached the model as a new file, or without its change:\n%s", text)
		}
	}
	if !asked {
		t.Error("the model was not asked about the renamed file")
	}
}

// TestReviewPathsAreLiteral: PATH arguments name files and directories,
// not git pathspecs: brackets are part of a Next.js route's name, and a
// leading colon is no pathspec magic.
func TestReviewPathsAreLiteral(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, "keep.txt": "ok\n"})
	repo.Write(map[string]string{
		"app/[slug]/page.tsx": "BAD 1\n",
		"app/s/page.tsx":      "BAD 2\n",
		":x.txt":              "BAD 3\n",
		"x.txt":               "BAD 4\n",
	})
	env := testEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"app/[slug]/page.tsx"}, []string{"app/[slug]/page.tsx:1"}},
		{[]string{":x.txt"}, []string{":x.txt:1"}},
		{[]string{"app"}, []string{"app/[slug]/page.tsx:1", "app/s/page.tsx:1"}},
		{[]string{"app/"}, []string{"app/[slug]/page.tsx:1", "app/s/page.tsx:1"}},
	} {
		rep, errOut, code := reviewJSON(t, env, repo.Dir, tc.args...)
		if code != 0 || !slices.Equal(where(rep), tc.want) {
			t.Errorf("review %q: exit %d, findings %v, want %v\n%s", tc.args, code, where(rep), tc.want, errOut)
		}
	}
	// Run from the directory, the file named relative to it.
	rep, errOut, code := reviewJSON(t, env, filepath.Join(repo.Dir, "app"), "[slug]/page.tsx")
	if want := []string{"app/[slug]/page.tsx:1"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Errorf("review [slug]/page.tsx from app/: exit %d, findings %v\n%s", code, where(rep), errOut)
	}
	if _, errOut, code := reviewJSON(t, env, repo.Dir, "app/[a-z]*"); code != 2 || !strings.Contains(errOut, "no such file or directory") {
		t.Errorf("a glob that names no file: exit %d %q, want 2 and no such file", code, errOut)
	}
}

// TestReviewAppliesSmudgeFilters: a file the repository stores through a
// clean filter is compared with what checkout writes, so only the lines
// the developer changed count, in the working tree and staged.
func TestReviewAppliesSmudgeFilters(t *testing.T) {
	repo := lsptest.NewRepo(t, nil)
	const rot13 = "tr A-Za-z N-ZA-Mn-za-m"
	repo.Git("config", "filter.rot13.clean", rot13)
	repo.Git("config", "filter.rot13.smudge", rot13)
	repo.Write(map[string]string{".kody/rules/bad.md": badRuleFile, ".gitattributes": "secret.txt filter=rot13\n", "secret.txt": "BAD kept\nplain\n"})
	repo.Commit("initial")
	repo.Write(map[string]string{"secret.txt": "BAD kept\nBAD new\n"})
	env := testEnv(t)
	rep, errOut, code := reviewJSON(t, env, repo.Dir)
	if want := []string{"secret.txt:2"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Fatalf("exit %d, findings %v, want %v\n%s", code, where(rep), want, errOut)
	}
	repo.Git("add", "secret.txt")
	rep, errOut, code = reviewJSON(t, env, repo.Dir, "--staged")
	if want := []string{"secret.txt:2"}; code != 0 || !slices.Equal(where(rep), want) {
		t.Fatalf("--staged: exit %d, findings %v, want %v\n%s", code, where(rep), want, errOut)
	}
}

// TestReviewSubmodulesAndNestedRepositories: a submodule and a repository
// nested in the work tree are not reviewed from the superproject, and
// the review says where to run instead of failing to read a directory; a
// PATH inside one is an error.
func TestReviewSubmodulesAndNestedRepositories(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, "top.txt": "ok\n"})
	sub := lsptest.NewRepo(t, map[string]string{"s.txt": "s\n"})
	repo.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.Dir, "sm")
	repo.Commit("submodule")
	repo.Write(map[string]string{"sm/s.txt": "s\nBAD\n", "top.txt": "ok\nBAD\n"})
	inner := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, "i.txt": "ok\n"})
	if err := os.Rename(inner.Dir, filepath.Join(repo.Dir, "inner")); err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{"inner/i.txt": "BAD\n"})
	// The submodule's new commit: the gitlink changes, staged too.
	repo.Git("-C", "sm", "-c", "user.name=t", "-c", "user.email=t@kodyls.invalid", "-c", "commit.gpgsign=false", "commit", "-qam", "bad")
	repo.Git("add", "sm")
	env := testEnv(t)

	for _, args := range [][]string{nil, {"--staged"}} {
		rep, errOut, code := reviewJSON(t, env, repo.Dir, args...)
		if code != 0 {
			t.Fatalf("review %q: exit %d\n%s", args, code, errOut)
		}
		for _, f := range rep.Files {
			if f.Path == "sm" || f.Path == "inner/" {
				t.Errorf("review %q lists %s as a file: %+v", args, f.Path, f)
			}
		}
		notes := strings.Join(rep.Notes, "\n")
		if !strings.Contains(notes, "submodule sm: not reviewed here; run kodyls review inside it") {
			t.Errorf("review %q: no note on the submodule:\n%s", args, notes)
		}
		if args == nil && !strings.Contains(notes, "nested repository inner/: not reviewed here; run kodyls review inside it") {
			t.Errorf("no note on the nested repository:\n%s", notes)
		}
		if args == nil && !slices.Equal(where(rep), []string{"top.txt:2"}) {
			t.Errorf("findings %v, want top.txt:2 only", where(rep))
		}
	}
	for _, p := range []string{"sm/s.txt", "inner/i.txt", "sm"} {
		out, errOut, code := runBin(t, env, repo.Dir, "review", "--offline", p)
		if code != 2 || !strings.Contains(errOut, "(a submodule or a repository of its own)") || !strings.Contains(errOut, "run kodyls review inside it") {
			t.Errorf("review %s: exit %d, want 2 saying to review it inside its repository\n%s%s", p, code, out, errOut)
		}
	}
	// Inside the nested repository it is reviewed against its own commits.
	rep, errOut, code := reviewJSON(t, env, filepath.Join(repo.Dir, "inner"))
	if code != 0 || !slices.Equal(where(rep), []string{"i.txt:1"}) {
		t.Errorf("review inside inner/: exit %d, findings %v\n%s", code, where(rep), errOut)
	}
}

// TestReviewWorkspaceBelowTheRoot: --workspace reviews a folder of the
// repository as an editor opened on it does: its own Kody Rules, paths
// relative to it. Without it, a review run from such a folder says so.
func TestReviewWorkspaceBelowTheRoot(t *testing.T) {
	svcRule := lsptest.RuleFile("No TODO", "todo0000-0000-4000-8000-000000000000", "high", "**", "TODO")
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/bad.md":      badRuleFile,
		"svc/.kody/rules/todo.md": svcRule,
		"svc/main.txt":            "ok\n",
		"web/page.txt":            "ok\n",
	})
	repo.Write(map[string]string{"svc/main.txt": "ok\nBAD TODO\n", "web/page.txt": "ok\nBAD TODO\n"})
	env := testEnv(t)
	svc := filepath.Join(repo.Dir, "svc")

	rep, errOut, code := reviewJSON(t, env, svc)
	if code != 0 || !slices.Equal(where(rep), []string{"svc/main.txt:2", "web/page.txt:2"}) {
		t.Fatalf("from svc/: exit %d, findings %v\n%s", code, where(rep), errOut)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "svc/ holds a .kody of its own") || !strings.Contains(notes, "kodyls review --workspace .") {
		t.Errorf("from svc/, no note naming --workspace:\n%s", notes)
	}
	for _, dir := range []string{svc, repo.Dir} {
		arg := "svc"
		if dir == svc {
			arg = "."
		}
		rep, errOut, code = reviewJSON(t, env, dir, "--workspace", arg)
		if code != 0 || !slices.Equal(where(rep), []string{"main.txt:2"}) {
			t.Errorf("--workspace %s from %s: exit %d, findings %v, want main.txt:2 (svc's rule, relative to svc)\n%s", arg, dir, code, where(rep), errOut)
		}
		for _, f := range rep.Findings {
			if f.RuleTitle != "No TODO" {
				t.Errorf("--workspace %s: a finding of %q, not svc's rule", arg, f.RuleTitle)
			}
		}
		if len(rep.Notes) != 0 {
			t.Errorf("--workspace %s: notes %q", arg, rep.Notes)
		}
	}
	if _, errOut, code := reviewJSON(t, env, repo.Dir, "--workspace", "svc", "web/page.txt"); code != 2 || !strings.Contains(errOut, "outside the workspace") {
		t.Errorf("a PATH outside --workspace: exit %d %q", code, errOut)
	}
	if _, errOut, code := reviewJSON(t, env, repo.Dir, "--workspace", "nope"); code != 2 || !strings.Contains(errOut, "not a directory") {
		t.Errorf("--workspace that does not exist: exit %d %q", code, errOut)
	}
}

// TestReviewSymbolicLinks: a new link to a changed file of the repository
// does not repeat its target's findings, and one leading out of the
// repository is said to in words.
func TestReviewSymbolicLinks(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, "f.txt": "ok\n"})
	repo.Write(map[string]string{"f.txt": "ok\nBAD\n"})
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("BAD\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f.txt", filepath.Join(repo.Dir, "newlink.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo.Dir, "outlink.txt")); err != nil {
		t.Fatal(err)
	}
	rep, errOut, code := reviewJSON(t, testEnv(t), repo.Dir)
	if code != 0 || !slices.Equal(where(rep), []string{"f.txt:2"}) {
		t.Fatalf("exit %d, findings %v, want f.txt:2 only\n%s", code, where(rep), errOut)
	}
	sk := skipped(rep)
	if got := sk["newlink.txt"]; got != "a symbolic link to f.txt, reviewed as that file" {
		t.Errorf("newlink.txt skipped %q", got)
	}
	if got := sk["outlink.txt"]; got != "a symbolic link leading outside the repository" {
		t.Errorf("outlink.txt skipped %q", got)
	}
	// Staged, the link is the index's: skipped too.
	repo.Git("add", "-A")
	rep, errOut, code = reviewJSON(t, testEnv(t), repo.Dir, "--staged")
	if code != 0 || !slices.Equal(where(rep), []string{"f.txt:2"}) || skipped(rep)["newlink.txt"] != "a symbolic link to f.txt, reviewed as that file" {
		t.Fatalf("--staged: exit %d, findings %v, skipped %v\n%s", code, where(rep), skipped(rep), errOut)
	}
}

// TestReviewSARIFURIsAreEncoded: SARIF's artifact URIs are URI
// references, so a "#", "%", blank or leading "x:" in a file name is
// percent-encoded rather than read as a fragment, an escape or a scheme.
func TestReviewSARIFURIsAreEncoded(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{".kody/rules/bad.md": badRuleFile, "keep.txt": "ok\n"})
	names := map[string]string{
		"#hash.txt":    "%23hash.txt",
		"pct%20.txt":   "pct%2520.txt",
		"sp ace.txt":   "sp%20ace.txt",
		"c:x.txt":      "c%3Ax.txt",
		"dir/a:b?.txt": "dir/a:b%3F.txt",
	}
	for name := range names {
		repo.Write(map[string]string{name: "BAD\n"})
	}
	out, errOut, code := runBin(t, testEnv(t), repo.Dir, "review", "--offline", "--format", "sarif")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		got = append(got, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	var want []string
	for _, u := range names {
		want = append(want, u)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("artifact URIs %q, want %q", got, want)
	}
}
