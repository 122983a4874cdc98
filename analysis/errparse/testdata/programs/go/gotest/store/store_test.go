package store

import "testing"

func TestInc(t *testing.T) {
	s := New()
	s.Inc("a")
	if s.counts["a"] != 1 {
		t.Fatal("want 1")
	}
}
