package subtestnil

import "testing"

func TestLabel(t *testing.T) {
	cases := []struct {
		name  string
		order Order
		want  string
	}{
		{"with customer", Order{ID: 1, Customer: &Customer{Name: "Ana"}}, "Ana #1"},
		{"guest", Order{ID: 2}, "guest #2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.order.Label(); got != c.want {
				t.Errorf("Label() = %q, want %q", got, c.want)
			}
		})
	}
}
