package subtests

import "testing"

func TestSlug(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"one word", "Hello", "hello"},
		{"two words", "Hello World", "hello-world"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Slug(c.in); got != c.want {
				t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
