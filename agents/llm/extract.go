package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// maxCandidates bounds how many opening brackets extractJSON tries, so a
// long reply full of brackets cannot make extraction quadratic.
const maxCandidates = 32

// extractJSON finds the JSON document in a model reply. Models wrap JSON in
// prose ("Here is the review: {…}"), in ``` fences, or in <think> blocks of
// reasoning models, and leave trailing commas and // or /* */ comments;
// all of that is removed here. Comments are removed from each candidate,
// from its opening bracket on, where what is a string is known.
// wantArray says which bracket the document should start with; the other
// one is tried afterwards.
func extractJSON(reply string, wantArray bool) (string, error) {
	s := stripThink(reply)
	s = strings.TrimPrefix(strings.TrimSpace(s), "\ufeff")
	if f, ok := fenced(s); ok {
		s = f
	}
	if s == "" {
		return "", errors.New("the reply is empty")
	}
	if json.Valid([]byte(s)) {
		return s, nil
	}
	first, second := byte('{'), byte('[')
	if wantArray {
		first, second = second, first
	}
	unterminated := false
	for _, open := range []byte{first, second} {
		tries := 0
		for i := 0; i < len(s) && tries < maxCandidates; i++ {
			if s[i] != open {
				continue
			}
			tries++
			t := stripComments(s[i:])
			end := matchBracket(t, 0)
			if end < 0 {
				unterminated = true
				continue
			}
			cand := removeTrailingCommas(t[:end+1])
			if json.Valid([]byte(cand)) {
				return cand, nil
			}
		}
	}
	if unterminated {
		return "", errors.New("the JSON in the reply is cut off (unbalanced brackets)")
	}
	return "", errors.New("the reply contains no JSON document")
}

// stripThink removes <think>…</think> blocks that reasoning models
// (qwen3, deepseek-r1) put before their answer on some servers.
func stripThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// fenced returns the body of the first ``` block, preferring one tagged
// json.
func fenced(s string) (string, bool) {
	var bodies []string
	rest := s
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		after := rest[i+3:]
		nl := strings.IndexByte(after, '\n')
		if nl < 0 {
			break
		}
		tag := strings.ToLower(strings.TrimSpace(after[:nl]))
		body := after[nl+1:]
		j := strings.Index(body, "```")
		if j < 0 {
			// An unclosed fence: the reply was cut off or the model forgot
			// to close it; use what is there.
			bodies = append(bodies, tag+"\x00"+body)
			break
		}
		bodies = append(bodies, tag+"\x00"+body[:j])
		rest = body[j+3:]
	}
	if len(bodies) == 0 {
		return "", false
	}
	pick := bodies[0]
	for _, b := range bodies {
		if strings.HasPrefix(b, "json\x00") {
			pick = b
			break
		}
	}
	_, body, _ := strings.Cut(pick, "\x00")
	return strings.TrimSpace(body), true
}

// matchBracket returns the index of the bracket closing the one at start,
// skipping strings, or -1 when it is never closed.
func matchBracket(s string, start int) int {
	depth := 0
	var str stringScan
	for i := start; i < len(s); i++ {
		c := s[i]
		if str.in(c) {
			continue
		}
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// stringScan follows a left-to-right scan of JSON text byte by byte, to
// tell the bytes of string literals from the structure around them.
type stringScan struct{ inside, escaped bool }

// in advances the scan past c and reports whether c belongs to a string
// literal, its quotes included.
func (q *stringScan) in(c byte) bool {
	if !q.inside {
		q.inside = c == '"'
		return q.inside
	}
	switch {
	case q.escaped:
		q.escaped = false
	case c == '\\':
		q.escaped = true
	case c == '"':
		q.inside = false
	}
	return true
}

// stripComments removes // line comments and /* */ block comments outside
// string literals, which JSON does not allow and models sometimes write
// ("severity": "high", // a guess). A line comment keeps its line break;
// a block comment becomes a space; an unclosed one runs to the end.
func stripComments(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var str stringScan
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.in(c) {
			b.WriteByte(c)
			continue
		}
		if c == '/' && i+1 < len(s) {
			switch s[i+1] {
			case '/':
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					return b.String()
				}
				i += j - 1 // the line break is written next
				continue
			case '*':
				j := strings.Index(s[i+2:], "*/")
				if j < 0 {
					return b.String()
				}
				b.WriteByte(' ')
				i += 2 + j + 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// removeTrailingCommas drops commas that directly precede a closing
// bracket, outside strings.
func removeTrailingCommas(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var str stringScan
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.in(c) {
			b.WriteByte(c)
			continue
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
