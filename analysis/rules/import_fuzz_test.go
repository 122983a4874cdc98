package rules

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport checks that no input makes the YAML, the assistant or the
// lenient Markdown readers panic, that every rule they return has a title,
// a uuid and a line, and that every problem has a file. Its seeds run with
// every go test.
func FuzzImport(f *testing.F) {
	err := filepath.WalkDir(filepath.Join("testdata", "kodus-team"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("---\nglobs: [\n---\n"))
	f.Add([]byte("- &a {title: x}\n- *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(rules []*Rule, errs []*LoadError) {
			for _, r := range rules {
				if r.Title == "" || r.UUID == "" || r.Line < 1 || r.File == "" {
					t.Fatalf("incomplete rule %+v", r)
				}
			}
			for _, e := range errs {
				if e.File == "" {
					t.Fatalf("problem without a file: %v", e)
				}
			}
		}
		check(ParseKodyYAML("r.yml", data))
		check(CursorMDC().Parse("r.mdc", data))
		check(ClaudeMD().Parse("CLAUDE.md", data))
		r, warns, err := ParseMarkdown("r.md", data)
		if (r == nil) == (err == nil) && len(warns) == 0 {
			t.Fatalf("ParseMarkdown = %v, %v, %v", r, warns, err)
		}
		if r != nil {
			check([]*Rule{r}, warns)
		}
	})
}
