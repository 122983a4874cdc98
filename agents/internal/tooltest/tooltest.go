// Package tooltest decides, for the agents' tests, whether a real
// toolchain they run (rustc, gcc, clang…) can be used on this machine.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Need skips the test when name is not installed, or installed but
// unable to run (a rustup shim with no default toolchain fails
// `rustc --version`); on CI (CI=true) a tool that is there but broken
// fails the test instead.
func Need(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
	if out, err := exec.Command(name, "--version").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("%s is on PATH but does not run (%s --version: %v: %s)", name, name, err, strings.TrimSpace(string(out)))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}
