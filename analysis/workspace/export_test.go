package workspace

// SplitsInMemory counts the model splits (and failed splits) of
// assistants' files the process keeps in memory.
func (s *Services) SplitsInMemory() int {
	s.split.mu.Lock()
	defer s.split.mu.Unlock()
	return len(s.split.answers) + len(s.split.failed)
}
