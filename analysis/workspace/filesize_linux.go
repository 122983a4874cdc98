package workspace

import "syscall"

// fileSizeLimit reports the largest file this process may write (the
// shell's `ulimit -f`); ok is false when there is no limit (RLIM_INFINITY,
// all ones).
func fileSizeLimit() (limit uint64, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil || rl.Cur == ^uint64(0) {
		return 0, false
	}
	return rl.Cur, true
}
