package textdoc

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Document is an immutable snapshot of an open buffer. Every method only
// reads (Text fills a cache under a sync.Once), so a *Document is safe to
// share across goroutines; edits produce a new Document via Apply.
//
// The text is held as a list of chunks of whole lines, each with the index of
// its line starts. An edit rebuilds only the chunks it touches and shares the
// others with the previous snapshot, so its cost depends on the size of a
// chunk rather than of the document: copying a flat 600 KB buffer for every
// keystroke costs hundreds of microseconds, mostly in allocation.
type Document struct {
	uri     string
	version int32
	// chunks is never empty and never mutated once the Document exists.
	chunks []chunk

	// text caches the concatenation of the chunks, built on first use.
	textOnce sync.Once
	text     string

	// edits are the byte edits that made this version from the previous
	// one, in the order they were applied.
	edits []Edit
}

// Edit is one replacement in byte offsets: [Start, End) of the text before
// it became NewLen bytes.
type Edit struct {
	Start, End, NewLen int
}

// chunk is a run of whole lines of a document: it starts at a line start
// and, unless it is the last chunk, ends at one, so no line and no CRLF is
// ever split between two chunks. Only the sole chunk of an empty document
// is empty.
type chunk struct {
	text string
	// lines lists the starts of the lines in text, relative to text, so
	// lines[0] is 0. The last chunk also lists len(text) when text ends
	// with a line terminator or is empty, since the document's last,
	// empty line starts there; other chunks leave that start to the next
	// chunk.
	lines []int
	// byteStart and lineStart locate the chunk in the document: the byte
	// offset of text and the index of the line starting at lines[0].
	byteStart int
	lineStart int
}

// Chunk sizes in bytes. A span being rebuilt is cut into chunks of at least
// chunkTarget bytes (a chunk holding one longer line is longer), and one left
// shorter than chunkMin by deletions is merged into a neighbour so chunks do
// not fragment. Small enough that rebuilding one takes a few microseconds,
// large enough that the chunk list of a large file stays short, since every
// edit copies it. They are variables so tests can exercise tiny chunks.
var (
	chunkTarget = 4096
	chunkMin    = 1024
)

// New returns a snapshot of text at the given version.
func New(uri string, version int32, text string) *Document {
	d := &Document{uri: uri, version: version, chunks: buildChunks(nil, text, true)}
	locate(d.chunks, 0)
	d.textOnce.Do(func() { d.text = text })
	return d
}

// URI returns the document's URI, as the client sent it.
func (d *Document) URI() string { return d.uri }

// Version returns the client's version of this snapshot.
func (d *Document) Version() int32 { return d.version }

// Text returns the whole text. The first call on a snapshot made by an
// incremental edit costs a copy of the text; later calls are free.
func (d *Document) Text() string {
	d.textOnce.Do(func() {
		if len(d.chunks) == 1 {
			d.text = d.chunks[0].text
			return
		}
		var sb strings.Builder
		sb.Grow(size(d.chunks))
		for _, c := range d.chunks {
			sb.WriteString(c.text)
		}
		d.text = sb.String()
	})
	return d.text
}

// LineCount returns the number of lines. The text after the last terminator
// is a line even when empty, so "a\nb" and "a\n" have 2 lines and "" has 1.
func (d *Document) LineCount() int { return lineCount(d.chunks) }

// Line returns line i without its terminator, or "" if there is no line i.
func (d *Document) Line(i int) string {
	if i < 0 || i >= lineCount(d.chunks) {
		return ""
	}
	c, j := lineChunk(d.chunks, i)
	return c.text[c.lines[j]:contentEnd(c.text, c.lines, j)]
}

// LineStart returns the byte offset at which line i starts, or -1 if there is
// no line i.
func (d *Document) LineStart(i int) int {
	if i < 0 || i >= lineCount(d.chunks) {
		return -1
	}
	c, j := lineChunk(d.chunks, i)
	return c.byteStart + c.lines[j]
}

// Offset converts p to a byte offset into Text. A character past the end of
// its line means the end of the line, as the LSP specifies, but a line past
// the last one, or a character that falls inside a character taking several
// units (half of a UTF-16 surrogate pair, or the middle of a multi-byte UTF-8
// sequence), is an error wrapping ErrOutOfRange: such a position cannot have
// come from a client that agrees with us on the text.
func (d *Document) Offset(p Position, enc Encoding) (int, error) {
	return offset(d.chunks, p, enc)
}

// PositionAt converts a byte offset into a position. Offsets are clamped to
// the text; an offset inside a line terminator maps to the end of the line,
// and one inside a multi-byte character to the start of that character, so
// the result is always a position Offset accepts.
func (d *Document) PositionAt(off int, enc Encoding) Position {
	off = min(max(off, 0), size(d.chunks))
	c := &d.chunks[byteChunk(d.chunks, off)]
	rel := off - c.byteStart
	// The line is the last one starting at or before off.
	j := sort.Search(len(c.lines), func(j int) bool { return c.lines[j] > rel }) - 1
	line := c.text[c.lines[j]:contentEnd(c.text, c.lines, j)]
	n := min(rel-c.lines[j], len(line))
	for n > 0 && !isBoundary(line, n) {
		n--
	}
	char := n
	if enc != UTF8 {
		char = utf16Len(line[:n])
	}
	return Position{Line: uint32(c.lineStart + j), Character: uint32(char)}
}

// Columns converts byte offsets within one line to characters, walking
// on from the offset it converted last: the places of many matches on one
// long line, asked in order, cost one pass over the line rather than one
// per match. An offset before the last one starts again from the line's
// start. Offsets are clamped and moved to character boundaries as
// PositionAt does.
type Columns struct {
	line     string
	enc      Encoding
	at, char int
}

// Columns returns a converter of byte offsets within line i.
func (d *Document) Columns(i int, enc Encoding) *Columns {
	return &Columns{line: d.Line(i), enc: enc}
}

// Char returns the character of the byte offset off within the line.
func (c *Columns) Char(off int) uint32 {
	n := c.boundary(off)
	if c.enc == UTF8 {
		return uint32(n)
	}
	if n < c.at {
		c.at, c.char = 0, 0
	}
	c.char += utf16Len(c.line[c.at:n])
	c.at = n
	return uint32(c.char)
}

// Width returns how many characters the bytes from..to of the line span,
// without moving on: Char(to) - Char(from), whatever was asked before.
func (c *Columns) Width(from, to int) uint32 {
	a, b := c.boundary(from), c.boundary(to)
	if b <= a {
		return 0
	}
	if c.enc == UTF8 {
		return uint32(b - a)
	}
	return uint32(utf16Len(c.line[a:b]))
}

func (c *Columns) boundary(off int) int {
	n := min(max(off, 0), len(c.line))
	for n > 0 && !isBoundary(c.line, n) {
		n--
	}
	return n
}

// Apply returns a new snapshot at version with changes applied in order, each
// change's range referring to the text left by the previous one, exactly as
// didChange specifies. It fails, changing nothing, if version is not greater
// than d's (ErrVersion) or if any change has a range outside the text it
// applies to (ErrOutOfRange): applying only part of a notification would put
// the server and the client out of step for good.
func (d *Document) Apply(version int32, changes []Change, enc Encoding) (*Document, error) {
	if version <= d.version {
		return nil, fmt.Errorf("version %d is not after %d: %w", version, d.version, ErrVersion)
	}
	chunks := d.chunks
	edits := make([]Edit, 0, len(changes))
	// Clients that only sync whole documents send the full text each time;
	// remembering it saves Text from joining the chunks again.
	whole, isWhole := "", false
	for i, ch := range changes {
		if ch.Range == nil {
			edits = append(edits, Edit{Start: 0, End: size(chunks), NewLen: len(ch.Text)})
			chunks = buildChunks(nil, ch.Text, true)
			locate(chunks, 0)
			whole, isWhole = ch.Text, true
			continue
		}
		r := *ch.Range
		if r.End.before(r.Start) {
			return nil, fmt.Errorf("change %d: range start %s after end %s: %w", i, r.Start, r.End, ErrOutOfRange)
		}
		start, err := offset(chunks, r.Start, enc)
		if err != nil {
			return nil, fmt.Errorf("change %d: range start: %w", i, err)
		}
		end, err := offset(chunks, r.End, enc)
		if err != nil {
			return nil, fmt.Errorf("change %d: range end: %w", i, err)
		}
		chunks = splice(chunks, start, end, ch.Text)
		edits = append(edits, Edit{Start: start, End: end, NewLen: len(ch.Text)})
		isWhole = false
	}
	nd := &Document{uri: d.uri, version: version, chunks: chunks, edits: edits}
	if isWhole {
		nd.textOnce.Do(func() { nd.text = whole })
	}
	return nd, nil
}

// size returns the length in bytes of the text held by chunks.
func size(chunks []chunk) int {
	last := &chunks[len(chunks)-1]
	return last.byteStart + len(last.text)
}

// lineCount returns the number of lines held by chunks.
func lineCount(chunks []chunk) int {
	last := &chunks[len(chunks)-1]
	return last.lineStart + len(last.lines)
}

// lineChunk returns the chunk holding line i, which must exist, and the
// index of the line within it.
func lineChunk(chunks []chunk, i int) (*chunk, int) {
	k := sort.Search(len(chunks), func(k int) bool { return chunks[k].lineStart > i }) - 1
	return &chunks[k], i - chunks[k].lineStart
}

// byteChunk returns the index of the chunk holding byte offset off, the last
// one starting at or before it.
func byteChunk(chunks []chunk, off int) int {
	return sort.Search(len(chunks), func(k int) bool { return chunks[k].byteStart > off }) - 1
}

// locate sets byteStart and lineStart of chunks[from:] from their
// predecessors.
func locate(chunks []chunk, from int) {
	for k := from; k < len(chunks); k++ {
		if k == 0 {
			chunks[k].byteStart, chunks[k].lineStart = 0, 0
			continue
		}
		prev := &chunks[k-1]
		chunks[k].byteStart = prev.byteStart + len(prev.text)
		chunks[k].lineStart = prev.lineStart + len(prev.lines)
	}
}

// buildChunks cuts span, a run of whole lines, into chunks of about
// chunkTarget bytes at line starts and appends them to dst, leaving their
// locations to locate. last says whether span ends the document, which
// decides whether a line start at its very end belongs to it.
func buildChunks(dst []chunk, span string, last bool) []chunk {
	starts := indexLines(span)
	if !last && starts[len(starts)-1] == len(span) {
		starts = starts[:len(starts)-1]
	}
	for from := 0; from < len(starts); {
		begin := starts[from]
		to := from + 1
		// A line starting at the very end of span is the empty last line,
		// which stays with the chunk before it rather than forming an
		// empty chunk.
		for to < len(starts) && (starts[to]-begin < chunkTarget || starts[to] == len(span)) {
			to++
		}
		end := len(span)
		if to < len(starts) {
			end = starts[to]
		}
		lines := starts[from:to:to]
		for j := range lines {
			lines[j] -= begin
		}
		dst = append(dst, chunk{text: span[begin:end], lines: lines})
		from = to
	}
	return dst
}

// splice replaces bytes [start, end) of the text held by chunks with repl
// and returns the new chunk list, rebuilding only the chunks involved.
func splice(chunks []chunk, start, end int, repl string) []chunk {
	a, b := byteChunk(chunks, start), byteChunk(chunks, end)
	ca, cb := &chunks[a], &chunks[b]
	span := ca.text[:start-ca.byteStart] + repl + cb.text[end-cb.byteStart:]
	// The rebuilt span must again start and end at line starts. Its end is
	// safe: it ends with the last byte of chunk b, which the edit never
	// removes because an end offset at the very end of a chunk falls in the
	// next one. Its start is not: a "\r" ending the previous chunk and a
	// "\n" now starting the span form one CRLF, so that chunk joins the
	// span. A span left short by deletions joins a neighbour too.
	for {
		switch {
		case len(span) < max(chunkMin, 1) && b+1 < len(chunks):
			b++
			span += chunks[b].text
		case len(span) < max(chunkMin, 1) && a > 0:
			a--
			span = chunks[a].text + span
		case a > 0 && span[0] == '\n' && strings.HasSuffix(chunks[a-1].text, "\r"):
			a--
			span = chunks[a].text + span
		default:
			out := make([]chunk, a, len(chunks)+len(span)/max(chunkTarget, 1)+1)
			copy(out, chunks[:a])
			out = buildChunks(out, span, b == len(chunks)-1)
			out = append(out, chunks[b+1:]...)
			locate(out, a)
			return out
		}
	}
}

// indexLines returns the line starts of text.
func indexLines(text string) []int {
	// Counting "\n" is fast and exact for LF and CRLF texts, the common case,
	// so the slice rarely grows.
	lines := make([]int, 1, 1+strings.Count(text, "\n"))
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			lines = append(lines, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			lines = append(lines, i+1)
		}
	}
	return lines
}

// contentEnd returns the offset in text at which the content of line i ends
// and its terminator, if any, starts. The line runs up to the next line start
// or, for the last line of a chunk, to the end of the chunk; since content
// never holds "\r" or "\n", any such bytes at its end are the terminator.
func contentEnd(text string, lines []int, i int) int {
	end := len(text)
	if i+1 < len(lines) {
		end = lines[i+1]
	}
	if end > lines[i] && text[end-1] == '\n' {
		end--
	}
	if end > lines[i] && text[end-1] == '\r' {
		end--
	}
	return end
}

// offset implements Document.Offset on a chunk list, so that Apply can
// resolve positions against intermediate texts.
func offset(chunks []chunk, p Position, enc Encoding) (int, error) {
	if n := lineCount(chunks); uint64(p.Line) >= uint64(n) {
		return 0, fmt.Errorf("position %s: line past last line %d: %w", p, n-1, ErrOutOfRange)
	}
	c, j := lineChunk(chunks, int(p.Line))
	start := c.lines[j]
	n, ok := unitOffset(c.text[start:contentEnd(c.text, c.lines, j)], p.Character, enc)
	if !ok {
		return 0, fmt.Errorf("position %s: inside a %s character: %w", p, enc, ErrOutOfRange)
	}
	return c.byteStart + start + n, nil
}

// unitOffset returns the byte offset within line of the character'th unit,
// clamped to the end of the line, and false if that unit is not the first of
// a character.
func unitOffset(line string, character uint32, enc Encoding) (int, bool) {
	if enc == UTF8 {
		if uint64(character) >= uint64(len(line)) {
			return len(line), true
		}
		n := int(character)
		return n, isBoundary(line, n)
	}
	u := uint32(0)
	for i := 0; i < len(line); {
		if u == character {
			return i, true
		}
		if c := line[i]; c < utf8.RuneSelf {
			u++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		if r > 0xFFFF {
			if u+1 == character {
				return 0, false // between the two halves of a surrogate pair
			}
			u += 2
		} else {
			// This includes a RuneError for an invalid byte, which counts
			// as one unit, like the U+FFFD a client would show for it.
			u++
		}
		i += size
	}
	return len(line), true
}

// isBoundary reports whether byte offset n of s (0 <= n <= len(s)) starts a
// character when s is decoded as UTF-8 with each invalid byte standing for
// itself. It looks back at most three bytes rather than decoding from the
// start of s: a byte that is not a continuation byte always starts a
// character, and a continuation byte is inside one only if the closest
// non-continuation byte before it begins a valid sequence long enough to
// cover it.
func isBoundary(s string, n int) bool {
	if n <= 0 || n >= len(s) || utf8.RuneStart(s[n]) {
		return true
	}
	for j := n - 1; j >= 0 && j >= n-(utf8.UTFMax-1); j-- {
		if utf8.RuneStart(s[j]) {
			_, size := utf8.DecodeRuneInString(s[j:])
			return j+size <= n
		}
	}
	return true
}

// utf16Len returns the number of UTF-16 code units s takes, counting each
// invalid byte as one.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
