// Package yamlpos holds the YAML helpers the readers of kodus-config.yml
// share (package kodusconfig for the review settings, package prompts for
// v2PromptOverrides), some of which the front matter of Kody Rules files
// (package rules) uses too: following aliases, naming node kinds in
// messages, and turning the YAML library's errors into the right 1-based
// line.
package yamlpos

import (
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Deref follows aliases (a bounded number of times, against cycles).
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// KindName describes a node for error messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "nothing"
		}
		return "text"
	}
	return "an unexpected value"
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserProblems are the messages of the YAML library's parser, as
// opposed to its scanner. The library prints the parser's 0-based line
// numbers unchanged but adds one to the scanner's, so a parser problem
// needs one added to point at the right 1-based line.
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// LibraryLine returns the line an error of the YAML library names, made
// 1-based for the parser's problems too, and the message without the
// library's prefix. ok is false when the error names no line: the library
// leaves the line out when it is the first one, and some errors have none.
//
// For a parser problem the line is where the enclosing construct starts,
// which can be far above the offending line; ErrorLine finds the latter.
func LibraryLine(err error) (line int, msg string, ok bool) {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, "", false
	}
	n, _ := strconv.Atoi(m[1])
	if yamlParserProblems[m[2]] {
		n++
	}
	return n, m[2], true
}

// ErrorLine turns an error of the YAML library into a 1-based line of data
// and a message without the library's prefix.
func ErrorLine(err error, data []byte) (int, string) {
	n, msg, ok := LibraryLine(err)
	if !ok {
		return 1, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	if yamlParserProblems[msg] {
		n = parserProblemLine(data, n, msg)
	}
	lines := strings.Count(string(data), "\n") + 1
	return min(max(n, 1), lines), msg
}

// parserProblemLine finds the line of a parser problem. The library reports
// where the enclosing construct starts, which can be far above the
// offending line; the first prefix of the document, from that line on,
// that fails with the same message ends on the offending line.
// Configuration files are small, so parsing a few prefixes costs nothing;
// large ones keep the library's line.
func parserProblemLine(data []byte, from int, msg string) int {
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 2000 {
		return from
	}
	for k := max(from, 1); k <= len(lines); k++ {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(strings.Join(lines[:k], "")), &n)
		if err != nil && strings.HasSuffix(err.Error(), ": "+msg) {
			return k
		}
	}
	return from
}
