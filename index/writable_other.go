//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package index

// writable is not checked here; sqlite reports a read-only database at
// the first write, which Store.Fault explains.
func writable(string) error { return nil }
