package main

import (
	"fmt"

	"example.com/slicebounds/ring"
)

func main() {
	b := ring.New(8)
	b.Push(1)
	b.Push(2)
	fmt.Println(b.Last(5))
}
