package rules

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16File is s in UTF-16 with a byte order mark, as Windows tools save
// it.
func utf16File(s string, order binary.ByteOrder) string {
	units := utf16.Encode([]rune(s))
	out := make([]byte, 2+2*len(units))
	order.PutUint16(out, 0xfeff)
	for i, u := range units {
		order.PutUint16(out[2+2*i:], u)
	}
	return string(out)
}

// A rule file saved as UTF-16 loads as the rule it holds, from every
// source; one that is binary or in another encoding is an error, never a
// rule of garbage sent to the model.
func TestLoadRuleFileEncodings(t *testing.T) {
	root := t.TempDir()
	winRule := "---\r\ntitle: Windows rule\r\nseverity: high\r\n---\r\nNo console.log in production code, ü😀.\r\n"
	writeFile(t, root, ".kody/rules/win.md", utf16File(winRule, binary.LittleEndian))
	writeFile(t, root, ".kody/rules/be.md", utf16File("---\ntitle: Big endian\n---\nBody.\n", binary.BigEndian))
	writeFile(t, root, ".kody-rules/review/w.yml", utf16File("title: From YAML\nrule: Do it.\n", binary.LittleEndian))
	writeFile(t, root, "CLAUDE.md", utf16File("# Rules\n\nNever log tokens.\n", binary.LittleEndian))

	random := make([]byte, 3<<10)
	rand.New(rand.NewSource(1)).Read(random)
	writeFile(t, root, ".kody/rules/random.md", string(random))
	writeFile(t, root, ".kody/rules/latin1.md", "---\ntitle: Caf\xe9\n---\nBody.\n")
	writeFile(t, root, ".kody/rules/nul.md", "---\ntitle: A\n---\nBo\x00dy\n")
	// UTF-16 without a byte order mark: NUL bytes everywhere.
	writeFile(t, root, ".kody/rules/nobom.md", utf16File("---\ntitle: No BOM\n---\n", binary.LittleEndian)[2:])
	writeFile(t, root, ".kody/rules/odd.md", utf16File("---\ntitle: Odd\n---\n", binary.LittleEndian)+"x")
	writeFile(t, root, ".kody-rules/review/bin.yml", "title: x\x00\x01\x02\n")
	writeFile(t, root, "AGENTS.md", "# Rules\n\n- caf\xe9 au lait\n- two\n")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	got := map[string]*Rule{}
	for _, r := range rep.Rules {
		got[r.File] = r
		if strings.ContainsRune(r.Body+r.Instructions+r.Title, 0) || strings.ContainsRune(r.Body+r.Title, '\ufffd') {
			t.Errorf("rule %s holds NUL or replacement characters: %q", r.File, r.Body)
		}
	}
	win := got[".kody/rules/win.md"]
	if win == nil || win.Title != "Windows rule" || win.Severity != SeverityHigh || win.Instructions != "No console.log in production code, ü😀." {
		t.Errorf("win.md = %+v, want the rule it holds", win)
	}
	if r := got[".kody/rules/be.md"]; r == nil || r.Title != "Big endian" {
		t.Errorf("be.md = %+v", r)
	}
	if r := got[".kody-rules/review/w.yml"]; r == nil || r.Title != "From YAML" || r.Instructions != "Do it." {
		t.Errorf("w.yml = %+v", r)
	}
	if r := got["CLAUDE.md"]; r == nil || !strings.Contains(r.Body, "Never log tokens.") {
		t.Errorf("CLAUDE.md = %+v", r)
	}
	errs := map[string]string{}
	for _, e := range rep.Errors {
		errs[e.File] = e.Error()
	}
	for file, want := range map[string]string{
		".kody/rules/random.md":      "rule file is not UTF-8 text",
		".kody/rules/latin1.md":      "rule file is not UTF-8 text: line 2 holds bytes that are no UTF-8",
		".kody/rules/nul.md":         "rule file is not UTF-8 text: line 4 holds a NUL byte",
		".kody/rules/nobom.md":       "rule file is not UTF-8 text: line 1 holds a NUL byte",
		".kody/rules/odd.md":         "odd number of bytes",
		".kody-rules/review/bin.yml": "rule file is not UTF-8 text",
		"AGENTS.md":                  "rule file is not UTF-8 text: line 3",
	} {
		if !strings.Contains(errs[file], want) {
			t.Errorf("error of %s = %q, want %q", file, errs[file], want)
		}
		if got[file] != nil {
			t.Errorf("%s loaded as a rule: %+v", file, got[file])
		}
	}
	if len(rep.Errors) != 7 {
		t.Errorf("errors = %v, want 7", rep.Errors)
	}
}

// Columns count bytes, whatever characters come before on the line.
func TestLoadErrorColumnsCountBytes(t *testing.T) {
	root := t.TempDir()
	line := `path: ["**/ü😀.go", "[bad"]`
	want := strings.Index(line, `"[bad"`) + 1 // 24: ü is 2 bytes, 😀 4
	writeFile(t, root, ".kody/rules/r.md", "---\ntitle: T\n"+line+"\n---\nBody.\n")
	writeFile(t, root, ".kody-rules/review/r.yml", "title: T\nrule: R\n"+line+"\n")
	mdc := `{description: "ü😀", alwaysApply: maybe}`
	writeFile(t, root, ".cursor/rules/r.mdc", "---\n"+mdc+"\n---\n- a\n- b\n")
	dup := `{title: "ü😀", uuid: same}`
	writeFile(t, root, ".kody/rules/a.md", "---\ntitle: A\nuuid: same\n---\n")
	writeFile(t, root, ".kody/rules/b.md", "---\n"+dup+"\n---\n")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	pos := map[string]string{}
	for _, e := range append(rep.Errors, rep.Warnings...) {
		pos[e.File] += fmt.Sprintf("%d:%d ", e.Line, e.Column)
	}
	for file, at := range map[string]string{
		".kody/rules/r.md":         fmt.Sprintf("3:%d ", want),
		".kody-rules/review/r.yml": fmt.Sprintf("3:%d ", want),
		".cursor/rules/r.mdc":      fmt.Sprintf("2:%d ", strings.Index(mdc, "maybe")+1),
		".kody/rules/b.md":         fmt.Sprintf("2:%d ", strings.Index(dup, "uuid")+1),
	} {
		if pos[file] != at {
			t.Errorf("%s: errors at %q, want %q (%v)", file, pos[file], at, rep.Errors)
		}
	}
}

func TestLoadDirectoryLinkWarns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	root := t.TempDir()
	writeFile(t, root, "shared/rules/team.md", okRule)
	writeFile(t, root, "shared/alpha.md", "---\ntitle: Alpha\n---\n")
	writeFile(t, root, ".kody/rules/own.md", okRule)
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	link("../../shared/rules", ".kody/rules/team")
	link("../../shared/alpha.md", ".kody/rules/alpha.md")
	link(".", ".kody/rules/loop")
	link("nowhere", ".kody/rules/gone") // a link to nothing is no directory, nor a rule file
	// .kody-rules/review is read without its subdirectories: a link to
	// one is no loss.
	writeFile(t, root, "shared/yml/x.yml", "title: X\nrule: x\n")
	if err := os.MkdirAll(filepath.Join(root, ".kody-rules", "review"), 0o755); err != nil {
		t.Fatal(err)
	}
	link("../../shared/yml", ".kody-rules/review/sub")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	if len(rep.Errors) != 0 {
		t.Errorf("errors = %v", rep.Errors)
	}
	var titles []string
	for _, r := range rep.Rules {
		titles = append(titles, r.Title+"@"+r.RealFile)
	}
	if strings.Join(titles, " ") != "Alpha@shared/alpha.md OK@" {
		t.Errorf("rules = %q, want the linked file (with where it leads) and the real one", titles)
	}
	expectWarnings(t, rep.Warnings, []string{
		".kody/rules/loop: not read: it is a symbolic link to the directory .kody/rules, and symbolic links to directories are not followed",
		".kody/rules/team: not read: it is a symbolic link to the directory shared/rules, and symbolic links to directories are not followed",
	})
}

// A reference past what kodyls reads of a large file, or longer than a
// reference may be, says so on the rule file.
func TestReferencesCutAreTold(t *testing.T) {
	root := t.TempDir()
	var big strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&big, "%06d %s\n", i, strings.Repeat("x", 92)) // 100 bytes a line
	}
	writeFile(t, root, "docs/big.txt", big.String())
	var lines strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	writeFile(t, root, "docs/lines.txt", lines.String())
	writeFile(t, root, ".kody/rules/r.md", "---\ntitle: R\n---\n"+
		"See @file:docs/big.txt#L90000-L90001.\n"+
		"And @file:docs/lines.txt#L10-L350.\n"+
		"And ü @file:docs/big.txt#L83880-L83890.\n"+
		"And @file:docs/lines.txt#L1-L3.\n")

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	if len(rep.Rules) != 1 || len(rep.Errors) != 0 {
		t.Fatalf("LoadReport = %+v", rep)
	}
	expectWarnings(t, rep.Warnings, []string{
		".kody/rules/r.md:4:5: reference @file:docs/big.txt#L90000-L90001: line 90000 is past the first 8 MiB of docs/big.txt (83886 lines), the most kodyls reads of a referenced file",
		".kody/rules/r.md:5:5: reference @file:docs/lines.txt#L10-L350: only lines 10-209 are attached: a reference brings at most 200 lines and 16 KiB into a rule; reference a shorter range",
		".kody/rules/r.md:6:8: reference @file:docs/big.txt#L83880-L83890: only lines 83880-83886 are attached: the rest is past the first 8 MiB of docs/big.txt",
	})
	refs := rep.Rules[0].References
	if len(refs) != 3 {
		t.Fatalf("references = %+v", refs)
	}
	if r := refs[1]; r.StartLine != 83880 || r.EndLine != 83886 || !r.Truncated || strings.Count(r.Text, "\n") != 7 ||
		!strings.HasSuffix(r.Text, "083886 "+strings.Repeat("x", 92)+"\n") {
		t.Errorf("the reference past the scan = %d-%d truncated %v, text ends %q", r.StartLine, r.EndLine, r.Truncated, r.Text[max(0, len(r.Text)-120):])
	}
	if r := refs[2]; r.Truncated || r.EndLine != 3 {
		t.Errorf("a short range = %+v", r)
	}
}

// expectWarnings checks that the load warnings begin, in order, with want.
func expectWarnings(t *testing.T, got []*LoadError, want []string) {
	t.Helper()
	var warns []string
	for _, w := range got {
		warns = append(warns, w.Error())
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings = %q\nwant %q", warns, want)
	}
	for i := range want {
		if !strings.HasPrefix(warns[i], want[i]) {
			t.Errorf("warning %d = %q\nwant %q", i, warns[i], want[i])
		}
	}
}
