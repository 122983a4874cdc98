package main

import "fmt"

type Point struct{ X, Y int }

func (p *Point) Move(dx int) {
	p.X = p.X + dx
	p.Y = p.Y
}

func main() {
	p := &Point{}
	p.Move(2)
	fmt.Println(p)
}
