package main

func helper() int {
	return bar + 1
}
