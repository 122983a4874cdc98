package main

import (
	"fmt"
	"sync"
)

func worker(id int, jobs []int, wg *sync.WaitGroup) {
	fmt.Println(jobs[id])
	wg.Done()
}

func main() {
	jobs := []int{10, 20}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go worker(i, jobs, &wg)
	}
	wg.Wait()
}
