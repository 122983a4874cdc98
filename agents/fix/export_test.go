package fix

// SetBeforeCommit sets what Apply runs between writing the temporary files
// and renaming them, and returns the function that restores it.
func SetBeforeCommit(f func()) (restore func()) {
	old := beforeCommit
	beforeCommit = f
	return func() { beforeCommit = old }
}
