package anchor

import (
	"math"
	"strings"
)

// Edit is one change to a document: bytes [Start, End) of the document it
// applies to are replaced by NewLen bytes. An insertion has Start == End, a
// deletion NewLen == 0.
type Edit struct {
	Start, End, NewLen int
}

// Track moves s through edits, applied in order, each in the offsets of the
// document the previous ones produced. It is how a finding computed for an
// older version of a buffer is carried to the current one.
//
//   - An edit that ends before s.Start shifts the span by the edit's change
//     in length; one that starts after s.End leaves it.
//   - An insertion exactly at s.Start shifts the span: it is typing before
//     the code (a new line above it, more indentation). An insertion
//     exactly at s.End leaves it: typing after the code. An empty span
//     shifts on an insertion at its position.
//   - Any other edit that touches or overlaps the span invalidates it: an
//     insertion strictly inside, a deletion or replacement that overlaps the
//     span or merely ends at s.Start or starts at s.End (deleting the
//     indentation before the code or the line break after it changes the
//     line the finding is about). The finding is dropped and re-checked at
//     the next review: it may no longer apply, and its improvedCode was
//     written for the old text.
//   - An edit with negative or reversed offsets, or that would overflow,
//     invalidates the span, as does a span with Start < 0 or End < Start.
//
// ok is false when the span was invalidated; the Span is then zero. Track
// leaves StartLine and EndLine as they were: call Lines on the new text to
// refresh them.
func Track(s Span, edits []Edit) (Span, bool) {
	if s.Start < 0 || s.End < s.Start {
		return Span{}, false
	}
	for _, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.NewLen < 0 {
			return Span{}, false
		}
		if e.Start == e.End && e.NewLen == 0 {
			continue // changes nothing
		}
		var shift bool
		switch {
		case e.Start == e.End && e.Start <= s.Start:
			shift = true
		case e.Start == e.End && e.Start >= s.End:
			shift = false
		case e.End < s.Start:
			shift = true
		case e.Start > s.End:
			shift = false
		default:
			return Span{}, false
		}
		if !shift {
			continue
		}
		delta := e.NewLen - (e.End - e.Start) // both terms are >= 0: no overflow
		if delta > 0 && s.End > math.MaxInt-delta {
			return Span{}, false
		}
		s.Start += delta
		s.End += delta
	}
	return s, true
}

// Lines returns s with StartLine and EndLine recomputed for text. Offsets
// outside text are clamped to it first, so the result always lies within
// text.
func Lines(text string, s Span) Span {
	s = clamp(len(text), s)
	s.StartLine = strings.Count(text[:s.Start], "\n")
	s.EndLine = s.StartLine
	if s.End > s.Start {
		s.EndLine += strings.Count(text[s.Start:s.End-1], "\n")
	}
	return s
}

// clamp confines s's offsets to [0, n] with Start <= End.
func clamp(n int, s Span) Span {
	s.Start = min(max(s.Start, 0), n)
	s.End = min(max(s.End, s.Start), n)
	return s
}
