package patch

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/analysis/changes"
)

var update = flag.Bool("update", false, "rewrite the patch sections of testdata/*.txtar with the current output")

// TestGolden renders the patch of every testdata/*.txtar case and compares
// it with the case's "patch" section.
//
// A case has a "current" section, a "base" section (absent for a file with
// no baseline: untracked) and the expected "patch". Lines of the form
// "key: value" in the archive's comment adjust it:
//
//	path: x.go            the file's path (default: the case's name + ".go")
//	context: N            context lines (default DefaultContext)
//	crlf: base current    end the lines of these sections with "\r\n"
//	nonewline: base       drop the final line terminator of these sections
//
// The last two exist because a txtar file can hold neither reliably.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := parseArchive(string(raw))
			c := readCase(t, name, ar)

			p := Diff(c.path, c.base, c.current, c.context)
			got := p.Render()
			if strings.Contains(got, "\r") {
				t.Errorf("render contains a carriage return:\n%q", got)
			}
			if p.Untracked != c.untracked {
				t.Errorf("Untracked = %v, want %v", p.Untracked, c.untracked)
			}
			checkInvariants(t, c.base, c.current, c.context)

			if *update {
				ar.setFile("patch", got)
				if err := os.WriteFile(file, []byte(ar.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := ar.file("patch")
			if !ok {
				t.Fatalf("no patch section; run go test -run TestGolden -update")
			}
			if got != want {
				t.Errorf("render differs from the patch section (go test -update rewrites it)\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

type goldenCase struct {
	path          string
	base, current string
	context       int
	untracked     bool
}

func readCase(t *testing.T, name string, ar archive) goldenCase {
	t.Helper()
	c := goldenCase{path: name + ".go", context: DefaultContext}
	crlf, nonewline := map[string]bool{}, map[string]bool{}
	for line := range strings.Lines(ar.comment) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "path":
			c.path = value
		case "context":
			n, err := strconv.Atoi(value)
			if err != nil {
				t.Fatalf("context: %v", err)
			}
			c.context = n
		case "crlf":
			for _, s := range strings.Fields(value) {
				crlf[s] = true
			}
		case "nonewline":
			for _, s := range strings.Fields(value) {
				nonewline[s] = true
			}
		}
	}
	section := func(s string) (string, bool) {
		data, ok := ar.file(s)
		if crlf[s] {
			data = strings.ReplaceAll(data, "\n", "\r\n")
		}
		if nonewline[s] {
			data = strings.TrimSuffix(strings.TrimSuffix(data, "\n"), "\r")
		}
		return data, ok
	}
	var ok bool
	if c.current, ok = section("current"); !ok {
		t.Fatal("no current section")
	}
	c.base, ok = section("base")
	c.untracked = !ok || c.base == ""
	return c
}

// checkInvariants checks what must hold for any pair of texts: the hunks
// apply, their headers agree with their lines, and the added lines are
// exactly those analysis/changes reports as changed. Both come from
// changes.DiffLines; the last check is that the byte trimming Changed does
// first leaves the answer alone.
func checkInvariants(t *testing.T, base, current string, context int) {
	t.Helper()
	all := allHunks("x.go", base, current, context)
	applied, err := apply(changes.SplitLines(base), all)
	if err != nil {
		t.Fatalf("applying the hunks: %v", err)
	}
	if want := changes.SplitLines(current); !slices.Equal(applied, want) {
		t.Fatalf("applying the hunks to base gave\n%q\nwant\n%q", applied, want)
	}
	for _, h := range all {
		checkHunk(t, h, context)
	}

	p := Diff("x.go", base, current, context)
	var want []int
	for _, l := range changes.Changed(base, current).Lines() {
		want = append(want, l+1)
	}
	got := p.ChangedLines()
	if hasLoneCR(base) || hasLoneCR(current) {
		// Where a lone "\r" ends a line, analysis/changes trims common
		// bytes conservatively and may pick another of several equally
		// short diffs of repeated lines ("\r\r" to "\r\r\r" adds line 2
		// there, line 3 here). Both are right; their sizes must agree.
		if len(got) != len(want) {
			t.Errorf("ChangedLines = %v, analysis/changes says %v", got, want)
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("ChangedLines = %v, analysis/changes says %v", got, want)
	}
}

// hasLoneCR reports whether s has a "\r" that is not part of a "\r\n".
func hasLoneCR(s string) bool {
	return strings.Count(s, "\r") != strings.Count(s, "\r\n")
}

// checkHunk verifies that a hunk's header counts and line numbers agree with
// its lines and that it has no more context than asked for at its ends.
func checkHunk(t *testing.T, h Hunk, context int) {
	t.Helper()
	old, nw := 0, 0
	for _, l := range h.Lines {
		switch l.Kind {
		case ' ':
			old++
			nw++
		case '-':
			old++
		case '+':
			nw++
		default:
			t.Fatalf("line kind %q", l.Kind)
		}
	}
	if old != h.OldLines || nw != h.NewLines {
		t.Errorf("header -%d,%d +%d,%d but lines count %d old, %d new", h.OldStart, h.OldLines, h.NewStart, h.NewLines, old, nw)
	}
	o, n := h.OldStart, h.NewStart
	if h.OldLines == 0 {
		o++
	}
	if h.NewLines == 0 {
		n++
	}
	for _, l := range h.Lines {
		wantOld, wantNew := 0, 0
		if l.Kind != '+' {
			wantOld = o
			o++
		}
		if l.Kind != '-' {
			wantNew = n
			n++
		}
		if l.OldLine != wantOld || l.NewLine != wantNew {
			t.Errorf("line %q numbered %d/%d, want %d/%d", l.Text, l.OldLine, l.NewLine, wantOld, wantNew)
		}
	}
	lead := 0
	for lead < len(h.Lines) && h.Lines[lead].Kind == ' ' {
		lead++
	}
	trail := 0
	for trail < len(h.Lines) && h.Lines[len(h.Lines)-1-trail].Kind == ' ' {
		trail++
	}
	if lead > context || trail > context || lead == len(h.Lines) {
		t.Errorf("hunk has %d leading and %d trailing context lines of %d (context %d)", lead, trail, len(h.Lines), context)
	}
}

// apply replays hunks on the lines of a baseline, checking that every
// context and removed line is where the hunk says.
func apply(base []string, hunks []Hunk) ([]string, error) {
	var out []string
	pos := 0
	for i, h := range hunks {
		start := h.OldStart
		if h.OldLines > 0 {
			start--
		}
		if start < pos || start > len(base) {
			return nil, fmt.Errorf("hunk %d starts at old line %d, before the end of the previous one or past the file", i, h.OldStart)
		}
		out = append(out, base[pos:start]...)
		pos = start
		for _, l := range h.Lines {
			switch l.Kind {
			case ' ', '-':
				if pos >= len(base) || base[pos] != l.Text {
					return nil, fmt.Errorf("hunk %d: line %q does not match base line %d", i, l.Text, pos+1)
				}
				if l.Kind == ' ' {
					out = append(out, l.Text)
				}
				pos++
			case '+':
				out = append(out, l.Text)
			}
		}
	}
	return append(out, base[pos:]...), nil
}
