package textdoc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestEncoding(t *testing.T) {
	tests := []struct {
		s    string
		enc  Encoding
		ok   bool
		back string
	}{
		{"utf-16", UTF16, true, "utf-16"},
		{"utf-8", UTF8, true, "utf-8"},
		{"utf-32", UTF16, false, "utf-16"},
		{"UTF-8", UTF16, false, "utf-16"},
		{"", UTF16, false, "utf-16"},
	}
	for _, tt := range tests {
		enc, ok := ParseEncoding(tt.s)
		if enc != tt.enc || ok != tt.ok {
			t.Errorf("ParseEncoding(%q) = %v, %v, want %v, %v", tt.s, enc, ok, tt.enc, tt.ok)
		}
		if got := enc.String(); got != tt.back {
			t.Errorf("%d.String() = %q, want %q", enc, got, tt.back)
		}
	}
	var zero Encoding
	if zero != UTF16 {
		t.Errorf("zero Encoding = %v, want utf-16", zero)
	}
	if got := Encoding(7).String(); got != "Encoding(7)" {
		t.Errorf("Encoding(7).String() = %q", got)
	}
}

func TestLines(t *testing.T) { forEachChunkConfig(t, testLines) }

func testLines(t *testing.T) {
	tests := []struct {
		text   string
		lines  []string
		starts []int
	}{
		{"", []string{""}, []int{0}},
		{"a", []string{"a"}, []int{0}},
		{"a\nb", []string{"a", "b"}, []int{0, 2}},
		{"a\nb\n", []string{"a", "b", ""}, []int{0, 2, 4}},
		{"a\r\nb\r\n", []string{"a", "b", ""}, []int{0, 3, 6}},
		{"a\rb\rc", []string{"a", "b", "c"}, []int{0, 2, 4}},
		{"\n\n", []string{"", "", ""}, []int{0, 1, 2}},
		{"\r\r\n\n", []string{"", "", "", ""}, []int{0, 1, 3, 4}},
		{"\n\r", []string{"", "", ""}, []int{0, 1, 2}},
		{"日本\r\n😀\rx\ny", []string{"日本", "😀", "x", "y"}, []int{0, 8, 13, 15}},
		{"\xff\r\xe6\x97", []string{"\xff", "\xe6\x97"}, []int{0, 2}},
	}
	for _, tt := range tests {
		d := New("file:///t", 1, tt.text)
		var lines []string
		var starts []int
		for i := range d.LineCount() {
			lines = append(lines, d.Line(i))
			starts = append(starts, d.LineStart(i))
		}
		if !slices.Equal(lines, tt.lines) || !slices.Equal(starts, tt.starts) {
			t.Errorf("%q: lines %q at %v, want %q at %v", tt.text, lines, starts, tt.lines, tt.starts)
		}
		if got := d.Line(d.LineCount()); got != "" {
			t.Errorf("%q: Line past the end = %q", tt.text, got)
		}
		if got := d.LineStart(-1); got != -1 {
			t.Errorf("%q: LineStart(-1) = %d", tt.text, got)
		}
		checkAgainstRef(t, d)
	}
}

func TestOffset(t *testing.T) { forEachChunkConfig(t, testOffset) }

func testOffset(t *testing.T) {
	const text = "a😀b\n日本語\ne\u0301x\r\n\xffz\n"
	// Byte layout: line 0 "a😀b" at 0 (a=0, 😀=1..4, b=5), "\n" at 6;
	// line 1 "日本語" at 7 (3 bytes each), "\n" at 16; line 2 "éx" with a
	// combining acute at 17 (e=17, U+0301=18..19, x=20), "\r\n" at 21;
	// line 3 "\xffz" at 23, "\n" at 25; line 4 "" at 26.
	tests := []struct {
		enc     Encoding
		line    uint32
		char    uint32
		want    int
		wantErr bool
	}{
		{UTF16, 0, 0, 0, false},
		{UTF16, 0, 1, 1, false},
		{UTF16, 0, 2, 0, true}, // between the surrogates of 😀
		{UTF16, 0, 3, 5, false},
		{UTF16, 0, 4, 6, false},
		{UTF16, 0, 5, 6, false}, // clamped
		{UTF8, 0, 1, 1, false},
		{UTF8, 0, 2, 0, true},
		{UTF8, 0, 4, 0, true},
		{UTF8, 0, 5, 5, false},
		{UTF8, 0, 99, 6, false},
		{UTF16, 1, 1, 10, false},
		{UTF16, 1, 3, 16, false},
		{UTF8, 1, 3, 10, false},
		{UTF8, 1, 4, 0, true},
		{UTF16, 2, 1, 18, false}, // the combining mark is its own code point
		{UTF16, 2, 2, 20, false},
		{UTF16, 2, 3, 21, false},
		{UTF16, 2, 4, 21, false}, // clamped before the CRLF
		{UTF8, 2, 2, 0, true},
		{UTF8, 2, 3, 20, false},
		{UTF16, 3, 1, 24, false}, // an invalid byte is one unit
		{UTF8, 3, 1, 24, false},
		{UTF16, 4, 0, 26, false},
		{UTF16, 4, 7, 26, false},
		{UTF16, 5, 0, 0, true},
		{UTF8, math.MaxUint32, 0, 0, true},
		{UTF16, 0, math.MaxUint32, 6, false},
	}
	d := New("file:///t", 1, text)
	for _, tt := range tests {
		p := Position{Line: tt.line, Character: tt.char}
		got, err := d.Offset(p, tt.enc)
		if tt.wantErr {
			if !errors.Is(err, ErrOutOfRange) {
				t.Errorf("Offset(%s, %s) = %d, %v, want ErrOutOfRange", p, tt.enc, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Offset(%s, %s) = %d, %v, want %d", p, tt.enc, got, err, tt.want)
		}
	}
	checkAgainstRef(t, d)
}

// TestInvalidUTF8 checks that malformed text counts one unit per invalid
// byte in both encodings, never panics, and never lets a position split a
// valid character next to invalid bytes.
func TestInvalidUTF8(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		char  uint32 // a UTF-16 position on line 0
		off   int    // its byte offset
		units int    // UTF-16 length of line 0
	}{
		{"stray continuation bytes", "\x80\x80\x80\x80x", 4, 4, 5},
		{"continuations after ascii", "a\x80\x80\x80\x80", 5, 5, 5},
		{"truncated emoji", "\xf0\x9f\x98!", 3, 3, 4},
		{"encoded surrogate", "\xed\xa0\x80😀", 3, 3, 5},
		{"emoji then stray continuation", "😀\x80\x80", 3, 5, 4},
		{"overlong encoding", "\xc0\xaf/", 2, 2, 3},
		{"lone lead bytes", "\xe6\xf0\xc3", 2, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("file:///t", 1, tt.text)
			p := Position{Character: tt.char}
			if got, err := d.Offset(p, UTF16); err != nil || got != tt.off {
				t.Errorf("Offset(%s) = %d, %v, want %d", p, got, err, tt.off)
			}
			if got := d.PositionAt(len(tt.text), UTF16); got.Character != uint32(tt.units) {
				t.Errorf("PositionAt(end) = %s, want 0:%d", got, tt.units)
			}
			checkAgainstRef(t, d)
		})
	}
}

func TestPositionAt(t *testing.T) { forEachChunkConfig(t, testPositionAt) }

func testPositionAt(t *testing.T) {
	const text = "a😀b\r\n日本語"
	tests := []struct {
		off  int
		enc  Encoding
		want Position
	}{
		{0, UTF16, Position{0, 0}},
		{1, UTF16, Position{0, 1}},
		{3, UTF16, Position{0, 1}}, // inside 😀: its start
		{5, UTF16, Position{0, 3}},
		{5, UTF8, Position{0, 5}},
		{6, UTF16, Position{0, 4}},
		{7, UTF16, Position{0, 4}}, // between \r and \n: end of line
		{8, UTF16, Position{1, 0}},
		{11, UTF16, Position{1, 1}},
		{12, UTF8, Position{1, 3}},
		{17, UTF16, Position{1, 3}},
		{17, UTF8, Position{1, 9}},
		{100, UTF16, Position{1, 3}},
		{-5, UTF8, Position{0, 0}},
	}
	d := New("file:///t", 1, text)
	for _, tt := range tests {
		if got := d.PositionAt(tt.off, tt.enc); got != tt.want {
			t.Errorf("PositionAt(%d, %s) = %s, want %s", tt.off, tt.enc, got, tt.want)
		}
	}
}

// forEachChunkConfig runs test under each of chunkConfigs.
func forEachChunkConfig(t *testing.T, test func(*testing.T)) {
	for _, cc := range chunkConfigs {
		t.Run(cc.name, func(t *testing.T) {
			setChunkSizes(t, cc.target, cc.min)
			test(t)
		})
	}
}

// rng is shorthand for a change's range.
func rng(sl, sc, el, ec uint32) *Range {
	return &Range{Start: Position{sl, sc}, End: Position{el, ec}}
}

func TestApply(t *testing.T) { forEachChunkConfig(t, testApply) }

func testApply(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		enc     Encoding
		changes []Change
		want    string // ignored when wantErr
		wantErr bool
	}{
		{"insert after emoji utf-16", "a😀b", UTF16, []Change{{rng(0, 3, 0, 3), "X"}}, "a😀Xb", false},
		{"insert after emoji utf-8", "a😀b", UTF8, []Change{{rng(0, 5, 0, 5), "X"}}, "a😀Xb", false},
		{"replace emoji utf-16", "a😀b", UTF16, []Change{{rng(0, 1, 0, 3), "🎉"}}, "a🎉b", false},
		{"replace emoji utf-8", "a😀b", UTF8, []Change{{rng(0, 1, 0, 5), "🎉"}}, "a🎉b", false},
		{"inside emoji utf-16", "a😀b", UTF16, []Change{{rng(0, 2, 0, 2), "X"}}, "", true},
		{"inside emoji utf-8", "a😀b", UTF8, []Change{{rng(0, 3, 0, 3), "X"}}, "", true},
		{"range end inside emoji", "a😀b", UTF16, []Change{{rng(0, 0, 0, 2), ""}}, "", true},
		{"flag emoji of two pairs", "🇫🇷!", UTF16, []Change{{rng(0, 2, 0, 4), ""}}, "🇫!", false},
		{"cjk utf-16", "日本語", UTF16, []Change{{rng(0, 1, 0, 2), "の"}}, "日の語", false},
		{"cjk utf-8", "日本語", UTF8, []Change{{rng(0, 3, 0, 6), "の"}}, "日の語", false},
		{"cjk inside rune utf-8", "日本語", UTF8, []Change{{rng(0, 4, 0, 6), ""}}, "", true},
		{"combining utf-16", "e\u0301t\u00e9", UTF16, []Change{{rng(0, 1, 0, 2), ""}}, "eté", false},
		{"combining utf-8", "e\u0301t\u00e9", UTF8, []Change{{rng(0, 1, 0, 3), ""}}, "eté", false},
		{"multi change in order", "hello world", UTF16, []Change{
			{rng(0, 0, 0, 5), "goodbye"},   // "goodbye world"
			{rng(0, 8, 0, 13), "moon"},     // positions refer to the text after the first change
			{rng(0, 12, 0, 12), "\nagain"}, // "goodbye moon\nagain"
			{rng(1, 0, 1, 1), "A"},
		}, "goodbye moon\nAgain", false},
		{"whole document", "old\ntext", UTF16, []Change{{nil, "new 😀"}}, "new 😀", false},
		{"whole then ranged", "old", UTF16, []Change{{nil, "ab\ncd"}, {rng(1, 1, 1, 1), "X"}}, "ab\ncXd", false},
		{"ranged then whole", "old", UTF16, []Change{{rng(0, 0, 0, 3), "x"}, {nil, "final"}}, "final", false},
		{"crlf insert", "a\r\nb\r\nc", UTF16, []Change{{rng(1, 1, 1, 1), "X"}}, "a\r\nbX\r\nc", false},
		{"crlf clamp stays before terminator", "ab\r\ncd", UTF16, []Change{{rng(0, 9, 0, 9), "X"}}, "abX\r\ncd", false},
		{"crlf delete terminator", "ab\r\ncd", UTF16, []Change{{rng(0, 2, 1, 0), ""}}, "abcd", false},
		{"crlf new line", "ab\r\ncd", UTF16, []Change{{rng(1, 1, 1, 1), "\r\n"}}, "ab\r\nc\r\nd", false},
		{"cr joins following lf", "a\rb\nc", UTF16, []Change{{rng(1, 0, 1, 1), ""}, {rng(1, 0, 1, 0), "z"}}, "a\r\nzc", false},
		{"lone cr line", "a\rb", UTF16, []Change{{rng(1, 0, 1, 0), "x"}}, "a\rxb", false},
		{"insert at end", "ab\ncd", UTF16, []Change{{rng(1, 2, 1, 2), "!"}}, "ab\ncd!", false},
		{"insert at end clamped", "ab\ncd", UTF8, []Change{{rng(1, 40, 1, 40), "!"}}, "ab\ncd!", false},
		{"insert after final newline", "ab\n", UTF16, []Change{{rng(1, 0, 1, 0), "c"}}, "ab\nc", false},
		{"insert into empty", "", UTF16, []Change{{rng(0, 0, 0, 0), "x\ny"}}, "x\ny", false},
		{"delete across lines", "one\ntwo\nthree", UTF16, []Change{{rng(0, 1, 2, 2), ""}}, "oree", false},
		{"delete everything", "one\ntwo", UTF16, []Change{{rng(0, 0, 1, 3), ""}}, "", false},
		{"line past the end", "a\nb", UTF16, []Change{{rng(2, 0, 2, 0), "x"}}, "", true},
		{"start after end", "abc", UTF16, []Change{{rng(0, 2, 0, 1), "x"}}, "", true},
		{"start after end both clamped", "abc", UTF16, []Change{{rng(0, 9, 0, 8), "x"}}, "", true},
		{"third of three out of range", "abc", UTF16, []Change{
			{rng(0, 0, 0, 0), "1"},
			{rng(0, 0, 0, 0), "2"},
			{rng(5, 0, 5, 0), "3"},
		}, "", true},
		{"range valid only before an earlier change", "a\nb", UTF16, []Change{
			{rng(0, 1, 1, 0), ""}, // joins the lines
			{rng(1, 0, 1, 0), "x"},
		}, "", true},
		{"invalid utf-8 is one unit each", "\xff\xfe😀", UTF16, []Change{{rng(0, 1, 0, 2), ""}}, "\xff😀", false},
		{"truncated rune is one unit per byte", "\xe6\x97x", UTF16, []Change{{rng(0, 1, 0, 2), ""}}, "\xe6x", false},
		{"no changes", "abc", UTF16, nil, "abc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New("file:///t", 1, tt.text)
			got, err := d.Apply(2, tt.changes, tt.enc)
			if want, ok := refApply(tt.text, tt.changes, tt.enc); ok == tt.wantErr || (ok && want != tt.want) {
				t.Fatalf("the reference disagrees with the test: %q, %v", want, ok)
			}
			if d.Text() != tt.text || d.Version() != 1 {
				t.Fatalf("Apply modified the original snapshot: %q, version %d", d.Text(), d.Version())
			}
			if tt.wantErr {
				if !errors.Is(err, ErrOutOfRange) || got != nil {
					t.Fatalf("Apply = %v, %v, want ErrOutOfRange", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got.Text() != tt.want || got.Version() != 2 || got.URI() != "file:///t" {
				t.Fatalf("Apply = %q version %d, want %q version 2", got.Text(), got.Version(), tt.want)
			}
			checkAgainstRef(t, got)
		})
	}
}

func TestApplyVersion(t *testing.T) {
	d := New("file:///t", 5, "abc")
	for _, v := range []int32{5, 4, -1, math.MinInt32} {
		got, err := d.Apply(v, []Change{{rng(0, 0, 0, 0), "x"}}, UTF16)
		if !errors.Is(err, ErrVersion) || got != nil {
			t.Errorf("Apply(version %d) on version 5 = %v, %v, want ErrVersion", v, got, err)
		}
	}
	// A version check comes first, so a bad version with a bad range is
	// still reported as a version error.
	if _, err := d.Apply(5, []Change{{rng(9, 0, 9, 0), "x"}}, UTF16); !errors.Is(err, ErrVersion) {
		t.Errorf("Apply with bad version and range: %v, want ErrVersion", err)
	}
	got, err := d.Apply(6, nil, UTF16)
	if err != nil || got.Version() != 6 || got.Text() != "abc" {
		t.Errorf("Apply(version 6, no changes) = %v, %v", got, err)
	}
}

func TestApplyErrorDetail(t *testing.T) {
	d := New("file:///t", 1, "a😀\nb")
	_, err := d.Apply(2, []Change{{rng(0, 0, 0, 0), "x"}, {rng(0, 2, 0, 3), ""}}, UTF16)
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("err = %v, want ErrOutOfRange", err)
	}
	// The second change sees "xa😀", where 0:3 is inside the emoji.
	if msg := err.Error(); !strings.Contains(msg, "change 1") || !strings.Contains(msg, "0:3") {
		t.Errorf("error %q does not name the change and position", msg)
	}
}

// burstChars are the characters the burst test inserts: ASCII, two- and
// three-byte runes, a surrogate pair, a combining mark and the terminators,
// whose insertion can merge a "\r" and a "\n" into one CRLF.
var burstChars = []string{"a", "b", " ", "é", "日", "😀", "\u0301", "\n", "\r", "\r\n"}

// randomPosition returns a valid position in text at a character boundary.
func randomPosition(r *rand.Rand, text string, enc Encoding) (Position, refLine, int) {
	lines := refSplit(text)
	i := r.IntN(len(lines))
	l := lines[i]
	k := r.IntN(len(l.chars) + 1)
	u := 0
	for _, ch := range l.chars[:k] {
		u += refWidth(ch, enc)
	}
	return Position{Line: uint32(i), Character: uint32(u)}, l, k
}

func TestApplyBurst(t *testing.T) { forEachChunkConfig(t, testApplyBurst) }

func testApplyBurst(t *testing.T) {
	for _, enc := range []Encoding{UTF16, UTF8} {
		t.Run(enc.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(enc)))
			var sb strings.Builder
			for i := range 50 {
				fmt.Fprintf(&sb, "line %d: 日本 😀 text\n", i)
			}
			ref := sb.String()
			s := NewStore()
			s.Open("file:///burst", 0, ref)
			for step := range 2000 {
				p, l, k := randomPosition(r, ref, enc)
				var ch Change
				if r.IntN(10) < 6 {
					ch = Change{Range: &Range{p, p}, Text: burstChars[r.IntN(len(burstChars))]}
				} else {
					// Delete the character after p, or the line terminator
					// when p is at the end of the line.
					end := Position{Line: p.Line + 1}
					if k < len(l.chars) {
						end = Position{Line: p.Line, Character: p.Character + uint32(refWidth(l.chars[k], enc))}
					} else if l.term == "" {
						end = p // at the end of the text: an empty deletion
					}
					ch = Change{Range: &Range{p, end}}
				}
				want, ok := refApply1(ref, ch, enc)
				if !ok {
					t.Fatalf("step %d: the reference rejects %v", step, ch)
				}
				d, err := s.Change("file:///burst", int32(step+1), []Change{ch}, enc)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if d.Text() != want {
					t.Fatalf("step %d: applying %+v %q to %q: got %q, want %q", step, *ch.Range, ch.Text, ref, d.Text(), want)
				}
				ref = want
				checkStructure(t, d)
				if step%200 == 0 {
					checkAgainstRef(t, d)
				}
			}
			d, _ := s.Get("file:///burst")
			checkAgainstRef(t, d)
		})
	}
}

func TestSnapshotsAreIndependent(t *testing.T) { forEachChunkConfig(t, testSnapshotsAreIndependent) }

func testSnapshotsAreIndependent(t *testing.T) {
	d1 := New("file:///t", 1, "a\nb\nc")
	d2, err := d1.Apply(2, []Change{{rng(1, 0, 1, 1), "x\ny"}}, UTF16)
	if err != nil {
		t.Fatal(err)
	}
	d3, err := d2.Apply(3, []Change{{rng(0, 0, 3, 1), "z"}}, UTF16)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		d    *Document
		text string
	}{{d1, "a\nb\nc"}, {d2, "a\nx\ny\nc"}, {d3, "z"}} {
		if tt.d.Text() != tt.text {
			t.Errorf("version %d text = %q, want %q", tt.d.Version(), tt.d.Text(), tt.text)
		}
		checkAgainstRef(t, tt.d)
	}
}

// TestEditSharesUntouchedChunks checks what makes edits cheap on large
// documents: an edit rebuilds the chunk it falls in and shares the text of
// all others with the previous snapshot.
func TestEditSharesUntouchedChunks(t *testing.T) {
	d1 := New("file:///big", 1, benchText(10000))
	if len(d1.chunks) < 100 {
		t.Fatalf("a %d-byte document has only %d chunks", len(d1.Text()), len(d1.chunks))
	}
	d2, err := d1.Apply(2, []Change{{rng(5000, 3, 5000, 3), "x"}}, UTF16)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.chunks) != len(d1.chunks) {
		t.Fatalf("chunk count went from %d to %d", len(d1.chunks), len(d2.chunks))
	}
	rebuilt := 0
	for k := range d1.chunks {
		if unsafe.StringData(d1.chunks[k].text) != unsafe.StringData(d2.chunks[k].text) {
			rebuilt++
		}
	}
	if rebuilt != 1 {
		t.Errorf("%d chunks rebuilt for a one-character edit, want 1", rebuilt)
	}
	want := d1.Text()
	off := d1.LineStart(5000) + 3
	want = want[:off] + "x" + want[off:]
	if d2.Text() != want {
		t.Error("text after the edit differs")
	}
	checkStructure(t, d2)
}
