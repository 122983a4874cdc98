// Package anchor places review findings on the code they talk about and keeps
// them there while the developer types.
//
// A finding from the model carries existingCode, a copy of the code it
// comments on, and relevantLinesStart/relevantLinesEnd, 1-based line numbers.
// The copy is usually right but often re-indented (JSON strings turn tabs
// into spaces, the model drops the first line's indentation, a CRLF buffer
// comes back with LF); the numbers are often off by a few lines. So the copy
// is trusted first and the numbers only break ties, and a finding that cannot
// be placed with confidence is dropped rather than shown on a wrong line: a
// missing finding is re-checked at the next review, a misplaced one misleads.
//
// Locate anchors a finding in the text the review was computed for:
//
//  1. Exact: existingCode, with its surrounding whitespace (blank lines, the
//     first line's indentation, a trailing newline) trimmed, occurs verbatim.
//  2. Whitespace: the lines of existingCode equal lines of the text once both
//     are normalised: leading and trailing whitespace trimmed (so tabs versus
//     spaces, CRLF versus LF and trailing spaces do not matter), inner runs of
//     whitespace collapsed to one space, blank lines skipped on both sides.
//     The first snippet line may be the end of a text line and the last one
//     the beginning of one (a snippet that starts or ends mid-line), provided
//     the cut does not split an identifier.
//  3. Lines: existingCode was not found (or is blank) and the reported lines
//     are within the text (1 <= start, end <= the number of lines, the empty
//     line after a final newline included, as editors count): the finding
//     covers those lines' non-blank content.
//  4. None: the finding is dropped.
//
// When existingCode occurs several times the occurrence nearest to the
// reported lines wins (overlapping them first, then the smallest distance in
// lines, then an exact occurrence over a whitespace one, then the earliest).
// A whitespace occurrence competes with exact ones unless an exact one
// overlaps the reported lines: a model that re-indents its copy but reports
// the right lines must not be pulled onto a verbatim copy elsewhere. Without
// reported lines a snippet that occurs more than once is ambiguous and
// dropped. A short snippet (fewer than 12 non-blank bytes, such as "}",
// "err" or "return nil") that occurs more than once is accepted only where
// an occurrence overlaps the reported lines, and never inside an identifier
// ("err" does not match in "stderr"): nearness proves nothing for code that
// is everywhere. Such a snippet is dropped rather than sent to the lines
// fallback, since its occurring elsewhere shows the numbers are unreliable.
//
// When existingCode is not found as written, Locate retries with the
// decorations the prompts put around code removed: a Markdown fence, the
// "12 | " prefixes of a numbered listing, the "12 +" prefixes of a Kodus
// diff hunk or bare "+" markers. The prefixes' numbers stand in for missing
// reported lines.
//
// A Span covers the code itself: it starts at the first non-blank byte and
// ends after the last one, so the highlight skips indentation and line
// breaks, and typing on neighbouring lines never touches it. Track moves a
// span through the edits made while the review ran (see Track for the
// boundary rules) and Replacement turns improvedCode into the text of a
// quick fix for the span.
//
// A search that would cost far more than any real file does (a huge
// periodic text with a long snippet overlapping itself) stops early and
// drops the finding instead of guessing.
//
// Offsets are bytes and lines are split at '\n'; a '\r' before it counts as
// whitespace. Converting LSP positions (UTF-16 columns) is the caller's job.
// No function panics, whatever its input.
package anchor

import (
	"sort"
	"strings"
	"sync"
)

// Span is a region of a document: bytes [Start, End) and the 0-based lines
// StartLine..EndLine (inclusive) it covers. EndLine is the line of the last
// byte, so a span ending right after a '\n' ends on the line that newline
// terminates; an empty span has EndLine == StartLine.
type Span struct {
	Start, End         int
	StartLine, EndLine int
}

// Method says how Locate anchored a finding.
type Method string

const (
	// MethodExact: the trimmed existingCode occurs verbatim.
	MethodExact Method = "exact"
	// MethodWhitespace: existingCode matches once whitespace is normalised.
	MethodWhitespace Method = "whitespace"
	// MethodLines: existingCode was blank or not found; the reported lines
	// are used.
	MethodLines Method = "lines"
	// MethodNone: the finding could not be placed and must be dropped.
	MethodNone Method = "none"
)

// shortLen is the number of non-blank bytes below which a snippet is short.
// Below it are "}", "err", "return nil" and "if err != nil {", which are
// everywhere in code; from "return nil, err" or a call with arguments on,
// a snippet is distinctive enough for nearness to decide between copies.
const shortLen = 12

// Locate anchors a finding in text, the buffer version the review was
// computed for; see the package comment for the rules. reportedStart and
// reportedEnd are the model's 1-based, inclusive line numbers: a start
// below 1 means none were given, an end below 1 means the start line alone,
// and an end from 1 up to below the start is swapped with it. ok is
// false exactly when the method is MethodNone. To anchor several findings in
// the same text, NewDoc(text).Locate does the per-text work once.
func Locate(text, existingCode string, reportedStart, reportedEnd int) (Span, Method, bool) {
	return NewDoc(text).Locate(existingCode, reportedStart, reportedEnd)
}

// Doc is a text prepared for anchoring several findings: its line offsets,
// and its normalised lines once a whitespace-tolerant search needs them. It
// is safe for concurrent use.
type Doc struct {
	text   string
	starts []int // byte offset of the first byte of each line

	once     sync.Once
	norm     []string // normalised lines, "" for blank ones
	nonBlank []int    // indexes of the lines whose norm is not ""
}

// NewDoc prepares text for Locate.
func NewDoc(text string) *Doc {
	starts := make([]int, 1, strings.Count(text, "\n")+1)
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	return &Doc{text: text, starts: starts}
}

// Text returns the text the Doc was made from.
func (d *Doc) Text() string { return d.text }

// lineOf returns the line holding byte off (the last line for len(text)).
func (d *Doc) lineOf(off int) int {
	return sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > off }) - 1
}

// lineEnd returns the offset of the '\n' ending line i, or len(text).
func (d *Doc) lineEnd(i int) int {
	if i+1 < len(d.starts) {
		return d.starts[i+1] - 1
	}
	return len(d.text)
}

// span builds the Span [start, end) with its lines.
func (d *Doc) span(start, end int) Span {
	s := Span{Start: start, End: end, StartLine: d.lineOf(start)}
	s.EndLine = s.StartLine
	if end > start {
		s.EndLine = d.lineOf(end - 1)
	}
	return s
}

// normalise prepares the lines for the whitespace-tolerant search.
func (d *Doc) normalise() {
	d.once.Do(func() {
		d.norm = make([]string, len(d.starts))
		for i := range d.starts {
			n := normLine(d.text[d.starts[i]:d.lineEnd(i)])
			d.norm[i] = n
			if n != "" {
				d.nonBlank = append(d.nonBlank, i)
			}
		}
	})
}

// reported is the model's line range as 0-based inclusive lines lo..hi; ok
// is false when the model gave none.
type reported struct {
	ok     bool
	lo, hi int
}

func newReported(start, end int) reported {
	if start < 1 {
		return reported{}
	}
	if end < start {
		if end < 1 {
			end = start
		} else {
			start, end = end, start
		}
	}
	return reported{ok: true, lo: start - 1, hi: end - 1}
}

// gap is how far, in lines, lines sl..el lie from the reported range: 0
// when they overlap, 1 when they are adjacent.
func (r reported) gap(sl, el int) int {
	return max(0, r.lo-el, sl-r.hi)
}

// Locate is the package-level Locate on d's text.
func (d *Doc) Locate(existingCode string, reportedStart, reportedEnd int) (Span, Method, bool) {
	rep := newReported(reportedStart, reportedEnd)
	if isBlank(existingCode) {
		return d.byLines(rep)
	}
	if s, m, found := d.find(existingCode, rep); found {
		return s, m, m != MethodNone
	}
	// Decorations are removed only when the snippet as written is nowhere:
	// "1 | FLAG" is a plausible line of C.
	if cleaned, hint := undecorate(existingCode); cleaned != existingCode && !isBlank(cleaned) {
		if !rep.ok {
			rep = hint
		}
		if s, m, found := d.find(cleaned, rep); found {
			return s, m, m != MethodNone
		}
	}
	return d.byLines(rep)
}

// Has reports whether existingCode occurs in d's text as Locate looks it
// up (verbatim, once whitespace is normalised, or without the decorations
// of a listing), however many times: whether the code a finding quotes is
// in this text at all. A blank snippet occurs nowhere.
func (d *Doc) Has(existingCode string) bool {
	if isBlank(existingCode) {
		return false
	}
	if _, _, found := d.find(existingCode, reported{}); found {
		return true
	}
	if cleaned, _ := undecorate(existingCode); cleaned != existingCode && !isBlank(cleaned) {
		_, _, found := d.find(cleaned, reported{})
		return found
	}
	return false
}

// byLines is the fallback on the reported lines: the span covers their
// non-blank content, or the whole lines when they are blank.
func (d *Doc) byLines(r reported) (Span, Method, bool) {
	if !r.ok || r.hi >= len(d.starts) {
		return Span{}, MethodNone, false
	}
	a, b := d.starts[r.lo], d.lineEnd(r.hi)
	start, end := a, b
	for start < end && isSpaceOrNL(d.text[start]) {
		start++
	}
	for end > start && isSpaceOrNL(d.text[end-1]) {
		end--
	}
	if start == end {
		start, end = a, b
		if end > start && d.text[end-1] == '\r' {
			end--
		}
	}
	return d.span(start, end), MethodLines, true
}

// candidate is one occurrence of a snippet.
type candidate struct {
	start, end int // bytes
	sl, el     int // lines
	exact      bool
}

// workLimit bounds the comparisons one search may make, in bytes for
// verbatim occurrences and in lines for the whitespace-tolerant search.
// Real files stay far below it; a pathological one (a huge periodic text
// and a long snippet that overlaps itself) would otherwise cost time
// quadratic in its size.
const workLimit = 1 << 26

// picker chooses among occurrences as they are found, without keeping them:
// a one-character snippet may occur on every line of a large file.
type picker struct {
	rep   reported
	n     int
	best  candidate
	bgap  int
	bdiff int

	work      int  // comparisons made so far
	truncated bool // the search stopped at workLimit
}

// spend records work comparisons and reports whether the search must stop.
func (p *picker) spend(work int) bool {
	p.work += work
	if p.work > workLimit {
		p.truncated = true
	}
	return p.truncated
}

// settled reports whether no occurrence after last, in text order, can
// change the outcome: without reported lines two occurrences are already
// ambiguous, and past the reported lines the gap only grows.
func (p *picker) settled(last candidate) bool {
	if p.n < 2 {
		return false
	}
	return !p.rep.ok || last.sl-p.rep.hi > p.bgap
}

func (p *picker) add(c candidate) {
	gap, diff := 0, 0
	if p.rep.ok {
		gap, diff = p.rep.gap(c.sl, c.el), abs(c.sl-p.rep.lo)
	}
	p.n++
	// Occurrences arrive in text order, so ties keep the earliest.
	if p.n == 1 || gap < p.bgap || gap == p.bgap && (diff < p.bdiff || diff == p.bdiff && c.exact && !p.best.exact) {
		p.best, p.bgap, p.bdiff = c, gap, diff
	}
}

// find looks existingCode up. found is false when it occurs nowhere; when it
// occurs but cannot be chosen (ambiguous), found is true with MethodNone.
func (d *Doc) find(existingCode string, rep reported) (s Span, m Method, found bool) {
	trimmed := trimSpace(existingCode)
	short := nonBlankLen(trimmed) < shortLen
	p := &picker{rep: rep}
	d.exact(trimmed, short, p)
	if !p.truncated && (p.n == 0 || rep.ok && p.bgap > 0) {
		d.whitespace(existingCode, trimmed, p)
	}
	switch {
	case p.n == 0 && !p.truncated:
		return Span{}, MethodNone, false
	case p.truncated, // the best occurrence may not have been seen
		p.n > 1 && !rep.ok,             // ambiguous: nothing tells the occurrences apart
		p.n > 1 && short && p.bgap > 0: // a common token away from the reported lines
		return Span{}, MethodNone, true
	}
	m = MethodWhitespace
	if p.best.exact {
		m = MethodExact
	}
	return d.span(p.best.start, p.best.end), m, true
}

// exact offers p every verbatim occurrence of trimmed, overlapping ones
// included ("}\n}" occurs twice in "}\n}\n}").
func (d *Doc) exact(trimmed string, short bool, p *picker) {
	if trimmed == "" {
		return
	}
	text := d.text
	for from := 0; from <= len(text)-len(trimmed); {
		i := strings.Index(text[from:], trimmed)
		if i < 0 {
			return
		}
		start := from + i
		end := start + len(trimmed)
		from = start + 1
		if p.spend(len(trimmed)) {
			return
		}
		if short && !wordBounded(text, start, end) {
			continue
		}
		c := candidate{start: start, end: end, sl: d.lineOf(start), el: d.lineOf(end - 1), exact: true}
		p.add(c)
		if p.settled(c) {
			return
		}
	}
}

// whitespace offers p the whitespace-tolerant occurrences of snippet that
// are not verbatim ones (exact has offered those). It walks the text's
// non-blank lines once, comparing the first snippet line before anything
// else, so it costs about one string comparison per line.
func (d *Doc) whitespace(snippet, trimmed string, p *picker) {
	var sn []string
	for _, l := range strings.Split(snippet, "\n") {
		if n := normLine(l); n != "" {
			sn = append(sn, n)
		}
	}
	if len(sn) == 0 {
		return
	}
	d.normalise()
	// offer adds an occurrence and reports whether the search is over. p0
	// and pk are the normalised offsets of the first matched byte and just
	// past the last one.
	offer := func(j0, p0, jk, pk int) bool {
		start := d.starts[j0] + rawIndex(d.rawLine(j0), p0)
		end := d.starts[jk] + rawIndex(d.rawLine(jk), pk-1) + 1
		if d.text[start:end] == trimmed {
			return false // a verbatim occurrence: exact has offered it
		}
		c := candidate{start: start, end: end, sl: j0, el: jk}
		p.add(c)
		return p.settled(c)
	}
	nb, k := d.nonBlank, len(sn)
	if k == 1 {
		s := sn[0]
		for _, j := range nb {
			line := d.norm[j]
			for from := 0; from <= len(line)-len(s); {
				i := strings.Index(line[from:], s)
				if i < 0 {
					break
				}
				i += from
				from = i + 1
				if p.spend(len(s)) {
					return
				}
				if wordBounded(line, i, i+len(s)) && offer(j, i, j, i+len(s)) {
					return
				}
			}
		}
		return
	}
	first, last := sn[0], sn[k-1]
	for a := 0; a+k <= len(nb); a++ {
		l0 := d.norm[nb[a]]
		if !strings.HasSuffix(l0, first) || !wordBounded(l0, len(l0)-len(first), len(l0)) {
			continue
		}
		ok, i := true, 1
		for ; i < k-1 && ok; i++ {
			ok = d.norm[nb[a+i]] == sn[i]
		}
		if p.spend(i) {
			return
		}
		if !ok {
			continue
		}
		lk := d.norm[nb[a+k-1]]
		if !strings.HasPrefix(lk, last) || !wordBounded(lk, 0, len(last)) {
			continue
		}
		if offer(nb[a], len(l0)-len(first), nb[a+k-1], len(last)) {
			return
		}
	}
}

// rawLine returns line i without its '\n'.
func (d *Doc) rawLine(i int) string { return d.text[d.starts[i]:d.lineEnd(i)] }

// isSpace reports whether b is whitespace within a line.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f'
}

func isSpaceOrNL(b byte) bool { return b == '\n' || isSpace(b) }

func isBlank(s string) bool { return trimSpace(s) == "" }

// trimSpace trims whitespace, line breaks included, from both ends of s.
func trimSpace(s string) string { return strings.Trim(s, " \t\r\n\v\f") }

// nonBlankLen counts the bytes of s that are not whitespace.
func nonBlankLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isSpaceOrNL(s[i]) {
			n++
		}
	}
	return n
}

// isIdent reports whether b can be part of an identifier; bytes of
// multi-byte UTF-8 sequences count, as letters usually do.
func isIdent(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// wordBounded reports whether s[start:end] does not cut an identifier at
// either end: a match that begins (ends) with an identifier byte must not be
// preceded (followed) by one.
func wordBounded(s string, start, end int) bool {
	if start > 0 && isIdent(s[start]) && isIdent(s[start-1]) {
		return false
	}
	if end < len(s) && end > start && isIdent(s[end-1]) && isIdent(s[end]) {
		return false
	}
	return true
}

// normLine trims line and collapses its inner runs of whitespace to one
// space. Lines that need no collapsing, most of them, are returned as
// substrings without allocating.
func normLine(line string) string {
	a, b := 0, len(line)
	for a < b && isSpace(line[a]) {
		a++
	}
	for b > a && isSpace(line[b-1]) {
		b--
	}
	t := line[a:b]
	clean := true
	for i := 0; i < len(t) && clean; i++ {
		if isSpace(t[i]) {
			clean = t[i] == ' ' && !isSpace(t[i+1])
		}
	}
	if clean {
		return t
	}
	var sb strings.Builder
	sb.Grow(len(t))
	for i := 0; i < len(t); i++ {
		if !isSpace(t[i]) {
			sb.WriteByte(t[i])
			continue
		}
		sb.WriteByte(' ')
		for i+1 < len(t) && isSpace(t[i+1]) {
			i++
		}
	}
	return sb.String()
}

// rawIndex maps p, the offset of a non-space byte in normLine(line), back to
// its offset in line.
func rawIndex(line string, p int) int {
	n, i := 0, 0
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	for i < len(line) {
		if isSpace(line[i]) {
			for i < len(line) && isSpace(line[i]) {
				i++
			}
			n++ // the collapsed space
			continue
		}
		if n == p {
			return i
		}
		n++
		i++
	}
	return len(line)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
