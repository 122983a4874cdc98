package rules

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The limits of what one reference attaches to a rule: rules travel in
// every review prompt, so a reference to a whole large file must not blow
// the prompt up.
const (
	MaxReferenceLines = 200
	MaxReferenceBytes = 16 << 10
	// maxReferenceScan is how far into a file a range is looked for.
	maxReferenceScan = 8 << 20
	// maxReferencesPerRule keeps a rule that lists many files in check.
	maxReferencesPerRule = 20
)

// referenceRE finds "@file:path", "@file:path#L10", "@file:path#L10-L50"
// (the second "L" optional) and the same forms inside "[[file:…]]".
var referenceRE = regexp.MustCompile(
	"@file:([^\\s#`'\"<>()\\[\\]{}|,;]+)(?:#L(\\d+)(?:-L?(\\d+))?)?" +
		`|\[\[file:([^\]#|\n]+?)(?:#L(\d+)(?:-L?(\d+))?)?\]\]`)

// private says why the workspace file rel must never be read into a
// rule, whose text goes into prompts: it is on the workspace's privacy
// list (ignorePaths, secret files) as named or where its symbolic links
// lead. The answer completes "the file …" ("may hold secrets", "leads to
// .env, which may hold secrets"); "" when the file may be read.
func (ws Workspace) private(rel string) string {
	if why := ws.privateName(rel); why != "" {
		return why
	}
	// A symbolic link to such a file is that file.
	if real, ok := followLinks(ws.FS, rel); ok && real != rel {
		if why := ws.privateName(real); why != "" {
			return fmt.Sprintf("leads to %s, which %s", real, why)
		}
	}
	return ""
}

// privateName is private for the path alone.
func (ws Workspace) privateName(rel string) string {
	g := ws.gate()
	if p := g.IgnoredBy(rel); p != "" {
		return fmt.Sprintf("is ignored by kodus-config ignorePaths (%s)", p)
	}
	if g.Private(rel).Skip() {
		return "may hold secrets"
	}
	return ""
}

// unreadable says why no file the user did not name may be read into a
// rule (a reference, an import): the ignore list may be incomplete. It
// completes "… so no file is read"; "" when files may be read.
func (ws Workspace) unreadable() string {
	if why := ws.gate().Incomplete(); why != "" {
		return "kodus-config ignorePaths may lack a path to ignore (" + why + ")"
	}
	return ""
}

// resolveReferences attaches to r the lines of the workspace files its
// text references. ws.FS is the workspace opened through os.Root, so that
// no symbolic link leads outside it; absolute paths and ".." are refused
// before it is asked, and files on its ignore list are not read. A
// reference that cannot be resolved is a warning.
func resolveReferences(ws Workspace, r *Rule) (warns []*LoadError) {
	fsys := ws.FS
	text := r.Body
	if text == "" {
		text = r.Instructions
	}
	if !strings.Contains(text, "file:") {
		return nil
	}
	seen := map[string]bool{}
	var source []string // r.File's lines, read for the first warning
	for _, m := range referenceRE.FindAllStringSubmatchIndex(text, -1) {
		raw := text[m[0]:m[1]]
		if seen[raw] {
			continue
		}
		seen[raw] = true
		warn := func(format string, args ...any) {
			line := r.Line
			if r.textLine > 0 {
				line = r.textLine + strings.Count(text[:m[0]], "\n")
			}
			if source == nil {
				source = fileLines(fsys, r.File)
			}
			col := 0
			if line > 0 && line <= len(source) {
				col = strings.Index(source[line-1], raw) + 1
			}
			warns = append(warns, &LoadError{File: r.File, Line: line, Column: col, Warning: true,
				Msg: fmt.Sprintf("reference %s: ", raw) + fmt.Sprintf(format, args...)})
		}
		if len(r.References) >= maxReferencesPerRule {
			warn("not resolved: a rule resolves at most %d references", maxReferencesPerRule)
			break
		}
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return text[m[2*i]:m[2*i+1]]
		}
		p, from, to := group(1), group(2), group(3)
		if p == "" {
			p, from, to = group(4), group(5), group(6)
		}
		// A sentence may end right after the path.
		p = strings.TrimRight(strings.TrimSpace(p), ".:!?")
		ref, problem := readReference(ws, p, from, to)
		if problem != "" {
			warn("%s", problem)
			continue
		}
		ref.Raw = raw
		if ref.Truncated {
			warn("%s", truncation(ref))
		}
		r.References = append(r.References, ref)
	}
	return warns
}

// readReference reads the lines from to to (1-based, inclusive; the whole
// file when from is "") of the workspace file p. problem says why it
// cannot, in words for the rule's author.
func readReference(ws Workspace, p, from, to string) (ref Reference, problem string) {
	fsys := ws.FS
	slashed := strings.ReplaceAll(p, `\`, "/")
	switch {
	case slashed == "":
		return ref, "no path after file:"
	case strings.HasPrefix(slashed, "/") || hasVolume(slashed):
		return ref, "absolute paths are not allowed; write the path relative to the workspace root"
	}
	for part := range strings.SplitSeq(slashed, "/") {
		if part == ".." {
			return ref, `".." leads outside the workspace; references resolve inside the workspace only`
		}
	}
	rel := normalizeRelPath(slashed)
	if !fs.ValidPath(rel) || rel == "." {
		return ref, "not a valid workspace-relative file path"
	}
	if why := ws.unreadable(); why != "" {
		return ref, why + ", so no file is read into a rule until it is fixed"
	}
	if why := ws.private(rel); why != "" {
		return ref, "the file " + why + ", so it is never read into a rule"
	}
	start, end := 1, 0 // end 0: to the end of the file
	if from != "" {
		var err error
		if start, err = strconv.Atoi(from); err != nil || start < 1 {
			return ref, fmt.Sprintf("line %q is not a line number; lines start at 1", from)
		}
		end = start
		if to != "" {
			if end, err = strconv.Atoi(to); err != nil || end < start {
				return ref, fmt.Sprintf("the range ends (L%s) before it starts (L%d)", to, start)
			}
		}
	}

	info, err := fs.Stat(fsys, rel)
	if err != nil {
		return ref, fmt.Sprintf("cannot read %s (it must be a file inside the workspace): %v", rel, unwrapPathError(err))
	}
	if !info.Mode().IsRegular() {
		return ref, fmt.Sprintf("%s is not a regular file", rel)
	}
	f, err := fsys.Open(rel)
	if err != nil {
		return ref, fmt.Sprintf("cannot open %s: %v", rel, unwrapPathError(err))
	}
	defer f.Close()

	ref.Path = rel
	ref.RealPath = linkTarget(fsys, rel)
	// A file larger than the scan is read up to a line break at most
	// maxReferenceScan bytes in: the lines after it, and the one it cuts,
	// are not read.
	partial := info.Size() > maxReferenceScan
	br := bufio.NewReader(io.LimitReader(f, maxReferenceScan))
	var b strings.Builder
	n := 0
	cut := false // the scan ended before the range did
	for {
		line, err := br.ReadString('\n')
		if partial && errors.Is(err, io.EOF) {
			cut = true
			break
		}
		if line != "" {
			n++
			if n >= start && (end == 0 || n <= end) {
				if bytes.IndexByte([]byte(line), 0) >= 0 {
					return Reference{}, fmt.Sprintf("%s is a binary file", rel)
				}
				line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r") + "\n"
				if n-start >= MaxReferenceLines || b.Len()+len(line) > MaxReferenceBytes {
					ref.Truncated = true
					break
				}
				if ref.StartLine == 0 {
					ref.StartLine = n
				}
				ref.EndLine = n
				b.WriteString(line)
			}
			if end > 0 && n >= end {
				break
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return Reference{}, fmt.Sprintf("cannot read %s: %v", rel, err)
			}
			break
		}
	}
	if ref.StartLine == 0 {
		switch {
		case ref.Truncated:
			return Reference{}, fmt.Sprintf("line %d of %s is longer than %d bytes", start, rel, MaxReferenceBytes)
		case cut:
			return Reference{}, fmt.Sprintf("line %d is past the first %s of %s (%d lines), the most kodyls reads of a referenced file; move the lines nearer its start or into a file of their own", start, sizeName(maxReferenceScan), rel, n)
		}
		return Reference{}, fmt.Sprintf("%s has %d lines, so line %d does not exist", rel, n, start)
	}
	if cut && !ref.Truncated {
		// The range, or the whole file, goes on past what was read.
		ref.Truncated, ref.cutAtScan = true, true
	}
	ref.Text = b.String()
	return ref, ""
}

// sizeName writes a byte count such as 8 MiB or 16 KiB.
func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// truncation says what of a reference Truncated was left out and why,
// for the warning on the rule file.
func truncation(ref Reference) string {
	if ref.cutAtScan {
		return fmt.Sprintf("only lines %d-%d are attached: the rest is past the first %s of %s, the most kodyls reads of a referenced file",
			ref.StartLine, ref.EndLine, sizeName(maxReferenceScan), ref.Path)
	}
	hint := "reference a shorter range"
	if !strings.Contains(ref.Raw, "#L") {
		hint = "reference the lines that matter, such as #L10-L50"
	}
	return fmt.Sprintf("only lines %d-%d are attached: a reference brings at most %d lines and %s into a rule; %s",
		ref.StartLine, ref.EndLine, MaxReferenceLines, sizeName(MaxReferenceBytes), hint)
}

// hasVolume reports whether p starts with a Windows drive ("C:/").
func hasVolume(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// unwrapPathError drops the operation and path that *fs.PathError repeats,
// since the message names the path already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// followLinks returns where the workspace path rel leads through symbolic
// links, slash-separated and relative to the workspace; false when it
// leads outside (os.Root refuses those) or cannot be told.
func followLinks(fsys fs.FS, rel string) (string, bool) {
	parts := strings.Split(rel, "/")
	for hops, i := 0, 0; i < len(parts); i++ {
		cur := path.Join(parts[:i+1]...)
		info, err := fs.Lstat(fsys, cur)
		if err != nil {
			return path.Join(parts...), errors.Is(err, fs.ErrNotExist)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if hops++; hops > 40 {
			return "", false
		}
		target, err := fs.ReadLink(fsys, cur)
		if err != nil || path.IsAbs(target) {
			return "", false
		}
		next := path.Join(path.Dir(cur), filepath.ToSlash(target))
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", false
		}
		rest := parts[i+1:]
		parts = append(strings.Split(next, "/"), rest...)
		if next == "." {
			parts = rest
		}
		i = -1
	}
	return path.Join(parts...), true
}

// linkTarget is where the workspace path rel leads through symbolic
// links, or "" when it is no link or leads nowhere the workspace holds.
func linkTarget(fsys fs.FS, rel string) string {
	if real, ok := followLinks(fsys, rel); ok && real != rel {
		return real
	}
	return ""
}

// fileLines returns the lines of the rule file name as its parser saw them
// (BOM and CR removed), or none when it cannot be read.
func fileLines(fsys fs.FS, name string) []string {
	data, err := fs.ReadFile(fsys, name)
	if err == nil {
		data, err = DecodeText(data)
	}
	if err != nil {
		return []string{}
	}
	return strings.Split(string(normalizeText(data)), "\n")
}
