package llmtest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that Close leaves no handler or connection goroutine
// behind, hanging requests included.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
