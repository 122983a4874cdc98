package prompts

import (
	"strings"
	"testing"
)

func render(t *testing.T, src string, data any) string {
	t.Helper()
	tm, err := parseTemplate("t", []byte(src))
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	out, err := execute(tm, data)
	if err != nil {
		t.Fatalf("execute %q: %v", src, err)
	}
	return out
}

func TestFuncs(t *testing.T) {
	tests := []struct {
		name, src string
		data      any
		want      string
	}{
		{"json keeps < > &", `{{json .}}`, map[string]string{"code": "a < b && c > d"}, `{"code":"a < b && c > d"}`},
		{"json of a suggestion", `{{json .}}`, Suggestion{RelevantFile: "a.go", RelevantLinesStart: 3},
			`{"relevantFile":"a.go","language":"","suggestionContent":"","existingCode":"","improvedCode":"","oneSentenceSummary":"","relevantLinesStart":3,"relevantLinesEnd":0,"label":"","severity":""}`},
		{"indent", `{{indent 2 .}}`, "a\n\nb", "  a\n\n  b"},
		{"indent as a pipeline", `{{. | indent 4}}`, "x", "    x"},
		{"numbered", `{{numbered .}}`, "a\nb\n", "1 | a\n2 | b"},
		{"numbered aligns", `{{numbered .}}`, strings.Repeat("x\n", 10), " 1 | x\n 2 | x\n 3 | x\n 4 | x\n 5 | x\n 6 | x\n 7 | x\n 8 | x\n 9 | x\n10 | x"},
		{"numbered blank line has no trailing space", `{{numbered .}}`, "a\n\nb", "1 | a\n2 |\n3 | b"},
		{"numbered empty", `[{{numbered .}}]`, "", "[]"},
		{"numberedFrom", `{{numberedFrom 98 .}}`, "a\r\nb\r\nc", " 98 | a\n 99 | b\n100 | c"},
		{"join", `{{join ", " .}}`, []string{"bug", "security"}, "bug, security"},
		{"join as a pipeline", `{{. | join "|"}}`, []string{"a", "b"}, "a|b"},
		{"default on empty", `{{. | default "en-US"}}`, "", "en-US"},
		{"default on blank", `{{. | default "en-US"}}`, "  ", "en-US"},
		{"default keeps a value", `{{. | default "en-US"}}`, "pt-BR", "pt-BR"},
		{"default on zero int", `{{. | default 10}}`, 0, "10"},
		{"default on nil slice", `{{. | default "none"}}`, []string(nil), "none"},
		{"trim", `[{{trim .}}]`, "\n  x  \n", "[x]"},
		{"fence", `{{fence "go" .}}`, "x := 1\n", "```go\nx := 1\n```"},
		{"fence longer than inner backticks", `{{fence "md" .}}`, "```go\nx\n```", "````md\n```go\nx\n```\n````"},
		{"add", `{{add 1 2}}`, nil, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, tt.src, tt.data); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestJSONError(t *testing.T) {
	tm, err := parseTemplate("t", []byte(`{{json .}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := execute(tm, map[string]any{"f": func() {}}); err == nil {
		t.Error("marshalling a func did not fail")
	}
}
