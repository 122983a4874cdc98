package user

import "strings"

type User struct {
	Name  string
	Email string
	Roles []string
}

// Parse reads "name <email> role,role".
func Parse(s string) User {
	name, rest, _ := strings.Cut(s, " <")
	email, roles, _ := strings.Cut(rest, "> ")
	return User{Name: name, Email: email, Roles: strings.Split(roles, ";")}
}

// Greeting greets the user.
func Greeting(u User) string {
	return "Hello, " + u.Name + "!\nYour roles: " + strings.Join(u.Roles, ", ") + "\n"
}
