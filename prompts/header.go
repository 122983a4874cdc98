package prompts

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// header is what the first-line comment of a template says about it.
type header struct {
	Name    string
	Version int
	Purpose string
}

// headerRE matches a template comment, with or without trim markers, that
// makes up the whole first line.
var headerRE = regexp.MustCompile(`^\{\{-?\s*/\*(.*)\*/\s*-?\}\}\s*$`)

// nameRE is what a prompt name may look like: it is also a file name and a
// cache key component, so it stays plain.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

const headerHint = `the first line must be {{/* name: NAME; version: N; purpose: ONE LINE */}}`

// parseHeader reads the header of a template source. found is false when the
// first line is not a header: not a comment, or a comment that sets none of
// the keys (an override may start with an ordinary comment). An error means
// the first line is meant as a header (it sets a key) but is malformed.
//
// Keys are separated by ";". The purpose is free text and may contain ";"
// itself: text that does not start with a key continues the purpose.
func parseHeader(src []byte) (h header, found bool, err error) {
	first, _, _ := strings.Cut(string(src), "\n")
	m := headerRE.FindStringSubmatch(strings.TrimSuffix(first, "\r"))
	if m == nil {
		return header{}, false, nil
	}
	segs := strings.Split(m[1], ";")
	if !slices.ContainsFunc(segs, func(seg string) bool {
		key, _, ok := strings.Cut(seg, ":")
		return ok && isHeaderKey(strings.TrimSpace(key))
	}) {
		return header{}, false, nil // an ordinary comment
	}
	seen := map[string]bool{}
	last := ""
	for _, seg := range segs {
		key, val, ok := strings.Cut(seg, ":")
		key = strings.TrimSpace(key)
		if !ok || !isHeaderKey(key) {
			switch {
			case last == "purpose":
				h.Purpose += ";" + strings.TrimRight(seg, " \t")
				continue
			case strings.TrimSpace(seg) == "":
				continue // a trailing ";"
			case !ok:
				return header{}, true, fmt.Errorf("header: %q is not a key: value pair", strings.TrimSpace(seg))
			}
			return header{}, true, fmt.Errorf("header: unknown key %q (known: name, version, purpose)", key)
		}
		if seen[key] {
			return header{}, true, fmt.Errorf("header: %s is set twice", key)
		}
		seen[key], last = true, key
		val = strings.TrimSpace(val)
		switch key {
		case "name":
			if !nameRE.MatchString(val) {
				return header{}, true, fmt.Errorf("header: name %q must be lower-case letters, digits and underscores, starting with a letter", val)
			}
			h.Name = val
		case "version":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 999 {
				return header{}, true, fmt.Errorf("header: version %q must be a whole number from 1 to 999", val)
			}
			h.Version = n
		case "purpose":
			if val == "" {
				return header{}, true, fmt.Errorf("header: purpose is empty")
			}
			h.Purpose = val
		}
	}
	h.Purpose = strings.TrimSpace(h.Purpose)
	return h, true, nil
}

func isHeaderKey(k string) bool { return k == "name" || k == "version" || k == "purpose" }

// parseBuiltinHeader is parseHeader for a builtin template, where the header
// and all its keys are required.
func parseBuiltinHeader(src []byte) (header, error) {
	h, found, err := parseHeader(src)
	switch {
	case err != nil:
		return h, err
	case !found:
		return h, fmt.Errorf("missing header: %s", headerHint)
	case h.Name == "":
		return h, fmt.Errorf("header: name is missing: %s", headerHint)
	case h.Version == 0:
		return h, fmt.Errorf("header: version is missing: %s", headerHint)
	case h.Purpose == "":
		return h, fmt.Errorf("header: purpose is missing: %s", headerHint)
	}
	return h, nil
}
