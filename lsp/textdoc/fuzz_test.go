package textdoc

import (
	"errors"
	"math"
	"testing"
)

// fuzzPalette holds the insertions most likely to break position arithmetic,
// so that the fuzzer need not discover their encodings byte by byte.
var fuzzPalette = []string{
	"", "a", "\n", "\r", "\r\n", "😀", "日本語", "e\u0301", "🇫🇷",
	"\xff", "\xe6\x97", "\x97", "x\r\ny\rz\n", "\n😀\r",
}

// Bounds on the fuzzer's inputs; see FuzzApply.
const (
	maxFuzzText   = 1 << 10
	maxFuzzScript = 1 << 10
)

// script reads the fuzzer's bytes as a list of edits; past its end it reads
// zeros, so every input is a valid script.
type script struct{ b []byte }

func (s *script) done() bool { return len(s.b) == 0 }

func (s *script) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *script) literal() string {
	n := min(int(s.byte()%16), len(s.b))
	lit := string(s.b[:n])
	s.b = s.b[n:]
	return lit
}

// position reads a position in text. Small bytes give positions inside the
// text or just past a line's end, where most bugs hide; the rest are the
// first line past the end, a character past the end or a huge value.
func (s *script) position(text string, enc Encoding) Position {
	lb, cb := s.byte(), s.byte()
	lines := refSplit(text)
	line := uint32(int(lb) % (len(lines) + 1)) // len(lines) is out of range
	if lb == 255 {
		line = math.MaxUint32
	}
	units := 0
	if int(line) < len(lines) {
		units = refUnits(lines[line], enc)
	}
	char := uint32(int(cb) % (units + 2)) // units+1 is past the end
	if cb == 255 {
		char = math.MaxUint32
	}
	return Position{Line: line, Character: char}
}

// FuzzApply applies the edits a script describes with Document.Apply, with
// Store.Change and with the naive model of ref_test.go, and checks that they
// agree on the text, on which notifications are rejected and why, and on
// every position query.
//
// A script is a flags byte, then batches of changes. In the flags byte, bit 0
// selects UTF-8 and the bits above pick one of chunkConfigs (zero: every line
// its own chunk). A batch starts with a header byte: its low two bits give
// the number of changes minus one, and its top bit asks for a stale version,
// equal to the current one or, if bit 6 is also set, one less. Each change is
// an op byte, then two bytes for each end of its range, then its text: 7 in
// the op's low three bits replaces the whole document with a literal and
// reads no range, 4 to 6 read a palette index, 0 to 3 a literal. A literal is
// a length byte (modulo 16) followed by that many bytes.
func FuzzApply(f *testing.F) {
	f.Add("hello\nworld", []byte{0, 0, 0, 0, 1, 0, 3, 1, 'X'})
	f.Add("a😀b\r\n日本語", []byte{1, 1, 4, 0, 1, 0, 5, 5, 0, 1, 0, 1, 0, 2, 'x'})
	f.Fuzz(func(t *testing.T, text string, b []byte) {
		// Long inputs find nothing short ones cannot, but the model is
		// slow on them, and slow executions starve the fuzzer.
		text = text[:min(len(text), maxFuzzText)]
		s := &script{b: b[:min(len(b), maxFuzzScript)]}
		flags := s.byte()
		enc := UTF16
		if flags&1 == 1 {
			enc = UTF8
		}
		// Fuzz texts are small, so they are cut into tiny chunks unless
		// the script asks for the production sizes.
		cc := chunkConfigs[int(flags>>1)%len(chunkConfigs)]
		setChunkSizes(t, cc.target, cc.min)
		const uri = "file:///fuzz"
		doc := New(uri, 1, text)
		store := NewStore()
		store.Open(uri, 1, text)
		checkAgainstRef(t, doc)
		ref := text
		for batch := 0; !s.done() && batch < 32; batch++ {
			h := s.byte()
			version := doc.Version() + 1
			if h&0x80 != 0 {
				version = doc.Version() - int32(h>>6&1)
			}
			var changes []Change
			want, ok := ref, true
			for range 1 + int(h&3) {
				op := s.byte()
				var ch Change
				if op&7 == 7 {
					ch = Change{Text: s.literal()}
				} else {
					r := Range{Start: s.position(want, enc), End: s.position(want, enc)}
					ch = Change{Range: &r}
					if op&7 >= 4 {
						ch.Text = fuzzPalette[int(s.byte())%len(fuzzPalette)]
					} else {
						ch.Text = s.literal()
					}
				}
				changes = append(changes, ch)
				if ok {
					// Later positions are drawn from the text the
					// earlier changes leave, as a client would send them.
					if next, applied := refApply1(want, ch, enc); applied {
						want = next
					} else {
						ok = false
					}
				}
			}

			got, err := doc.Apply(version, changes, enc)
			stored, serr := store.Change(uri, version, changes, enc)
			switch {
			case version <= doc.Version():
				if !errors.Is(err, ErrVersion) || !errors.Is(serr, ErrVersion) {
					t.Fatalf("batch %d: version %d after %d: errors %v and %v, want ErrVersion", batch, version, doc.Version(), err, serr)
				}
			case !ok:
				if !errors.Is(err, ErrOutOfRange) || !errors.Is(serr, ErrOutOfRange) {
					t.Fatalf("batch %d: %+v on %q: errors %v and %v, want ErrOutOfRange", batch, changes, ref, err, serr)
				}
			default:
				if err != nil || serr != nil {
					t.Fatalf("batch %d: %+v on %q: errors %v and %v", batch, changes, ref, err, serr)
				}
				if got.Text() != want || stored.Text() != want {
					t.Fatalf("batch %d: %+v on %q: got %q and %q, want %q", batch, changes, ref, got.Text(), stored.Text(), want)
				}
				if got.Version() != version {
					t.Fatalf("batch %d: version %d, want %d", batch, got.Version(), version)
				}
				doc, ref = got, want
				checkAgainstRef(t, doc)
			}
			if err != nil && got != nil {
				t.Fatalf("batch %d: Apply returned a snapshot with error %v", batch, err)
			}
			if doc.Text() != ref {
				t.Fatalf("batch %d: snapshot changed to %q, want %q", batch, doc.Text(), ref)
			}
			if cur, _ := store.Get(uri); cur.Text() != ref || cur.Version() != doc.Version() {
				t.Fatalf("batch %d: store holds %q version %d, want %q version %d", batch, cur.Text(), cur.Version(), ref, doc.Version())
			}
		}
	})
}
