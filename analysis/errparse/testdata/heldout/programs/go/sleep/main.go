package main

import (
	"fmt"
	"time"
)

func retry(f func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(5)
	}
	return err
}

func main() {
	fmt.Println(retry(func() error { return nil }))
}
