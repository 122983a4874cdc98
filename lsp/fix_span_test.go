package lsp

import (
	"testing"
	"unicode/utf8"

	"github.com/kodustech/kodyls/lsp/textdoc"
)

// TestFixEditKeepsWholeCharacters: the one edit a fix sends covers what
// differs between the buffer and the fixed text in whole characters, so
// that applying it gives the fixed text, even when the old and new
// characters share bytes (é and è share their first byte, 😀 and 😁 their
// first three) or the change ends inside a CRLF.
func TestFixEditKeepsWholeCharacters(t *testing.T) {
	for _, c := range []struct{ text, next string }{
		{"\t// café\n\treturn 42\n", "\t// cafè\n\treturn \"42\"\n"},
		{"x := \"😀\"\n", "x := \"😁\"\n"},
		{"é!\n", "©!\n"},
		{"a\r\nb\r\n", "a\nb\r\n"},
		{"a\r\nb\r\n", "a\r\r\nb\r\n"},
		{"ã\r\nõ\r\n", "õ\r\nã\r\n"},
		{"漢字\n", "漢子\n"},
		{"same\n", "same\n"},
	} {
		pre, suf := changedSpan(c.text, c.next)
		newText := c.next[pre : len(c.next)-suf]
		if !utf8.ValidString(newText) {
			t.Errorf("%q → %q: the edit's text %q splits a character", c.text, c.next, newText)
		}
		// Apply the edit as an editor does: through its positions.
		doc := textdoc.New("file:///x", 1, c.text)
		for _, enc := range []textdoc.Encoding{textdoc.UTF16, textdoc.UTF8} {
			a, b := doc.PositionAt(pre, enc), doc.PositionAt(len(c.text)-suf, enc)
			start, err1 := doc.Offset(a, enc)
			end, err2 := doc.Offset(b, enc)
			if err1 != nil || err2 != nil {
				t.Fatalf("%q: positions %v %v: %v %v", c.text, a, b, err1, err2)
			}
			if got := c.text[:start] + newText + c.text[end:]; got != c.next {
				t.Errorf("%q → %q (encoding %d): applying the edit %v-%v %q gives %q", c.text, c.next, enc, a, b, newText, got)
			}
		}
	}
}
