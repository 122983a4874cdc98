package timeout

import "testing"

func TestWait(t *testing.T) {
	done := make(chan struct{})
	Wait(done)
}
