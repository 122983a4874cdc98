package rules

import (
	"strings"
)

// mdLine is one line of a rule's Markdown body, classified just enough to
// find sections and examples: headings and code fences. Lines inside a code
// fence are never headings, because example code (a shell or Python comment,
// a Markdown snippet) often starts with "#".
type mdLine struct {
	text string
	// level is the heading level (1 to 6) or 0 for a line that is not a
	// heading.
	level   int
	heading string
	// fence is the index of the code fence the line belongs to (opening and
	// closing lines included), or -1.
	fence int
}

type mdFence struct {
	lang       string
	start, end int // line range of the code, without the fence lines
}

// scanMarkdown splits a body into lines and finds its ATX headings and
// fenced code blocks, following CommonMark closely enough for rule files.
func scanMarkdown(body string) ([]mdLine, []mdFence) {
	raw := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	lines := make([]mdLine, len(raw))
	var fences []mdFence
	open := -1 // index into fences of the fence being read
	var openChar byte
	var openLen, openIndent int
	for i, t := range raw {
		lines[i] = mdLine{text: t, fence: -1}
		if open >= 0 {
			lines[i].fence = open
			if c, n, _, rest := fenceMarker(t); c == openChar && n >= openLen && strings.TrimSpace(rest) == "" {
				fences[open].end = i
				open = -1
				continue
			}
			// CommonMark removes the opening fence's indentation from
			// the code lines.
			lines[i].text = trimIndent(t, openIndent)
			continue
		}
		if c, n, indent, rest := fenceMarker(t); c != 0 && !(c == '`' && strings.Contains(rest, "`")) {
			lang := strings.TrimSpace(rest)
			if f := strings.Fields(lang); len(f) > 0 {
				lang = f[0]
			}
			fences = append(fences, mdFence{lang: lang, start: i + 1, end: len(raw)})
			open, openChar, openLen, openIndent = len(fences)-1, c, n, indent
			lines[i].fence = open
			continue
		}
		lines[i].level, lines[i].heading = atxHeading(t)
	}
	return lines, fences
}

// fenceMarker recognises a code fence line: up to three spaces, then three or
// more backticks or tildes. It returns the fence character (0 when the line
// is not a fence), its run length, the indentation and the rest of the line.
func fenceMarker(line string) (c byte, n, indent int, rest string) {
	for indent < len(line) && indent < 4 && line[indent] == ' ' {
		indent++
	}
	if indent > 3 || indent >= len(line) {
		return 0, 0, 0, ""
	}
	c = line[indent]
	if c != '`' && c != '~' {
		return 0, 0, 0, ""
	}
	j := indent
	for j < len(line) && line[j] == c {
		j++
	}
	if j-indent < 3 {
		return 0, 0, 0, ""
	}
	return c, j - indent, indent, line[j:]
}

func trimIndent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

// atxHeading returns the level and text of an ATX heading ("## Title"), or
// level 0.
func atxHeading(line string) (int, string) {
	t := strings.TrimRight(line, " \t\r")
	indent := 0
	for indent < len(t) && indent < 4 && t[indent] == ' ' {
		indent++
	}
	if indent > 3 {
		return 0, ""
	}
	t = t[indent:]
	level := 0
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, ""
	}
	text := strings.TrimSpace(t[level:])
	// An optional closing run of "#" goes when a space precedes it.
	if trimmed := strings.TrimRight(text, "#"); trimmed != text && (trimmed == "" || strings.HasSuffix(trimmed, " ") || strings.HasSuffix(trimmed, "\t")) {
		text = strings.TrimSpace(trimmed)
	}
	return level, text
}

// sectionEnd returns the index of the first heading after start whose level
// is at most level, or len(lines).
func sectionEnd(lines []mdLine, start, level int) int {
	for i := start + 1; i < len(lines); i++ {
		if l := lines[i].level; l > 0 && l <= level {
			return i
		}
	}
	return len(lines)
}

// findSection returns the heading line of the first level-2 heading whose
// text is one of names (ignoring case), or -1.
func findSection(lines []mdLine, names ...string) int {
	for i, l := range lines {
		if l.level != 2 {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(l.heading, n) {
				return i
			}
		}
	}
	return -1
}

func joinText(lines []mdLine) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(l.text, "\r"))
	}
	return strings.TrimSpace(b.String())
}

// parseBody extracts the instructions and the examples of a rule body.
func parseBody(body string) (string, []Example) {
	lines, fences := scanMarkdown(body)

	exStart, exEnd := findSection(lines, "Examples", "Example"), -1
	if exStart >= 0 {
		exEnd = sectionEnd(lines, exStart, 2)
	}

	var instructions string
	if in := findSection(lines, "Instructions", "Instruction"); in >= 0 {
		instructions = joinText(lines[in+1 : sectionEnd(lines, in, 2)])
	} else {
		// Without the heading, everything that is not an example is
		// taken as instructions, so that a plain prose rule still works.
		rest := lines
		if exStart >= 0 {
			rest = append(append([]mdLine(nil), lines[:exStart]...), lines[exEnd:]...)
		}
		instructions = joinText(rest)
	}

	if exStart < 0 {
		return instructions, nil
	}
	var examples []Example
	// The part of the section before the first sub-heading holds examples
	// of no particular kind; every "###" sub-section after it is one group.
	groupStart, kind := exStart+1, ""
	flush := func(end int) {
		examples = append(examples, exampleGroup(lines, fences, groupStart, end, kind)...)
	}
	for i := exStart + 1; i < exEnd; i++ {
		if lines[i].level != 3 {
			continue
		}
		flush(i)
		groupStart, kind = i+1, exampleKind(lines[i].heading)
	}
	flush(exEnd)
	return instructions, examples
}

// exampleKind tells bad from good examples by their heading.
func exampleKind(heading string) string {
	h := strings.ToLower(heading)
	switch {
	case strings.Contains(h, "bad"), strings.Contains(h, "incorrect"), strings.Contains(h, "avoid"):
		return "bad"
	case strings.Contains(h, "good"), strings.Contains(h, "correct"), strings.Contains(h, "prefer"):
		return "good"
	}
	return ""
}

// exampleGroup turns the lines [start, end) of one sub-section into
// examples: one per code fence, each carrying the sub-section's prose. A
// sub-section with prose and no code yields one example with Text only; the
// untitled prose before the first sub-heading is an introduction, not an
// example, unless it has code.
func exampleGroup(lines []mdLine, fences []mdFence, start, end int, kind string) []Example {
	var prose []mdLine
	var codes []mdFence
	for i := start; i < end; i++ {
		if f := lines[i].fence; f >= 0 {
			if i == fences[f].start-1 {
				fc := fences[f]
				fc.end = min(fc.end, end)
				codes = append(codes, fc)
			}
			continue
		}
		prose = append(prose, lines[i])
	}
	text := joinText(prose)
	if len(codes) == 0 {
		if text == "" || (kind == "" && start > 0 && lines[start-1].level == 2) {
			return nil
		}
		return []Example{{Kind: kind, Text: text}}
	}
	out := make([]Example, 0, len(codes))
	for _, c := range codes {
		var code strings.Builder
		for i := c.start; i < c.end; i++ {
			code.WriteString(strings.TrimRight(lines[i].text, "\r"))
			code.WriteByte('\n')
		}
		out = append(out, Example{Kind: kind, Language: c.lang, Code: code.String(), Text: text})
	}
	return out
}
