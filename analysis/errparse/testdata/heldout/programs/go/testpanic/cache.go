package testpanic

type Cache struct {
	entries map[string]string
}

func (c *Cache) Put(k, v string) {
	c.entries[k] = v
}
