package main

import (
	"fmt"

	"example.com/custompanic/config"
)

func main() {
	c := config.MustLoad(map[string]string{"HOST": "x"})
	fmt.Println(c.Port)
}
