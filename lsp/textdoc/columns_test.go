package textdoc

import (
	"math/rand/v2"
	"testing"
)

// TestColumnsAgreeWithPositionAt: the line cursor gives the character
// PositionAt gives, for offsets asked in order, out of order, inside
// multi-byte characters and past the line's end, in both encodings.
func TestColumnsAgreeWithPositionAt(t *testing.T) {
	text := "first\n" + "a😀b é漢\tx😀😀 end — ok\r\n" + "last"
	d := New("file:///x", 1, text)
	line, start := 1, d.LineStart(1)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []Encoding{UTF16, UTF8} {
		c := d.Columns(line, enc)
		offs := make([]int, 200)
		for i := range offs {
			offs[i] = rng.IntN(len(d.Line(line)) + 4)
		}
		// In order (as a file's violations come), then in any order.
		for pass := range 2 {
			if pass == 0 {
				for i := 1; i < len(offs); i++ {
					for j := i; j > 0 && offs[j] < offs[j-1]; j-- {
						offs[j], offs[j-1] = offs[j-1], offs[j]
					}
				}
			} else {
				rng.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
			}
			for i, off := range offs {
				want := d.PositionAt(start+min(off, len(d.Line(line))), enc)
				if got := c.Char(off); want.Line != uint32(line) || got != want.Character {
					t.Fatalf("encoding %d, offset %d: Char %d, PositionAt %+v", enc, off, got, want)
				}
				end := offs[(i+1)%len(offs)]
				wantEnd := d.PositionAt(start+min(end, len(d.Line(line))), enc).Character
				w := c.Width(off, end)
				if end >= off && want.Character+w != wantEnd || end < off && w != 0 {
					t.Fatalf("encoding %d: Width(%d, %d) = %d, positions %d and %d", enc, off, end, w, want.Character, wantEnd)
				}
			}
		}
	}
}
