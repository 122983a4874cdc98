package patch

import (
	"path"
	"strings"

	"github.com/kodustech/kodyls/agents/redact"
)

// maxHeading bounds the section shown in a hunk header, as git does (80
// bytes), so that a long signature does not crowd the prompt.
const maxHeading = 80

// headingFunc returns the test for lines that open a declaration in the
// language of the file at p, chosen by extension, or nil when the language
// has none (Markdown, YAML, ...): a wrong heading would mislead the model
// more than a missing one.
//
// The tests are deliberately simple prefix checks, in the spirit of git's
// default funcname rule; they only name the surroundings of a hunk and are
// never relied on for correctness.
func headingFunc(p string) func(string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return goHeading
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return jsHeading
	case ".py", ".pyi":
		return pyHeading
	case ".rs":
		return rustHeading
	case ".java", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx",
		".cs", ".kt", ".kts", ".scala", ".swift", ".php", ".m", ".mm", ".dart", ".groovy":
		return cLikeHeading
	}
	return nil
}

// goHeading matches top-level functions, methods and types. Go declarations
// that matter start in column one; an indented "type" is local to a body.
func goHeading(l string) bool {
	return strings.HasPrefix(l, "func ") || strings.HasPrefix(l, "type ")
}

// jsHeading matches function and class declarations, with any export,
// default, async, declare or abstract modifiers, and arrow functions bound
// to a const, let or var.
func jsHeading(l string) bool {
	t := strings.TrimLeft(l, " \t")
	for {
		var ok bool
		for _, m := range []string{"export ", "default ", "async ", "declare ", "abstract "} {
			var rest string
			if rest, ok = strings.CutPrefix(t, m); ok {
				t = strings.TrimLeft(rest, " \t")
				break
			}
		}
		if !ok {
			break
		}
	}
	switch {
	case strings.HasPrefix(t, "function ") || strings.HasPrefix(t, "function*") || strings.HasPrefix(t, "function("):
		return true
	case strings.HasPrefix(t, "class "):
		return true
	case strings.HasPrefix(t, "const ") || strings.HasPrefix(t, "let ") || strings.HasPrefix(t, "var "):
		return strings.Contains(t, "=>")
	}
	return false
}

// pyHeading matches def, async def and class at any indentation, so a hunk
// inside a method is headed by the method.
func pyHeading(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "async def ") || strings.HasPrefix(t, "class ")
}

// rustHeading matches fn and impl items and the type-like items (struct,
// enum, trait, mod), after visibility and qualifiers.
func rustHeading(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if rest, ok := strings.CutPrefix(t, "pub"); ok {
		if strings.HasPrefix(rest, "(") {
			if i := strings.IndexByte(rest, ')'); i >= 0 {
				rest = rest[i+1:]
			}
		}
		if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			return false // "pubx", not a visibility
		}
		t = strings.TrimLeft(rest, " \t")
	}
	for _, q := range []string{"const ", "async ", "unsafe ", "extern \"C\" ", "extern "} {
		if rest, ok := strings.CutPrefix(t, q); ok {
			t = strings.TrimLeft(rest, " \t")
		}
	}
	for _, kw := range []string{"fn ", "impl ", "impl<", "trait ", "struct ", "enum ", "mod "} {
		if strings.HasPrefix(t, kw) {
			return true
		}
	}
	return false
}

// cLikeHeading matches, for C, Java and their kin, a line in column one that
// opens a block: a function, class or namespace written with its brace on
// the same line. Closing braces ("} else {"), preprocessor lines and
// comments are not declarations.
func cLikeHeading(l string) bool {
	if l == "" || l[0] == ' ' || l[0] == '\t' {
		return false
	}
	t := strings.TrimRight(l, " \t")
	if !strings.HasSuffix(t, "{") {
		return false
	}
	for _, p := range []string{"}", "#", "//", "/*", "*", "{"} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// headingText trims a heading line and cuts it to maxHeading bytes without
// splitting a character or leaving part of a secret.
func headingText(l string) string {
	t := strings.TrimSpace(l)
	// Redacted before the cut: the heading goes into the prompt, and a
	// secret cut in two is no longer recognised there.
	head, _ := redact.Cut(t, maxHeading)
	return strings.TrimRight(head, " \t")
}
