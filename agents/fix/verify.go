package fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kodustech/kodyls/analysis/shell"
)

// DefaultBuildTimeout bounds one verifying build.
const DefaultBuildTimeout = 2 * time.Minute

// buildRun is the outcome of one verifying build.
type buildRun struct {
	// ran is whether the build command started: false when the scratch
	// copy could not be made or the command could not start.
	ran    bool
	passed bool
	exit   int
	output string
}

// verify copies the workspace to a scratch directory, applies edits there
// and runs the build command in its dir (relative to the root, "" for the
// root). The user's files are only read.
func (f *Fixer) verify(ctx context.Context, command, dir string, timeout time.Duration, edits []Edit) (buildRun, error) {
	scratch, err := os.MkdirTemp("", "kodyls-fix-")
	if err != nil {
		return buildRun{}, fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	if err := copyWorkspace(ctx, f.Workspace, scratch, f.ignore()); err != nil {
		return buildRun{}, fmt.Errorf("copy the workspace: %w", err)
	}
	c := newChecker(scratch, f.ignore())
	if _, err := c.applyAll(edits); err != nil {
		return buildRun{}, err
	}
	r, err := os.OpenRoot(scratch)
	if err != nil {
		return buildRun{}, err
	}
	for rel, text := range c.files {
		if text != c.orig[rel] {
			if err := r.WriteFile(filepath.FromSlash(rel), []byte(text), 0o644); err != nil {
				_ = r.Close()
				return buildRun{}, fmt.Errorf("apply the edits to the scratch copy: %w", err)
			}
		}
	}
	_ = r.Close()
	if timeout <= 0 {
		timeout = DefaultBuildTimeout
	}
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	runIn := scratch
	if dir != "" {
		// A directory with no file the copy keeps is still where the
		// command runs.
		runIn = filepath.Join(scratch, filepath.FromSlash(dir))
		if err := os.MkdirAll(runIn, 0o755); err != nil {
			return buildRun{}, fmt.Errorf("scratch directory: %w", err)
		}
	}
	out, err := shell.Run(bctx, runIn, command)
	// The output goes to the model: what it says about files outside the
	// scratch copy stays on the machine.
	alias, _ := filepath.EvalSymlinks(scratch)
	out, withheld := withholdOutside(out, scratch, alias, dir)
	if withheld > 0 {
		f.log().Info("fix: build output about files outside the workspace withheld", "lines", withheld)
	}
	// The output names the scratch copy; the user knows the workspace.
	if alias != "" && alias != scratch {
		out = strings.ReplaceAll(out, alias, f.Workspace)
	}
	out = strings.ReplaceAll(out, scratch, f.Workspace)
	if ctx.Err() != nil {
		return buildRun{ran: true}, ctx.Err()
	}
	if bctx.Err() != nil {
		return buildRun{ran: true, output: out, exit: -1}, fmt.Errorf("the build %q did not finish within %s", command, timeout)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return buildRun{ran: true, passed: true, output: out}, nil
	case errors.As(err, &exit):
		return buildRun{ran: true, exit: exit.ExitCode(), output: out}, nil
	default:
		return buildRun{}, fmt.Errorf("the build %q could not run: %w", command, err)
	}
}

// copyWorkspace copies the files git knows or would add (tracked and
// untracked, not ignored) into dst; outside a git repository, every file
// but .git and node_modules. Files on the privacy list (ignore) are left
// out, tracked or not: the build's output goes to the model, and a
// compiler prints what it reads. A top-level node_modules is linked, not
// copied, so JavaScript builds find their dependencies.
func copyWorkspace(ctx context.Context, src, dst string, ignore func(rel string) bool) error {
	files, err := gitFiles(ctx, src)
	if err != nil {
		files, err = walkFiles(src)
		if err != nil {
			return err
		}
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range files {
		if ignore != nil && ignore(rel) {
			continue
		}
		name := filepath.FromSlash(rel)
		st, err := root.Lstat(name)
		if err != nil {
			continue // deleted since git listed it
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			link, err := root.Readlink(name)
			// Only links that stay inside the copy are kept: the build must
			// not reach the user's files through one.
			if err != nil || filepath.IsAbs(link) || !inside(filepath.Join(filepath.Dir(name), link)) {
				continue
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			if err := copyFile(root, name, target, st.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	if st, err := os.Stat(filepath.Join(src, "node_modules")); err == nil && st.IsDir() {
		if _, err := os.Lstat(filepath.Join(dst, "node_modules")); errors.Is(err, fs.ErrNotExist) {
			if err := os.Symlink(filepath.Join(src, "node_modules"), filepath.Join(dst, "node_modules")); err != nil {
				return err
			}
		}
	}
	return nil
}

func inside(rel string) bool {
	rel = filepath.Clean(rel)
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func copyFile(root *os.Root, name, target string, perm fs.FileMode) error {
	in, err := root.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

func gitFiles(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-co", "--exclude-standard", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

func walkFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
