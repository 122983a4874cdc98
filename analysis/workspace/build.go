package workspace

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
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
}

// StartBuild cancels the folder's running build and returns the new one;
// run it with Wait. It does no I/O, so the editor calls it in the order
// the saves arrived.
func (f *Folder) StartBuild(parent context.Context, command string, timeout time.Duration) *Build {
	ctx, cancel := context.WithTimeout(parent, timeout)
	f.mu.Lock()
	if f.buildCancel != nil {
		f.buildCancel()
	}
	f.buildCancel = cancel
	f.mu.Unlock()
	return &Build{folder: f, ctx: ctx, cancel: cancel, command: command}
}

// ErrBuildCancelled is returned by Wait when a newer build, the timeout or
// the caller stopped this one.
var ErrBuildCancelled = errors.New("build cancelled")

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
// into errors. A command that runs and fails is not an error: its output
// is what is wanted.
func (b *Build) Wait() ([]errparse.Error, error) {
	defer b.cancel()
	out, err := shell.Run(b.ctx, b.folder.Root, b.command)
	if b.ctx.Err() != nil {
		return nil, fmt.Errorf("%w: %v", ErrBuildCancelled, context.Cause(b.ctx))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("build command %q failed to run: %w", b.command, err)
	}
	errs := errparse.Parse(out, errparse.Options{Workspace: b.folder.Root})
	if err != nil && len(errs) == 0 {
		// It failed, but with nothing kodyls can place in a file: say what
		// it printed rather than showing a clean build.
		return nil, &BuildFailure{Command: b.command, Status: err.Error(), LastLine: lastLines(out, 1), tail: lastLines(out, 5)}
	}
	return errs, nil
}

// lastLines is the end of a command's output, for a log line.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
