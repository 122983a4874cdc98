package subtests

import "strings"

// Slug lower-cases s and joins its words with dashes.
func Slug(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), "_"))
}
