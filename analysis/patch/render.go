package patch

import (
	"strconv"
	"strings"
)

// Render returns the patch in the Kodus format, or "" when no hunk is left
// to review. See RenderHunks for the rules.
func (p FilePatch) Render() string {
	return p.RenderHunks(p.Hunks)
}

// RenderHunks renders only the hunks hs, normally a subset of p.Hunks (the
// pipeline sends only the hunks missing from its cache). It returns "" when
// none of them adds a line. The format, line by line:
//
//	## file: '<Path>'
//	(empty line)
//	@@ -<OldStart>,<OldLines> +<NewStart>,<NewLines> @@[ <Section>]
//	__new hunk__
//	<NewLine> <Kind><Text>    one per context (' ') and added ('+') line
//	__old hunk__              only when the hunk removes a line
//	<Kind><Text>              one per context (' ') and removed ('-') line
//	(empty line, then the next hunk's "@@" line)
//
// Every line, the last included, ends with "\n", so files rendered one after
// the other can be joined with a blank line between them. Counts are always
// written, even when they are 1, and line texts are written as they are,
// without their terminators: no "\r" and no "\ No newline at end of file"
// marker (the Kodus pipeline strips that marker too).
func (p FilePatch) RenderHunks(hs []Hunk) string {
	var sb strings.Builder
	for _, h := range hs {
		if !h.hasAdded() {
			// A hunk with nothing added gives the model nothing it may
			// comment on; Diff never returns one, but a caller might.
			continue
		}
		if sb.Len() == 0 {
			sb.WriteString("## file: '")
			sb.WriteString(p.Path)
			sb.WriteString("'\n")
		}
		sb.WriteByte('\n')
		writeHunk(&sb, h)
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, h Hunk) {
	var num [20]byte
	sb.WriteString("@@ -")
	sb.Write(strconv.AppendInt(num[:0], int64(h.OldStart), 10))
	sb.WriteByte(',')
	sb.Write(strconv.AppendInt(num[:0], int64(h.OldLines), 10))
	sb.WriteString(" +")
	sb.Write(strconv.AppendInt(num[:0], int64(h.NewStart), 10))
	sb.WriteByte(',')
	sb.Write(strconv.AppendInt(num[:0], int64(h.NewLines), 10))
	sb.WriteString(" @@")
	if h.Section != "" {
		sb.WriteByte(' ')
		sb.WriteString(h.Section)
	}
	sb.WriteString("\n__new hunk__\n")
	removes := false
	for _, l := range h.Lines {
		if l.Kind == '-' {
			removes = true
			continue
		}
		sb.Write(strconv.AppendInt(num[:0], int64(l.NewLine), 10))
		sb.WriteByte(' ')
		sb.WriteByte(l.Kind)
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
	if !removes {
		return
	}
	sb.WriteString("__old hunk__\n")
	for _, l := range h.Lines {
		if l.Kind == '+' {
			continue
		}
		sb.WriteByte(l.Kind)
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
}
