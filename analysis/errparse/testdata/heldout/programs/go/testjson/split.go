package testjson

import "strings"

func Split(s string) []string {
	return strings.Split(s, ";")
}
