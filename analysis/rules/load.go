package rules

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"
)

// kodyRulesDir is where Kody Markdown rule files live, relative to the
// workspace root.
const kodyRulesDir = ".kody/rules"

// MaxFileSize is the largest rule file a source reads. Rules are short
// prose; anything larger is almost certainly a mistake (a generated or
// binary file) and would only slow every reload down.
const MaxFileSize = 1 << 20

// KodyMarkdown is the source of Kody Rules written as Markdown with YAML
// front matter: every .md file under .kody/rules, recursively.
type KodyMarkdown struct{}

// Name implements Source.
func (KodyMarkdown) Name() string { return "kody-md" }

// WatchPaths implements Source.
func (KodyMarkdown) WatchPaths() []string { return []string{kodyRulesDir} }

// Owns implements Source: .kody/rules itself, and the .md files and the
// directories below it whose names do not start with ".", the ones Load
// reads. A path with no extension may be a directory, so it counts.
func (KodyMarkdown) Owns(rel string) bool {
	rel = normalizeRelPath(rel)
	if rel == kodyRulesDir {
		return true
	}
	sub, ok := strings.CutPrefix(rel, kodyRulesDir+"/")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(sub, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	ext := path.Ext(sub)
	return ext == "" || strings.EqualFold(ext, ".md")
}

// Load implements Source. A missing rules directory means no rules and no
// error. A file larger than MaxFileSize is reported and skipped. Files are
// read as ParseMarkdown reads them: front matter and a title are optional,
// and unknown keys are kept with a warning.
//
// Symbolic links to files inside the workspace are followed; symbolic links
// to directories are not, which keeps link cycles from looping. Names
// starting with "." are skipped: they are editor backups and lock files,
// not rules.
func (KodyMarkdown) Load(ctx context.Context, ws Workspace) (rules []*Rule, errs []*LoadError) {
	isMD := func(name string) bool { return strings.EqualFold(path.Ext(name), ".md") }
	var parsed []*LoadError
	errs = walkRuleFiles(ctx, ws, kodyRulesDir, true, isMD, func(p string, data []byte) {
		rule, warns, err := ParseMarkdown(p, data)
		parsed = append(parsed, warns...)
		var lerr *LoadError
		switch {
		case errors.As(err, &lerr):
			parsed = append(parsed, lerr)
		case err != nil:
			parsed = append(parsed, &LoadError{File: p, Msg: err.Error()})
		case rule != nil:
			rules = append(rules, rule)
		}
	})
	return rules, append(errs, parsed...)
}

// walkRuleFiles calls fn with the content of every regular file under dir
// (recursively when recursive is set) whose name match accepts, in lexical
// order, and returns the problems met on the way. A missing dir is no
// problem. Names starting with "." are skipped, files and directories
// alike; symbolic links to files inside the workspace are followed, those
// to directories are not.
func walkRuleFiles(ctx context.Context, ws Workspace, dir string, recursive bool, match func(name string) bool, fn func(p string, data []byte)) (errs []*LoadError) {
	fsys := ws.FS
	info, err := fs.Stat(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// A parent that is a file, such as a .github file, holds no rules
		// either.
		return nil
	case err != nil:
		return []*LoadError{{File: dir, Msg: fmt.Sprintf("cannot read rules directory: %v", err)}}
	case !info.IsDir():
		return []*LoadError{{File: dir, Msg: fmt.Sprintf("is not a directory; rule files go in %s/", dir)}}
	}

	walkErr := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			// An unreadable directory or entry is reported and skipped;
			// its siblings still load.
			errs = append(errs, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || !recursive) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") {
			return nil
		}
		if recursive && d.Type()&fs.ModeSymlink != 0 {
			// A real directory here would be walked; a link to one is
			// not, and the rules in it would be missing without a word.
			if info, err := fs.Stat(fsys, p); err == nil && info.IsDir() {
				errs = append(errs, dirLinkWarning(fsys, p))
				return nil
			}
		}
		if !match(name) {
			return nil
		}
		data, lerr := readRuleFile(ws, p, d)
		switch {
		case lerr != nil:
			errs = append(errs, lerr)
		case data != nil:
			fn(p, data)
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, &LoadError{File: dir, Msg: fmt.Sprintf("cannot walk rules directory: %v", walkErr)})
	}
	return errs
}

// readRuleFile reads one rule file. It returns (nil, nil) for entries that
// are not rule files after all, such as a symbolic link to a directory; d
// may be nil for a file found by name rather than by walking.
func readRuleFile(ws Workspace, p string, d fs.DirEntry) ([]byte, *LoadError) {
	fsys := ws.FS
	// Rule text goes into review prompts: a rule file on the workspace's
	// ignore list is not read, nor is a link to a file on it (CLAUDE.md →
	// .env, an import of notes.md → private/notes.md), which is that file.
	// A link to a secret file is an error; a file the team chose to ignore
	// is a warning.
	if why := ws.privateName(p); why != "" {
		return nil, &LoadError{File: p, Warning: true, Skipped: true, Msg: "not read: the file " + why + ", and no file on the ignore list is sent to the model"}
	}
	if real, ok := followLinks(fsys, p); ok && real != p {
		if why := ws.privateName(real); why != "" {
			ignored := ws.gate().IgnoredBy(real) != ""
			return nil, &LoadError{File: p, Warning: ignored, Skipped: ignored, Msg: fmt.Sprintf("leads to %s, which %s, so it is never read as a rule", real, why)}
		}
	}
	var mode fs.FileMode
	if d != nil {
		mode = d.Type()
	} else {
		info, err := fs.Lstat(fsys, p)
		if err != nil {
			return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)}
		}
		mode = info.Mode().Type()
	}
	if mode&fs.ModeSymlink != 0 {
		// Stat follows the link inside the root and fails when it leads
		// out of it.
		info, err := fs.Stat(fsys, p)
		if err != nil {
			return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot follow symbolic link (it must stay inside the workspace): %v", err)}
		}
		if info.IsDir() {
			return nil, nil
		}
		mode = info.Mode().Type()
	}
	// Opening a FIFO or a device would block or read forever; only regular
	// files are rules.
	if !mode.IsRegular() {
		return nil, nil
	}

	f, err := fsys.Open(p)
	if err != nil {
		return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot open: %v", err)}
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > MaxFileSize {
		return nil, tooLarge(p, info.Size())
	}
	// The limit also covers a file that grows between Stat and ReadAll.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &LoadError{File: p, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(p, int64(len(data)))
	}
	text, err := DecodeText(data)
	if err != nil {
		return nil, &LoadError{File: p, Msg: "rule file " + err.Error()}
	}
	return text, nil
}

// dirLinkWarning is the warning of p, a symbolic link to a directory met
// in a rules directory.
func dirLinkWarning(fsys fs.FS, p string) *LoadError {
	to := "a directory"
	if real, ok := followLinks(fsys, p); ok && real != p {
		to = "the directory " + real
	}
	return &LoadError{File: p, Warning: true, Msg: fmt.Sprintf("not read: it is a symbolic link to %s, and symbolic links to directories are not followed (a link cycle would never end); link the rule files one by one, or move the directory here", to)}
}

// The byte order marks of UTF-16 and UTF-32.
var (
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
	bomUTF32LE = []byte{0xff, 0xfe, 0, 0}
	bomUTF32BE = []byte{0, 0, 0xfe, 0xff}
)

// DecodeText turns the content of a rule file into the UTF-8 text every
// rule source parses: UTF-8 as it is (its byte order mark is left for the
// parsers to drop), UTF-16 with a byte order mark (as Windows tools write
// it) decoded. Anything else — NUL bytes, bytes that are no UTF-8, UTF-32 —
// is no rule text, and the error (worded to follow "rule file ") says so:
// read as it is, it would reach the model as garbage.
func DecodeText(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, bomUTF32LE) || bytes.HasPrefix(data, bomUTF32BE):
		return nil, errors.New("is not UTF-8 text: it is UTF-32; save it as UTF-8")
	case bytes.HasPrefix(data, bomUTF16LE):
		return decodeUTF16(data[2:], binary.LittleEndian)
	case bytes.HasPrefix(data, bomUTF16BE):
		return decodeUTF16(data[2:], binary.BigEndian)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("is not UTF-8 text: line %d holds a NUL byte (a binary file, or UTF-16 without a byte order mark); save it as UTF-8", lineOf(data, i))
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("is not UTF-8 text: line %d holds bytes that are no UTF-8 (another encoding, such as Windows-1252, or a binary file); save it as UTF-8", lineOf(data, invalidUTF8(data)))
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// decodeUTF16 decodes UTF-16 text without its byte order mark into UTF-8.
func decodeUTF16(data []byte, order binary.ByteOrder) ([]byte, error) {
	if len(data)%2 != 0 {
		return nil, errors.New("is not UTF-16 text, as its byte order mark says: it has an odd number of bytes; save it as UTF-8")
	}
	out := make([]byte, 0, len(data)/2*3/2)
	line := 1
	for i := 0; i < len(data); i += 2 {
		r := rune(order.Uint16(data[i:]))
		if utf16.IsSurrogate(r) {
			var r2 rune = utf8.RuneError
			if i+3 < len(data) {
				r2 = rune(order.Uint16(data[i+2:]))
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				return nil, fmt.Errorf("is not UTF-16 text, as its byte order mark says: line %d holds a broken surrogate pair; save it as UTF-8", line)
			}
			i += 2
		}
		switch r {
		case 0:
			return nil, fmt.Errorf("is not text: line %d holds a NUL character; save it as UTF-8", line)
		case '\n':
			line++
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}

// lineOf is the 1-based line of data's byte i.
func lineOf(data []byte, i int) int { return bytes.Count(data[:i], []byte("\n")) + 1 }

// invalidUTF8 is the offset of data's first byte that is no UTF-8.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

func tooLarge(p string, size int64) *LoadError {
	return &LoadError{File: p, Msg: fmt.Sprintf("rule file is too large (%d bytes, the limit is %d); rules are short prose, so split or shorten it", size, MaxFileSize)}
}
