package prompts

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites the golden files and testdata/versions.txt:
// go test ./prompts -update.
var update = flag.Bool("update", false, "rewrite testdata/golden and testdata/versions.txt")

// TestGolden renders every builtin with its example data and compares the
// text with testdata/golden/<name>.txt, so that any change to what a model
// receives shows up in review as a diff of plain text.
func TestGolden(t *testing.T) {
	for _, p := range Builtin().List() {
		t.Run(p.Name, func(t *testing.T) {
			data, ok := Example(p.Name)
			if !ok {
				t.Fatalf("no example data for %s", p.Name)
			}
			r, err := Builtin().Render(p.Name, data)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", p.Name+".txt"), r.Text+"\n")
		})
	}
}

// checkGolden compares got with the file, or rewrites the file under
// -update.
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./prompts -update to create it)", err)
	}
	if d := firstDiff(string(want), got); d != "" {
		t.Errorf("%s differs from the rendered text (run go test ./prompts -update if the change is intended):\n%s", file, d)
	}
}

// firstDiff describes the first line where want and got differ, with a
// little context, or returns "" when they are equal.
func firstDiff(want, got string) string {
	if want == got {
		return ""
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	for j := max(0, i-2); j < i; j++ {
		fmt.Fprintf(&b, "  %4d   %s\n", j+1, wl[j])
	}
	line := func(l []string) string {
		if i < len(l) {
			return fmt.Sprintf("%q", l[i])
		}
		return "(end of text)"
	}
	fmt.Fprintf(&b, "- %4d   %s   (golden)\n", i+1, line(wl))
	fmt.Fprintf(&b, "+ %4d   %s   (rendered)\n", i+1, line(gl))
	fmt.Fprintf(&b, "(golden has %d lines, rendered %d)", len(wl), len(gl))
	return b.String()
}

func TestFirstDiff(t *testing.T) {
	if d := firstDiff("a\nb\n", "a\nb\n"); d != "" {
		t.Errorf("equal texts: got %q", d)
	}
	d := firstDiff("a\nb\nc\n", "a\nb\nX\n")
	if !strings.Contains(d, `-    3   "c"`) || !strings.Contains(d, `+    3   "X"`) {
		t.Errorf("diff does not point at line 3:\n%s", d)
	}
	d = firstDiff("a\n", "a\nmore\n")
	if !strings.Contains(d, `"more"`) {
		t.Errorf("diff does not show the extra line:\n%s", d)
	}
}
