package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"text/template"
)

// funcs are the functions every prompt template may call, builtins and
// overrides alike. Overrides are written against this list, so a function
// once added is never removed or changed in meaning.
var funcs = template.FuncMap{
	"json":         toJSON,
	"indent":       indent,
	"numbered":     numbered,
	"numberedFrom": numberedFrom,
	"join":         join,
	"default":      orDefault,
	"trim":         strings.TrimSpace,
	"fence":        fence,
	"add":          func(a, b int) int { return a + b },
}

// toJSON marshals v on one line. HTML escaping is off: prompts carry code,
// and a model shown "a \u003c b" may write it back that way.
func toJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// indent prefixes every non-empty line of s with n spaces; empty lines stay
// empty so no trailing blanks are added. It takes the text last so that it
// reads as a pipeline stage: {{.Code | indent 4}}.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", max(n, 0))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// numbered prefixes the lines of s with their 1-based numbers.
func numbered(s string) string { return numberedFrom(1, s) }

// numberedFrom prefixes the lines of s with line numbers starting at start,
// right-aligned to the widest number and separated by " | ". A model asked
// for line numbers reads them off far more reliably than it counts lines.
// One trailing newline is dropped so that it gets no number of its own.
func numberedFrom(start int, s string) string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	width := len(fmt.Sprint(start + len(lines) - 1))
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(fmt.Sprintf("%*d | %s", width, start+i, strings.TrimSuffix(l, "\r")), " "))
	}
	return b.String()
}

// join is strings.Join with the separator first, so that it reads as a
// pipeline stage: {{.Labels | join ", "}}.
func join(sep string, items []string) string { return strings.Join(items, sep) }

// orDefault returns v unless it is empty (nil, a zero value, an empty or
// blank string, an empty slice or map), in which case it returns def:
// {{.ResponseLanguage | default "en-US"}}.
func orDefault(def, v any) any {
	if isEmpty(v) {
		return def
	}
	return v
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s) == ""
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return rv.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return rv.IsZero()
}

// fence wraps code in a Markdown code fence tagged with lang. The fence is
// one backtick longer than the longest backtick run inside the code (and at
// least three), so code that itself contains fences, such as Markdown, cannot
// close it early.
func fence(lang, code string) string {
	longest, run := 0, 0
	for _, r := range code {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	code = strings.TrimSuffix(code, "\n")
	return f + lang + "\n" + code + "\n" + f
}
