package anchor

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// apply applies edits to text, each replacing [Start, End) with the next
// len bytes of fill. It is the test's model of the editor.
func apply(text string, edits []Edit, fill []string) string {
	for i, e := range edits {
		text = text[:e.Start] + fill[i] + text[e.End:]
	}
	return text
}

func TestTrack(t *testing.T) {
	// The span is `fmt.Println("b")` on 0-based line 15 of goSrc.
	start := strings.Index(goSrc, `fmt.Println("b")`)
	end := start + len(`fmt.Println("b")`)
	lineStart := strings.LastIndexByte(goSrc[:start], '\n') + 1
	nextLine := end + 1
	type edit struct {
		start, end int
		insert     string
	}
	tests := []struct {
		name     string
		edits    []edit
		ok       bool
		wantLine int // StartLine after Lines on the new text
	}{
		{"no edits", nil, true, 15},
		{"line inserted above", []edit{{0, 0, "// doc\n"}}, true, 16},
		{"two lines inserted above", []edit{{lineStart, lineStart, "x := 1\n\ty := 2\n\t"}}, true, 17},
		{"line deleted above", []edit{{0, len("package demo\n"), ""}}, true, 14},
		{"replacement above", []edit{{strings.Index(goSrc, "func B"), strings.Index(goSrc, "func B") + 6, "func Bee"}}, true, 15},
		{"typing below", []edit{{nextLine, nextLine, "\tfoo()\n"}}, true, 15},
		{"deleting the rest of the file below", []edit{{nextLine, len(goSrc), ""}}, true, 15},
		{"insertion at Start shifts", []edit{{start, start, "x := "}}, true, 15},
		{"newline typed at Start shifts", []edit{{start, start, "\n\t"}}, true, 16},
		{"insertion at End leaves", []edit{{end, end, " // why"}}, true, 15},
		{"newline typed at End leaves", []edit{{end, end, "\n\t"}}, true, 15},
		{"insertion inside invalidates", []edit{{start + 3, start + 3, "x"}}, false, 0},
		{"deletion inside invalidates", []edit{{start + 3, start + 4, ""}}, false, 0},
		{"replacement overlapping Start invalidates", []edit{{start - 2, start + 2, "ab"}}, false, 0},
		{"replacement overlapping End invalidates", []edit{{end - 1, end + 1, ""}}, false, 0},
		{"deletion ending at Start invalidates", []edit{{lineStart, start, ""}}, false, 0},
		{"deletion starting at End invalidates", []edit{{end, end + 1, ""}}, false, 0},
		{"deleting the whole span invalidates", []edit{{start, end, ""}}, false, 0},
		{"deleting the whole line invalidates", []edit{{lineStart, nextLine, ""}}, false, 0},
		{"replacing the span with itself invalidates", []edit{{start, end, `fmt.Println("b")`}}, false, 0},
		{"empty insertion is ignored", []edit{{start + 3, start + 3, ""}}, true, 15},
		{"invalidated by a later edit", []edit{
			{0, 0, "// a\n"},
			{start + 5 + 2, start + 5 + 2, "z"},
		}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s0 := Lines(goSrc, Span{Start: start, End: end})
			var edits []Edit
			var fill []string
			for _, e := range tt.edits {
				edits = append(edits, Edit{Start: e.start, End: e.end, NewLen: len(e.insert)})
				fill = append(fill, e.insert)
			}
			s, ok := Track(s0, edits)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (span %+v)", ok, tt.ok, s)
			}
			if !ok {
				if s != (Span{}) {
					t.Errorf("span = %+v, want zero", s)
				}
				return
			}
			text := apply(goSrc, edits, fill)
			if got := text[s.Start:s.End]; got != `fmt.Println("b")` {
				t.Fatalf("tracked text = %q", got)
			}
			if s.StartLine != s0.StartLine {
				t.Errorf("Track changed StartLine to %d", s.StartLine)
			}
			if l := Lines(text, s); l.StartLine != tt.wantLine || l.EndLine != tt.wantLine {
				t.Errorf("lines after Lines = %d-%d, want %d", l.StartLine, l.EndLine, tt.wantLine)
			}
		})
	}
}

// TestTrackSequence types a realistic burst of edits around a finding and
// checks the span after each prefix of it.
func TestTrackSequence(t *testing.T) {
	const code = `fmt.Println("b")`
	text := goSrc
	s := Lines(text, Span{Start: strings.Index(text, code), End: strings.Index(text, code) + len(code)})
	steps := []struct {
		name   string
		edit   func(text string, s Span) (Edit, string)
		wantSL int
	}{
		{"comment line above", func(text string, s Span) (Edit, string) { return Edit{0, 0, 5}, "// a\n" }, 16},
		{"call typed below", func(text string, s Span) (Edit, string) {
			p := s.End + 1
			return Edit{p, p, 9}, "\tmore()\n"
		}, 16},
		{"two blank lines above", func(text string, s Span) (Edit, string) { return Edit{5, 5, 2}, "\n\n" }, 18},
		{"comment line removed", func(text string, s Span) (Edit, string) { return Edit{0, 5, 0}, "" }, 17},
		{"line split before the code", func(text string, s Span) (Edit, string) { return Edit{s.Start, s.Start, 2}, "\n\t" }, 18},
		{"word renamed above", func(text string, s Span) (Edit, string) {
			p := strings.Index(text, "func B")
			return Edit{p + 5, p + 6, 3}, "Bee"
		}, 18},
		{"comment typed after the code", func(text string, s Span) (Edit, string) { return Edit{s.End, s.End, 5}, " // x" }, 18},
		{"everything after deleted", func(text string, s Span) (Edit, string) { return Edit{s.End + 5, len(text), 0}, "" }, 18},
	}
	for _, st := range steps {
		e, ins := st.edit(text, s)
		var ok bool
		s, ok = Track(s, []Edit{e})
		if !ok {
			t.Fatalf("%s: invalidated", st.name)
		}
		text = text[:e.Start] + ins + text[e.End:]
		s = Lines(text, s)
		if text[s.Start:s.End] != code || s.StartLine != st.wantSL || s.EndLine != st.wantSL {
			t.Fatalf("%s: span %+v holds %q", st.name, s, text[s.Start:s.End])
		}
	}
	e := Edit{s.Start + 3, s.Start + 4, 1}
	if _, ok := Track(s, []Edit{e}); ok {
		t.Fatal("a typo fixed inside the code did not invalidate it")
	}
}

func TestTrackEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		s     Span
		edits []Edit
		want  Span
		ok    bool
	}{
		{"empty span, insertion at it shifts", Span{Start: 5, End: 5}, []Edit{{5, 5, 3}}, Span{Start: 8, End: 8}, true},
		{"empty span, deletion touching it invalidates", Span{Start: 5, End: 5}, []Edit{{3, 5, 0}}, Span{}, false},
		{"negative edit", Span{Start: 5, End: 9}, []Edit{{-1, 0, 3}}, Span{}, false},
		{"reversed edit", Span{Start: 5, End: 9}, []Edit{{3, 2, 0}}, Span{}, false},
		{"negative NewLen", Span{Start: 5, End: 9}, []Edit{{0, 1, -4}}, Span{}, false},
		{"reversed span", Span{Start: 9, End: 5}, nil, Span{}, false},
		{"negative span", Span{Start: -1, End: 5}, nil, Span{}, false},
		{"overflow", Span{Start: 5, End: 9}, []Edit{{0, 0, math.MaxInt}}, Span{}, false},
		{"huge deletion before", Span{Start: 50, End: 60}, []Edit{{0, 40, 0}}, Span{Start: 10, End: 20}, true},
		{"edit far after", Span{Start: 5, End: 9}, []Edit{{math.MaxInt - 1, math.MaxInt, 7}}, Span{Start: 5, End: 9}, true},
		{"lines kept", Span{Start: 5, End: 9, StartLine: 2, EndLine: 3}, []Edit{{0, 0, 1}}, Span{Start: 6, End: 10, StartLine: 2, EndLine: 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Track(tt.s, tt.edits)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Track = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestTrackRandom compares Track with a reference that edits a copy of the
// text holding sentinel markers around the span: '[' before its first byte
// and ']' after its last. The reference applies each edit to the marked
// text, deciding on which side of a marker an insertion at a boundary goes
// by the documented rule, and reports the span invalid as soon as an edit
// would touch a marker or insert between them. When both say the span
// survived, the markers give its offsets and lines, and its text must be
// unchanged.
func TestTrackRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab \n\t"
	randText := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	survived, killed := 0, 0
	for iter := 0; iter < 20000; iter++ {
		text := randText(rng.IntN(60))
		a := rng.IntN(len(text) + 1)
		b := a + rng.IntN(len(text)-a+1)
		s0 := Lines(text, Span{Start: a, End: b})
		marked := text[:a] + "[" + text[a:b] + "]" + text[b:]
		cur := text
		var edits []Edit
		refOK := true
		for n := rng.IntN(8); n > 0; n-- {
			// Bias towards small edits near the span so that boundaries
			// are hit often.
			es := rng.IntN(len(cur) + 1)
			if rng.IntN(3) == 0 {
				open := strings.IndexByte(marked, '[')
				close := strings.IndexByte(marked, ']') - 1
				if rng.IntN(2) == 0 {
					es = open
				} else {
					es = close
				}
				es = min(max(es+rng.IntN(3)-1, 0), len(cur))
			}
			ee := es
			if rng.IntN(2) == 0 {
				ee = es + rng.IntN(min(4, len(cur)-es)+1)
			}
			ins := randText(rng.IntN(4))
			e := Edit{Start: es, End: ee, NewLen: len(ins)}
			edits = append(edits, e)
			cur = cur[:es] + ins + cur[ee:]
			if !refOK {
				continue
			}
			// Marked offsets: real offset p maps to p, p+1 (after '[') or
			// p+2 (after ']').
			open := strings.IndexByte(marked, '[')
			close := strings.IndexByte(marked, ']') - 1 // real offset of ']'
			toMarked := func(p int, afterMarkersAt bool) int {
				m := p
				if p > open || p == open && afterMarkersAt {
					m++
				}
				if p > close || p == close && afterMarkersAt {
					m++
				}
				return m
			}
			switch {
			case es == ee && ins == "":
				// nothing
			case es == ee && es == open:
				m := toMarked(es, false) // before '['
				marked = marked[:m] + ins + marked[m:]
			case es == ee && es == close:
				m := toMarked(es, true) // after ']'
				marked = marked[:m] + ins + marked[m:]
			case es == ee && es > open && es < close:
				refOK = false
			case es == ee:
				m := toMarked(es, false)
				marked = marked[:m] + ins + marked[m:]
			case ee < open || es > close:
				ms, me := toMarked(es, false), toMarked(ee, false)
				marked = marked[:ms] + ins + marked[me:]
			default:
				refOK = false
			}
		}
		got, ok := Track(s0, edits)
		if ok != refOK {
			t.Fatalf("text %q span [%d,%d) edits %v: Track ok = %v, reference %v", text, a, b, edits, ok, refOK)
		}
		if !ok {
			killed++
			continue
		}
		survived++
		if strings.NewReplacer("[", "", "]", "").Replace(marked) != cur {
			t.Fatalf("reference drifted: %q vs %q", marked, cur)
		}
		open := strings.IndexByte(marked, '[')
		close := strings.IndexByte(marked, ']') - 1
		if got.Start != open || got.End != close {
			t.Fatalf("text %q span [%d,%d) edits %v: Track = [%d,%d), markers [%d,%d)", text, a, b, edits, got.Start, got.End, open, close)
		}
		if cur[got.Start:got.End] != text[a:b] {
			t.Fatalf("span text changed: %q -> %q", text[a:b], cur[got.Start:got.End])
		}
		l := Lines(cur, got)
		wantSL := strings.Count(marked[:open], "\n")
		wantEL := wantSL
		if close > open {
			// marked[close] is the span's last byte: '[' precedes it.
			wantEL = strings.Count(marked[:close], "\n")
		}
		if l.StartLine != wantSL || l.EndLine != wantEL {
			t.Fatalf("Lines = %d-%d, markers say %d-%d (%q)", l.StartLine, l.EndLine, wantSL, wantEL, marked)
		}
	}
	if survived < 2000 || killed < 2000 {
		t.Errorf("poor coverage: %d survived, %d invalidated", survived, killed)
	}
}

func TestLines(t *testing.T) {
	text := "ab\ncd\r\n\nef"
	tests := []struct {
		in   Span
		want Span
	}{
		{Span{Start: 0, End: 2}, Span{Start: 0, End: 2, StartLine: 0, EndLine: 0}},
		{Span{Start: 0, End: 3}, Span{Start: 0, End: 3, StartLine: 0, EndLine: 0}}, // ends after '\n'
		{Span{Start: 0, End: 4}, Span{Start: 0, End: 4, StartLine: 0, EndLine: 1}},
		{Span{Start: 3, End: 3}, Span{Start: 3, End: 3, StartLine: 1, EndLine: 1}},
		{Span{Start: 8, End: 10}, Span{Start: 8, End: 10, StartLine: 3, EndLine: 3}},
		{Span{Start: 10, End: 10}, Span{Start: 10, End: 10, StartLine: 3, EndLine: 3}},
		{Span{Start: -5, End: 99, StartLine: 7}, Span{Start: 0, End: 10, StartLine: 0, EndLine: 3}},
		{Span{Start: 6, End: 2}, Span{Start: 6, End: 6, StartLine: 1, EndLine: 1}},
	}
	for _, tt := range tests {
		if got := Lines(text, tt.in); got != tt.want {
			t.Errorf("Lines(%+v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
