// Package tools provides the workspace tools (agent.Tool values) the
// root-cause agent uses to look at the user's code: reading a file,
// searching the workspace, listing files, finding references and reading
// the toolchains' local documentation.
//
// The arguments come from a model, so they are untrusted: every file access
// goes through an os.Root opened on the workspace, which refuses ".."
// and symlinks that lead outside it, absolute paths are refused with a
// message the model can act on, paths on the user's privacy list (Ignore)
// are refused, and every output is capped so that one call cannot flood the
// model's context.
package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/redact"
)

// MaxOutput caps every tool's output, in bytes.
const MaxOutput = 8 << 10

// maxFileSize is the largest file searched; bigger ones are generated or
// data more often than code.
const maxFileSize = 1 << 20

// Workspace gives tools access to the files under Root.
type Workspace struct {
	Root string
	// Ignore reports whether a slash-separated path relative to Root is on
	// the user's privacy list; such files are never read, listed or
	// searched. nil ignores nothing.
	Ignore func(rel string) bool
	// Overlay is the text of files open in an editor, by slash-separated
	// path relative to Root (as clean returns it): read_file, the
	// searches and Contents read it rather than the file on disk, which
	// lacks the unsaved changes the editor's line numbers count. The
	// checks on the path (inside Root, not on the privacy list) are the
	// same. nil reads the disk only.
	Overlay map[string]string
}

// errOutside is wrapped by the errors for paths that are not inside the
// workspace.
var errOutside = errors.New("path is outside the workspace")

// clean validates a model-given path and returns it relative to the root,
// slash-separated ("." for the root itself).
func (w Workspace) clean(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%w: %q is absolute; give a path relative to the workspace root, e.g. src/main.go", errOutside, p)
	}
	rel := path.Clean(filepath.ToSlash(p))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %q leaves the workspace root", errOutside, p)
	}
	if w.ignored(rel) {
		return "", fmt.Errorf("%s is on the privacy list and cannot be read", rel)
	}
	return rel, nil
}

func (w Workspace) ignored(rel string) bool {
	return w.Ignored(rel)
}

// Ignored reports whether the file at rel (slash-separated, relative to
// Root) is on the privacy list, as named or where its symbolic links lead:
// a link notes.txt → .env is .env, and a link to a listed directory
// leads into it. A path that does not exist yet is judged by where its
// nearest existing parent leads.
func (w Workspace) Ignored(rel string) bool {
	if w.Ignore == nil || rel == "." {
		return false
	}
	if w.Ignore(rel) {
		return true
	}
	real, ok := w.resolve(rel)
	return ok && real != rel && real != "." && w.Ignore(real)
}

// InGitDir reports whether rel (slash-separated, relative to Root), as
// named or where its symbolic links lead, is a .git directory or inside
// one, at any depth: a nested repository's sub/.git as well, a link gl →
// .git too, whatever the case of the name. git runs commands its
// configuration names (hooks, core.fsmonitor), so no tool writes there,
// and listing it shows git's internals rather than the user's code.
func (w Workspace) InGitDir(rel string) bool {
	if gitComponent(rel) {
		return true
	}
	real, ok := w.resolve(rel)
	return ok && gitComponent(real)
}

// gitComponent reports whether a component of the slash-separated path
// names a .git directory: ".git" in any case, and the names Windows reads
// as ".git" (trailing dots and spaces, the short name GIT~1).
func gitComponent(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		part = strings.TrimRight(part, ". ")
		if strings.EqualFold(part, ".git") || strings.EqualFold(part, "git~1") {
			return true
		}
	}
	return false
}

// Resolve returns where rel (slash-separated, relative to Root) leads
// through symbolic links, relative to Root; a path that does not exist yet
// leads where its nearest existing parent does. false when that is outside
// Root or cannot be told.
func (w Workspace) Resolve(rel string) (string, bool) {
	return w.resolve(rel)
}

// resolve returns where rel leads through symbolic links, relative to the
// root; false when that is outside the root or cannot be told (os.Root
// refuses those paths anyway).
func (w Workspace) resolve(rel string) (string, bool) {
	root, err := filepath.EvalSymlinks(w.Root)
	if err != nil {
		return "", false
	}
	p, rest := filepath.Join(w.Root, filepath.FromSlash(rel)), ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			r, err := filepath.Rel(root, filepath.Join(real, rest))
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return "", false
			}
			return filepath.ToSlash(r), true
		}
		parent := filepath.Dir(p)
		if parent == p || !errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// open opens the workspace root; the caller closes it.
func (w Workspace) open() (*os.Root, error) {
	if w.Root == "" {
		return nil, errors.New("no workspace root is configured")
	}
	r, err := os.OpenRoot(w.Root)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return r, nil
}

// escapes reports os.Root's refusal of a path that leads outside it.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "escapes")
}

// inside returns where rel leads when os.Root refused it as escaping the
// root although it stays inside: os.Root refuses every link with an
// absolute target, util.c → /abs/ws/src/util.c included. false when rel
// really leads outside, or where it leads is on the privacy list.
func (w Workspace) inside(rel string, err error) (string, bool) {
	if !escapes(err) {
		return "", false
	}
	real, ok := w.resolve(rel)
	if !ok || real == "." || w.Ignored(real) {
		return "", false
	}
	return filepath.FromSlash(real), true
}

// openFile opens rel through root, following a link that os.Root refuses
// although it stays inside the workspace.
func (w Workspace) openFile(root *os.Root, rel string) (*os.File, error) {
	f, err := root.Open(rel)
	if real, ok := w.inside(rel, err); ok {
		f, err = root.Open(real)
	}
	return f, err
}

// readFile is root.ReadFile, following a link that os.Root refuses
// although it stays inside the workspace.
func (w Workspace) readFile(root *os.Root, rel string) ([]byte, error) {
	data, err := root.ReadFile(rel)
	if real, ok := w.inside(rel, err); ok {
		data, err = root.ReadFile(real)
	}
	return data, err
}

// stat is root.Stat, following a link that os.Root refuses although it
// stays inside the workspace.
func (w Workspace) stat(root *os.Root, rel string) (fs.FileInfo, error) {
	st, err := root.Stat(rel)
	if real, ok := w.inside(rel, err); ok {
		st, err = root.Stat(real)
	}
	return st, err
}

// rootErr rewrites os.Root's escape errors into what the model should know.
func rootErr(rel string, err error) error {
	if escapes(err) {
		return fmt.Errorf("%w: %s resolves (through a symlink) outside the workspace", errOutside, rel)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist in the workspace: %w", rel, fs.ErrNotExist)
	}
	return err
}

// capped collects output up to MaxOutput and then says what was left out.
type capped struct {
	b       strings.Builder
	dropped int
}

func (c *capped) line(s string) {
	if c.dropped > 0 || c.b.Len()+len(s)+1 > MaxOutput {
		c.dropped++
		return
	}
	c.b.WriteString(s)
	c.b.WriteByte('\n')
}

func (c *capped) String() string {
	if c.dropped > 0 {
		return c.b.String() + fmt.Sprintf("[output truncated at %d KiB: %d more lines not shown]\n", MaxOutput>>10, c.dropped)
	}
	return c.b.String()
}

// binary reports whether data looks like a binary file.
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// eachLine calls f for each line of r, 1-based, until f returns false.
func eachLine(r io.Reader, f func(n int, line string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxFileSize)
	for n := 1; sc.Scan(); n++ {
		if !f(n, sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}

// shorten cuts a long line for display.
func shorten(s string, n int) string {
	head, cut := redact.Cut(s, n)
	if cut {
		return head + "…"
	}
	return head // redacted when it fits only so
}

// newTool returns the tool name whose JSON arguments decode into A: the
// schema is inferred from A, and a decoding error, naming the tool, is the
// observation the model sees instead of a call to run.
func newTool[A any](name, description string, run func(context.Context, A) (string, error)) agent.Tool {
	var params A
	return agent.Tool{
		Name:        name,
		Description: description,
		Parameters:  params,
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			var a A
			if err := json.Unmarshal(raw, &a); err != nil {
				return "", fmt.Errorf("%s arguments: %w", name, err)
			}
			return run(ctx, a)
		},
	}
}
