package ring

// Buffer keeps the last values written.
type Buffer struct {
	vals []int
}

func New(size int) *Buffer {
	return &Buffer{vals: make([]int, 0, size)}
}

func (b *Buffer) Push(v int) {
	b.vals = append(b.vals, v)
}

// Last returns the n newest values.
func (b *Buffer) Last(n int) []int {
	return b.vals[len(b.vals)-n:]
}
