package main

import (
	"fmt"
	"sync"
)

type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *Counter) Inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
}

func report(c Counter) {
	fmt.Println(len(c.n))
}

func main() {
	c := &Counter{n: map[string]int{}}
	c.Inc("a")
	report(*c)
}
