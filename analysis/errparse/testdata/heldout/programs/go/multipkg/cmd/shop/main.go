package main

import (
	"fmt"

	"example.com/shop/inventory"
)

func main() {
	s := inventory.New()
	fmt.Println(s.Count())
}
