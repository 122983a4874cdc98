package helper

import "testing"

func near(t *testing.T, got, want float64) {
	t.Helper()
	if got-want > 0.01 || want-got > 0.01 {
		t.Fatalf("got %.2f, want %.2f", got, want)
	}
}

func TestCelsius(t *testing.T) {
	near(t, Celsius(32), 0)
	near(t, Celsius(212), 100)
}
