package testbuild

type Queue struct{ items []int }

func (q *Queue) Push(v int) { q.items = append(q.items, v) }
