package money

import "testing"

func TestCentsWhole(t *testing.T) {
	t.Log("converting 3 euros")
	if got := Cents(3); got != 300 {
		t.Errorf("Cents(3) = %d", got)
	}
}

func TestCentsFraction(t *testing.T) {
	t.Log("converting 0.29 euros")
	if got := Cents(0.29); got != 29 {
		t.Errorf("Cents(0.29) = %d, want 29", got)
	}
}
