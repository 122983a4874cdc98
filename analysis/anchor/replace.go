package anchor

import "strings"

// tabWidth is the width of a tab when indentation written with tabs is
// compared with, or converted to, indentation written with spaces. Four is
// what models and most editors assume.
const tabWidth = 4

// Replacement returns the text that replaces span s of text when the quick
// fix of a finding is applied: improvedCode fitted to the buffer.
//
// Line breaks: improvedCode's are written as the buffer's (CRLF when the
// anchored line ends with "\r\n", or, on a last line, when the text uses
// "\r\n" at all). Blank lines around improvedCode and trailing whitespace on
// its lines are dropped, as is a Markdown fence around it. The result ends
// with a line break exactly when the span's text does; spans from Locate
// never do, so a trailing newline in improvedCode, or its absence, never
// joins the code to the next line or adds a blank one.
//
// Indentation, measured in columns with tabs at multiples of 4: the span
// starts after its first line's indentation, which stays in the buffer, so
// the first line of improvedCode is written without one. The other lines
// keep improvedCode's indentation when it is consistent with the anchored
// code, and are re-indented otherwise:
//
//   - Consistent (absolute): improvedCode's first line is indented as deep as
//     the first anchored line; or it is shallower (typically not indented at
//     all, because the model copied the code from its first non-blank byte)
//     while its other lines line up with the anchored code: their least
//     indentation equals that of the anchored lines after the first, or,
//     for a one-line anchor, none of them is shallower than the anchored
//     line. Each line keeps its depth.
//   - Inconsistent (relative): each line keeps its depth relative to
//     improvedCode's first line, added to the first anchored line's depth.
//     This fits a fix written at column 0 into a nested block.
//
// Depths are written in the buffer's style: tabs (plus spaces for a
// remainder) when the anchored lines indent with tabs, spaces when they
// indent with spaces; when they are not indented, the style of the first
// indented line of text, else improvedCode's. So a fix written with
// spaces lands in a tab-indented Go file as tabs. The heuristic cannot tell
// a relative fix whose continuation lines are exactly one level deeper than
// a one-line anchor from an absolute one; it treats it as absolute.
//
// An improvedCode with no content yields "" (the fix deletes the code).
// Offsets of s outside text are clamped to it.
func Replacement(text string, s Span, improvedCode string) string {
	s = clamp(len(text), s)
	lines := improvedLines(improvedCode)
	if len(lines) == 0 {
		return ""
	}
	ls := strings.LastIndexByte(text[:s.Start], '\n') + 1 // start of the first anchored line
	le := s.End                                           // end of the last one
	if le > s.Start {
		le--
	}
	if i := strings.IndexByte(text[le:], '\n'); i >= 0 {
		le += i
	} else {
		le = len(text)
	}
	anchored := strings.Split(strings.ReplaceAll(text[ls:le], "\r", ""), "\n")
	base := indentOf(anchored[0])
	tabs := indentStyle(text, anchored, lines)

	i0 := width(indentOf(lines[0]))
	absolute := i0 == width(base) || i0 < width(base) && linesUp(anchored, lines, width(base))

	var b strings.Builder
	eol := lineEnding(text, ls)
	for i, l := range lines {
		ind, code := indentOf(l), l[len(indentOf(l)):]
		depth := width(ind)
		if !absolute {
			depth = max(0, width(base)+depth-i0)
		}
		switch {
		case i > 0:
			b.WriteString(eol)
			if code != "" {
				b.WriteString(render(depth, tabs))
			}
		case ls == s.Start:
			// The span begins at column 0 (a blank line the lines fallback
			// chose): its indentation is part of it.
			b.WriteString(render(depth, tabs))
		}
		b.WriteString(code)
	}
	if strings.HasSuffix(text[s.Start:s.End], "\n") {
		b.WriteString(eol)
	}
	return b.String()
}

// improvedLines splits improvedCode into lines without line breaks, fence,
// surrounding blank lines or trailing whitespace.
func improvedLines(improvedCode string) []string {
	lines := strings.Split(strings.ReplaceAll(improvedCode, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r\v\f")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) >= 2 {
		lines = unfence(lines)
	}
	return lines
}

// linesUp reports whether improvedCode's lines after the first are at the
// anchored code's absolute depths (see Replacement).
func linesUp(anchored, lines []string, base int) bool {
	impr, ok := minDepth(lines[1:])
	if !ok {
		return false
	}
	if anc, ok := minDepth(anchored[1:]); ok {
		return impr == anc
	}
	return impr >= base
}

// minDepth returns the least indentation width of the non-blank lines.
func minDepth(lines []string) (int, bool) {
	m, ok := 0, false
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		if w := width(indentOf(l)); !ok || w < m {
			m, ok = w, true
		}
	}
	return m, ok
}

// indentStyle reports whether indentation should be written with tabs.
func indentStyle(text string, anchored, lines []string) bool {
	for _, l := range anchored {
		if !isBlank(l) && l != "" && (l[0] == '\t' || l[0] == ' ') {
			return l[0] == '\t'
		}
	}
	for rest := text; rest != ""; {
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if !isBlank(l) && (l[0] == '\t' || l[0] == ' ') {
			return l[0] == '\t'
		}
	}
	for _, l := range lines {
		if l != "" && (l[0] == '\t' || l[0] == ' ') {
			return l[0] == '\t'
		}
	}
	return false
}

// indentOf returns the leading spaces and tabs of l.
func indentOf(l string) string {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return l[:i]
}

// width is the number of columns ind spans, tabs stopping at multiples of
// tabWidth.
func width(ind string) int {
	w := 0
	for i := 0; i < len(ind); i++ {
		if ind[i] == '\t' {
			w += tabWidth - w%tabWidth
		} else {
			w++
		}
	}
	return w
}

// render writes an indentation of w columns.
func render(w int, tabs bool) string {
	if !tabs {
		return strings.Repeat(" ", w)
	}
	return strings.Repeat("\t", w/tabWidth) + strings.Repeat(" ", w%tabWidth)
}

// lineEnding returns the line break of the line starting at ls: that line's
// own, or for a last line without one, "\r\n" if text uses it anywhere.
func lineEnding(text string, ls int) string {
	if i := strings.IndexByte(text[ls:], '\n'); i >= 0 {
		if i > 0 && text[ls+i-1] == '\r' {
			return "\r\n"
		}
		return "\n"
	}
	if strings.Contains(text, "\r\n") {
		return "\r\n"
	}
	return "\n"
}
