//go:build linux || darwin || freebsd || netbsd || openbsd

package index

import (
	"errors"
	"io/fs"
	"syscall"
)

// writable reports why this process may not write the file at path; nil
// when it may, or when there is no such file.
func writable(path string) error {
	const wOK = 2 // W_OK
	err := syscall.Access(path, wOK)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return err
	}
	return nil // anything else is sqlite's to report
}
