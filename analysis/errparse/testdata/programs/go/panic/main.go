package main

import "fmt"

// record counts one occurrence of key; m is never initialised by the caller.
func record(m map[string]int, key string) {
	m[key]++
}

func main() {
	var counts map[string]int
	record(counts, "a")
	fmt.Println(counts)
}
