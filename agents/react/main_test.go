package react_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a run leaves goroutines behind, e.g. an
// abandoned model call after a timeout.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
