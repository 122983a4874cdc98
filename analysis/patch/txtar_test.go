package patch

import (
	"strings"
	"testing"
)

// archive is a txtar archive: a free-form comment, then files introduced by
// "-- name --" lines. golang.org/x/tools/txtar is not a dependency of this
// module, and the format is small enough to read here.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

// parseArchive reads the txtar format: every line of the form "-- NAME --"
// starts a file that runs to the next such line. As in x/tools/txtar, a file
// that does not end in a newline gets one when formatted, so file data read
// back always ends in "\n" unless it is empty.
func parseArchive(text string) archive {
	var a archive
	cur := -1
	var sb strings.Builder
	flush := func() {
		if cur < 0 {
			a.comment = sb.String()
		} else {
			a.files[cur].data = sb.String()
		}
		sb.Reset()
	}
	for text != "" {
		line, rest, found := strings.Cut(text, "\n")
		text = rest
		if name, ok := markerName(line); ok {
			flush()
			a.files = append(a.files, archiveFile{name: name})
			cur = len(a.files) - 1
			continue
		}
		sb.WriteString(line)
		if found {
			sb.WriteByte('\n')
		}
	}
	flush()
	return a
}

func markerName(line string) (string, bool) {
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < len("-- x --") {
		return "", false
	}
	name := strings.TrimSpace(line[3 : len(line)-3])
	return name, name != ""
}

// format writes the archive back, adding the final newline a comment or
// file may lack, as x/tools/txtar does.
func (a archive) format() string {
	var sb strings.Builder
	writeData := func(s string) {
		sb.WriteString(s)
		if s != "" && !strings.HasSuffix(s, "\n") {
			sb.WriteByte('\n')
		}
	}
	writeData(a.comment)
	for _, f := range a.files {
		sb.WriteString("-- " + f.name + " --\n")
		writeData(f.data)
	}
	return sb.String()
}

// file returns the data of the named file and whether the archive has it.
func (a archive) file(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

// setFile replaces the named file's data, appending the file when missing.
func (a *archive) setFile(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, archiveFile{name: name, data: data})
}

func TestArchiveRoundTrip(t *testing.T) {
	for _, text := range []string{
		"",
		"comment\n",
		"comment\n-- a --\nA\n-- b --\n",
		"-- a --\nline 1\n\nline 3\n-- b --\nB\n",
		"x\n-- not a marker\n--  --\n-- a --\n-- inner -- text\n",
	} {
		a := parseArchive(text)
		if got := a.format(); got != text {
			t.Errorf("round trip of %q gave %q", text, got)
		}
	}
	a := parseArchive("c\n-- base --\nx\ny\n-- patch --\n")
	if got, _ := a.file("base"); got != "x\ny\n" {
		t.Errorf("base = %q", got)
	}
	if got, ok := a.file("patch"); !ok || got != "" {
		t.Errorf("patch = %q, %v", got, ok)
	}
	if _, ok := a.file("current"); ok {
		t.Error("found a file that is not there")
	}
	a.setFile("patch", "P")
	a.setFile("new", "N\n")
	if got, want := a.format(), "c\n-- base --\nx\ny\n-- patch --\nP\n-- new --\nN\n"; got != want {
		t.Errorf("format = %q, want %q", got, want)
	}
}
