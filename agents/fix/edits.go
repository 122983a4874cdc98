package fix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/kodustech/kodyls/agents/tools"
)

// Edit replaces OldText, which must occur exactly once in File, by
// NewText. File is relative to the workspace root, slash-separated.
type Edit struct {
	File    string `json:"file" jsonschema:"path relative to the workspace root"`
	OldText string `json:"oldText" jsonschema:"text copied exactly from the file on disk, occurring once in it"`
	NewText string `json:"newText" jsonschema:"the replacement"`
}

// editsInput is the input of a propose_edits step.
type editsInput struct {
	Edits []Edit `json:"edits"`
}

// ErrRejected wraps the reasons edits were refused.
var ErrRejected = errors.New("edits rejected")

// checker validates edits against a workspace without writing anything.
type checker struct {
	root   string
	ignore func(rel string) bool
	// files holds each file's content as the edits validated so far left
	// it, keyed by the cleaned relative path.
	files map[string]string
	// orig holds the content on disk.
	orig map[string]string
	// names maps the real path of each file edited (its symbolic links
	// resolved) to the name the edits gave it.
	names map[string]string
}

func newChecker(root string, ignore func(string) bool) *checker {
	return &checker{root: root, ignore: ignore, files: map[string]string{}, orig: map[string]string{}, names: map[string]string{}}
}

// relPath turns a model-given path into a clean workspace-relative one, or
// says why it cannot be edited.
func (c *checker) relPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("no file given")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		r, err := filepath.Rel(c.root, filepath.Clean(p))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is outside the workspace", p)
		}
		p = r
	}
	rel := path.Clean(filepath.ToSlash(p))
	switch {
	case rel == ".":
		return "", fmt.Errorf("%s is the workspace itself, not a file", p)
	case rel == ".." || strings.HasPrefix(rel, "../"):
		return "", fmt.Errorf("%s leaves the workspace", p)
	case tools.Workspace{Root: c.root}.InGitDir(rel):
		// git runs the commands its configuration names (core.fsmonitor,
		// hooks) at the next git status, whatever repository, nested or
		// linked, the directory belongs to.
		return "", fmt.Errorf("%s is inside .git (as named or where its symlinks lead), whose files make git run commands, and is never edited", p)
	case tools.Workspace{Root: c.root, Ignore: c.ignore}.Ignored(rel):
		return "", fmt.Errorf("%s is on the privacy ignore list and is never edited", rel)
	}
	return rel, nil
}

// content returns the file's current content (after earlier edits).
func (c *checker) content(rel string) (string, error) {
	if s, ok := c.files[rel]; ok {
		return s, nil
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return "", fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	data, err := root.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%s does not exist in the workspace", rel)
		case strings.Contains(err.Error(), "escapes"):
			return "", fmt.Errorf("%s resolves outside the workspace through a symlink", rel)
		}
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	c.files[rel], c.orig[rel] = string(data), string(data)
	return string(data), nil
}

// apply validates one edit and applies it to the checker's copy.
func (c *checker) apply(e Edit) (Edit, error) {
	rel, err := c.relPath(e.File)
	if err != nil {
		return e, err
	}
	e.File = rel
	if e.OldText == "" {
		return e, fmt.Errorf("%s: oldText is empty; copy the text to replace from the file", rel)
	}
	if e.OldText == e.NewText {
		return e, fmt.Errorf("%s: oldText and newText are the same", rel)
	}
	text, err := c.content(rel)
	if err != nil {
		return e, err
	}
	// One file edited under two names (a symbolic link and its target)
	// would be written twice, the second write losing the first's edits.
	if real, ok := (tools.Workspace{Root: c.root}).Resolve(rel); ok {
		if other, seen := c.names[real]; seen && other != rel {
			return e, fmt.Errorf("%s and %s are the same file (through a symbolic link); edit it under one name", other, rel)
		}
		c.names[real] = rel
	}
	switch n := strings.Count(text, e.OldText); n {
	case 1:
	case 0:
		return e, fmt.Errorf("%s: oldText is not in the file; copy it exactly, whitespace included", rel)
	default:
		return e, fmt.Errorf("%s: oldText occurs %d times; include more surrounding lines so it occurs once", rel, n)
	}
	updated := strings.Replace(text, e.OldText, e.NewText, 1)
	// Checked against the file on disk, so that edits split across
	// several pieces are caught as a whole.
	if why := c.newReference(rel, c.orig[rel], updated); why != "" {
		return e, errors.New(why)
	}
	c.files[rel] = updated
	return e, nil
}

// applyAll validates edits in order; any invalid edit rejects them all,
// with every reason.
func (c *checker) applyAll(edits []Edit) ([]Edit, error) {
	if len(edits) == 0 {
		return nil, fmt.Errorf("%w: no edits given", ErrRejected)
	}
	out := make([]Edit, 0, len(edits))
	var errs []string
	for i, e := range edits {
		ce, err := c.apply(e)
		if err != nil {
			errs = append(errs, fmt.Sprintf("edit %d: %v", i+1, err))
			continue
		}
		out = append(out, ce)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrRejected, strings.Join(errs, "; "))
	}
	return out, nil
}

// decodeEdits reads a propose_edits step's input.
func decodeEdits(raw json.RawMessage) ([]Edit, error) {
	var in editsInput
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf(`%w: the input is not {"edits": [{"file", "oldText", "newText"}]}: %v`, ErrRejected, err)
	}
	return in.Edits, nil
}

// Check validates edits against the workspace at root, as they would be
// applied in order, and returns them with cleaned paths. Nothing is
// written.
func Check(root string, ignore func(string) bool, edits []Edit) ([]Edit, error) {
	return newChecker(root, ignore).applyAll(edits)
}

// Diff renders edits as a unified diff against the files at root.
func Diff(root string, ignore func(string) bool, edits []Edit) (string, error) {
	c := newChecker(root, ignore)
	if _, err := c.applyAll(edits); err != nil {
		return "", err
	}
	return c.diff(), nil
}

func (c *checker) diff() string {
	var b strings.Builder
	for _, rel := range sortedKeys(c.files) {
		if c.files[rel] != c.orig[rel] {
			b.WriteString(udiff.Unified("a/"+rel, "b/"+rel, c.orig[rel], c.files[rel]))
		}
	}
	return b.String()
}

// Apply writes edits to the workspace at root, after validating all of
// them against the files as they are now; none is written when one
// changes kodyls's own configuration. The new content of every file is
// first written beside it, in a temporary file (a symlink's target is
// opened for writing instead); only when all of them are ready are they
// renamed over the files, so that a file that cannot be written (a
// read-only directory, a full disk) leaves every file as it was and Apply
// returns no file. It returns the files written: all of them, or, when a
// rename fails after others succeeded, those written before it, with the
// error.
func Apply(root string, ignore func(string) bool, edits []Edit) ([]string, error) {
	c := newChecker(root, ignore)
	checked, err := c.applyAll(edits)
	if err != nil {
		return nil, err
	}
	for _, e := range checked {
		if why := ownConfiguration(root, e.File); why != "" {
			return nil, fmt.Errorf("%w: %s: %s", ErrOwnConfiguration, e.File, why)
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	defer r.Close()
	var ready []pendingWrite
	for _, rel := range sortedKeys(c.files) {
		if c.files[rel] == c.orig[rel] {
			continue
		}
		w, err := prepareWrite(r, rel, []byte(c.files[rel]))
		if err != nil {
			for _, w := range ready {
				w.discard(r)
			}
			return nil, fmt.Errorf("write %s: %w", rel, err)
		}
		ready = append(ready, w)
	}
	beforeCommit()
	var written []string
	for i, w := range ready {
		if err := w.commit(r); err != nil {
			for _, rest := range ready[i+1:] {
				rest.discard(r)
			}
			return written, fmt.Errorf("write %s: %w", w.rel, err)
		}
		written = append(written, w.rel)
	}
	return written, nil
}

// beforeCommit runs between the two phases of Apply; tests change files
// there.
var beforeCommit = func() {}

// Locate returns the byte offsets of an edit's oldText in text, which
// must hold it exactly once.
func Locate(text string, e Edit) (start, end int, err error) {
	switch n := strings.Count(text, e.OldText); {
	case e.OldText == "":
		return 0, 0, fmt.Errorf("%s: oldText is empty", e.File)
	case n != 1:
		return 0, 0, fmt.Errorf("%s: the text to replace occurs %d times in the current content; the file changed since the fix was made", e.File, n)
	}
	start = strings.Index(text, e.OldText)
	return start, start + len(e.OldText), nil
}

// pendingWrite is a file's new content made ready to replace it: a
// temporary file beside it, renamed over it by commit, so that a crash
// leaves either the old or the new text, never a truncated file; or, for
// a symlink (inside the workspace), which must stay a link, its target
// opened for writing, written through by commit.
type pendingWrite struct {
	rel  string   // the workspace-relative, slash-separated path
	name string   // rel in the OS's form
	tmp  string   // the temporary file, or ""
	link *os.File // the symlink's target, or nil
	data []byte
}

// prepareWrite makes data ready to replace the file rel.
func prepareWrite(r *os.Root, rel string, data []byte) (pendingWrite, error) {
	w := pendingWrite{rel: rel, name: filepath.FromSlash(rel), data: data}
	mode := fs.FileMode(0o644)
	st, err := r.Lstat(w.name)
	if err == nil {
		mode = st.Mode().Perm()
		if st.Mode()&fs.ModeSymlink != 0 {
			f, err := r.OpenFile(w.name, os.O_WRONLY, 0)
			if err != nil {
				return w, err
			}
			w.link = f
			return w, nil
		}
	}
	tmp := w.name + ".kodyls-fix.tmp"
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		// Nothing of ours to remove: what is there (a directory of that
		// name, say) stays.
		return w, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Remove(tmp)
		return w, err
	}
	w.tmp = tmp
	return w, nil
}

// commit replaces the file with the prepared content.
func (w pendingWrite) commit(r *os.Root) error {
	if w.link != nil {
		defer w.link.Close()
		if err := w.link.Truncate(0); err != nil {
			return err
		}
		_, err := w.link.Write(w.data)
		return err
	}
	if err := r.Rename(w.tmp, w.name); err != nil {
		_ = r.Remove(w.tmp)
		return err
	}
	return nil
}

// discard drops the prepared content.
func (w pendingWrite) discard(r *os.Root) {
	if w.link != nil {
		_ = w.link.Close()
	}
	if w.tmp != "" {
		_ = r.Remove(w.tmp)
	}
}
