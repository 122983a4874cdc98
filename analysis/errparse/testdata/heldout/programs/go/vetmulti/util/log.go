package util

import "fmt"

func Report(name string, n int) {
	fmt.Printf("%s has %d items and %d errors\n", name, n)
}
