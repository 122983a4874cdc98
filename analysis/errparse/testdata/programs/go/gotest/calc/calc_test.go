package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want %d", got, 5)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(7, 0); got != 7 {
		t.Fatalf("Add(7, 0) = %d, want %d", got, 7)
	}
}
