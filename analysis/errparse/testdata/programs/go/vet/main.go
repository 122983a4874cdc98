package main

import "fmt"

func main() {
	name := "gopher"
	fmt.Printf("hello %d\n", name)
	count := 3
	fmt.Println("count: %d", count)
}
