package main

import "fmt"

// Parse decodes a value of the caller's type from s.
func Parse[T any](s string) (T, error) {
	var zero T
	_, err := fmt.Sscan(s, &zero)
	return zero, err
}

func main() {
	port, err := Parse("8080")
	if err != nil {
		panic(err)
	}
	fmt.Println(port)
}
