package main

import "fmt"

type config struct{ name string }

func load(path string) *config {
	if path == "" {
		return nil
	}
	return &config{name: path}
}

func describe(c *config) string {
	return "config " + c.name
}

func main() {
	fmt.Println(describe(load("")))
}
