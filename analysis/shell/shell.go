// Package shell runs the one kind of command kodyls runs on the user's
// behalf: the configured build, with sh, in its own process group.
package shell

import (
	"bytes"
	"context"
)

// Run runs command with sh in dir, in its own process group, so that
// cancelling ctx (a newer save, a timeout) kills every process it started,
// not only the shell. It returns stdout and stderr interleaved, and
// ctx.Err() when ctx ended the command.
func Run(ctx context.Context, dir, command string) (string, error) {
	cmd := shellCommand(command)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return out.String(), ctx.Err()
	}
}
