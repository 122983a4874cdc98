package rules

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseGoodRule(t *testing.T) {
	r, err := Parse(".kody/rules/no-fmt.md", readFixture(t, "good/no-fmt.md"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := &Rule{
		UUID:      "6f1c2a9e-0b7d-4a55-9c1e-2d3f4a5b6c7d",
		Title:     "No fmt.Println in library code",
		Severity:  SeverityHigh,
		Paths:     []string{"**/*.go", "!**/*_test.go"},
		Scope:     ScopeFile,
		Enabled:   true,
		Languages: []string{"go"},
		Instructions: "Use the structured logger instead of printing.\n\n" +
			"Printing bypasses log levels.",
		Examples: []Example{
			{Kind: "bad", Language: "go", Code: "fmt.Println(\"x\")\n", Text: "Prints straight to stdout:"},
			{Kind: "good", Language: "go", Code: "log.Info(\"x\")\n"},
			{Kind: "good", Language: "go", Code: "slog.Info(\"x\")\n"},
		},
		File:     ".kody/rules/no-fmt.md",
		Line:     1,
		BodyLine: 14,
		textLine: 14,
	}
	if r.Detector == nil {
		t.Fatal("Detector is nil")
	}
	if r.Detector.Type != "regex" || r.Detector.Pattern != `fmt\.Println\(` || r.Detector.Flags != "i" {
		t.Errorf("Detector = %+v", *r.Detector)
	}
	if !r.Detector.Regexp().MatchString(`FMT.PRINTLN("x")`) {
		t.Errorf("compiled pattern %q ignores the i flag", r.Detector.Regexp())
	}
	if !strings.HasPrefix(r.Body, "## Instructions\nUse the structured logger") || !strings.HasSuffix(r.Body, "slog.Info(\"x\")\n```") {
		t.Errorf("Body = %q", r.Body)
	}
	// The remaining fields are compared in one go; Detector and Body were
	// checked above.
	got := *r
	got.Detector, got.Body, got.uuidLine, got.uuidColumn = nil, "", 0, 0
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("Parse =\n%#v\nwant\n%#v", got, *want)
	}
}

func TestParseDefaults(t *testing.T) {
	r, err := Parse("./.kody/rules/minimal.md", readFixture(t, "good/minimal.md"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if r.UUID != "path:.kody/rules/minimal.md" {
		t.Errorf("UUID = %q, want one derived from the path", r.UUID)
	}
	if r.File != ".kody/rules/minimal.md" {
		t.Errorf("File = %q", r.File)
	}
	if r.Severity != SeverityMedium || r.Scope != ScopeFile || !r.Enabled || r.Paths != nil || r.Detector != nil || r.Languages != nil {
		t.Errorf("defaults wrong: %+v", r)
	}
	if r.Instructions != "Functions longer than a screen are hard to review." {
		t.Errorf("Instructions = %q, want the whole body when there is no heading", r.Instructions)
	}
	if len(r.Examples) != 0 {
		t.Errorf("Examples = %+v, want none", r.Examples)
	}
}

func TestParseCRLFAndBOM(t *testing.T) {
	data := append([]byte("\ufeff"), readFixture(t, "good/crlf.md")...)
	r, err := Parse("crlf.md", data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if r.Title != "CRLF rule" || r.Severity != SeverityLow || r.Detector.Pattern != "TODO" || r.Instructions != "No TODOs." {
		t.Errorf("Parse = %+v", r)
	}

	// A CRLF file keeps its line numbers in errors.
	_, err = Parse("crlf.md", []byte("---\r\ntitle: x\r\nseverity: meh\r\n---\r\n"))
	assertLoadError(t, err, 3, 11, `invalid severity "meh"`)
}

func assertLoadError(t *testing.T, err error, line, col int, msg string) {
	t.Helper()
	var lerr *LoadError
	if !errors.As(err, &lerr) {
		t.Fatalf("error = %v (%T), want *LoadError", err, err)
	}
	if lerr.Line != line || (col != 0 && lerr.Column != col) {
		t.Errorf("position = %d:%d, want %d:%d (%v)", lerr.Line, lerr.Column, line, col, lerr)
	}
	if !strings.Contains(lerr.Msg, msg) {
		t.Errorf("message = %q, want it to contain %q", lerr.Msg, msg)
	}
}

func TestParseBrokenFiles(t *testing.T) {
	tests := []struct {
		file      string
		line, col int // col 0: not checked
		msg       string
	}{
		{"empty.md", 1, 1, "empty rule file"},
		{"no-front-matter.md", 1, 1, `missing front matter: a rule file starts with a "---" line`},
		{"unterminated.md", 1, 1, `unterminated front matter: no closing "---" line`},
		{"empty-front-matter.md", 1, 1, "front matter is empty"},
		{"not-a-mapping.md", 2, 1, "front matter must be a YAML mapping"},
		{"yaml-mapping.md", 4, 1, "invalid YAML in front matter: mapping values are not allowed in this context; check the indentation"},
		{"yaml-flow.md", 4, 1, "invalid YAML in front matter: did not find expected ',' or ']'"},
		{"yaml-tab.md", 4, 1, "indent with spaces"},
		{"yaml-glob-unquoted.md", 4, 1, `must be quoted, as in path: "**/*.go"`},
		{"yaml-bad-token.md", 2, 1, "cannot start any token; quote values that start with @"},
		{"yaml-bad-escape.md", 5, 1, "found unknown escape character; inside double quotes"},
		{"missing-title.md", 1, 1, `missing required key "title"`},
		{"empty-title.md", 3, 1, "title is empty"},
		{"duplicate-key.md", 4, 1, `duplicate key "title" (first set on line 2)`},
		{"bad-severity.md", 3, 11, `invalid severity "urgent": use one of critical, high, medium, low`},
		{"bad-scope.md", 3, 8, `invalid scope "repo": use file or pull_request`},
		{"bad-enabled.md", 3, 10, `enabled must be true or false, not "maybe"`},
		{"bad-glob.md", 5, 5, `invalid path glob "src/[a-z.go"`},
		{"unknown-detector.md", 4, 9, `unknown detector type "ast": only "regex" is supported`},
		{"unknown-flag.md", 6, 10, `unknown detector flag 'g' in "ig"`},
		{"missing-type.md", 3, 1, `detector has no "type"`},
		{"missing-pattern.md", 3, 1, `detector has no "pattern"`},
		{"bad-regex.md", 6, 3, "invalid detector pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?=`; Go regular expressions are RE2 and do not support lookahead"},
		{"bad-regex-backref.md", 6, 3, "invalid escape sequence: `\\1`; Go regular expressions are RE2 and do not support backreferences"},
		{"bad-regex-plain.md", 5, 3, "invalid detector pattern: error parsing regexp: missing closing )"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Parse(".kody/rules/"+tt.file, readFixture(t, "broken/"+tt.file))
			if r != nil {
				t.Errorf("Parse returned a rule with the error: %+v", r)
			}
			assertLoadError(t, err, tt.line, tt.col, tt.msg)
			if lerr := err.(*LoadError); lerr.File != ".kody/rules/"+tt.file {
				t.Errorf("File = %q", lerr.File)
			}
		})
	}
}

func TestParseValueForms(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, r *Rule)
	}{
		{"path as one string", `path: "src/**"`, func(t *testing.T, r *Rule) {
			if !reflect.DeepEqual(r.Paths, []string{"src/**"}) {
				t.Errorf("Paths = %q", r.Paths)
			}
		}},
		{"path as block list with ./ and / prefixes", "path:\n  - ./src/**\n  - \"!/src/gen/**\"", func(t *testing.T, r *Rule) {
			if !reflect.DeepEqual(r.Paths, []string{"src/**", "!src/gen/**"}) {
				t.Errorf("Paths = %q", r.Paths)
			}
		}},
		{"pull request scope, disabled", "scope: Pull_Request\nenabled: false", func(t *testing.T, r *Rule) {
			if r.Scope != ScopePullRequest || r.Enabled {
				t.Errorf("Scope, Enabled = %q, %v", r.Scope, r.Enabled)
			}
		}},
		{"empty severity keeps the default", "severity:", func(t *testing.T, r *Rule) {
			if r.Severity != SeverityMedium {
				t.Errorf("Severity = %q", r.Severity)
			}
		}},
		{"null detector", "detector: ~", func(t *testing.T, r *Rule) {
			if r.Detector != nil {
				t.Errorf("Detector = %+v", r.Detector)
			}
		}},
		{"unknown keys are ignored", "tags: [a, b]\nowner: team", func(t *testing.T, r *Rule) {}},
		{"anchors and aliases", "x: &sev low\nseverity: *sev", func(t *testing.T, r *Rule) {
			if r.Severity != SeverityLow {
				t.Errorf("Severity = %q", r.Severity)
			}
		}},
		{"block scalar pattern", "detector:\n  type: Regex\n  pattern: |-\n    a\\d+", func(t *testing.T, r *Rule) {
			if r.Detector.Pattern != `a\d+` || r.Detector.Type != "regex" {
				t.Errorf("Detector = %+v", r.Detector)
			}
		}},
		{"languages as one string", "languages: TypeScript", func(t *testing.T, r *Rule) {
			if !r.AppliesToLanguage("typescript") || r.AppliesToLanguage("go") {
				t.Errorf("Languages = %q", r.Languages)
			}
		}},
		{"languages by another name", "languages: [sh, cs]", func(t *testing.T, r *Rule) {
			// Neovim's filetypes and VS Code's ids name the same languages.
			if !r.AppliesToLanguage("shellscript") || !r.AppliesToLanguage("csharp") || !r.AppliesToLanguage("sh") || r.AppliesToLanguage("go") {
				t.Errorf("Languages = %q", r.Languages)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse("r.md", []byte("---\ntitle: T\n"+tt.yaml+"\n---\n"))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, r)
		})
	}
}

func TestParseMoreErrors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"title is a list", "---\ntitle: [a]\n---\n", 2, 8, "title must be a single value, not a list"},
		{"path is a mapping", "---\ntitle: t\npath: {a: b}\n---\n", 3, 7, "path must be a value or a list of values, not a mapping"},
		{"path entry is a list", "---\ntitle: t\npath:\n  - a\n  - [b]\n---\n", 5, 5, "every entry of path must be a single value"},
		{"empty path entry", "---\ntitle: t\npath: ['a', '']\n---\n", 3, 13, "path has an empty entry"},
		{"bare exclusion", "---\ntitle: t\npath: ['!']\n---\n", 3, 8, `path pattern "!" matches nothing`},
		{"detector is a string", "---\ntitle: t\ndetector: regex\n---\n", 3, 11, "detector must be a mapping"},
		{"unknown detector key", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: x\n  flag: i\n---\n", 6, 3, `unknown detector key "flag"`},
		{"empty pattern", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: ''\n---\n", 5, 3, `detector has no "pattern"`},
		{"unknown alias", "---\ntitle: t\nseverity: *sev\n---\n", 3, 1, "unknown alias *sev"},
		{"lookbehind", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: '(?<!a)b'\n---\n", 5, 3, "negative lookbehind (?<!"},
		{"replace names a missing group", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: 'a(b)'\n  replace: '$2'\n---\n", 6, 3, "uses $2 but the pattern has 1 group(s)"},
		{"replace names a missing named group", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: 'a(b)'\n  replace: '$1x'\n---\n", 6, 3, "uses ${1x} but the pattern has no group"},
		{"replace is a list", "---\ntitle: t\ndetector:\n  type: regex\n  pattern: 'a'\n  replace: [b]\n---\n", 6, 12, "must be a single value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("r.md", []byte(tt.src))
			assertLoadError(t, err, tt.line, tt.col, tt.msg)
		})
	}
}

func TestLoadErrorFormat(t *testing.T) {
	tests := []struct {
		err  LoadError
		want string
	}{
		{LoadError{File: "a.md", Line: 3, Column: 7, Msg: "bad"}, "a.md:3:7: bad"},
		{LoadError{File: "a.md", Line: 3, Msg: "bad"}, "a.md:3: bad"},
		{LoadError{File: "a.md", Msg: "too large"}, "a.md: too large"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseBody(t *testing.T) {
	body := "# Rule\n" +
		"Intro prose.\n" +
		"## Instructions ##\n" +
		"Do this.\n" +
		"```sh\n" +
		"## not a heading inside a fence\n" +
		"```\n" +
		"## Examples\n" +
		"Some intro that is not an example.\n" +
		"### Bad example\n" +
		"~~~~ python extra words\n" +
		"# comment\n" +
		"```\n" +
		"x = 1\n" +
		"~~~~\n" +
		"### Good example\n" +
		"Only prose here.\n" +
		"### Another\n" +
		"  ```\n" +
		"  indented\n" +
		"  ```\n" +
		"## Notes\n" +
		"Not part of anything.\n"
	instr, examples := parseBody(body)
	if want := "Do this.\n```sh\n## not a heading inside a fence\n```"; instr != want {
		t.Errorf("Instructions = %q, want %q", instr, want)
	}
	want := []Example{
		{Kind: "bad", Language: "python", Code: "# comment\n```\nx = 1\n"},
		{Kind: "good", Text: "Only prose here."},
		{Kind: "", Code: "indented\n"},
	}
	if !reflect.DeepEqual(examples, want) {
		t.Errorf("Examples =\n%#v\nwant\n%#v", examples, want)
	}

	// Without an Instructions heading, the body minus the examples is the
	// instructions.
	instr, examples = parseBody("Prefer X.\n## Examples\n```go\nx\n```\n## More\nAlso Y.\n")
	if instr != "Prefer X.\n## More\nAlso Y." {
		t.Errorf("fallback Instructions = %q", instr)
	}
	if len(examples) != 1 || examples[0].Code != "x\n" || examples[0].Kind != "" {
		t.Errorf("Examples = %#v", examples)
	}

	// An unclosed fence runs to the end of the body and hides headings.
	_, examples = parseBody("## Examples\n### Bad\n```js\nfoo()\n### still code\n")
	if len(examples) != 1 || examples[0].Code != "foo()\n### still code\n\n" {
		t.Errorf("unclosed fence Examples = %#v", examples)
	}
}

// FuzzParse checks that no input makes Parse panic or return a rule and an
// error together. Its seeds run with every go test.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/good", "testdata/broken"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("---\n---"))
	f.Add([]byte("---\na: &a [*a]\ntitle: *a\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("f.md", data)
		if (r == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v: want exactly one of them", r, err)
		}
		if err != nil {
			var lerr *LoadError
			if !errors.As(err, &lerr) || lerr.Line < 1 || lerr.Column < 1 {
				t.Fatalf("error %v lacks a position", err)
			}
		}
	})
}

// TestEveryBadPathGlobIsReported: a rule author who fixes the first bad
// glob of a list learns of the next one now, not at the next check.
func TestEveryBadPathGlobIsReported(t *testing.T) {
	_, more, err := ParseMarkdown("r.md", []byte("---\ntitle: t\npath: [\"src/[a\", \"lib/{x\", \"ok/**\"]\n---\nBody.\n"))
	assertLoadError(t, err, 3, 8, `invalid path glob "src/[a"`)
	if len(more) != 1 || more[0].Line != 3 || more[0].Column != 18 || !strings.Contains(more[0].Msg, `"lib/{x"`) {
		t.Fatalf("further errors %v, want the second glob at 3:18", more)
	}
}
