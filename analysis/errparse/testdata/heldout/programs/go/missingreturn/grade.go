package main

import "fmt"

func grade(score int) string {
	switch {
	case score >= 90:
		return "A"
	case score >= 50:
		return "B"
	}
}

func main() {
	fmt.Println(grade(70))
}
