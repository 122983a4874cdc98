package inventory

type Store struct {
	items map[string]int
}

func New() *Store { return &Store{items: map[string]int{}} }

func (s *Store) Count() int {
	n := 0
	for _, q := range s.items {
		n += q
	}
	return n, nil
}
