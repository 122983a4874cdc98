package redact

import "strings"

// Most text contains none of the literals that the rules need ("ghp_",
// "AKIA", "-----BEGIN ", "://", "earer"…). Instead of one strings.Contains
// per literal, which costs a pass over the text each, keywordScan makes a
// single pass and looks each pair of adjacent bytes up in a bitset of the
// literals' first two bytes; only on a hit does it compare the literals.
// The result is the set of detectors worth running.

// Detectors other than the token rules, numbered after them.
const (
	detPEM = iota + 48
	detURL
	detSchemes
	detAuthHeader
	detCLI
	detSQL
	detConn
	detDSN
	detCmdPass
	detNetrc
	detDockerEnv
)

type keyword struct {
	lit string
	det int
}

var (
	kwBits [1 << 16 / 64]uint64 // first two bytes of some keyword
	// kwIdx maps the first two bytes of the keywords to 1 + their index in
	// kwLists: an array, not a map, since common pairs ("nt", "se") are
	// looked up on most lines.
	kwIdx   [1 << 16]uint8
	kwLists [][]keyword
)

func init() {
	if len(builtinRules) > detPEM {
		panic("redact: too many token rules for the prefilter mask")
	}
	add := func(lit string, det int) {
		k := uint16(lit[0])<<8 | uint16(lit[1])
		kwBits[k>>6] |= 1 << (k & 63)
		if kwIdx[k] == 0 {
			if len(kwLists) == 255 {
				panic("redact: too many keyword prefixes for the prefilter index")
			}
			kwLists = append(kwLists, nil)
			kwIdx[k] = uint8(len(kwLists))
		}
		i := kwIdx[k] - 1
		kwLists[i] = append(kwLists[i], keyword{lit, det})
	}
	for i, r := range builtinRules {
		for _, k := range r.keywords {
			add(k, i)
		}
	}
	add("-----BEGIN ", detPEM)
	for _, k := range urlSeparators {
		add(k, detURL)
	}
	for _, k := range []string{"earer", "EARER", "asic", "ASIC"} {
		add(k, detSchemes)
	}
	add("uthorization", detAuthHeader)
	add("UTHORIZATION", detAuthHeader)
	add("-u", detCLI)
	add("--user", detCLI)
	for _, k := range sqlKeywords {
		add(k, detSQL)
	}
	for _, k := range connPasswordKeywords {
		add(k, detConn)
	}
	for _, k := range dsnKeywords {
		add(k, detDSN)
	}
	for _, k := range cmdPassKeywords {
		add(k, detCmdPass)
	}
	add("machine", detNetrc)
	add("ENV", detDockerEnv)
}

// keywordScan returns a bit per detector whose literal occurs in text.
func keywordScan(text string) uint64 {
	var found uint64
	for i := 0; i+1 < len(text); i++ {
		k := uint16(text[i])<<8 | uint16(text[i+1])
		if kwBits[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, kw := range kwLists[kwIdx[k]-1] {
			if found&(1<<kw.det) == 0 && strings.HasPrefix(text[i:], kw.lit) {
				found |= 1 << kw.det
			}
		}
	}
	return found
}
