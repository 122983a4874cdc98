package testjson

import "testing"

func TestSplit(t *testing.T) {
	t.Run("comma", func(t *testing.T) {
		got := Split("a,b")
		if len(got) != 2 {
			t.Errorf("Split(a,b) gave %d parts, want 2", len(got))
		}
	})
}
