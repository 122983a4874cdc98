package testpanic

import "testing"

func TestPut(t *testing.T) {
	var c Cache
	c.Put("a", "b")
	if len(c.entries) != 1 {
		t.Fatal("not stored")
	}
}
