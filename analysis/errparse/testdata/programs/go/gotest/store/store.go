package store

// Store keeps counters; New forgets to make the map.
type Store struct{ counts map[string]int }

func New() *Store { return &Store{} }

func (s *Store) Inc(key string) { s.counts[key]++ }
