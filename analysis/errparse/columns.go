package errparse

import (
	"strings"
	"unicode/utf8"
)

// ColumnUnit is what a tool's column counts. Tools disagree: a column
// printed for a line with a tab, an accented letter or an emoji before the
// error means another place in each unit, and an editor counts in UTF-16
// code units or UTF-8 bytes (LSP's positionEncoding). ByteOffset turns a
// column into a place in the line's text, from which any other unit
// follows.
//
// What each tool prints was measured on a line holding a tab, "é" and
// "😀😀" before the error (go 1.26, gcc 12, clang 14, rustc 1.95, javac
// 17, CPython 3.8 to 3.13, node 20, tsc 5, mypy 1.0, shellcheck 0.9):
//
//	tool                              unit
//	go build, go vet                  UTF-8 bytes (go/token)
//	gcc, g++ (their default)          display columns: a tab advancing to
//	                                  the next multiple of 8, a wide
//	                                  character (CJK, emoji) 2
//	gcc, g++ with -fdiagnostics-column-unit=byte, clang
//	                                  UTF-8 bytes (the build sets it when
//	                                  the command has the flag)
//	mypy                              UTF-8 bytes (Python's ast offsets)
//	rustc, cargo (text and JSON)      characters (code points; a tab is 1)
//	rust panics ("panicked at f:l:c") display columns: a tab is 4, an
//	                                  emoji or CJK character 2 (approximated)
//	python SyntaxError caret          characters in Python 3.13 and later;
//	                                  3.12 and earlier place the caret by
//	                                  UTF-8 bytes of the line, which differ
//	                                  only on a line with non-ASCII text
//	                                  before the error
//	shellcheck -f gcc                 characters
//	javac's caret line                UTF-16 code units (a tab is 1)
//	javac -XDrawDiagnostics, javax.tools (Maven's compiler plugin)
//	                                  UTF-16 code units, a tab advancing to
//	                                  the next multiple of 8
//	node (stack frames and the caret of a syntax error), tsc
//	                                  UTF-16 code units (JavaScript strings)
//
// Not run for this table: jest, vitest and node --test print V8's stack
// frames and ESLint the offsets of JavaScript strings (UTF-16 too);
// staticcheck uses go/token and the sanitizers the compiler's columns
// (bytes). flake8 mixes units: pyflakes (F) and mccabe (C9) codes give
// the ast's byte offsets, pycodestyle (E, W) characters; its lines carry
// the unit of their code. Other tools (the last-resort "file:line:col"
// form, nasm, …) are taken to count bytes.
// On a line of ASCII text every unit but the display columns agrees.
type ColumnUnit uint8

const (
	// UnitDefault is the zero value: Parse replaces it with the unit of
	// the error's tool (see ToolColumnUnit).
	UnitDefault ColumnUnit = iota
	// UnitBytes counts UTF-8 bytes.
	UnitBytes
	// UnitChars counts Unicode code points.
	UnitChars
	// UnitUTF16 counts UTF-16 code units: a character outside the Basic
	// Multilingual Plane (most emoji) is 2.
	UnitUTF16
	// UnitUTF16Tab8 counts UTF-16 code units, a tab advancing to the next
	// multiple of 8 (javac's own column numbers).
	UnitUTF16Tab8
	// UnitDisplay counts terminal display columns as rustc does for a
	// panic's location: a tab is 4, a wide character (CJK, emoji) 2, a
	// combining mark 0.
	UnitDisplay
	// UnitDisplayTab8 counts display columns as gcc does by default: a
	// tab advances to the next multiple of 8, a wide character is 2, a
	// combining mark 0.
	UnitDisplayTab8
)

// String names the unit, for logs and tests.
func (u ColumnUnit) String() string {
	switch u {
	case UnitBytes:
		return "bytes"
	case UnitChars:
		return "characters"
	case UnitUTF16:
		return "utf-16"
	case UnitUTF16Tab8:
		return "utf-16, tab 8"
	case UnitDisplay:
		return "display columns"
	case UnitDisplayTab8:
		return "display columns, tab 8"
	}
	return "default"
}

// ToolColumnUnit is the unit of the columns a tool (an Error's Tool)
// prints; see ColumnUnit for the measurements.
func ToolColumnUnit(tool string) ColumnUnit {
	switch tool {
	case "rustc", "cargo", "python", "shellcheck":
		return UnitChars
	case "rust panic":
		return UnitDisplay
	case "gcc":
		return UnitDisplayTab8
	case "javac", "node", "tsc", "eslint", "jest", "vitest":
		return UnitUTF16
	}
	return UnitBytes
}

// CommandColumnUnits sets the unit of the errors of command's output that
// its flags decide and its output does not show: gcc and g++ count display
// columns unless -fdiagnostics-column-unit=byte is given.
func CommandColumnUnits(errs []Error, command string) {
	if !strings.Contains(command, "-fdiagnostics-column-unit=byte") {
		return
	}
	for i := range errs {
		if errs[i].Tool == "gcc" {
			errs[i].ColumnUnit = UnitBytes
		}
	}
}

// ByteOffset is the 0-based byte offset in line (one line of text, without
// its terminator) of the 1-based column counted in unit u. A column of 0
// or less is the start of the line; a column past the end of the line is
// its end; a column inside a character (half of a surrogate pair, a byte
// inside a multi-byte character, the middle of a tab's width) is the start
// of that character.
func (u ColumnUnit) ByteOffset(line string, column int) int {
	want := column - 1
	if want <= 0 {
		return 0
	}
	if u == UnitBytes || u == UnitDefault {
		n := min(want, len(line))
		for n > 0 && n < len(line) && !utf8.RuneStart(line[n]) {
			n--
		}
		return n
	}
	at := 0 // the column where the character at i starts, 0-based
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		next := at + u.width(r, at)
		if next > want {
			return i
		}
		at = next
		i += size
	}
	return len(line)
}

// width is how many columns of unit u the character r takes when it starts
// at column at.
func (u ColumnUnit) width(r rune, at int) int {
	switch u {
	case UnitUTF16:
		if r > 0xFFFF {
			return 2
		}
	case UnitUTF16Tab8:
		if r == '\t' {
			return 8 - at%8
		}
		if r > 0xFFFF {
			return 2
		}
	case UnitDisplay, UnitDisplayTab8:
		switch {
		case r == '\t' && u == UnitDisplayTab8:
			return 8 - at%8
		case r == '\t':
			return 4
		case combining(r):
			return 0
		case wide(r):
			return 2
		}
	}
	return 1
}

// combining reports the combining marks of the common blocks, which take no
// column of their own on a terminal.
func combining(r rune) bool {
	return r >= 0x0300 && r <= 0x036F || r >= 0x1AB0 && r <= 0x1AFF ||
		r >= 0x1DC0 && r <= 0x1DFF || r >= 0x20D0 && r <= 0x20FF ||
		r >= 0xFE20 && r <= 0xFE2F || r == 0x200B || r == 0x200D || r >= 0xFE00 && r <= 0xFE0F
}

// wide reports the characters a terminal shows two columns wide: the East
// Asian wide and fullwidth blocks and the emoji blocks (an approximation of
// Unicode's East_Asian_Width, enough for source code).
func wide(r rune) bool {
	return r >= 0x1100 && r <= 0x115F || r >= 0x2E80 && r <= 0x303E ||
		r >= 0x3041 && r <= 0x33FF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x4E00 && r <= 0x9FFF || r >= 0xA000 && r <= 0xA4CF ||
		r >= 0xAC00 && r <= 0xD7A3 || r >= 0xF900 && r <= 0xFAFF ||
		r >= 0xFE30 && r <= 0xFE4F || r >= 0xFF00 && r <= 0xFF60 ||
		r >= 0xFFE0 && r <= 0xFFE6 || r >= 0x1F300 && r <= 0x1F64F ||
		r >= 0x1F900 && r <= 0x1F9FF || r >= 0x1F680 && r <= 0x1F6FF ||
		r >= 0x20000 && r <= 0x3FFFD
}
