package main

import (
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestReviewIgnoresAByteOrderMarkAlone: a user whose editor removed the
// UTF-8 byte order mark of a committed file, or added one, changed no line
// of code: `kodyls review` reports nothing for it and asks the model
// nothing, as the editor does for a buffer whose BOM it strips.
func TestReviewIgnoresAByteOrderMarkAlone(t *testing.T) {
	const bom = "\ufeff"
	const body = "fmt.Println(1)\nfmt.Println(2)\n"
	repo := lsptest.NewRepo(t, map[string]string{
		".kody/rules/no-println.md": lsptest.RuleFile("No fmt.Println", printlnRule, "high", "**/*.go", `fmt\.Println\(`),
		"removed.go":                bom + body,
		"added.go":                  body,
	})
	repo.Write(map[string]string{"removed.go": body, "added.go": bom + body})
	rep, fake, _ := reviewWithModel(t, repo.Dir)
	if len(rep.Findings) != 0 {
		t.Errorf("findings for a byte order mark alone: %+v", rep.Findings)
	}
	if len(rep.Files) != 2 {
		t.Errorf("files reviewed: %+v, want removed.go and added.go", rep.Files)
	}
	for _, f := range rep.Files {
		if f.Hunks != 0 {
			t.Errorf("%s: %d hunk(s) for a byte order mark alone", f.Path, f.Hunks)
		}
	}
	if n := fake.CountChat(); n != 0 {
		t.Errorf("%d model call(s) for a byte order mark alone", n)
	}
}
