package sum

func Sum(xs ...int) int {
	total := 0
	for _, x := range xs[1:] {
		total += x
	}
	return total
}
