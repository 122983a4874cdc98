package anchor

import "strings"

// undecorate removes what the review prompts wrap code in and a model
// sometimes copies into existingCode or improvedCode: a Markdown fence or
// inline backticks, the "12 | " prefixes of a numbered listing, the "12 +"
// or "12  " prefixes of a Kodus "__new hunk__", or bare "+" diff markers.
// Prefixes are removed only when every non-blank line has one and the
// numbers count up line by line, which ordinary code does not do. hint is
// the numbered lines' range, for a finding that came without line numbers.
func undecorate(s string) (cleaned string, hint reported) {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for len(lines) > 0 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return s, hint
	}
	lines = unfence(lines)
	if rest, lo, hi, ok := unnumber(lines); ok {
		lines, hint = rest, reported{ok: true, lo: lo - 1, hi: hi - 1}
	} else {
		lines = unplus(lines)
	}
	return strings.Join(lines, "\n"), hint
}

// unfence removes a Markdown fence around lines, or the backticks around a
// single line of inline code.
func unfence(lines []string) []string {
	first, last := trimSpace(lines[0]), trimSpace(lines[len(lines)-1])
	if len(lines) >= 2 && strings.HasPrefix(first, "```") && strings.Trim(last, "`") == "" && len(last) >= 3 {
		return lines[1 : len(lines)-1]
	}
	if len(lines) == 1 && len(first) > 2 && first[0] == '`' && first[len(first)-1] == '`' && !strings.Contains(first[1:len(first)-1], "`") {
		return []string{first[1 : len(first)-1]}
	}
	return lines
}

// unnumber removes line-number prefixes when every non-blank line has one
// and number minus line index is the same for all of them (blank lines
// without a number still count as lines). lo and hi are the first and last
// numbers.
func unnumber(lines []string) (rest []string, lo, hi int, ok bool) {
	rest = make([]string, len(lines))
	offset, seen := 0, false
	for i, l := range lines {
		if isBlank(l) {
			continue
		}
		n, code, good := numberPrefix(l)
		if !good {
			return nil, 0, 0, false
		}
		if !seen {
			offset, lo, seen = n-i, n, true
		} else if n-i != offset {
			return nil, 0, 0, false
		}
		hi, rest[i] = n, code
	}
	return rest, lo, hi, seen && lo >= 1
}

// numberPrefix parses "  12 | code", "12 |" (a blank numbered line),
// "12 +code" and "12  code" (Kodus hunk lines: number, space, marker).
func numberPrefix(l string) (n int, code string, ok bool) {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	d := i
	for i < len(l) && i-d < 9 && l[i] >= '0' && l[i] <= '9' {
		n = n*10 + int(l[i]-'0')
		i++
	}
	if i == d || i < len(l) && l[i] >= '0' && l[i] <= '9' {
		return 0, "", false
	}
	rest := l[i:]
	switch {
	case rest == "" || rest == " ":
		return n, "", true
	case strings.HasPrefix(rest, " | "):
		return n, rest[3:], true
	case rest == " |" || rest == "|":
		return n, "", true
	case strings.HasPrefix(rest, "| "):
		return n, rest[2:], true
	case strings.HasPrefix(rest, " +"), strings.HasPrefix(rest, "  "):
		return n, rest[2:], true
	}
	return 0, "", false
}

// unplus removes the "+" of added lines copied from a diff, when every
// non-blank line starts with "+" or with whitespace (a context line) and
// at least one with "+".
func unplus(lines []string) []string {
	plus := false
	for _, l := range lines {
		switch {
		case isBlank(l):
		case l[0] == '+':
			plus = true
		case !isSpace(l[0]):
			return lines
		}
	}
	if !plus {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, "+")
	}
	return out
}
