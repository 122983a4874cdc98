package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// privateMarker is the text of the files kodus-config.yml ignores: no rule,
// reference or import may carry it.
const privateMarker = "PRIVATE-NOTE-5e1f"

// ignoreWorkspace is a workspace whose kodus-config.yml has the given
// ignorePaths lines, with a private file, a link to it, a readable file, a
// Kody rule that references all three and a CLAUDE.md that imports them.
func ignoreWorkspace(t *testing.T, ignorePaths string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, "kodus-config.yml", "ignorePaths:\n"+ignorePaths)
	writeFile(t, root, "private/notes.txt", "- "+privateMarker+" customer list\n")
	writeFile(t, root, "private/README.md", "- "+privateMarker+" readme\n")
	writeFile(t, root, "docs/style.txt", "- Wrap errors with context.\n")
	if err := os.Symlink("private/notes.txt", filepath.Join(root, "linkpriv.txt")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	writeFile(t, root, ".kody/rules/refs.md", "---\ntitle: Follow the notes\n---\n"+
		"Follow @file:private/notes.txt#L1-L1, [[file:linkpriv.txt]], @file:private/README.md and @file:docs/style.txt\n")
	writeFile(t, root, "CLAUDE.md", "- Keep handlers small.\n- Read @private/notes.txt, @linkpriv.txt and @docs/style.txt\n")
	return root
}

// leaked fails when a rule of rep carries the private marker.
func leaked(t *testing.T, rep Report) {
	t.Helper()
	for _, r := range rep.Rules {
		text := r.Title + r.Body + r.Instructions
		for _, ref := range r.References {
			text += ref.Text
		}
		if strings.Contains(text, privateMarker) {
			t.Errorf("rule %s (%s) carries an ignored file's text: %q", r.UUID, r.File, text)
		}
	}
}

// TestIgnorePathsKeepReferencesAndImportsOut: a reference or an import of
// a file that kodus-config.yml ignorePaths ignores, as written or behind a
// symbolic link, is refused with a warning naming the pattern, as one of
// .env is; the other references and imports still resolve.
func TestIgnorePathsKeepReferencesAndImportsOut(t *testing.T) {
	root := ignoreWorkspace(t, "  - private/**\n")
	rep := DefaultRegistry().LoadReport(context.Background(), root)
	leaked(t, rep)
	w := warningsText(rep)
	for _, want := range []string{
		"reference @file:private/notes.txt#L1-L1: the file is ignored by kodus-config ignorePaths (private/**), so it is never read into a rule",
		"reference [[file:linkpriv.txt]]: the file leads to private/notes.txt, which is ignored by kodus-config ignorePaths (private/**), so it is never read into a rule",
		"reference @file:private/README.md: the file is ignored by kodus-config ignorePaths (private/**)",
		"import @private/notes.txt: the file is ignored by kodus-config ignorePaths (private/**), so it is never imported",
		"import @linkpriv.txt: the file leads to private/notes.txt, which is ignored by kodus-config ignorePaths (private/**), so it is never imported",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in:\n%s", want, w)
		}
	}
	var resolved, imported bool
	for _, r := range rep.Rules {
		for _, ref := range r.References {
			resolved = resolved || ref.Path == "docs/style.txt"
		}
		imported = imported || r.File == "docs/style.txt"
	}
	if !resolved || !imported {
		t.Errorf("the readable file is not referenced (%v) or imported (%v): %+v", resolved, imported, rep.Rules)
	}
}

// TestIgnorePathsNegationKeepsTheOtherPatterns: a "!" pattern, which
// kodyls does not support, is left out; the patterns beside it still
// ignore what they match, the file it meant to bring back included (also
// for the search of nested AGENTS.md), and the other files are read.
func TestIgnorePathsNegationKeepsTheOtherPatterns(t *testing.T) {
	root := ignoreWorkspace(t, "  - private/**\n  - \"!private/README.md\"\n")
	// The search for nested instruction files skips private/ as well.
	writeFile(t, root, "private/AGENTS.md", "- "+privateMarker+" nested.\n- Two.\n")
	rep := DefaultRegistry().LoadReport(context.Background(), root)
	leaked(t, rep)
	w := warningsText(rep)
	for _, want := range []string{
		"reference @file:private/notes.txt#L1-L1: the file is ignored by kodus-config ignorePaths (private/**)",
		"reference @file:private/README.md: the file is ignored by kodus-config ignorePaths (private/**)",
		"import @private/notes.txt: the file is ignored by kodus-config ignorePaths (private/**)",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in:\n%s", want, w)
		}
	}
	if strings.Contains(w, "docs/style.txt") {
		t.Errorf("the readable file is refused:\n%s", w)
	}
}

// TestUnusableIgnorePathsRefuseEveryReference: when kodus-config.yml's
// ignorePaths cannot all be read (a pattern that is no glob, a file that
// is no YAML), no reference or import is read, the harmless ones included,
// and the warning says why.
func TestUnusableIgnorePathsRefuseEveryReference(t *testing.T) {
	for name, ignore := range map[string]string{
		"bad glob":     "  - private/**\n  - \"secret/[a-\"\n",
		"invalid YAML": "  - private/**\n\t- oops\n",
		"not a list":   "  private: yes\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := ignoreWorkspace(t, ignore)
			rep := DefaultRegistry().LoadReport(context.Background(), root)
			leaked(t, rep)
			for _, r := range rep.Rules {
				if len(r.References) > 0 || r.File == "docs/style.txt" {
					t.Errorf("a file was read into rule %s: %+v", r.UUID, r)
				}
			}
			w := warningsText(rep)
			for _, want := range []string{
				"reference @file:docs/style.txt: kodus-config ignorePaths may lack a path to ignore (kodus-config.yml:",
				"so no file is read into a rule until it is fixed",
				"import @docs/style.txt: kodus-config ignorePaths may lack a path to ignore (kodus-config.yml:",
				"so no file is imported until it is fixed",
			} {
				if !strings.Contains(w, want) {
					t.Errorf("no warning %q in:\n%s", want, w)
				}
			}
		})
	}
}

// TestIgnoredRuleFilesAreNotRead: a rule file that kodus-config.yml
// ignorePaths ignores (a root CLAUDE.md, a Kody rule, a link to an ignored
// file) is not read, as a nested AGENTS.md under an ignored directory is
// not; a warning marked Skipped says why.
func TestIgnoredRuleFilesAreNotRead(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "kodus-config.yml", "ignorePaths:\n  - CLAUDE.md\n  - .kody/rules/private-*.md\n  - private/**\n")
	writeFile(t, root, "CLAUDE.md", "- "+privateMarker+" one.\n- Two.\n")
	writeFile(t, root, ".kody/rules/private-team.md", "---\ntitle: Team\n---\n"+privateMarker+"\n")
	writeFile(t, root, ".kody/rules/public.md", "---\ntitle: Public\n---\nWrap errors.\n")
	writeFile(t, root, "private/AGENTS.md", "- "+privateMarker+" nested.\n- Two.\n")
	writeFile(t, root, "private/rules.md", "- "+privateMarker+" linked.\n- Two.\n")
	if err := os.Symlink("private/rules.md", filepath.Join(root, "AGENTS.md")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	rep := DefaultRegistry().LoadReport(context.Background(), root)
	leaked(t, rep)
	if len(rep.Rules) != 1 || rep.Rules[0].Title != "Public" {
		t.Errorf("rules %+v, want only Public", rep.Rules)
	}
	skipped := map[string]string{}
	for _, w := range rep.Warnings {
		if w.Skipped {
			skipped[w.File] = w.Msg
		}
	}
	for file, want := range map[string]string{
		"CLAUDE.md":                   "not read: the file is ignored by kodus-config ignorePaths (CLAUDE.md)",
		".kody/rules/private-team.md": "not read: the file is ignored by kodus-config ignorePaths (.kody/rules/private-*.md)",
		"AGENTS.md":                   "leads to private/rules.md, which is ignored by kodus-config ignorePaths (private/**), so it is never read as a rule",
	} {
		if !strings.Contains(skipped[file], want) {
			t.Errorf("%s: skipped %q, want %q\nwarnings:\n%s", file, skipped[file], want, warningsText(rep))
		}
	}
	if len(rep.Errors) > 0 {
		t.Errorf("errors: %v", rep.Errors)
	}
}
