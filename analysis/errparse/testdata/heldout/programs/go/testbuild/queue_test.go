package testbuild

import "testing"

func TestPush(t *testing.T) {
	var q Queue
	q.Push(1)
	if q.Len() != 1 {
		t.Fatal("want 1 item")
	}
}
