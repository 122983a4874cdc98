package prompts

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		want  header
		found bool
		err   string // substring; "" for no error
	}{
		{"complete", "{{/* name: a_b; version: 3; purpose: does a thing */}}\nbody",
			header{"a_b", 3, "does a thing"}, true, ""},
		{"trim markers", "{{- /* name: a; version: 1; purpose: p */ -}}\n", header{"a", 1, "p"}, true, ""},
		{"CRLF", "{{/* name: a; version: 1; purpose: p */}}\r\nbody", header{"a", 1, "p"}, true, ""},
		{"purpose with semicolons and colons", "{{/* name: a; version: 2; purpose: x; then y: z */}}",
			header{"a", 2, "x; then y: z"}, true, ""},
		{"any order", "{{/* purpose: p; name: a; version: 1 */}}", header{"a", 1, "p"}, true, ""},
		{"trailing semicolon", "{{/* name: a; version: 1; */}}", header{"a", 1, ""}, true, ""},
		{"override without name", "{{/* version: 2 */}}\n", header{"", 2, ""}, true, ""},
		{"no comment", "Hello {{.X}}", header{}, false, ""},
		{"empty file", "", header{}, false, ""},
		{"ordinary comment", "{{/* my own review prompt */}}\n", header{}, false, ""},
		{"ordinary comment with a colon", "{{/* note: tuned for qwen */}}\n", header{}, false, ""},
		{"header not on the first line", "\n{{/* name: a; version: 1; purpose: p */}}", header{}, false, ""},
		{"bad version", "{{/* name: a; version: two; purpose: p */}}", header{}, true, `version "two" must be a whole number`},
		{"version zero", "{{/* name: a; version: 0; purpose: p */}}", header{}, true, "version"},
		{"version too large", "{{/* name: a; version: 1000; purpose: p */}}", header{}, true, "from 1 to 999"},
		{"bad name", "{{/* name: Review-Analyze; version: 1; purpose: p */}}", header{}, true, "lower-case letters"},
		{"unknown key", "{{/* name: a; verison: 1; purpose: p */}}", header{}, true, `unknown key "verison"`},
		{"twice", "{{/* name: a; name: b; version: 1; purpose: p */}}", header{}, true, "name is set twice"},
		{"empty purpose", "{{/* name: a; version: 1; purpose: */}}", header{}, true, "purpose is empty"},
		{"text without key", "{{/* name: a; hello; version: 1 */}}", header{}, true, "not a key: value pair"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, found, err := parseHeader([]byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if found != tt.found || h != tt.want {
				t.Errorf("got %+v, found=%v; want %+v, found=%v", h, found, tt.want, tt.found)
			}
		})
	}
}

func TestParseBuiltinHeaderRequiresAll(t *testing.T) {
	for src, want := range map[string]string{
		"no header at all":                     "missing header",
		"{{/* version: 1; purpose: p */}}":     "name is missing",
		"{{/* name: a; purpose: p */}}":        "version is missing",
		"{{/* name: a; version: 1 */}}":        "purpose is missing",
		"{{/* just a comment */}}\nbody":       "missing header",
		"{{/* name: a; version: x; purpose: p": "missing header", // unterminated comment
	} {
		_, err := parseBuiltinHeader([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want one containing %q", src, err, want)
		}
	}
}

// TestLoadReportsBrokenFiles: Load reports every broken file, with its
// name, keeps the good prompts and never panics.
func TestLoadReportsBrokenFiles(t *testing.T) {
	good := "{{/* name: good; version: 1; purpose: a good prompt */}}\nHi {{.Name}}\n"
	fsys := fstest.MapFS{
		"good.tmpl":       {Data: []byte(good)},
		"noheader.tmpl":   {Data: []byte("Hello {{.Name}}\n")},
		"badversion.tmpl": {Data: []byte("{{/* name: badversion; version: v1; purpose: p */}}\n")},
		"mismatch.tmpl":   {Data: []byte("{{/* name: other; version: 1; purpose: p */}}\n")},
		"other.tmpl":      {Data: []byte("{{/* name: other; version: 1; purpose: p */}}\n")},
		"syntax.tmpl":     {Data: []byte("{{/* name: syntax; version: 1; purpose: p */}}\nline 2\n{{end}}\n")},
		"notes.txt":       {Data: []byte("not a template")},
	}
	s, err := Load(fsys)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"noheader.tmpl:1: missing header",
		`badversion.tmpl:1: header: version "v1"`,
		`mismatch.tmpl:1: header name "other" differs from the file name`,
		`other.tmpl:1: duplicate prompt name "other", also declared in mismatch.tmpl`,
		"syntax.tmpl:3: unexpected {{end}}",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if got := s.List(); len(got) != 1 || got[0].Name != "good" {
		t.Errorf("List() = %+v, want only the good prompt", got)
	}
	if r, err := s.Render("good", map[string]string{"Name": "Kody"}); err != nil || r.Text != "Hi Kody" {
		t.Errorf("Render(good) = %+v, %v", r, err)
	}
	if _, err := s.Render("syntax", nil); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Errorf("Render(syntax) = %v, want unknown prompt", err)
	}
}

func TestLoadEmpty(t *testing.T) {
	s, err := Load(fstest.MapFS{})
	if err == nil || !strings.Contains(err.Error(), "no *.tmpl files") {
		t.Errorf("err = %v", err)
	}
	if s == nil || len(s.List()) != 0 {
		t.Errorf("set = %+v", s)
	}
}
