//go:build unix

package lsp

import (
	"errors"
	"syscall"
)

// processAlive reports whether the process pid exists (one of another
// user counts: signalling it is refused, not failed).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
