package fix

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The verifying build runs the model's edits before the user has seen
// them, and its output goes back to the model. A compiler prints the
// lines of any file it reads, so an edit that makes the code read a file
// outside the workspace (`#include "/home/me/.aws/credentials"`) would
// send that file to the model. Two guards stand in the way: an edit that
// makes the code reference such a file by path is rejected before any
// build, and the build's output loses every diagnostic located in a file
// outside the scratch copy before it reaches a prompt.

// Patterns of code that names a file the compiler reads. Each has one
// group, the path.
var fileReferences = []*regexp.Regexp{
	// C, C++, Objective-C (and cgo preambles in Go comments): #include,
	// #include_next, #import, C23's #embed.
	regexp.MustCompile(`(?m)^[ \t]*(?://[ \t]*)?#[ \t]*(?:include_next|include|import|embed)[ \t]*["<]([^">\n]+)[">]`),
	// Assembly, also inside inline asm strings.
	regexp.MustCompile(`\.incbin[ \t]+\\?"([^"\\\n]+)`),
	// Rust: include!, include_str!, include_bytes!, and #[path] modules.
	regexp.MustCompile(`\binclude(?:_str|_bytes)?![ \t]*[(\[{][ \t\n]*r?#*"([^"\n]+)"`),
	regexp.MustCompile(`#!?\[[ \t]*path[ \t]*=[ \t]*"([^"\n]+)"`),
	// TypeScript and JavaScript: relative or absolute module specifiers
	// and triple-slash references.
	regexp.MustCompile(`\bfrom[ \t]*["']([./][^"'\n]*)["']`),
	regexp.MustCompile(`\bimport[ \t]*\(?[ \t]*["']([./][^"'\n]*)["']`),
	regexp.MustCompile(`\brequire[ \t]*\([ \t]*["']([./][^"'\n]*)["']`),
	regexp.MustCompile(`<reference[ \t]+path[ \t]*=[ \t]*["']([^"'\n]+)["']`),
}

// referencedPaths lists the file paths text names in the ways above.
func referencedPaths(text string) []string {
	// C joins a line ending in a backslash with the next before it reads
	// directives.
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\\\r\n", ""), "\\\n", "")
	var out []string
	for _, re := range fileReferences {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if p := strings.TrimSpace(m[1]); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// newReference returns why the edited content of rel references, by a
// path the original content did not name, a file outside the workspace
// or one on the privacy list; "" when it does not. Paths are resolved
// from the file's directory, as compilers do first; an include path the
// build command adds is beyond what can be checked here, and the build
// output filter covers it.
func (c *checker) newReference(rel, before, after string) string {
	old := referencedPaths(before)
	for _, p := range referencedPaths(after) {
		if slices.Contains(old, p) {
			continue
		}
		var target string
		if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
			r, err := filepath.Rel(c.root, filepath.Clean(p))
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return fmt.Sprintf("%s: the new text makes the code read %s, which is outside the workspace; a fix may only reference files inside the workspace", rel, p)
			}
			target = path.Clean(filepath.ToSlash(r))
		} else {
			target = path.Join(path.Dir(rel), filepath.ToSlash(p))
			if target == ".." || strings.HasPrefix(target, "../") {
				return fmt.Sprintf("%s: the new text makes the code read %s, which leaves the workspace; a fix may only reference files inside the workspace", rel, p)
			}
		}
		switch {
		case target == ".git" || strings.HasPrefix(target, ".git/"):
			return fmt.Sprintf("%s: the new text makes the code read %s, inside .git", rel, p)
		case c.ignore != nil && c.ignore(target):
			return fmt.Sprintf("%s: the new text makes the code read %s, which is on the privacy ignore list", rel, target)
		}
	}
	return ""
}

// Lines of build output that name the file a diagnostic is located in;
// group 1 is the path.
var outputLocations = []*regexp.Regexp{
	// gcc and clang include chains.
	regexp.MustCompile(`^(?:In file included from|\s+from)\s+(.+?):\d+(?::\d+)?[:,]?\s*$`),
	// rustc: the primary span, and spans in other files.
	regexp.MustCompile(`^\s*(?:-->|:::)\s+(.+?):\d+(?::\d+)?\s*$`),
	// Python tracebacks.
	regexp.MustCompile(`^\s*File "(.+?)", line \d+`),
	// tsc --pretty false, MSVC-style tools.
	regexp.MustCompile(`^(\S[^(:]*)\(\d+(?:,\d+)?\)\s*: `),
	// gcc, clang, Go, javac, tsc --pretty, node: file:line[:col]: or
	// file:line:col - or file:line alone.
	regexp.MustCompile(`^([^\s:][^:]*):\d+(?::\d+)?(?::| - |\s*$)`),
	// gcc's context lines: "x.c: In function 'f':", "x.c: At top level:".
	regexp.MustCompile(`^([^\s:][^:]*): (?:In |At )`),
}

// outputHeader matches a diagnostic whose location, if any, is on a
// following line (rustc, cargo).
var outputHeader = regexp.MustCompile(`^(?:error|warning|note|help)(?:\[[A-Za-z]*\d+\])?: `)

// outputEnd matches summary lines that end a diagnostic block.
var outputEnd = regexp.MustCompile(`^(?:\d+ (?:errors?|warnings?)(?: and \d+ warnings?)? generated\.|compilation terminated\.|make(?:\[\d+\])?: |# |Found \d+ errors?|FAILED: |ninja: )`)

// withholdOutside drops from out, the output of a build run in sub (a
// directory of dir, slash-separated, "" for dir itself), every diagnostic
// block located in a file outside dir (an absolute path not under dir or
// alias, a relative path that climbs out of it), with its source excerpt,
// and returns the rest and how many lines it dropped. alias is dir
// reached another way (through a symlink), or "".
func withholdOutside(out, dir, alias, sub string) (string, int) {
	lines := strings.Split(out, "\n")
	kept := make([]string, 0, len(lines))
	drop, withheld := false, 0
	for i, line := range lines {
		if p, ok := outputLocation(line); ok {
			drop = !inDir(p, dir, alias, sub)
		} else if outputHeader.MatchString(line) {
			drop = false
			for _, next := range lines[i+1:] {
				if strings.TrimSpace(next) == "" {
					continue
				}
				if p, ok := outputLocation(next); ok && strings.Contains(next, "-->") {
					drop = !inDir(p, dir, alias, sub)
				}
				break
			}
		} else if outputEnd.MatchString(line) {
			drop = false
		}
		// Within a dropped block every line goes, whatever it looks like:
		// clang and javac print the source line bare.
		if drop {
			if strings.TrimSpace(line) != "" {
				withheld++
			}
			continue
		}
		kept = append(kept, line)
	}
	if withheld == 0 {
		return out, 0
	}
	res := strings.TrimRight(strings.Join(kept, "\n"), "\n")
	return res + fmt.Sprintf("\n[%d line(s) of the build output about files outside the workspace were withheld]\n", withheld), withheld
}

func outputLocation(line string) (string, bool) {
	for _, re := range outputLocations {
		if m := re.FindStringSubmatch(line); m != nil {
			return strings.TrimSpace(m[1]), true
		}
	}
	return "", false
}

// inDir says whether the path p, as a build run in sub of dir printed it,
// is inside dir.
func inDir(p, dir, alias, sub string) bool {
	if !filepath.IsAbs(p) {
		return inside(filepath.Join(filepath.FromSlash(sub), filepath.FromSlash(p)))
	}
	p = filepath.Clean(p)
	for _, d := range []string{dir, alias} {
		if d == "" {
			continue
		}
		if r, err := filepath.Rel(d, p); err == nil && inside(r) {
			return true
		}
	}
	return false
}
