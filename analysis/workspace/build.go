package workspace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kodustech/kodyls/analysis/errparse"
	"github.com/kodustech/kodyls/analysis/shell"
)

// Build is one run of a folder's build command (the editor's build on
// save). A folder runs one build at a time: starting one cancels the
// running one, whose whole process group is killed (compilers spawn
// children), so its late results never appear.
type Build struct {
	folder  *Folder
	ctx     context.Context
	cancel  context.CancelFunc
	command string
	timeout time.Duration
}

// StartBuild cancels the folder's running build and returns the new one;
// run it with Wait. It does no I/O, so the editor calls it in the order
// the saves arrived.
func (f *Folder) StartBuild(parent context.Context, command string, timeout time.Duration) *Build {
	ctx, cancel := context.WithTimeoutCause(parent, timeout, errTimedOut)
	f.mu.Lock()
	if f.buildCancel != nil {
		f.buildCancel()
	}
	f.buildCancel = cancel
	f.mu.Unlock()
	return &Build{folder: f, ctx: ctx, cancel: cancel, command: command, timeout: timeout}
}

// ErrBuildCancelled is returned by Wait when a newer build or the caller
// stopped this one.
var ErrBuildCancelled = errors.New("build cancelled")

// ErrBuildTimeout is returned (as a *BuildTimeout) by Wait when the build
// ran past its time limit and was stopped: unlike a cancelled build, no
// newer build is coming to replace the results of the last one.
var ErrBuildTimeout = errors.New("build timed out")

// errTimedOut is the cause of a build's context when its time is up.
var errTimedOut = errors.New("the build's time limit passed")

// BuildTimeout is the error of a build stopped at its time limit;
// errors.Is(err, ErrBuildTimeout) holds.
type BuildTimeout struct {
	Command string
	Timeout time.Duration
}

func (e *BuildTimeout) Error() string {
	return fmt.Sprintf("%v: %q did not finish within %s", ErrBuildTimeout, e.Command, e.Timeout)
}

func (e *BuildTimeout) Is(target error) bool { return target == ErrBuildTimeout }

// ErrBuildUnrecognized is returned by Wait when the build failed but its
// output holds no error kodyls can place in a file (a missing tool, a
// crash): the error carries the end of the output.
var ErrBuildUnrecognized = errors.New("the build failed with no error kodyls recognises")

// BuildFailure is the error of a build that failed with no error kodyls
// can place in a file: a command that does not exist (sh's exit 127), a
// crash, a tool whose output is not parsed. errors.Is(err,
// ErrBuildUnrecognized) holds.
type BuildFailure struct {
	Command string
	// Status is how it ended, e.g. "exit status 127".
	Status string
	// LastLine is the last line of its output ("" when it printed
	// nothing), where a shell or a tool says what went wrong.
	LastLine string
	tail     string
}

func (e *BuildFailure) Error() string {
	return fmt.Sprintf("%v: %q failed (%s): %s", ErrBuildUnrecognized, e.Command, e.Status, e.tail)
}

func (e *BuildFailure) Is(target error) bool { return target == ErrBuildUnrecognized }

// Wait runs the command with sh in the folder root and parses its output
// into the errors that can be shown on a line of a file. A command that
// runs and fails is not an error: its output is what is wanted.
//
// The relative paths of the output are relative to the folder root, or to
// the directory of a leading "cd DIR &&" (see CommandDir). An error that
// names a file that does not exist, or a line past the end of its file,
// would be shown in the wrong place (the output of a tool run elsewhere):
// it is logged and dropped.
func (b *Build) Wait() ([]errparse.Error, error) {
	defer b.cancel()
	out, err := shell.Run(b.ctx, b.folder.Root, b.command)
	if b.ctx.Err() != nil {
		if context.Cause(b.ctx) == errTimedOut {
			return nil, &BuildTimeout{Command: b.command, Timeout: b.timeout}
		}
		return nil, fmt.Errorf("%w: %v", ErrBuildCancelled, context.Cause(b.ctx))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("build command %q failed to run: %w", b.command, err)
	}
	errs := errparse.Parse(out, errparse.Options{Workspace: b.folder.Root, Dir: CommandDir(b.folder.Root, b.command)})
	errparse.CommandColumnUnits(errs, b.command)
	errs = b.placed(errs)
	if err != nil && len(errs) == 0 {
		// It failed, but with nothing kodyls can place in a file: say what
		// it printed rather than showing a clean build.
		return nil, &BuildFailure{Command: b.command, Status: err.Error(), LastLine: lastLines(out, 1), tail: lastLines(out, 5)}
	}
	return errs, nil
}

// placed keeps the errors that name a line of a file that exists, and
// logs the others.
func (b *Build) placed(errs []errparse.Error) []errparse.Error {
	lines := map[string]int{} // by path: the file's lines, -1 when it cannot be read
	kept := errs[:0]
	for _, e := range errs {
		if e.File == "" || e.Line <= 0 {
			continue
		}
		p := filepath.FromSlash(e.File)
		if !filepath.IsAbs(p) {
			p = filepath.Join(b.folder.Root, p)
		}
		n, seen := lines[p]
		if !seen {
			n = countLines(p)
			lines[p] = n
		}
		switch {
		case n < 0:
			b.folder.s.log.Info("build error not shown: its file does not exist in the workspace", "command", b.command, "file", e.File, "line", e.Line, "message", e.Message)
			continue
		case e.Line > n:
			b.folder.s.log.Info("build error not shown: its line is past the end of its file", "command", b.command, "file", e.File, "line", e.Line, "lines", n, "message", e.Message)
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// countLines counts the lines of a file as an editor does (the text after
// the last line break is a line, even when empty); -1 when it is not a
// file that can be read.
func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return -1
	}
	n := 1
	r := bufio.NewReader(f)
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return n
		}
		if err != nil {
			return -1
		}
		// "\r\n" counts once, a lone "\r" too.
		if c == '\n' {
			n++
		} else if c == '\r' {
			if next, err := r.Peek(1); err != nil || next[0] != '\n' {
				n++
			}
		}
	}
}

// leadingCd matches a leading "cd DIR &&" of a shell command: DIR plain,
// or in single or double quotes with nothing the shell would expand.
var leadingCd = regexp.MustCompile(`^\s*cd\s+(?:'([^']*)'|"([^"$\x60\\]*)"|([^\s;&|<>()'"$\x60\\~]+))\s*&&`)

// CommandDir is the directory the tools of a build command run in, which
// the relative paths of their output are relative to: the root, or the
// directory its leading "cd DIR &&" commands (one or several) enter, DIR
// relative to the root unless absolute. A DIR the shell would expand
// ($VAR, ~) is not followed.
func CommandDir(root, command string) string {
	dir := root
	for {
		m := leadingCd.FindStringSubmatch(command)
		if m == nil {
			return dir
		}
		d := m[1] + m[2] + m[3]
		if d == "" || d == "-" {
			return dir
		}
		if filepath.IsAbs(d) {
			dir = filepath.Clean(d)
		} else {
			dir = filepath.Join(dir, filepath.FromSlash(d))
		}
		command = command[len(m[0]):]
	}
}

// lastLines is the end of a command's output, for a log line.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
