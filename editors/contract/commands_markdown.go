package contract

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Markers around the generated command list and the list of custom
// notifications and requests in README.md.
const (
	CommandsBeginMarker = "<!-- commands:begin -->"
	CommandsEndMarker   = "<!-- commands:end -->"
	MessagesBeginMarker = "<!-- messages:begin -->"
	MessagesEndMarker   = "<!-- messages:end -->"
)

// contractPkg is the import path of this package: the JSON shapes in the
// README spell out the fields of its structs and name the others (an LSP
// range, a URI) as single fields.
var contractPkg = reflect.TypeFor[Command]().PkgPath()

// CommandsMarkdown returns the README's command list: one item per entry
// of Commands with its name, title, description, argument and result
// shapes, and whether it reports progress.
func CommandsMarkdown() string {
	var b strings.Builder
	for _, c := range Commands {
		fmt.Fprintf(&b, "- `%s` (*%s*): %s", c.Name, c.Title, c.Description)
		if c.Args != nil {
			fmt.Fprintf(&b, " Argument: `%s`", Shape(c.Args))
			// A single alternative only repeats the required fields.
			if len(c.ArgsRequire) > 1 {
				alts := requireMarkdown(c.ArgsRequire)
				b.WriteString(", with at least " + alts)
			}
			b.WriteString(".")
		} else {
			b.WriteString(" No argument.")
		}
		fmt.Fprintf(&b, " Result: `%s`.", Shape(c.Result))
		if c.Progress {
			b.WriteString(" Reports `$/progress` when the request carries a `workDoneToken`.")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// MessagesMarkdown returns the README's list of the custom notifications
// and requests: method, params shape, result shape for a request, and
// description.
func MessagesMarkdown() string {
	var b strings.Builder
	b.WriteString("- Notifications from the server:\n")
	for _, m := range Notifications {
		fmt.Fprintf(&b, "  - `%s` (`%s`): %s\n", m.Method, Shape(m.Params), m.Description)
	}
	for _, m := range Requests {
		fmt.Fprintf(&b, "- Request `%s` (`%s`) → `%s`: %s\n", m.Method, Shape(m.Params), Shape(m.Result), m.Description)
	}
	return b.String()
}

// requireMarkdown renders ArgsRequire: "`uri` and `message`, or `text`".
func requireMarkdown(alts [][]string) string {
	var parts []string
	for _, keys := range alts {
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = "`" + k + "`"
		}
		parts = append(parts, strings.Join(quoted, " and "))
	}
	return strings.Join(parts, ", or ")
}

// Shape renders the JSON shape of a contract type the way the README spells
// it: `{a, b?: {c}, d: [{e}]}`, where `?` marks a field that may be absent,
// and the fields of structs declared outside this package are not spelled
// out except at the top (a result that is an LSP Location is `{uri, range}`).
func Shape(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "[" + Shape(t.Elem()) + "]"
	case reflect.Struct:
		return fieldsShape(t)
	}
	return t.Name()
}

// nestedShape is the shape of a field's value, "" when the field is shown
// by its name alone.
func nestedShape(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s := nestedShape(t.Elem()); s != "" {
			return "[" + s + "]"
		}
	case reflect.Struct:
		if t.PkgPath() == contractPkg {
			return fieldsShape(t)
		}
	}
	return ""
}

func fieldsShape(t reflect.Type) string {
	var fields []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") {
			name += "?"
		}
		if s := nestedShape(f.Type); s != "" {
			name += ": " + s
		}
		fields = append(fields, name)
	}
	return "{" + strings.Join(fields, ", ") + "}"
}

// ReplaceCommandsList returns readme with the text between
// CommandsBeginMarker and CommandsEndMarker replaced by CommandsMarkdown.
func ReplaceCommandsList(readme []byte) ([]byte, error) {
	return replaceBetween(readme, CommandsBeginMarker, CommandsEndMarker, CommandsMarkdown(), "the command list")
}

// ReplaceMessagesList returns readme with the text between
// MessagesBeginMarker and MessagesEndMarker replaced by MessagesMarkdown.
func ReplaceMessagesList(readme []byte) ([]byte, error) {
	return replaceBetween(readme, MessagesBeginMarker, MessagesEndMarker, MessagesMarkdown(), "the notifications and requests")
}

// ReplaceGenerated returns readme with every generated part replaced: the
// command list, the notifications and requests, and the settings table.
func ReplaceGenerated(readme []byte) ([]byte, error) {
	out, err := ReplaceCommandsList(readme)
	if err != nil {
		return nil, err
	}
	if out, err = ReplaceMessagesList(out); err != nil {
		return nil, err
	}
	return ReplaceSettingsTable(out)
}

func replaceBetween(readme []byte, beginMarker, endMarker, content, what string) ([]byte, error) {
	begin := bytes.Index(readme, []byte(beginMarker))
	end := bytes.Index(readme, []byte(endMarker))
	if begin < 0 || end < begin {
		return nil, errors.New("README.md lacks " + beginMarker + " … " + endMarker + " around " + what)
	}
	var out bytes.Buffer
	out.Write(readme[:begin+len(beginMarker)])
	out.WriteString("\n")
	out.WriteString(content)
	out.Write(readme[end:])
	return out.Bytes(), nil
}
