//go:build linux || darwin || freebsd || netbsd || openbsd

package workspace

import "syscall"

// freeBytes reports the bytes an unprivileged writer may still use on the
// file system holding dir; ok is false when it cannot tell.
func freeBytes(dir string) (free uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
