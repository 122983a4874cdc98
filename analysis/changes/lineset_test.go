package changes

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

func TestChanged(t *testing.T) {
	tests := []struct {
		name          string
		base, current string
		want          []int
	}{
		{"identical", "a\nb\nc\n", "a\nb\nc\n", nil},
		{"both empty", "", "", nil},
		{"modified middle line", "a\nb\nc\n", "a\nB\nc\n", []int{1}},
		{"modified first and last", "a\nb\nc\nd\n", "A\nb\nc\nD\n", []int{0, 3}},
		{"lines inserted above shift nothing else", "a\nb\nc\n", "x\ny\na\nb\nc\n", []int{0, 1}},
		{"line inserted in the middle", "a\nb\nc\n", "a\nb\nnew\nc\n", []int{2}},
		{"deleted lines leave no trace", "a\nb\nc\nd\n", "a\nd\n", nil},
		{"deletion and modification", "a\nb\nc\nd\n", "a\nC\nd\n", []int{1}},
		{"appended line", "a\nb\n", "a\nb\nc\n", []int{2}},
		{"appended line without final newline", "a\nb\n", "a\nb\nc", []int{2}},
		{"final newline added", "a\nb", "a\nb\n", nil},
		{"final newline removed", "a\nb\n", "a\nb", nil},
		{"new file", "", "a\nb\n", []int{0, 1}},
		{"emptied file", "a\nb\n", "", nil},
		{"blank line added", "a\nb\n", "a\n\nb\n", []int{1}},
		{"line endings converted to CRLF", "a\nb\nc\n", "a\r\nb\r\nc\r\n", nil},
		{"CRLF edit", "a\r\nb\r\nc\r\n", "a\r\nbb\r\nc\r\n", []int{1}},
		{"CR-only line endings", "a\rb\rc\r", "a\rb\rX\rc\r", []int{2}},
		{"mixed terminators", "a\r\nb\rc\n", "a\nb\nc", nil},
		{"CR becomes CRLF", "a\rb\n", "a\r\nb\n", nil},
		{"CR becomes CRLF before an edit", "x\ny\rz", "x\ny\r\nZ", []int{2}},
		{"CRLF becomes CR with an edit", "a\r\nb\r\nc", "a\rb\rX", []int{2}},
		{"edit in a last line without newline", "a\nb\nccc", "a\nb\ncXc", []int{2}},
		{"edit in the first line", "abc\nd\n", "aXc\nd\n", []int{0}},
		{"shared tail inside an edited line", "a\nfoo bar\n", "a\nbaz bar\n", []int{1}},
		{"repeated lines", "}\n}\n}\n", "}\n}\nx\n}\n", []int{2}},
		// Either moved block may count as the change; the LCS keeps 2 and 3.
		{"block moved down", "1\n2\n3\n4\n5\n", "1\n4\n5\n2\n3\n", []int{1, 2}},
		{"everything replaced", "a\nb\n", "c\nd\ne\n", []int{0, 1, 2}},
		{"byte order mark stripped by the editor", "\ufeffa\nb\n", "a\nb\n", nil},
		{"byte order mark kept by the editor", "\ufeffa\nb\n", "\ufeffa\nb\n", nil},
		{"byte order mark added", "a\nb\n", "\ufeffa\nb\n", nil},
		{"byte order mark stripped, first line edited", "\ufeffa\nb\n", "A\nb\n", []int{0}},
		{"byte order mark stripped, second line edited", "\ufeffa\nb\n", "a\nB\n", []int{1}},
		{"byte order mark added to a new file", "", "\ufeffa\n", []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Changed(tt.base, tt.current)
			if got.All() {
				t.Fatal("Changed returned the set of all lines")
			}
			if !reflect.DeepEqual(got.Lines(), tt.want) {
				t.Errorf("Changed(%q, %q) = %v, want %v", tt.base, tt.current, got.Lines(), tt.want)
			}
			for l := -1; l < 8; l++ {
				if got.Has(l) != slices.Contains(tt.want, l) {
					t.Errorf("Has(%d) = %v", l, got.Has(l))
				}
			}
		})
	}
}

func TestMatchBOM(t *testing.T) {
	for _, c := range []struct{ base, current, want string }{
		{"\ufeffa", "a", "a"},
		{"\ufeffa", "\ufeffb", "\ufeffa"},
		{"a", "\ufeffb", "\ufeffa"},
		{"a", "b", "a"},
		{"", "\ufeffb", ""},
		{"\ufeff", "", ""},
	} {
		if got := MatchBOM(c.base, c.current); got != c.want {
			t.Errorf("MatchBOM(%q, %q) = %q, want %q", c.base, c.current, got, c.want)
		}
	}
}

func TestLineSet(t *testing.T) {
	var zero LineSet
	if zero.All() || zero.Has(0) || zero.Lines() != nil || zero.Len() != 0 || !zero.Empty() {
		t.Error("the zero LineSet is not empty")
	}
	all := AllLines()
	if !all.All() || !all.Has(0) || !all.Has(1<<30) || all.Has(-1) || all.Lines() != nil || all.Len() != -1 || all.Empty() {
		t.Error("AllLines does not hold every line")
	}
	var s LineSet
	s.add(2, 4)
	s.add(4, 5) // adjacent: merged
	s.add(7, 8)
	s.add(7, 7) // empty: ignored
	if !reflect.DeepEqual(s.spans, []span{{2, 5}, {7, 8}}) {
		t.Errorf("spans = %v", s.spans)
	}
	if !reflect.DeepEqual(s.Lines(), []int{2, 3, 4, 7}) || s.Len() != 4 {
		t.Errorf("Lines = %v, Len = %d", s.Lines(), s.Len())
	}
	for l, want := range map[int]bool{1: false, 2: true, 4: true, 5: false, 6: false, 7: true, 8: false} {
		if s.Has(l) != want {
			t.Errorf("Has(%d) = %v", l, !want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\n", []string{"a", ""}},
		{"\n", []string{""}},
		{"a\r\nb\rc\nd", []string{"a", "b", "c", "d"}},
		{"a\r\r\n", []string{"a", ""}},
	}
	for _, tt := range tests {
		got := SplitLines(tt.text)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitLines(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestChangedRandomEdits checks Changed against edits whose effect is known:
// the lines it leaves out must be the base's lines in order (nothing
// changed is missed), and it must not report more lines than were inserted
// or replaced.
func TestChangedRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		// Most rounds are small files with repeated lines; some are large
		// with many scattered edits, past go-udiff's search bound.
		n, distinct, edits := rng.IntN(60), 20, rng.IntN(5)
		if iter%10 == 0 {
			n, distinct, edits = 500+rng.IntN(1500), 1<<30, 50+rng.IntN(200)
		}
		base := make([]string, n)
		for i := range base {
			base[i] = fmt.Sprintf("line %d", rng.IntN(distinct))
		}
		cur := slices.Clone(base)
		inserted := 0
		for range edits {
			pos := rng.IntN(len(cur) + 1)
			switch rng.IntN(3) {
			case 0: // insert
				cur = slices.Insert(cur, pos, fmt.Sprintf("new %d", rng.IntN(1000)))
				inserted++
			case 1: // delete
				if pos < len(cur) {
					cur = slices.Delete(cur, pos, pos+1)
				}
			case 2: // modify
				if pos < len(cur) {
					cur[pos] = fmt.Sprintf("mod %d", rng.IntN(1000))
					inserted++
				}
			}
		}
		// Each text gets its own random line terminators, which must not
		// count as changes.
		b, c := joinRandom(rng, base), joinRandom(rng, cur)
		set := Changed(b, c)
		var kept []string
		for i, l := range cur {
			if !set.Has(i) {
				kept = append(kept, l)
			}
		}
		if !isSubsequence(kept, base) {
			t.Fatalf("iteration %d: unchanged lines %q are not a subsequence of the base %q", iter, kept, base)
		}
		// Trimming and anchoring must never do worse than a plain line
		// diff of the whole texts.
		if ref := referenceChanged(b, c); set.Len() > ref {
			t.Fatalf("iteration %d: %d lines changed, a whole-file diff finds %d\nbase %q\ncur  %q", iter, set.Len(), ref, b, c)
		}
		if set.Len() > inserted {
			t.Fatalf("iteration %d: %d lines reported for %d inserted or modified\nbase %q\ncur  %q\nset  %v", iter, set.Len(), inserted, base, cur, set.Lines())
		}
	}
}

// referenceChanged counts the changed lines with go-udiff's line LCS over
// the whole texts, without any trimming.
func referenceChanged(base, current string) int {
	n := 0
	for _, d := range lcs.DiffLines(SplitLines(base), SplitLines(current)) {
		n += d.ReplEnd - d.ReplStart
	}
	return n
}

// joinRandom joins non-empty lines with a random mix of terminators, with
// or without one at the end.
func joinRandom(rng *rand.Rand, lines []string) string {
	terms := []string{"\n", "\r\n", "\r"}
	var sb strings.Builder
	for i, l := range lines {
		sb.WriteString(l)
		if i < len(lines)-1 || rng.IntN(2) == 0 {
			sb.WriteString(terms[rng.IntN(len(terms))])
		}
	}
	return sb.String()
}

func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// file5000 returns a 5,000-line Go-like file and a copy with a few edits:
// two modified lines far apart, one inserted line and one deleted line.
func file5000() (base, current string) {
	lines := make([]string, 5000)
	for i := range lines {
		switch i % 4 {
		case 0:
			lines[i] = fmt.Sprintf("func f%d(x int) int {", i)
		case 1:
			lines[i] = fmt.Sprintf("\ty := x * %d // compute", i)
		case 2:
			lines[i] = "\treturn y"
		case 3:
			lines[i] = "}"
		}
	}
	base = strings.Join(lines, "\n") + "\n"
	cur := slices.Clone(lines)
	cur[120] = "\ty := x * 7 // changed"
	cur[4801] = "\ty := x * 9 // changed"
	cur = slices.Insert(cur, 2500, "\tfmt.Println(\"debug\")")
	cur = slices.Delete(cur, 3000, 3001)
	current = strings.Join(cur, "\n") + "\n"
	return base, current
}

// TestChangedScatteredEdits makes more separate edits than go-udiff's
// bounded search handles; anchoring on unique lines must still find exactly
// the edited lines.
func TestChangedScatteredEdits(t *testing.T) {
	base, current := scattered(2000, 10)
	set := Changed(base, current)
	if set.Len() != 200 {
		t.Fatalf("Changed reports %d lines, want 200", set.Len())
	}
	for _, l := range set.Lines() {
		if l%10 != 0 {
			t.Fatalf("line %d reported, but only every tenth line changed", l)
		}
	}
}

// scattered returns a file of n unique lines and a copy with every step-th
// line modified.
func scattered(n, step int) (base, current string) {
	var b, c strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\tvalue%d := compute(%d)\n", i, i)
		if i%step == 0 {
			fmt.Fprintf(&c, "\tvalue%d := compute(%d) // edited\n", i, i)
		} else {
			fmt.Fprintf(&c, "\tvalue%d := compute(%d)\n", i, i)
		}
	}
	return b.String(), c.String()
}

func TestChanged5000(t *testing.T) {
	base, current := file5000()
	got := Changed(base, current).Lines()
	// Line 4801 moved down by one (insert) and up by one (delete).
	if want := []int{120, 2500, 4801}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changed = %v, want %v", got, want)
	}
}

func BenchmarkChanged5000(b *testing.B) {
	base, current := file5000()
	b.Run("Changed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Changed(base, current)
		}
	})
	// The same inputs through go-udiff's public line diff, without the
	// prefix and suffix trimming, for comparison.
	b.Run("udiff.Lines", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			udiff.Lines(base, current)
		}
	})
	// One edited line near the middle: the common case while typing.
	lines := strings.Split(base, "\n")
	lines[2600] = "\tz := 1"
	oneEdit := strings.Join(lines, "\n")
	b.Run("Changed-one-line", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Changed(base, oneEdit)
		}
	})
	// Every tenth line edited: 500 hunks, past go-udiff's search bound, so
	// the anchored diff runs.
	sBase, sCur := scattered(5000, 10)
	b.Run("Changed-500-hunks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Changed(sBase, sCur)
		}
	})
}

// FuzzChanged checks, on arbitrary bytes, that the lines Changed leaves out
// are the base's lines in order, that it reports only lines that exist, and
// that it never reports more than a whole-file diff. Its seeds run with
// every go test.
func FuzzChanged(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a\r\nb\r\n", "a\rb\r\nc")
	f.Add("x\ny\rz", "x\ny\r\nZ")
	f.Add("\r\r\n\n", "\n\r\n\r")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, base, current string) {
		set := Changed(base, current)
		cur := SplitLines(current)
		var kept []string
		for i, l := range cur {
			if !set.Has(i) {
				kept = append(kept, l)
			}
		}
		if !isSubsequence(kept, SplitLines(base)) {
			t.Fatalf("unchanged lines %q are not a subsequence of the base", kept)
		}
		for _, l := range set.Lines() {
			if l < 0 || l >= len(cur) {
				t.Fatalf("line %d reported; current has %d lines", l, len(cur))
			}
		}
		if ref := referenceChanged(base, current); set.Len() > ref {
			t.Fatalf("%d lines reported, a whole-file diff finds %d", set.Len(), ref)
		}
	})
}
