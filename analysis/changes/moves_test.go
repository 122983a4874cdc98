package changes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lines is n numbered lines.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// TestLoadFollowsRenames: a file renamed or moved since the revision is
// compared with the file it was, whether git knows of the move (staged)
// or not (a plain mv), so that only what changed in it counts.
func TestLoadFollowsRenames(t *testing.T) {
	r := newRepo(t)
	r.write("old.txt", lines("old", 20))
	r.write("plain.txt", lines("plain", 20))
	r.write("gone.txt", lines("gone", 20))
	r.commit("initial")

	r.git("mv", "old.txt", "renamed.go")
	p := r.write("renamed.go", lines("old", 20)+"extra\n")
	b := load(t, p, "")
	if b.Kind != Tracked || b.From != "old.txt" || b.Text != lines("old", 20) {
		t.Fatalf("staged rename: kind %v from %q", b.Kind, b.From)
	}
	if got := b.ChangedLines(lines("old", 20) + "extra\n"); !reflect.DeepEqual(got.Lines(), []int{20}) {
		t.Errorf("changed lines of the renamed file %v, want [20]", got.Lines())
	}

	// A plain mv: git sees a deleted file and an untracked one.
	if err := os.Rename(filepath.Join(r.dir, "plain.txt"), filepath.Join(r.dir, "sub", "moved.txt")); err == nil {
		t.Fatal("renamed into a directory that does not exist")
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(r.dir, "plain.txt"), filepath.Join(r.dir, "sub", "moved.txt")); err != nil {
		t.Fatal(err)
	}
	p = r.write("sub/moved.txt", strings.Replace(lines("plain", 20), "plain 3\n", "changed\n", 1))
	if b := load(t, p, ""); b.Kind != Tracked || b.From != "plain.txt" || !reflect.DeepEqual(b.ChangedLines(strings.Replace(lines("plain", 20), "plain 3\n", "changed\n", 1)).Lines(), []int{2}) {
		t.Errorf("moved with mv: kind %v from %q", b.Kind, b.From)
	}

	// A new file that shares little with the deleted one is new.
	if err := os.Remove(filepath.Join(r.dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	p = r.write("other.txt", lines("other", 20))
	if b := load(t, p, ""); b.Kind != Untracked || b.From != "" {
		t.Errorf("a new file unlike any deleted one: kind %v from %q", b.Kind, b.From)
	}

	// LoadRenamed takes the origin it is given and looks for none.
	b, err := LoadRenamed(context.Background(), p, "HEAD", filepath.Join(r.dir, "gone.txt"))
	if err != nil || b.Kind != Tracked || b.From != "gone.txt" {
		t.Errorf("LoadRenamed with an origin: %+v %v", b, err)
	}
	b, err = LoadRenamed(context.Background(), filepath.Join(r.dir, "sub", "moved.txt"), "HEAD", "")
	if err != nil || b.Kind != Untracked {
		t.Errorf("LoadRenamed without an origin: kind %v %v", b.Kind, err)
	}
}

// TestLoadIgnored: an untracked file git ignores is Ignored; one added to
// the index despite the ignore rules is not.
func TestLoadIgnored(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "*.log\nbuild/\n")
	r.write("a.txt", "a\n")
	r.commit("initial")
	for _, name := range []string{"x.log", "build/out.txt"} {
		if b := load(t, r.write(name, "BAD\n"), ""); b.Kind != Ignored {
			t.Errorf("%s: kind %v, want %v", name, b.Kind, Ignored)
		}
	}
	p := r.write("kept.log", "BAD\n")
	r.git("add", "-f", "kept.log")
	if b := load(t, p, ""); b.Kind != Untracked {
		t.Errorf("an ignored file added with -f: kind %v, want untracked", b.Kind)
	}
	if b := load(t, r.write("new.txt", "x\n"), ""); b.Kind != Untracked {
		t.Errorf("an untracked file: kind %v", b.Kind)
	}
	if Ignored.String() != "ignored by git" {
		t.Errorf("Ignored.String() = %q", Ignored.String())
	}
}

// TestLoadAppliesSmudgeFilters: a file stored through a clean filter
// (git-crypt, LFS) is compared with what checkout writes, not with the
// stored form.
func TestLoadAppliesSmudgeFilters(t *testing.T) {
	r := newRepo(t)
	const rot13 = "tr A-Za-z N-ZA-Mn-za-m"
	r.git("config", "filter.rot13.clean", rot13)
	r.git("config", "filter.rot13.smudge", rot13)
	r.write(".gitattributes", "*.sec filter=rot13\n")
	const text = "Hello\nWorld\n"
	r.write("secret.sec", text)
	r.write("sp ace.sec", text)
	r.commit("initial")
	if stored := r.git("cat-file", "blob", "HEAD:secret.sec"); stored != "Uryyb\nJbeyq" {
		t.Fatalf("the filter did not run on commit: %q", stored)
	}
	for _, name := range []string{"secret.sec", "sp ace.sec"} {
		b := load(t, filepath.Join(r.dir, name), "")
		if b.Kind != Tracked || b.Text != text {
			t.Errorf("%s: baseline %q, want the smudged %q", name, b.Text, text)
		}
		got, ok, err := IndexText(context.Background(), r.dir, name)
		if err != nil || !ok || got != text {
			t.Errorf("%s: staged text %q %v %v, want %q", name, got, ok, err, text)
		}
	}
	// A filter that fails gives the stored content rather than no
	// baseline.
	r.git("config", "filter.rot13.smudge", "false")
	if b := load(t, filepath.Join(r.dir, "secret.sec"), ""); b.Kind != Tracked || b.Text != "Uryyb\nJbeyq\n" {
		t.Errorf("failing filter: %v %q", b.Kind, b.Text)
	}
}

// TestListChanges: paths are literal, a renamed file named by path finds
// its origin outside the paths, and submodules and nested repositories
// are told apart.
func TestListChanges(t *testing.T) {
	r := newRepo(t)
	r.write("app/[slug]/page.tsx", "a\n")
	r.write("app/s/page.tsx", "b\n")
	r.write("old/file.txt", lines("line", 10))
	r.write("gone.txt", lines("gone", 10))
	r.commit("initial")
	inner := newRepo(t)
	inner.write("i.txt", "i\n")
	inner.commit("inner")
	if err := os.Rename(inner.dir, filepath.Join(r.dir, "sm")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "sm") // a gitlink
	r.commit("submodule")
	nested := newRepo(t)
	nested.write("n.txt", "n\n")
	nested.commit("nested")
	if err := os.Rename(nested.dir, filepath.Join(r.dir, "nested")); err != nil {
		t.Fatal(err)
	}
	r.write("sm/i.txt", "changed\n")
	r.git("-C", filepath.Join(r.dir, "sm"), "commit", "-qam", "move the submodule")
	r.write("app/[slug]/page.tsx", "a2\n")
	r.write("app/s/page.tsx", "b2\n")
	r.write(":x.txt", "x\n")
	r.write("x.txt", "x\n")
	if err := os.MkdirAll(filepath.Join(r.dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("mv", "old/file.txt", "new/file.txt")
	if err := os.Remove(filepath.Join(r.dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	r.write("came.txt", lines("gone", 10)+"more\n")

	ctx := context.Background()
	paths := func(fs []ChangedFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}
	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{"app/[slug]/page.tsx"}, []string{"app/[slug]/page.tsx"}},
		{[]string{":x.txt"}, []string{":x.txt"}},
		{[]string{"app"}, []string{"app/[slug]/page.tsx", "app/s/page.tsx"}},
	} {
		fs, err := ListChanges(ctx, r.dir, "HEAD", false, tc.paths)
		if err != nil || !reflect.DeepEqual(paths(fs), tc.want) {
			t.Errorf("ListChanges(%q) = %q %v, want %q", tc.paths, paths(fs), err, tc.want)
		}
	}
	fs, err := ListChanges(ctx, r.dir, "HEAD", false, []string{"new/file.txt"})
	if err != nil || len(fs) != 1 || fs[0].From != "old/file.txt" {
		t.Errorf("a renamed file named alone: %+v %v, want it from old/file.txt", fs, err)
	}
	fs, err = ListChanges(ctx, r.dir, "HEAD", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ChangedFile{}
	for _, f := range fs {
		got[f.Path] = f
	}
	if f := got["sm"]; !f.Submodule() || f.NestedRepo() {
		t.Errorf("sm: %+v, want a submodule", f)
	}
	if f, ok := got["nested/"]; !ok || !f.NestedRepo() || f.Submodule() {
		t.Errorf("nested/: %+v %v, want a nested repository", f, ok)
	}
	if f := got["came.txt"]; f.From != "gone.txt" {
		t.Errorf("came.txt (untracked, mostly gone.txt): from %q", f.From)
	}
	if f := got["new/file.txt"]; f.From != "old/file.txt" {
		t.Errorf("new/file.txt: from %q", f.From)
	}
	// ChangedFiles leaves out what has no content to read.
	names, err := ChangedFiles(ctx, r.dir, "HEAD", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "sm" || n == "nested/" {
			t.Errorf("ChangedFiles lists %s", n)
		}
	}
}

// TestMovesArePairedByContentNotSkeleton: a new file that shares only a
// language's skeleton with a deleted one (package clause, imports, braces)
// is new, in the editor and in kodyls review alike, so that every line of
// it is checked.
func TestMovesArePairedByContentNotSkeleton(t *testing.T) {
	r := newRepo(t)
	r.write("handler.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc handle(args []string) {\n\tif len(args) > 1 {\n\t\tfmt.Println(args[1])\n\t}\n\tos.Exit(0)\n}\n")
	r.commit("initial")
	if err := os.Remove(filepath.Join(r.dir, "handler.go")); err != nil {
		t.Fatal(err)
	}
	p := r.write("metrics.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc reportMetricsToTheConfiguredCollectorWithRetries(counts map[string]int, collectorEndpoint string) {\n\tfor metricName, metricValue := range counts {\n\t\tfmt.Println(args[1])\n\t}\n\tos.Exit(0)\n}\n")
	if b := load(t, p, ""); b.Kind != Untracked || b.From != "" {
		t.Errorf("editor: a file sharing only the skeleton is compared with %q (kind %v)", b.From, b.Kind)
	}
	list, err := ListChanges(context.Background(), r.dir, "HEAD", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.Path == "metrics.go" && c.From != "" {
			t.Errorf("review: metrics.go taken for a move of %q", c.From)
		}
	}
}

// TestExactMoveWinsOverAPartialCopy: a file moved whole is paired with
// its old path even when a partial copy of it sorts first, and the editor
// pairs it as kodyls review does.
func TestExactMoveWinsOverAPartialCopy(t *testing.T) {
	r := newRepo(t)
	var old strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&old, "func f%d() {\n\tfmt.Println(\"step %d\")\n}\n\n", i, i)
	}
	r.write("old.go", old.String())
	r.commit("initial")
	if err := os.Rename(filepath.Join(r.dir, "old.go"), filepath.Join(r.dir, "z_moved.go")); err != nil {
		t.Fatal(err)
	}
	partial := strings.Join(strings.SplitAfter(old.String(), "\n")[:30], "") + "func extra() {}\nfunc more() {}\n"
	r.write("a_partial.go", partial)

	list, err := ListChanges(context.Background(), r.dir, "HEAD", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for _, c := range list {
		from[c.Path] = c.From
	}
	if from["z_moved.go"] != "old.go" || from["a_partial.go"] != "" {
		t.Errorf("review pairs %v, want z_moved.go from old.go and a_partial.go new", from)
	}
	if b := load(t, filepath.Join(r.dir, "z_moved.go"), ""); b.From != "old.go" {
		t.Errorf("editor: z_moved.go from %q, want old.go", b.From)
	}
	if b := load(t, filepath.Join(r.dir, "a_partial.go"), ""); b.From != "" || b.Kind != Untracked {
		t.Errorf("editor: a_partial.go from %q (kind %v), want new", b.From, b.Kind)
	}
}
