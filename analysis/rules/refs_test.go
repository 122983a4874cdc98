package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestReferences(t *testing.T) {
	root := t.TempDir()
	var long strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeFile(t, root, "docs/long.txt", long.String())
	writeFile(t, root, "docs/crlf.txt", "a\r\nb\r\n")
	writeFile(t, root, "docs/wide.txt", strings.Repeat("x", MaxReferenceBytes+1)+"\n")
	writeFile(t, root, "bin.dat", "a\x00b\n")
	writeFile(t, root, ".env", "TOKEN=hunter2\n")
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		// Links to a secret file, directly and through a linked directory.
		writeFile(t, root, ".ssh/config", "Host *\n")
		for link, target := range map[string]string{"notes.txt": ".env", "docs/env-link": "../.env", "material": ".ssh"} {
			if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
				t.Fatal(err)
			}
		}
	}

	type ref struct {
		path       string
		start, end int
		text       string // prefix
		truncated  bool
	}
	tests := []struct {
		name string
		text string
		refs []ref
		warn string // part of the warning, "" for none
	}{
		{"range", "See @file:docs/long.txt#L10-L12.", []ref{{"docs/long.txt", 10, 12, "line 10\nline 11\nline 12\n", false}}, ""},
		{"range without the second L", "@file:docs/long.txt#L3-4", []ref{{"docs/long.txt", 3, 4, "line 3\nline 4\n", false}}, ""},
		{"one line, wiki form", "[[file:docs/long.txt#L7]]", []ref{{"docs/long.txt", 7, 7, "line 7\n", false}}, ""},
		{"whole file, capped", "`@file:./docs/long.txt`", []ref{{"docs/long.txt", 1, MaxReferenceLines, "line 1\n", true}}, "only lines 1-200 are attached: a reference brings at most 200 lines"},
		{"range capped", "@file:docs/long.txt#L50-L299", []ref{{"docs/long.txt", 50, 50 + MaxReferenceLines - 1, "line 50\n", true}}, "only lines 50-249 are attached"},
		{"range past the end is cut", "@file:docs/long.txt#L299-L400", []ref{{"docs/long.txt", 299, 300, "line 299\nline 300\n", false}}, ""},
		{"CRLF", "@file:docs/crlf.txt", []ref{{"docs/crlf.txt", 1, 2, "a\nb\n", false}}, ""},
		{"repeated once", "@file:docs/crlf.txt and @file:docs/crlf.txt", []ref{{"docs/crlf.txt", 1, 2, "a\n", false}}, ""},
		{"start past the end", "@file:docs/long.txt#L301", nil, "has 300 lines"},
		{"backwards", "@file:docs/long.txt#L5-L2", nil, "ends (L2) before it starts (L5)"},
		{"missing", "@file:docs/nope.md", nil, "cannot read docs/nope.md"},
		{"directory", "[[file:dir]]", nil, "not a regular file"},
		{"binary", "@file:bin.dat", nil, "binary file"},
		{"secret", "@file:.env", nil, "may hold secrets"},
		{"link to a secret", "@file:notes.txt", nil, "leads to .env, which may hold secrets"},
		{"relative link to a secret", "@file:docs/env-link", nil, "leads to .env, which may hold secrets"},
		{"through a linked directory", "@file:material/config", nil, "leads to .ssh/config, which may hold secrets"},
		{"one line too long", "@file:docs/wide.txt", nil, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rule{File: "r.md", Line: 1, Body: tt.text, textLine: 7}
			ws, err := os.OpenRoot(root)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			warns := resolveReferences(Workspace{FS: ws.FS()}, r)
			if len(r.References) != len(tt.refs) {
				t.Fatalf("references = %+v, want %d", r.References, len(tt.refs))
			}
			for i, want := range tt.refs {
				got := r.References[i]
				if got.Path != want.path || got.StartLine != want.start || got.EndLine != want.end ||
					!strings.HasPrefix(got.Text, want.text) || got.Truncated != want.truncated || got.Raw == "" {
					t.Errorf("reference %d = %+v, want %+v", i, got, want)
				}
				if len(got.Text) > MaxReferenceBytes || strings.Count(got.Text, "\n") > MaxReferenceLines {
					t.Errorf("reference %d is over the limits", i)
				}
			}
			switch {
			case tt.warn == "" && len(warns) != 0:
				t.Errorf("warnings = %v", warns)
			case tt.warn != "" && (len(warns) != 1 || !warns[0].Warning || !strings.Contains(warns[0].Msg, tt.warn) || warns[0].Line != 7 || warns[0].File != "r.md"):
				t.Errorf("warnings = %v, want one containing %q on r.md:7", warns, tt.warn)
			}
		})
	}
}

// References resolve inside the workspace only: "..", absolute paths and
// symbolic links that lead out all give a warning and no text.
func TestReferencesStayInWorkspace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	secret := writeFile(t, base, "secret", "the secret\n")
	writeFile(t, root, "docs/ok.md", "fine\n")
	body := "Follow @file:docs/ok.md.\n" +
		"Not @file:../secret\n" +
		"nor @file:" + filepath.ToSlash(secret) + "\n" +
		"nor @file:docs/../../secret#L1\n" +
		`nor @file:..\secret` + "\n" +
		"nor @file:C:/Windows/win.ini\n"
	if runtime.GOOS != "windows" {
		if err := os.Symlink(secret, filepath.Join(root, "abs-link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../secret", filepath.Join(root, "rel-link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../secret", filepath.Join(root, "docs", "deep-link")); err != nil {
			t.Fatal(err)
		}
		body += "nor [[file:abs-link]]\nnor [[file:rel-link#L1-L1]]\nnor @file:docs/deep-link\n"
	}
	writeFile(t, root, ".kody/rules/r.md", "---\ntitle: R\n---\n"+body)

	rep := DefaultRegistry().LoadReport(context.Background(), root)
	if len(rep.Rules) != 1 || len(rep.Errors) != 0 {
		t.Fatalf("LoadReport = %+v", rep)
	}
	r := rep.Rules[0]
	if len(r.References) != 1 || r.References[0].Path != "docs/ok.md" || r.References[0].Text != "fine\n" {
		t.Errorf("references = %+v, want only docs/ok.md", r.References)
	}
	for _, ref := range r.References {
		if strings.Contains(ref.Text, "the secret") {
			t.Errorf("read outside the workspace: %+v", ref)
		}
	}
	want := map[int]string{
		5: `".." leads outside the workspace`,
		6: "absolute paths are not allowed",
		7: `".." leads outside the workspace`,
		8: `".." leads outside the workspace`,
		9: "absolute paths are not allowed",
	}
	if runtime.GOOS != "windows" {
		want[10] = "cannot read abs-link"
		want[11] = "cannot read rel-link"
		want[12] = "cannot read docs/deep-link"
	}
	if len(rep.Warnings) != len(want) {
		t.Errorf("warnings = %v, want %d", rep.Warnings, len(want))
	}
	for _, w := range rep.Warnings {
		// Each reference follows "Not " or "nor ": column 5.
		if part, ok := want[w.Line]; !ok || !w.Warning || w.File != ".kody/rules/r.md" || !strings.Contains(w.Msg, part) || w.Column != 5 {
			t.Errorf("warning %v, want %q at line %d, column 5", w, part, w.Line)
		}
	}
}
