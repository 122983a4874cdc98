package user

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	got := Parse("ana <ana@example.com> admin,dev")
	want := User{Name: "ana", Email: "ana@example.com", Roles: []string{"admin", "dev"}}
	assert.Equal(t, want, got, "parsing %q", "ana")
}

func TestGreeting(t *testing.T) {
	u := User{Name: "bo", Roles: []string{"dev"}}
	assert.Equal(t, "Hello, bo!\nYour roles: dev.\n", Greeting(u))
}
