package patch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func lines(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}

func text(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func TestDiffNoChange(t *testing.T) {
	for _, c := range []struct{ base, current string }{
		{"", ""},
		{"a\nb\n", "a\nb\n"},
		{"a\r\nb\r\n", "a\nb"},
		{"\ufeffa\nb\n", "a\nb\n"},
		{"a\nb\n", "\ufeffa\nb\n"},
	} {
		p := Diff("f.txt", c.base, c.current, 3)
		if len(p.Hunks) != 0 || p.Render() != "" || p.ChangedLines() != nil {
			t.Errorf("Diff(%q, %q) = %+v, want no hunk", c.base, c.current, p)
		}
	}
	if p := Diff("f.txt", "a\n", "", 3); len(p.Hunks) != 0 || p.Untracked {
		t.Errorf("emptied file: %+v, want no hunk and tracked", p)
	}
}

// TestDiffByteOrderMark: a byte order mark the buffer lacks is not shown
// as a change of the first line next to a real change.
func TestDiffByteOrderMark(t *testing.T) {
	p := Diff("f.txt", "\ufeffa\nb\nc\n", "a\nb\nC\n", 3)
	if got := p.ChangedLines(); !slices.Equal(got, []int{3}) {
		t.Fatalf("changed lines %v, want [3]", got)
	}
	for _, l := range p.Hunks[0].Lines {
		if strings.Contains(l.Text, "\ufeff") {
			t.Errorf("hunk line %+v shows the byte order mark", l)
		}
	}
}

func TestDiffNegativeContext(t *testing.T) {
	base := lines(20, "line %d")
	cur := slices.Clone(base)
	cur[10] = "changed"
	p := Diff("f.txt", text(base), text(cur), -1)
	if len(p.Hunks) != 1 || len(p.Hunks[0].Lines) != 2*DefaultContext+2 {
		t.Fatalf("negative context should mean %d lines: %+v", DefaultContext, p.Hunks)
	}
}

func TestHunkAccessors(t *testing.T) {
	base := lines(40, "line %d")
	cur := slices.Clone(base)
	cur[4] = "five"
	cur = slices.Insert(cur, 30, "new a", "new b")
	p := Diff("f.txt", text(base), text(cur), 3)
	if len(p.Hunks) != 2 {
		t.Fatalf("got %d hunks, want 2", len(p.Hunks))
	}
	if got := p.Hunks[0].Added(); !slices.Equal(got, []int{5}) {
		t.Errorf("Added = %v", got)
	}
	if got := p.ChangedLines(); !slices.Equal(got, []int{5, 31, 32}) {
		t.Errorf("ChangedLines = %v", got)
	}
	h := p.Hunks[1] // new lines 28-35
	if h.NewStart != 28 || h.NewLines != 8 {
		t.Fatalf("second hunk +%d,%d", h.NewStart, h.NewLines)
	}
	for line, want := range map[int]bool{27: false, 28: true, 31: true, 35: true, 36: false} {
		if h.Contains(line) != want {
			t.Errorf("Contains(%d) = %v", line, !want)
		}
	}
	if i, ok := p.HunkAt(3); !ok || i != 0 {
		t.Errorf("HunkAt(3) = %d, %v", i, ok)
	}
	if i, ok := p.HunkAt(31); !ok || i != 1 {
		t.Errorf("HunkAt(31) = %d, %v", i, ok)
	}
	if _, ok := p.HunkAt(20); ok {
		t.Error("HunkAt(20) found a hunk between the two")
	}
}

func TestRenderHunks(t *testing.T) {
	base := lines(40, "line %d")
	cur := slices.Clone(base)
	cur[4] = "five"
	cur[30] = "thirty-one"
	p := Diff("dir/f.txt", text(base), text(cur), 1)
	if len(p.Hunks) != 2 {
		t.Fatalf("got %d hunks, want 2", len(p.Hunks))
	}
	want := "## file: 'dir/f.txt'\n" +
		"\n" +
		"@@ -30,3 +30,3 @@\n" +
		"__new hunk__\n" +
		"30  line 30\n" +
		"31 +thirty-one\n" +
		"32  line 32\n" +
		"__old hunk__\n" +
		" line 30\n" +
		"-line 31\n" +
		" line 32\n"
	if got := p.RenderHunks(p.Hunks[1:]); got != want {
		t.Errorf("RenderHunks(second) =\n%s\nwant\n%s", got, want)
	}
	full := p.Render()
	if !strings.HasSuffix(full, want[len("## file: 'dir/f.txt'\n"):]) || strings.Count(full, "@@ -") != 2 {
		t.Errorf("Render =\n%s", full)
	}
	if got := p.RenderHunks(nil); got != "" {
		t.Errorf("RenderHunks(nil) = %q", got)
	}
	// A hunk that adds nothing is skipped, even when a caller passes one.
	delOnly := Hunk{OldStart: 3, OldLines: 1, NewStart: 2, Lines: []Line{{Kind: '-', Text: "x", OldLine: 3}}}
	if got := p.RenderHunks([]Hunk{delOnly}); got != "" {
		t.Errorf("deletion-only hunk rendered as %q", got)
	}
}

func TestHashIgnoresPositionAndSection(t *testing.T) {
	base := lines(60, "line %d")
	cur := slices.Clone(base)
	cur[50] = "changed"
	before := Diff("f.go", text(base), text(cur), 3).Hunks
	shifted := slices.Insert(slices.Clone(cur), 2, "func inserted() {", "}", "", "x")
	after := Diff("f.go", text(base), text(shifted), 3).Hunks
	if len(before) != 1 || len(after) != 2 {
		t.Fatalf("hunks: %d before, %d after", len(before), len(after))
	}
	b, a := before[0], after[1]
	if a.NewStart != b.NewStart+4 || a.Section == b.Section {
		t.Fatalf("expected a hunk moved down 4 lines under a new section: %+v vs %+v", b, a)
	}
	if b.Hash() != a.Hash() {
		t.Errorf("hash changed when the hunk moved: %s vs %s", b.Hash(), a.Hash())
	}
	if len(b.Hash()) != 64 {
		t.Errorf("hash %q is not hex SHA-256", b.Hash())
	}
}

func TestHashDistinguishes(t *testing.T) {
	h := Hunk{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "b"}}}
	variants := []Hunk{
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '-', Text: "b"}}},       // kind
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "c"}}},       // text
		{Lines: []Line{{Kind: '+', Text: "b"}, {Kind: ' ', Text: "a"}}},       // order
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "b"}, {}}},   // extra line
		{Lines: []Line{{Kind: ' ', Text: "a+b"}}},                             // concatenation
		{Lines: []Line{{Kind: ' ', Text: "a\n+b"}}},                           // embedded newline
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "b "}}},      // trailing space
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "b"}}[:1]},   // missing line
		{Lines: []Line{{Kind: ' ', Text: ""}, {Kind: '+', Text: "ab"}}},       // moved text
		{Lines: []Line{{Kind: ' ', Text: "a"}, {Kind: '+', Text: "\tb"}}[1:]}, // subset
	}
	seen := map[string]int{h.Hash(): -1}
	for i, v := range variants {
		if j, dup := seen[v.Hash()]; dup {
			t.Errorf("variant %d has the same hash as %d", i, j)
		}
		seen[v.Hash()] = i
	}
	same := Hunk{OldStart: 99, OldLines: 1, NewStart: 7, NewLines: 2, Section: "func x()",
		Lines: []Line{{Kind: ' ', Text: "a", OldLine: 99, NewLine: 7}, {Kind: '+', Text: "b", NewLine: 8}}}
	if same.Hash() != h.Hash() {
		t.Error("positions or section changed the hash")
	}
}

// randomEdit applies a few random insertions, deletions and replacements
// to base. Lines come from a small alphabet so that repeats, the hard case
// for a diff, are common.
func randomEdit(r *rand.Rand, base []string) []string {
	cur := slices.Clone(base)
	for range 1 + r.IntN(5) {
		pos := r.IntN(len(cur) + 1)
		switch r.IntN(3) {
		case 0:
			n := 1 + r.IntN(4)
			ins := make([]string, n)
			for i := range ins {
				ins[i] = fmt.Sprintf("new %d", r.IntN(6))
			}
			cur = slices.Insert(cur, pos, ins...)
		case 1:
			if pos < len(cur) {
				cur = slices.Delete(cur, pos, min(len(cur), pos+1+r.IntN(3)))
			}
		case 2:
			if pos < len(cur) {
				cur[pos] = fmt.Sprintf("repl %d", r.IntN(6))
			}
		}
	}
	return cur
}

func randomLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("l%d", r.IntN(8))
	}
	return out
}

// TestApplyRandomEdits checks, for random edits, that every hunk of the
// diff (deletion-only ones included) applied to base gives current, that
// headers and numbers are consistent, that the reviewable hunks are exactly
// those adding something, and that the added lines agree with
// analysis/changes.
func TestApplyRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		base := randomLines(r, r.IntN(40))
		cur := randomEdit(r, base)
		ctx := r.IntN(5)
		bt, ct := text(base), text(cur)
		if r.IntN(4) == 0 {
			bt = strings.TrimSuffix(bt, "\n")
		}
		if r.IntN(4) == 0 {
			ct = strings.ReplaceAll(ct, "\n", "\r\n")
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkInvariants(t, bt, ct, ctx)
			all := allHunks("x.go", bt, ct, ctx)
			for k := 1; k < len(all); k++ {
				prev, h := all[k-1], all[k]
				// Separate hunks have their full context on the sides
				// facing each other and still do not touch; otherwise
				// they should have been one.
				if gap := oldFrom(h) - (oldFrom(prev) + prev.OldLines); gap <= 0 {
					t.Errorf("hunks %d and %d overlap or touch (gap %d)", k-1, k, gap)
				}
				if a, b := edgeContext(prev, false), edgeContext(h, true); a != ctx || b != ctx {
					t.Errorf("hunks %d and %d have %d and %d context lines between them, want %d", k-1, k, a, b, ctx)
				}
			}
			var kept []Hunk
			for _, h := range all {
				if len(h.Added()) > 0 {
					kept = append(kept, h)
				}
			}
			p := Diff("x.go", bt, ct, ctx)
			if len(p.Hunks) != len(kept) {
				t.Errorf("Diff kept %d hunks, want the %d that add lines", len(p.Hunks), len(kept))
			}
		})
		if t.Failed() {
			t.Logf("base %q\ncurrent %q\ncontext %d", bt, ct, ctx)
			return
		}
	}
}

// oldFrom returns the 0-based index of a hunk's first old line; a hunk with
// no old line starts after the line its OldStart names.
func oldFrom(h Hunk) int {
	if h.OldLines > 0 {
		return h.OldStart - 1
	}
	return h.OldStart
}

// edgeContext counts the context lines at the start or the end of a hunk.
func edgeContext(h Hunk, start bool) int {
	n := 0
	for i := range h.Lines {
		l := h.Lines[len(h.Lines)-1-i]
		if start {
			l = h.Lines[i]
		}
		if l.Kind != ' ' {
			break
		}
		n++
	}
	return n
}

// TestHashStableUnderShift edits the end of a file, then inserts lines far
// above the edit: the edit's hunk must keep its lines and hash and move down
// by the number of inserted lines.
func TestHashStableUnderShift(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		n := 40 + r.IntN(40)
		base := lines(n, "base line %d")
		// The edit stays in the last 15 lines, the insertion in the first
		// 10, which keeps them well over 2*context apart.
		cur := slices.Clone(base)
		tail := cur[n-15:]
		tail = randomEdit(r, tail)
		cur = append(cur[:n-15:n-15], tail...)
		before := Diff("x.go", text(base), text(cur), 3)
		if len(before.Hunks) == 0 {
			continue // the edit only deleted lines
		}
		k := 1 + r.IntN(6)
		ins := lines(k, "inserted %d")
		shifted := slices.Insert(slices.Clone(cur), r.IntN(10), ins...)
		after := Diff("x.go", text(base), text(shifted), 3)

		last := before.Hunks[len(before.Hunks)-1]
		moved := after.Hunks[len(after.Hunks)-1]
		if moved.Hash() != last.Hash() || moved.NewStart != last.NewStart+k || moved.OldStart != last.OldStart {
			t.Fatalf("case %d: hunk %+v became %+v after inserting %d lines above", i, last, moved, k)
		}
	}
}

// TestScatteredEditsAnchored is the case go-udiff's bounded search gets
// wrong on its own: a rename on every other line of a long file. The
// patience split must keep the patch to the renamed lines.
func TestScatteredEditsAnchored(t *testing.T) {
	base := lines(2000, "unique line %d")
	cur := slices.Clone(base)
	for i := 0; i < len(cur); i += 2 {
		cur[i] = strings.Replace(cur[i], "unique", "renamed", 1)
	}
	p := Diff("x.txt", text(base), text(cur), 0)
	if got := len(p.ChangedLines()); got != 1000 {
		t.Errorf("ChangedLines has %d lines, want the 1000 renamed ones", got)
	}
	checkInvariants(t, text(base), text(cur), 0)
}

func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 3)
	f.Add("", "new\nfile", 3)
	f.Add("x\r\ny\r\n", "x\ny\nz", 1)
	f.Add("a\rb\rc", "a\nb\nd\n", 0)
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n3\n4\n5\n6\n7\n8\nnine\n", 2)
	f.Fuzz(func(t *testing.T, base, current string, ctx int) {
		ctx = ctx % 8
		if ctx < 0 {
			ctx = -ctx
		}
		checkInvariants(t, base, current, ctx)
		p := Diff("x", base, current, ctx)
		if out := p.Render(); strings.ContainsRune(out, '\r') {
			t.Errorf("render has a carriage return: %q", out)
		}
	})
}

func BenchmarkDiffLargeFile(b *testing.B) {
	base := lines(20000, "\tstatement(%d)")
	cur := slices.Clone(base)
	for _, i := range []int{100, 5000, 5003, 12000, 19999} {
		cur[i] = "\tchanged()"
	}
	bt, ct := text(base), text(cur)
	b.ReportAllocs()
	for b.Loop() {
		_ = Diff("x.go", bt, ct, 3).Render()
	}
}
