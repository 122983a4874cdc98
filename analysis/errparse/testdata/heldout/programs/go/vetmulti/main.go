package main

import "example.com/vetmulti/util"

func main() {
	util.Report("cart", 3)
}
