package main

import (
	"fmt"
	"strconv"
)

func main() {
	n, err := strconv.Atoi("12")
	n, err = strconv.Atoi("x")
	if err != nil {
		fmt.Println(err)
	}
}
