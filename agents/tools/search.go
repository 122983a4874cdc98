package tools

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/kodustech/kodyls/agents/agent"
)

// SearchArgs are the arguments of search_workspace.
type SearchArgs struct {
	Query string `json:"query" jsonschema:"text to find, or an RE2 regular expression when regex is true"`
	Regex bool   `json:"regex,omitempty" jsonschema:"treat query as an RE2 regular expression"`
}

// ListArgs are the arguments of list_files.
type ListArgs struct {
	Dir     string `json:"dir,omitempty" jsonschema:"directory relative to the workspace root (default: the root)"`
	Pattern string `json:"pattern,omitempty" jsonschema:"glob on the file name, or on the path when it contains /, e.g. *.go or src/**/*_test.go"`
}

// ReferencesArgs are the arguments of find_references.
type ReferencesArgs struct {
	Identifier string `json:"identifier" jsonschema:"the identifier to find, e.g. parseConfig"`
}

// MaxResults caps search, list and reference results.
const MaxResults = 100

// SearchWorkspace returns the search_workspace tool: a literal or RE2
// search over the workspace's text files that skips .git, node_modules,
// vendor, git-ignored and privacy-listed paths.
func (w Workspace) SearchWorkspace() agent.Tool {
	return newTool("search_workspace",
		"Search the workspace's files for text (or an RE2 regular expression when regex is true). Returns path:line: text, at most 100 matches.",
		func(ctx context.Context, a SearchArgs) (string, error) {
			if a.Query == "" {
				return "", fmt.Errorf("search_workspace needs a query")
			}
			match := func(s string) bool { return strings.Contains(s, a.Query) }
			if a.Regex {
				re, err := regexp.Compile(a.Query)
				if err != nil {
					return "", fmt.Errorf("query is not a valid RE2 regular expression: %w", err)
				}
				match = re.MatchString
			}
			return w.grep(ctx, match)
		})
}

// identRE is what find_references accepts: identifiers of the common
// languages, so the word boundary below is meaningful.
var identRE = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*$`)

// FindReferences returns the find_references tool: a whole-word search
// for an identifier, so that "Run" does not match "RunTools".
func (w Workspace) FindReferences() agent.Tool {
	return newTool("find_references",
		"Find the lines of the workspace that mention an identifier as a whole word. Returns path:line: text, at most 100 matches.",
		func(ctx context.Context, a ReferencesArgs) (string, error) {
			if !identRE.MatchString(a.Identifier) {
				return "", fmt.Errorf("%q is not an identifier; use search_workspace for other text", a.Identifier)
			}
			// \b does not treat $ as a word character, so the boundary is
			// spelled out.
			re := regexp.MustCompile(`(?:^|[^\p{L}\p{N}_$])` + regexp.QuoteMeta(a.Identifier) + `(?:$|[^\p{L}\p{N}_$])`)
			return w.grep(ctx, re.MatchString)
		})
}

// grep returns the matching lines of every searchable file.
func (w Workspace) grep(ctx context.Context, match func(string) bool) (string, error) {
	root, err := w.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	var out capped
	hits, limited := 0, false
	err = w.walk(root, ".", func(rel string) bool {
		if ctx.Err() != nil {
			return false
		}
		data, err := w.readFile(root, rel)
		if text, ok := w.Overlay[rel]; ok {
			data, err = []byte(text), nil
		}
		if err != nil || len(data) > maxFileSize || binary(data) {
			return true
		}
		_ = eachLine(strings.NewReader(string(data)), func(n int, line string) bool {
			if !match(line) {
				return true
			}
			if hits == MaxResults {
				limited = true
				return false
			}
			hits++
			out.line(fmt.Sprintf("%s:%d: %s", rel, n, shorten(strings.TrimSpace(line), 200)))
			return true
		})
		return !limited
	})
	if err != nil {
		return "", fmt.Errorf("search: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("search: %w", err)
	}
	if hits == 0 {
		return "no matches", nil
	}
	s := out.String()
	if limited {
		s += fmt.Sprintf("[stopped at %d matches; narrow the query]\n", MaxResults)
	}
	return s, nil
}

// ListFiles returns the list_files tool: the files under dir (recursively),
// optionally filtered by a glob, with the same exclusions as the search. A
// dir inside .git (as named or where its links lead) or ignored by
// .gitignore is refused rather than listed.
func (w Workspace) ListFiles() agent.Tool {
	return newTool("list_files",
		"List the workspace's files under dir (recursively), optionally filtered by a glob pattern. At most 100 paths.",
		func(ctx context.Context, a ListArgs) (string, error) {
			if a.Pattern != "" && !doublestar.ValidatePattern(a.Pattern) {
				return "", fmt.Errorf("pattern %q is not a valid glob", a.Pattern)
			}
			return w.list(ctx, a)
		})
}

func (w Workspace) list(ctx context.Context, a ListArgs) (string, error) {
	dir, err := w.clean(a.Dir)
	if err != nil {
		return "", err
	}
	if dir != "." && w.InGitDir(dir) {
		return "", fmt.Errorf("%s is inside .git, which holds git's own files; list_files skips it, as the search does", dir)
	}
	root, err := w.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	if ignored := loadGitignore(root).dirIgnored(dir); ignored != "" {
		return "", fmt.Errorf("%s is ignored by .gitignore (%s); list_files skips it, as the search does", dir, ignored)
	}
	var out capped
	n, limited := 0, false
	err = w.walk(root, dir, func(rel string) bool {
		if ctx.Err() != nil {
			return false
		}
		if a.Pattern != "" {
			name := path.Base(rel)
			if strings.Contains(a.Pattern, "/") {
				name = rel
			}
			if ok, _ := doublestar.Match(a.Pattern, name); !ok {
				return true
			}
		}
		if n == MaxResults {
			limited = true
			return false
		}
		n++
		out.line(rel)
		return true
	})
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	if n == 0 {
		return "no files", nil
	}
	s := out.String()
	if limited {
		s += fmt.Sprintf("[stopped at %d files; narrow dir or pattern]\n", MaxResults)
	}
	return s, nil
}
