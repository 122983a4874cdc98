// Package gate decides which files the LLM review must leave alone: files
// the user excluded (kodus-config ignorePaths), files likely to hold secrets,
// and files whose review would cost tokens for nothing (vendored code, lock
// files, generated, minified or binary files, and very large ones).
//
// A Gate is built once per configuration and is safe for concurrent use.
// Check returns a Reason, a short phrase shown in logs and by the CLI; the
// empty Reason means "review it". The path rules run first and need no
// content, so callers can ask CheckPath before reading a file at all, which
// is how an ignored file is kept from ever entering a prompt.
//
// ForConfig builds a workspace's gate from its kodus-config.yml. Its
// privacy part, Private (ignorePaths and the files that may hold secrets),
// is the ignore list of every reader of workspace files besides the
// review: the Kody Rules loader (rule files, references, imports), the CLI
// and the agents' tools (Refuses).
package gate

import (
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/analysis/kodusconfig"

	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Reason says why a file is not reviewed; "" means it is.
type Reason string

// Skip reports whether the file is to be left out of the review.
func (r Reason) Skip() bool { return r != "" }

const (
	// DefaultMaxBytes is the size above which a file is not reviewed. A
	// file that large is data or generated, and would not fit a prompt.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxLines is the line count above which a file is not reviewed.
	DefaultMaxLines = 20_000
)

// SecretPaths are always ignored, on top of Options.IgnorePaths, because
// their content must never reach a model: environment files, private keys
// and certificates, keystores, credential files and Terraform state. Like
// slash-less ignore patterns, they match a file's base name anywhere in the
// tree. There is deliberately no opt-out: a .env.example is little loss.
var SecretPaths = []string{
	".env", ".env.*", "*.env", ".envrc",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".netrc", ".npmrc", ".pypirc", ".git-credentials",
	"*.tfstate", "*.tfstate.*",
}

// Options configures a Gate.
type Options struct {
	// IgnorePaths are the doublestar globs of kodus-config's ignorePaths,
	// relative to the repository root. See New for how they match.
	IgnorePaths []string
	// MaxBytes is the largest file reviewed: DefaultMaxBytes when 0, no
	// limit when negative.
	MaxBytes int
	// MaxLines is the most lines a reviewed file may have: DefaultMaxLines
	// when 0, no limit when negative.
	MaxLines int
	// Incomplete says why IgnorePaths may lack a path the workspace means
	// to ignore (its kodus-config.yml does not parse, a pattern is not a
	// glob), "" when nothing is missing. See Gate.Incomplete.
	Incomplete string
}

// Gate holds the compiled rules. The zero value is not usable; call New.
type Gate struct {
	// privacy is the ignore list of every prompt (agents/redact): its
	// default list and the ignorePaths.
	privacy    *redact.Ignore
	incomplete string
	maxBytes   int
	maxLines   int
}

// New compiles the options. Ignore patterns are those of the privacy
// ignore list (agents/redact), which matches them for every reader of
// workspace files: doublestar globs ("**" crosses directories, "*" does
// not) over slash-separated paths relative to the repository root, that
// ignore letter case and follow .gitignore where the two differ from plain
// glob matching:
//
//   - a pattern without a slash matches a file or directory name at any
//     depth: "*.snap" ignores every snapshot, "dist" everything under any
//     dist directory;
//   - a pattern that matches a directory ignores everything under it:
//     "build/out" is "build/out/**";
//   - a leading "/" or "./" is dropped, and a trailing "/" matches
//     directories only.
//
// Empty patterns are skipped. A pattern that is not a valid glob, starts
// with "!" (negation is not supported) or names the root is an error that
// names it; Compile keeps the other patterns instead.
func New(o Options) (*Gate, error) {
	g, errs := Compile(o)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return g, nil
}

// Compile compiles the options as New does, but leaves out each ignore
// pattern it cannot use and returns an error naming it: every other
// pattern applies, so a mistake in one never un-ignores what another
// ignores.
func Compile(o Options) (*Gate, []error) {
	g := &Gate{maxBytes: o.MaxBytes, maxLines: o.MaxLines, incomplete: o.Incomplete}
	if g.maxBytes == 0 {
		g.maxBytes = DefaultMaxBytes
	}
	if g.maxLines == 0 {
		g.maxLines = DefaultMaxLines
	}
	var errs []error
	g.privacy, errs = redact.CompileIgnore(o.IgnorePaths)
	for i, err := range errs {
		errs[i] = fmt.Errorf("gate: %w", err)
	}
	return g, errs
}

// ForConfig returns the gate of a workspace whose kodus-config.yml is cfg:
// its ignorePaths on top of the built-in lists. It is the one place the
// workspace's ignore list is built, for the review, the Kody Rules loader,
// the CLI and the agents. A pattern that cannot be used is left out and
// reported in problems; the others all apply. When the file's problems may
// have lost a path to ignore, Incomplete says so.
func ForConfig(cfg kodusconfig.Config) (*Gate, []string) {
	var why []string
	for _, p := range cfg.IgnoreLost() {
		why = append(why, p.String())
	}
	g, errs := Compile(Options{IgnorePaths: cfg.IgnorePaths, Incomplete: strings.Join(why, "; ")})
	var problems []string
	for _, err := range errs {
		msg := fmt.Sprintf("kodus-config ignorePaths: %v (the pattern is left out; the others apply)", err)
		problems = append(problems, msg)
		// Leaving a negation out ignores more, never less.
		if !errors.Is(err, redact.ErrIgnoreNegation) && g.incomplete == "" {
			g.incomplete = msg
		}
	}
	return g, problems
}

// secretName reports the pattern of SecretPaths that the file name base
// matches, "" when none does.
func secretName(base string) string {
	for _, p := range SecretPaths {
		if doublestar.MatchUnvalidated(p, base) {
			return p
		}
	}
	return ""
}

// normalize turns an OS-specific or "./"-prefixed relative path into the
// clean slash-separated form the rules are written against. Backslashes
// count as separators on every system, as in Kodus, so a path that came
// from Windows matches the same patterns.
func normalize(relPath string) string {
	p := path.Clean(strings.ReplaceAll(filepath.ToSlash(relPath), `\`, "/"))
	p = strings.TrimPrefix(p, "./")
	return strings.TrimLeft(p, "/")
}

// Private says why the file at relPath must never be read into a prompt:
// it is ignored by kodus-config ignorePaths or may hold secrets; "" when
// it may be read. It is the part of CheckPath that is about privacy
// rather than cost, and applies to every reader of workspace files.
func (g *Gate) Private(relPath string) Reason {
	rel := normalize(relPath)
	p, extra := g.privacy.Which(rel)
	if extra {
		return Reason("ignored by kodus-config ignorePaths: " + p)
	}
	if s := secretName(path.Base(rel)); s != "" {
		return Reason("may contain secrets (always ignored: " + s + ")")
	}
	// The privacy list is what no prompt may ever contain; it is broader
	// than SecretPaths (credential files, Terraform variables…).
	if p != "" {
		return Reason("may contain secrets (on the privacy ignore list)")
	}
	return ""
}

// IgnoredBy returns the kodus-config ignorePaths pattern, as written, that
// ignores relPath; "" when none does.
func (g *Gate) IgnoredBy(relPath string) string {
	p, extra := g.privacy.Which(normalize(relPath))
	if !extra {
		return ""
	}
	return p
}

// Incomplete says why the workspace's ignorePaths may lack a path it means
// to ignore (see Options.Incomplete); "" when they are complete. The
// review, of the files the user edits or names, goes on with the patterns
// it has; a reader of files the user did not name (a rule's references, a
// file a model asks for) refuses every file while it is set: see Refuses.
func (g *Gate) Incomplete() string { return g.incomplete }

// Refuses reports whether a reader of files the user did not name, such as
// a tool a model calls or the evidence a review gathers, must not read the
// file at relPath: it is Private, or the ignore list is Incomplete.
func (g *Gate) Refuses(relPath string) bool {
	return g.incomplete != "" || g.Private(relPath).Skip()
}

// CheckPath applies the rules that need only the path: ignore patterns,
// secrets, vendored directories, lock files, and generated or minified
// file names. relPath is relative to the repository root.
func (g *Gate) CheckPath(relPath string) Reason {
	if r := g.Private(relPath); r != "" {
		return r
	}
	rel := normalize(relPath)
	if dir := vendorDir(rel); dir != "" {
		return Reason("vendored (" + dir + "/)")
	}
	base := strings.ToLower(path.Base(rel))
	if isLockFile(base) {
		return "lock file"
	}
	if pat := generatedName(base); pat != "" {
		return Reason("generated file (" + pat + ")")
	}
	for _, suffix := range minifiedSuffixes {
		if strings.HasSuffix(base, suffix) && len(base) > len(suffix) {
			return Reason("minified (*" + suffix + ")")
		}
	}
	return ""
}

// Check applies every rule to the file at relPath (relative to the
// repository root) with the given content: first those of CheckPath, then
// binary, generated, size and minified detection on the content. A nil
// content applies the path rules only.
func (g *Gate) Check(relPath string, content []byte) Reason {
	if r := g.CheckPath(relPath); r != "" {
		return r
	}
	if content == nil {
		return ""
	}
	if r := binary(content); r != "" {
		return r
	}
	if r := generatedContent(content); r != "" {
		return r
	}
	if g.maxBytes > 0 && len(content) > g.maxBytes {
		size, limit := formatBytes(len(content)), formatBytes(g.maxBytes)
		if size == limit {
			// Just over the limit: rounding would print "1 MiB > 1 MiB".
			size, limit = formatCount(len(content))+" bytes", formatCount(g.maxBytes)
		}
		return Reason("too large (" + size + " > " + limit + ")")
	}
	// The size check above bounds the cost of the full scans below.
	lines := countLines(content)
	if minified(content, lines) {
		return Reason("minified (average line " + strconv.Itoa(len(content)/lines) + " bytes)")
	}
	if g.maxLines > 0 && lines > g.maxLines {
		return Reason("too large (" + formatCount(lines) + " lines > " + formatCount(g.maxLines) + ")")
	}
	return ""
}

// vendorDirs are the directories holding third-party code, matched as a
// whole directory name at any depth (GitHub Linguist does the same).
var vendorDirs = map[string]bool{
	"vendor": true, "node_modules": true, "third_party": true, ".yarn": true, "bower_components": true,
}

// vendorDir returns the first vendored directory on the path, or "". The
// file's own name does not count: vendor.go is ordinary code.
func vendorDir(rel string) string {
	dir, _ := path.Split(rel)
	for elem := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		if vendorDirs[elem] {
			return elem
		}
	}
	return ""
}

// lockFiles are dependency lock files by (lower-cased) name; any other
// "*.lock" counts too.
var lockFiles = map[string]bool{
	"go.sum": true, "go.work.sum": true,
	"package-lock.json": true, "npm-shrinkwrap.json": true, "pnpm-lock.yaml": true,
	"bun.lockb": true, "deno.lock": true,
	"pipfile.lock": true, "packages.lock.json": true, "package.resolved": true,
	"gradle.lockfile": true, "pubspec.lock": true,
}

func isLockFile(base string) bool {
	// yarn.lock, Cargo.lock, poetry.lock, composer.lock, Gemfile.lock,
	// uv.lock, mix.lock, Podfile.lock, flake.lock, bun.lock, ...
	return lockFiles[base] || (strings.HasSuffix(base, ".lock") && base != ".lock")
}

// generatedPatterns are file names that code generators produce, compared
// lower-cased: protobuf and gRPC output (Go, Python, C++), gRPC-gateway,
// the common "_generated"/".generated"/".gen.go" conventions, Dart's
// build_runner output, Visual Studio designer files and source maps.
var generatedPatterns = []string{
	"*.pb.go", "*.pb.gw.go", "*_pb2.py", "*_pb2_grpc.py", "*.pb.cc", "*.pb.h",
	"*_generated.*", "*.generated.*", "*.gen.go",
	"*.g.dart", "*.freezed.dart", "*.designer.cs",
	"*.js.map", "*.css.map", "*.mjs.map",
}

func generatedName(base string) string {
	for _, p := range generatedPatterns {
		if doublestar.MatchUnvalidated(p, base) {
			return p
		}
	}
	return ""
}

var minifiedSuffixes = []string{".min.js", ".min.mjs", ".min.cjs", ".min.css"}

// sniffBytes is how much of a file the binary test looks at, as git does.
const sniffBytes = 8 << 10

// binary recognises binary content by a NUL byte in the first 8 KiB, as
// git does, or by mostly invalid UTF-8 there. A few invalid bytes, such as
// a Latin-1 "é" in a comment, do not make a file binary; in random bytes
// roughly half are invalid. UTF-16 text has NUL bytes and counts as binary.
func binary(content []byte) Reason {
	head := content[:min(len(content), sniffBytes)]
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary (NUL byte)"
	}
	invalid, n := 0, 0
	for n < len(head) {
		if !utf8.FullRune(head[n:]) && len(head) < len(content) {
			break // a character cut by the sniffing limit
		}
		r, size := utf8.DecodeRune(head[n:])
		if r == utf8.RuneError && size == 1 {
			invalid++
		}
		n += size
	}
	if n > 0 && invalid*10 > n*3 {
		return "binary (invalid UTF-8)"
	}
	return ""
}

// headerLines is how far down a file generated-code markers are looked for:
// enough for a license block above them, not so far that a marker quoted in
// ordinary code is taken for one.
const headerLines = 40

var (
	// goGenerated is Go's convention (go help generate), matched on the
	// whole line as the go command does.
	goGenerated = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)
	// banner matches the text of a comment that opens with a generator's
	// banner: "Code generated by ..." in any language, protoc's "Generated by the protocol
	// buffer compiler", Thrift's "Autogenerated by Thrift Compiler", "This
	// file was automatically generated", Meta's "@generated" and C#'s
	// "<auto-generated>".
	banner = regexp.MustCompile(`^(?i:(code )?(auto-?)?generated (by|from|with|using)\b|auto-?generated\b|this (file|code) (was|is|has been) (auto-?|automatically )?generated\b|<auto-generated\b)|^@generated\b`)
)

// commentLeaders start comment lines in the languages reviewed.
var commentLeaders = []string{"//", "#", "/*", "*", "<!--", "--", ";", "'"}

// generatedContent looks for a generated-code marker in the first lines:
// Go's "// Code generated ... DO NOT EDIT." line, or a comment whose text
// starts with a generator's banner (see banner). The marker must open the
// comment: a comment that mentions "Code generated" or quotes a banner in
// passing, as the source of a generator or a linter does, is ordinary code.
func generatedContent(content []byte) Reason {
	rest := content
	for range headerLines {
		if len(rest) == 0 {
			break
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if goGenerated.Match(line) {
			return "generated file (Code generated … DO NOT EDIT)"
		}
		if text, ok := commentText(line); ok {
			if m := banner.Find(text); m != nil {
				return Reason("generated file (" + string(m) + ")")
			}
		}
	}
	return ""
}

// commentText returns the text of a comment line without its leader and the
// decoration around it ("/** ", "## ", "<!-- "), and false for other lines.
func commentText(line []byte) ([]byte, bool) {
	t := bytes.TrimSpace(line)
	for _, l := range commentLeaders {
		if rest, ok := bytes.CutPrefix(t, []byte(l)); ok {
			return bytes.TrimLeft(rest, "/#*!-;' \t"), true
		}
	}
	return nil, false
}

// minifiedAvgLine and minifiedSpace tune the minified-content test: lines
// averaging over 500 bytes with under 10% whitespace. Hand-written code
// averages well under 100 bytes a line; one long line among short ones does
// not move the average much; and prose kept as one line per paragraph (as in
// Markdown) is about one sixth spaces, which the whitespace share spares.
const (
	minifiedAvgLine = 500
	minifiedSpace   = 0.10
)

func minified(content []byte, lines int) bool {
	if lines == 0 || len(content)/lines <= minifiedAvgLine {
		return false
	}
	space := 0
	for _, c := range content {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			space++
		}
	}
	return float64(space) < minifiedSpace*float64(len(content))
}

// countLines counts lines as editors do: a final line without a newline
// counts, an empty file has none.
func countLines(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}

// formatBytes writes a size in binary units with at most one decimal:
// "900 B", "512 KiB", "2.3 MiB".
func formatBytes(n int) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}

// formatCount writes n with thousands separators: "20,000".
func formatCount(n int) string {
	if n < 0 {
		return "-" + formatCount(-n)
	}
	s := strconv.Itoa(n)
	var sb strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}
