// Package textdoc holds the text of the buffers an editor has open, as the
// language server must see them: the editor owns those buffers and only tells
// the server about them through textDocument/didOpen, didChange and didClose,
// so the unsaved text on disk is not the truth and the server has to replay
// every incremental edit itself.
//
// A Document is an immutable snapshot (URI, version, text and an index of line
// starts), so analyses can keep reading one while newer edits arrive. A Store
// maps URIs to their current Document and applies didChange notifications in
// order, atomically, refusing stale versions and out-of-range positions rather
// than guessing, because one misplaced edit would silently corrupt every later
// one.
//
// Positions follow the LSP: a 0-based line and a 0-based character offset
// within the line, counted in UTF-16 code units by default or in UTF-8 bytes
// when the client negotiated positionEncoding "utf-8". Lines end at "\n",
// "\r\n" or "\r".
package textdoc

import (
	"errors"
	"strconv"
)

// Encoding is the unit in which Position.Character counts. The zero value is
// UTF16 because that is what the LSP uses when nothing else was negotiated;
// values other than UTF8 count like UTF16 too.
type Encoding int

const (
	// UTF16 counts UTF-16 code units: characters outside the Basic
	// Multilingual Plane, such as most emoji, count as two.
	UTF16 Encoding = iota
	// UTF8 counts bytes of the UTF-8 encoding.
	UTF8
)

// ParseEncoding maps an LSP PositionEncodingKind ("utf-16" or "utf-8") to an
// Encoding. It reports false for anything else, including "utf-32", which
// this package does not support.
func ParseEncoding(s string) (Encoding, bool) {
	switch s {
	case "utf-16":
		return UTF16, true
	case "utf-8":
		return UTF8, true
	}
	return UTF16, false
}

// String returns the LSP PositionEncodingKind of e.
func (e Encoding) String() string {
	switch e {
	case UTF16:
		return "utf-16"
	case UTF8:
		return "utf-8"
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// Position is a 0-based line and character, the character counted in the
// units of an Encoding, as in the LSP.
type Position struct {
	Line      uint32
	Character uint32
}

// String formats p as "line:character", both 0-based, for error messages.
func (p Position) String() string {
	return strconv.FormatUint(uint64(p.Line), 10) + ":" + strconv.FormatUint(uint64(p.Character), 10)
}

// before reports whether p comes strictly before q.
func (p Position) before(q Position) bool {
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Character < q.Character
}

// Range is the half-open span [Start, End) between two positions.
type Range struct {
	Start Position
	End   Position
}

// Change is one entry of a didChange notification's contentChanges: Text
// replaces Range, or the whole document when Range is nil.
type Change struct {
	Range *Range
	Text  string
}

var (
	// ErrVersion reports a change whose version is not greater than the
	// version of the document it applies to.
	ErrVersion = errors.New("version does not increase")
	// ErrOutOfRange reports a position outside the document: a line past
	// the last one, a character inside a multi-unit character, or a range
	// whose start comes after its end.
	ErrOutOfRange = errors.New("position out of range")
	// ErrNotOpen reports a change to a document the store does not hold.
	ErrNotOpen = errors.New("document not open")
)
