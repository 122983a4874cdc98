package rules

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseMarkdown covers what ParseMarkdown accepts beyond the strict
// format of Parse: the variants real rule files have.
func TestParseMarkdown(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		src   string
		warns []string // parts of the warnings, in order
		check func(t *testing.T, r *Rule)
	}{
		{"no front matter: the whole file, titled by its heading", "r.md", "\n# Keep it small\n\nSplit long functions.\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "Keep it small" || r.Instructions != "Split long functions." || r.Body != "# Keep it small\n\nSplit long functions." ||
				r.BodyLine != 1 || r.textLine != 2 || r.UUID != "path:r.md" || r.Line != 1 {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"no front matter, no heading: titled by the file name", "dir/no_magic-numbers.md", "Name your constants.", nil, func(t *testing.T, r *Rule) {
			if r.Title != "No magic numbers" || r.Instructions != "Name your constants." {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"no title: the first heading that is not a section of the format", "r.md", "---\nseverity: high\n---\n## Instructions\nDo X.\n### Why X matters\nBecause.\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "Why X matters" || r.Severity != SeverityHigh || r.Instructions != "Do X.\n### Why X matters\nBecause." {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"empty title and empty front matter", "empty-title.md", "---\ntitle: ''\n---\nBody.\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "Empty title" {
				t.Errorf("Title = %q", r.Title)
			}
		}},
		{"empty front matter", "e.md", "---\n---\nBody.\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "E" || r.Instructions != "Body." {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"BOM and CRLF", "r.md", "\ufeff---\r\ntitle: T\r\nscope: Pull-Request\r\n---\r\nLine one.\r\nLine two.\r\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "T" || r.Scope != ScopePullRequest || r.Instructions != "Line one.\nLine two." || strings.Contains(r.Body, "\r") {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"BOM and CRLF without front matter", "r.md", "\ufeff# T\r\nDo.\r\n", nil, func(t *testing.T, r *Rule) {
			if r.Title != "T" || r.Instructions != "Do." {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"severity_min stands for a missing severity", "r.md", "---\ntitle: T\nseverity_min: critical\n---\n", nil, func(t *testing.T, r *Rule) {
			if r.Severity != SeverityCritical || r.SeverityMin != SeverityCritical {
				t.Errorf("Severity, SeverityMin = %q, %q", r.Severity, r.SeverityMin)
			}
		}},
		{"severity wins over severity_min, in any order", "r.md", "---\ntitle: T\nseverity_min: critical\nseverity: low\n---\n", nil, func(t *testing.T, r *Rule) {
			if r.Severity != SeverityLow || r.SeverityMin != SeverityCritical {
				t.Errorf("Severity, SeverityMin = %q, %q", r.Severity, r.SeverityMin)
			}
		}},
		{"aliases: paths, language, bucket", "r.md", "---\ntitle: T\npaths: a/**\nlanguage: go\nbuckets: style\n---\n", nil, func(t *testing.T, r *Rule) {
			if !reflect.DeepEqual(r.Paths, []string{"a/**"}) || !reflect.DeepEqual(r.Languages, []string{"go"}) || !reflect.DeepEqual(r.Buckets, []string{"style"}) {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"unknown keys kept, one warning each", "r.md", "---\ntitle: T\nowner: team\ntags: [a, b]\n---\n", []string{`3:unknown key "owner"`, `4:unknown key "tags"`}, func(t *testing.T, r *Rule) {
			if r.Extra["owner"] != "team" || !reflect.DeepEqual(r.Extra["tags"], []any{"a", "b"}) {
				t.Errorf("Extra = %#v", r.Extra)
			}
		}},
		{"empty file: a warning and no rule", "r.md", " \n\n", []string{"0:empty rule file"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, warns, err := ParseMarkdown(tt.file, []byte(tt.src))
			if err != nil {
				t.Fatalf("ParseMarkdown: %v", err)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings = %v, want %q", warns, tt.warns)
			}
			for i, w := range warns {
				line, msg, _ := strings.Cut(tt.warns[i], ":")
				if !w.Warning || itoa(w.Line) != line || !strings.Contains(w.Msg, msg) {
					t.Errorf("warning %d = %v, want %q", i, w, tt.warns[i])
				}
			}
			if tt.check == nil {
				if r != nil {
					t.Errorf("rule = %+v, want none", r)
				}
				return
			}
			if r == nil {
				t.Fatal("no rule")
			}
			tt.check(t, r)
		})
	}
}

// What stays an error in ParseMarkdown.
func TestParseMarkdownErrors(t *testing.T) {
	tests := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"---\ntitle: Never closed\n", 1, 1, "unterminated front matter"},
		{"---\ntitle: T\nseverity: urgent\n---\n", 3, 11, `invalid severity "urgent"`},
		{"---\ntitle: T\nseverity_min: meh\n---\n", 3, 15, `invalid severity_min "meh"`},
		{"---\ntitle: T\nscope: repo\n---\n", 3, 8, `invalid scope "repo"`},
		{"---\ntitle: T\npath: a\npaths: b\n---\n", 4, 1, `duplicate key "paths" (first set on line 3)`},
		{"---\n- a\n---\n", 2, 1, "front matter must be a YAML mapping"},
	}
	for _, tt := range tests {
		r, _, err := ParseMarkdown("r.md", []byte(tt.src))
		if r != nil {
			t.Errorf("%q: got a rule with the error", tt.src)
		}
		assertLoadError(t, err, tt.line, tt.col, tt.msg)
	}
}

func TestParseScope(t *testing.T) {
	for in, want := range map[string]Scope{
		"file": ScopeFile, " FILE ": ScopeFile, "pull_request": ScopePullRequest, "pull-request": ScopePullRequest,
		"Pull-Request": ScopePullRequest, "pr": ScopePullRequest, "repo": "",
	} {
		if got, ok := ParseScope(in); got != want || ok != (want != "") {
			t.Errorf("ParseScope(%q) = %q, %v", in, got, ok)
		}
	}
}
