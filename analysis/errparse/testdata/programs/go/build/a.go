package main

import "fmt"

func main() {
	unused := 42
	var n int = "hello"
	fmt.Println(foo(n))
}
