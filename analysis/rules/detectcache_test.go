package rules

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// cacheTestRules are detectors of every shape the cache must not get wrong:
// anchored at a line's start or end, matching empty strings (never
// reported), case-insensitive, alternations, word boundaries, with a fix,
// multi-byte.
func cacheTestRules(t testing.TB) []*Rule {
	fix, err := Parse("fix.md", []byte("---\ntitle: fix\ndetector:\n  type: regex\n  pattern: 'fmt\\.Println\\((?P<arg>[^)]*)\\)'\n  replace: 'log.Info(${arg})'\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	return []*Rule{
		mustRule(t, "start.md", `^func`, ""),
		mustRule(t, "end.md", `\)$`, ""),
		mustRule(t, "trailing.md", `\s+$`, ""),
		mustRule(t, "star.md", `y*`, ""),
		mustRule(t, "quest.md", `a?`, ""),
		mustRule(t, "caret.md", `^`, ""),
		mustRule(t, "todo.md", `TODO|FIXME`, ""),
		mustRule(t, "todoi.md", `todo`, "i"),
		mustRule(t, "any.md", `\bany\b`, ""),
		mustRule(t, "print.md", `(log|fmt)\.Printf?\(`, ""),
		mustRule(t, "kelvin.md", `k`, "i"),
		mustRule(t, "sharp.md", `ß+`, ""),
		mustRule(t, "upper.md", `[[:upper:]]{2}`, ""),
		mustRule(t, "tsonly.md", `x`, "", "**/*.ts"),
		{UUID: "none", File: "none.md", Enabled: true, Scope: ScopeFile},
		nil,
		fix,
	}
}

var cacheTestLines = []string{
	"", "func main() {", "}", "\tfmt.Println(x)", "\tlog.Printf(\"a\") // TODO", "var any = 1",
	"yyy", "aaa ", "  ", "// todo: ToDo", "KK k \u212a", "ßß", "anything)", "\tx := f(any)",
	"FIXME then fmt.Println()", "日本 ſ",
}

// randomEdit changes text a little, as typing does: a character typed or
// deleted, a line added, removed, replaced or split, a line end changed.
func randomEdit(r *rand.Rand, text string) string {
	switch r.IntN(7) {
	case 0, 1: // type a character
		i := r.IntN(len(text) + 1)
		chars := []string{"a", "y", " ", ")", "(", "K", "\n", "ß", "o", "d", "T"}
		return text[:i] + chars[r.IntN(len(chars))] + text[i:]
	case 2: // delete a few bytes
		if text == "" {
			return text
		}
		i := r.IntN(len(text))
		j := min(len(text), i+1+r.IntN(3))
		return text[:i] + text[j:]
	case 3: // add a line
		lines := strings.Split(text, "\n")
		i := r.IntN(len(lines) + 1)
		lines = append(lines[:i], append([]string{cacheTestLines[r.IntN(len(cacheTestLines))]}, lines[i:]...)...)
		return strings.Join(lines, "\n")
	case 4: // remove a line
		lines := strings.Split(text, "\n")
		i := r.IntN(len(lines))
		return strings.Join(append(lines[:i], lines[i+1:]...), "\n")
	case 5: // replace a line
		lines := strings.Split(text, "\n")
		lines[r.IntN(len(lines))] = cacheTestLines[r.IntN(len(cacheTestLines))]
		return strings.Join(lines, "\n")
	default: // a line end turns CRLF or CR
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return text + "\r\n"
		}
		if r.IntN(2) == 0 {
			return text[:i] + "\r\n" + text[i+1:]
		}
		return text[:i] + "\r" + text[i+1:]
	}
}

// randomRules is a subset of all in random order: sometimes the same
// rules in a new slice, sometimes copies of them (same patterns, other
// rules).
func randomRules(r *rand.Rand, all []*Rule) []*Rule {
	var out []*Rule
	for _, i := range r.Perm(len(all)) {
		if r.IntN(3) > 0 {
			out = append(out, all[i])
		}
	}
	if r.IntN(4) == 0 {
		for i, rule := range out {
			if rule != nil {
				cp := *rule
				out[i] = &cp
			}
		}
	}
	return out
}

// The cache finds what a check from scratch finds, whatever the edits,
// the lines checked and the rules; and it stays the size of the document.
func TestDetectCacheEqualsDetect(t *testing.T) {
	all := cacheTestRules(t)
	for seed := range uint64(15) {
		r := rand.New(rand.NewPCG(seed, 7))
		var c DetectCache
		rs := randomRules(r, all)
		path := "a.go"
		var lines []string
		for range 20 {
			lines = append(lines, cacheTestLines[r.IntN(len(cacheTestLines))])
		}
		text := strings.Join(lines, "\n")
		for step := range 80 {
			text = randomEdit(r, text)
			switch r.IntN(20) {
			case 0:
				rs = randomRules(r, all) // the rules changed
			case 1:
				rs = append([]*Rule(nil), rs...) // read again, the same
			case 2:
				path = []string{"a.go", "b.ts"}[r.IntN(2)]
			}
			var include func(int) bool
			if r.IntN(3) == 0 {
				mod := 1 + r.IntN(4)
				include = func(l int) bool { return l%mod == 0 }
			}
			want := Detect(rs, path, text, include)
			got := c.Detect(rs, path, text, include)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d, text %q:\ncache  %s\nscratch %s", seed, step, text, dump(got), dump(want))
			}
			seen := map[string]bool{}
			forEachLine(text, func(n int, line string) {
				if include == nil || include(n) {
					seen[line] = true
				}
			})
			if len(c.lines) > 2*len(seen)+sweepSlack {
				t.Fatalf("seed %d step %d: the cache holds %d lines for %d distinct lines checked", seed, step, len(c.lines), len(seen))
			}
		}
	}
}

// After a keystroke only the edited line runs the patterns; after the
// rules change, every line does again.
func TestDetectCacheMatchesOnlyNewLines(t *testing.T) {
	rs := []*Rule{mustRule(t, "todo.md", `TODO`, ""), mustRule(t, "print.md", `(log|fmt)\.Printf?\(`, "")}
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "line %d // TODO\n", i)
	}
	text := b.String()
	var c DetectCache
	if got := len(c.Detect(rs, "a.go", text, nil)); got != 1000 {
		t.Fatalf("%d violations, want 1000", got)
	}
	if c.matched != 1000 {
		t.Fatalf("the first check matched %d lines, want 1000", c.matched)
	}
	typed := strings.Replace(text, "line 500 ", "line 500 fmt.Printf(", 1)
	got := c.Detect(rs, "a.go", typed, nil)
	if c.matched != 1001 {
		t.Fatalf("a keystroke matched %d lines, want the edited one", c.matched-1000)
	}
	if !reflect.DeepEqual(got, Detect(rs, "a.go", typed, nil)) || len(got) != 1001 {
		t.Fatalf("after the keystroke: %d violations", len(got))
	}
	// A line moved down by a new line above it is not matched again.
	moved := "package a\n" + typed
	if got := c.Detect(rs, "a.go", moved, nil); len(got) != 1001 || got[0].Line != 1 || c.matched != 1002 {
		t.Fatalf("after a line was added above: %d violations from line %d, %d lines matched", len(got), got[0].Line, c.matched-1001)
	}
	// New rules: every line again.
	rs2 := []*Rule{mustRule(t, "todo.md", `TODO`, "")}
	c.Detect(rs2, "a.go", moved, nil)
	if c.matched != 1002+1001 {
		t.Fatalf("after the rules changed %d lines were matched, want every one", c.matched-1002)
	}
}

// Checks of several versions at once each find what a check from scratch
// finds.
func TestDetectCacheConcurrent(t *testing.T) {
	rs := cacheTestRules(t)
	var c DetectCache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			text := strings.Join(cacheTestLines, "\n")
			for range 50 {
				text = randomEdit(r, text)
				if got, want := c.Detect(rs, "a.go", text, nil), Detect(rs, "a.go", text, nil); !reflect.DeepEqual(got, want) {
					t.Errorf("text %q:\ncache  %s\nscratch %s", text, dump(got), dump(want))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A nil cache checks from scratch.
func TestDetectCacheNil(t *testing.T) {
	var c *DetectCache
	rs := []*Rule{mustRule(t, "todo.md", `TODO`, "")}
	if got := c.Detect(rs, "a", "TODO", nil); len(got) != 1 {
		t.Fatalf("nil cache: %s", dump(got))
	}
}

// However long the editing, the cache holds about the document's lines,
// not every line it ever saw.
func TestDetectCacheStaysTheDocumentsSize(t *testing.T) {
	rs := []*Rule{mustRule(t, "todo.md", `TODO`, "")}
	var c DetectCache
	for i := range 5000 {
		text := fmt.Sprintf("a\nb // TODO\nline %d\nc\n", i)
		c.Detect(rs, "a.go", text, nil)
		if len(c.lines) > 2*4+sweepSlack {
			t.Fatalf("after %d edits the cache holds %d lines of a 4-line document", i+1, len(c.lines))
		}
	}
}
