package review

import (
	"slices"
	"strings"
)

// implementedSlack is how many lines around a suggestion's range its
// improved code may start at and still count as carried out there: the fix
// may add or remove a few lines above the reported ones.
const implementedSlack = 3

// codeLine is a non-blank line of code with its white space collapsed and
// its 1-based line number.
type codeLine struct {
	no   int
	text string
}

// codeLines returns the non-blank lines of code with white space
// collapsed, which is how code is compared here: models re-indent and
// re-wrap what they copy.
func codeLines(code string) []string {
	var out []string
	for line := range strings.SplitSeq(code, "\n") {
		if c := collapse(line); c != "" {
			out = append(out, c)
		}
	}
	return out
}

func numberedLines(content string) []codeLine {
	var out []codeLine
	no := 0
	for line := range strings.SplitSeq(content, "\n") {
		no++
		if c := collapse(line); c != "" {
			out = append(out, codeLine{no: no, text: c})
		}
	}
	return out
}

// matches returns the line numbers at which the lines of code start in
// buf.
func matches(buf []codeLine, code []string) []int {
	var out []int
	if len(code) == 0 {
		return nil
	}
	for i := 0; i+len(code) <= len(buf); i++ {
		ok := true
		for j, c := range code {
			if buf[i+j].text != c {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, buf[i].no)
		}
	}
	return out
}

// findCode returns the 1-based line at which code first appears in
// content, or 0.
func findCode(content, code string) int {
	if m := matches(numberedLines(content), codeLines(code)); len(m) > 0 {
		return m[0]
	}
	return 0
}

// containsSeq reports whether sub appears as consecutive lines of seq.
func containsSeq(seq, sub []string) bool {
	for i := 0; i+len(sub) <= len(seq); i++ {
		if slices.Equal(seq[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// alreadyImplemented reports whether the buffer already holds the
// suggestion's improved code where the suggestion points, so that
// suggesting it again would only be noise. It errs towards "no": a
// suggestion wrongly kept costs a glance, one wrongly removed hides a bug.
// So it answers no when the improved code is not a change (it equals the
// existing code, or only removes lines from it, which the unfixed code
// also matches), and a single improved line must appear within the
// reported range itself, since a short line such as "return nil" occurs
// all over a file.
func alreadyImplemented(content string, s Suggestion) bool {
	improved := codeLines(s.ImprovedCode)
	if content == "" || len(improved) == 0 {
		return false
	}
	existing := codeLines(s.ExistingCode)
	if containsSeq(existing, improved) {
		return false
	}
	for _, at := range matches(numberedLines(content), improved) {
		switch {
		case s.RelevantLinesStart < 1:
			// Without a place, only a block of several lines is
			// distinctive enough to count anywhere in the file.
			if len(improved) >= 2 {
				return true
			}
		case len(improved) == 1:
			if at >= s.RelevantLinesStart && at <= max(s.RelevantLinesEnd, s.RelevantLinesStart) {
				return true
			}
		default:
			if at >= s.RelevantLinesStart-implementedSlack && at <= max(s.RelevantLinesEnd, s.RelevantLinesStart)+implementedSlack {
				return true
			}
		}
	}
	return false
}
