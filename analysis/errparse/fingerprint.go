package errparse

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fingerprint returns a short stable hash of the kind of error: 16 hex
// digits of sha256 over the tool family, the code and Template(e). File,
// line and column are not part of it, so the same mistake elsewhere groups
// with this one.
func Fingerprint(e Error) string {
	tool := e.Tool
	if tool == "cargo" {
		tool = "rustc" // cargo relays rustc's diagnostics verbatim
	}
	sum := sha256.Sum256([]byte(tool + "\x00" + e.Code + "\x00" + Template(e)))
	return hex.EncodeToString(sum[:])[:16]
}

// templateRule is one step of Template; the order of templateRules is the
// order documented in the package comment.
type templateRule struct {
	name  string
	apply func(string) string
}

func reRule(name, re, repl string) templateRule {
	rx := regexp.MustCompile(re)
	return templateRule{name, func(s string) string { return rx.ReplaceAllString(s, repl) }}
}

var (
	hexLongRE = regexp.MustCompile(`\b[0-9a-fA-F]{8,}\b`)
	digitRE   = regexp.MustCompile(`[0-9]`)
	// timeRE matches a date with a time of day as RFC 3339 and ISO 8601
	// write it: T or a blank between them, seconds and their fraction
	// optional, then Z, an offset (+01:00, -0500) or Go's " +0000 UTC";
	// or ISO 8601's basic form (20261125T150930Z). A date alone is left to
	// the number rule, which makes it <n>-<n>-<n> whatever the date.
	timeRE = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]\b|[+-]\d{2}(?::?\d{2})?\b| [+-]\d{4}(?: [A-Z]{2,5}\b)?)?` +
		`|\b\d{8}[Tt]\d{6}(?:[.,]\d+)?(?:[Zz]|[+-]\d{4})?\b`)
	// logTimeRE matches the date and time of Go's log package and of many
	// loggers (2026/11/25 15:09:30.123456). Template already makes it
	// "<path> <n>:<n>:<n>", the same for every time; MessageKey needs it.
	logTimeRE = regexp.MustCompile(`\b\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?\b`)
)

// MessageKey returns msg with what differs between two runs of the very
// same error replaced by placeholders: dates with a time of day (the
// clock, not the mistake). Two errors are the same error, not merely of
// the same kind (Fingerprint), when their MessageKeys are equal: "No
// module named 'requests'" and "No module named 'numpy'" share a
// fingerprint but not a key.
func MessageKey(msg string) string {
	msg = timeRE.ReplaceAllString(msg, "<time>")
	return logTimeRE.ReplaceAllString(msg, "<time>")
}

var templateRules = []templateRule{
	reRule("suggestion", `(?i)\s*[;,.]?\s*(?:did you mean|perhaps you meant)\b.*$`, ""),
	reRule("url", `\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>]+`, "<url>"),
	{"quoted", stripQuoted},
	reRule("uuid", `(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`, "<uuid>"),
	{"time", func(s string) string { return timeRE.ReplaceAllString(s, "<time>") }},
	{"path", stripPaths},
	reRule("hex-address", `\b0[xX][0-9a-fA-F]+\b`, "<hex>"),
	{"hex-long", func(s string) string {
		return hexLongRE.ReplaceAllStringFunc(s, func(h string) string {
			if digitRE.MatchString(h) {
				return "<hex>"
			}
			return h
		})
	}},
	reRule("duration", `\b\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))*\b`, "<duration>"),
	reRule("number", `\b\d+(?:\.\d+)?\b`, "<n>"),
	reRule("dotted", `\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\b`, "<id>"),
	{"shapes", stripShapes},
	reRule("trailing-period", `\.\s*$`, ""),
	{"space", func(s string) string { return strings.Join(strings.Fields(s), " ") }},
}

// maxTemplateInput bounds the message text the rules run on: the kind of
// an error is said in its first words, and a huge message would only cost
// time.
const maxTemplateInput = 1 << 10

// Template returns the first line of e.Message with identifiers, numbers,
// paths and other parameters replaced by placeholders (rules in the package
// comment). It is the text to index similar errors by.
func Template(e Error) string {
	msg := e.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > maxTemplateInput {
		msg = msg[:maxTemplateInput]
	}
	msg = strings.TrimSpace(msg)
	for _, r := range templateRules {
		msg = r.apply(msg)
	}
	if strings.HasPrefix(e.Code, "compiler.") {
		// javac -XDrawDiagnostics: the message is only the diagnostic's
		// arguments (names, types, kinds), all of them parameters.
		msg = javacRawArgRE.ReplaceAllString(msg, "$1<id>")
	}
	return msg
}

var javacRawArgRE = regexp.MustCompile(`(^|[^<\w$])[A-Za-z_$][\w$]*`)

// quotePairs maps an opening quote to its closing ones. ld prints `x',
// old gcc and python 'x', new gcc ‘x’.
var quotePairs = map[rune]string{
	'\'': "'",
	'"':  `"`,
	'`':  "`'",
	'‘':  "’'",
	'“':  "”\"",
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// stripQuoted replaces quoted text with <id>. A quote opens only after a
// non-word character and closes only before one, so "can't" and "it's"
// are left alone; the quoted text stays on one line and is at most 200
// bytes, so an unbalanced quote does not swallow the message.
func stripQuoted(s string) string {
	var b strings.Builder
	prev := ' '
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		closers, isQuote := quotePairs[r]
		if isQuote && !isWordRune(prev) {
			if end, endSize := findClose(s, i+size, closers); end >= 0 {
				b.WriteString("<id>")
				i = end + endSize
				prev = 'x'
				continue
			}
		}
		b.WriteRune(r)
		prev = r
		i += size
	}
	return b.String()
}

// findClose returns the index and size of the first closing quote after
// start that is followed by a non-word character, or -1.
func findClose(s string, start int, closers string) (int, int) {
	for j := start; j < len(s) && j-start <= 200; {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == '\n' {
			return -1, 0
		}
		if strings.ContainsRune(closers, r) && j > start {
			next, _ := utf8.DecodeRuneInString(s[j+size:])
			if j+size >= len(s) || !isWordRune(next) {
				return j, size
			}
		}
		j += size
	}
	return -1, 0
}

var (
	sourceExtRE = regexp.MustCompile(`(?i)\.(go|ts|tsx|mts|cts|js|jsx|mjs|cjs|vue|rs|c|h|cc|cpp|cxx|hpp|hh|py|pyi|java|kt|jar|json|ya?ml|toml|txt|md|o|a|so|dylib|dll|exe|mod|sum|lock|sh|html|css|xml|proto|sql)$`)
	lineColRE   = regexp.MustCompile(`(:\d+){1,2}$`)
	bareFileRE  = regexp.MustCompile(`^[\w.-]+$`)
)

// stripPaths replaces path-like tokens (see rule 5) with <path>, keeping
// the punctuation around them.
func stripPaths(s string) string {
	fields := strings.Fields(s)
	changed := false
	for i, f := range fields {
		lead := strings.IndexFunc(f, func(r rune) bool { return !strings.ContainsRune(`([{<"'`, r) })
		if lead < 0 {
			continue
		}
		core := f[lead:]
		core = strings.TrimRight(core, `)]}>,;:"'.`)
		if core == "" || !isPathToken(core) {
			continue
		}
		end := lead + len(core)
		fields[i] = f[:lead] + "<path>" + f[end:]
		changed = true
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

func isPathToken(t string) bool {
	if strings.Contains(t, "<") || strings.HasPrefix(t, "//") { // placeholders, //go: directives
		return false
	}
	t = lineColRE.ReplaceAllString(t, "")
	switch {
	case strings.HasPrefix(t, "/") && len(t) > 1,
		strings.HasPrefix(t, "./"), strings.HasPrefix(t, "../"), strings.HasPrefix(t, "~/"),
		isAbs(t):
		return true
	}
	if strings.Contains(t, "/") || strings.Contains(t, `\`) {
		return sourceExtRE.MatchString(t) || strings.Count(t, "/") >= 2
	}
	// A bare file name: an identifier-ish stem and a known extension.
	return sourceExtRE.MatchString(t) && bareFileRE.MatchString(t) && !strings.HasPrefix(t, ".")
}

// shapeRules rewrite bare (unquoted) identifiers and types in message
// shapes where the tool does not quote them.
var shapeRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Go compiler.
	{regexp.MustCompile(`^undefined: \S+`), "undefined: <id>"},
	{regexp.MustCompile(`^(declared and not used|declared but not used|imported and not used|label \S+ defined and not used): \S+$`), "$1: <id>"},
	{regexp.MustCompile(`^\S+ (declared and not used|declared but not used|redeclared in this block|is not used)`), "<id> $1"},
	{regexp.MustCompile(`^\S+ undefined \(type \S+ has no (field or method|method|field) \S+?(, but does have (field|method) \S+)?\)`), "<id> undefined (type <type> has no $1 <id>)"},
	{regexp.MustCompile(`\(untyped \w+ constant(?: \S+)?\)`), "(<const>)"},
	{regexp.MustCompile(`\((variable|value|constant|struct field|parameter)( of [\w ]*type [^)]+)?\)`), "(<expr>)"},
	{regexp.MustCompile(`\bcannot use \S+ \(`), "cannot use <id> ("},
	{regexp.MustCompile(` as \S+ value in `), " as <type> value in "},
	{regexp.MustCompile(`\b(in call to|in argument to|in return statement|too many arguments in call to|not enough arguments in call to) \S+`), "$1 <id>"},
	{regexp.MustCompile(`\bmissing return\b`), "missing return"},
	// go vet printf.
	{regexp.MustCompile(`format %\S+ has arg \S+ of wrong type .+$`), "format %<verb> has arg <id> of wrong type <type>"},
	{regexp.MustCompile(`(formatting directive|format) %\S+`), "$1 %<verb>"},
	// JavaScript and Go: "x is not a function", "x is not defined".
	{regexp.MustCompile(`^[A-Za-z_$][\w$\[\]]* is not (a function|defined|a constructor|iterable|a type|an? \w+)`), "<id> is not $1"},
	// javac.
	{regexp.MustCompile(`^incompatible types: .+ cannot be converted to .+$`), "incompatible types: <type> cannot be converted to <type>"},
	{regexp.MustCompile(`^(method|constructor) \S+ in (class|interface|enum|record) \S+ cannot be applied to given types`), "$1 <id> in $2 <id> cannot be applied to given types"},
	{regexp.MustCompile(`^(variable|method|class|interface|enum|record) \S+ is already defined in (\w+) \S+`), "$1 <id> is already defined in $2 <id>"},
	{regexp.MustCompile(`^non-static (variable|method) \S+ cannot be referenced`), "non-static $1 <id> cannot be referenced"},
	{regexp.MustCompile(`^(class|interface|enum|record) \S+ is public, should be declared in a file named \S+`), "$1 <id> is public, should be declared in a file named <path>"},
	{regexp.MustCompile(`^unreported exception \S+;`), "unreported exception <type>;"},
	{regexp.MustCompile(`^\S+ is not abstract and does not override abstract method \S+ in \S+`), "<id> is not abstract and does not override abstract method <id> in <id>"},
	// Calls with empty argument lists: "int() …", "f() takes 1 positional argument".
	{regexp.MustCompile(`\b[A-Za-z_][\w]*\(\)`), "<id>()"},
}

func stripShapes(s string) string {
	for _, r := range shapeRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// sortedKeys returns the keys of m in order, for deterministic output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortByPosition orders errors by file, line and column (go vet -json
// groups by analyzer, but people read errors in file order).
func sortByPosition(errs []Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}
