package redact

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Finding is one redacted span of the input.
type Finding struct {
	// Rule is the name of the rule that found the secret (see the table in
	// the package comment); when overlapping findings were merged, the most
	// specific rule among them.
	Rule string
	// Start and End are byte offsets into the text given to Redact.
	Start, End int
}

// DefaultEntropyThreshold is the Shannon entropy, in bits per character,
// that a value of 16 or more characters needs for the generic-secret rule.
// Random base62 or base64 secrets of that length score 3.5 to 4.5, random
// hex 3.4 to 4; identifiers, words and repetitive placeholders score lower
// and are also turned away by the shape checks in looksRandom.
const DefaultEntropyThreshold = 3.0

// Redactor finds and replaces secrets. It is immutable once built and safe
// for concurrent use.
type Redactor struct {
	entropy float64
	extras  []tokenRule
}

// Option configures New.
type Option func(*Redactor)

// WithEntropyThreshold sets the entropy, in bits per character, that an
// assigned value of 16+ characters needs before the generic-secret rule
// redacts it; shorter values need proportionally less (t·log2(n)/4), since
// a string of n characters cannot exceed log2(n) bits per character. A
// lower threshold redacts more; t <= 0 keeps DefaultEntropyThreshold.
func WithEntropyThreshold(t float64) Option {
	return func(r *Redactor) {
		if t > 0 {
			r.entropy = t
		}
	}
}

var ruleNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// WithExtraPatterns adds a user rule, e.g. an in-house token format from
// the kodus configuration. expr is a Go regular expression (RE2 syntax); if
// it has a capture group, only the first group's text is redacted (so
// `api_token: (\w+)` keeps the name), else the whole match. name is used in
// the replacement "[REDACTED:name]" and must be lowercase letters, digits
// and dashes. The error names the bad pattern, so that a configuration
// mistake can be shown to the user.
func WithExtraPatterns(name, expr string) (Option, error) {
	if !ruleNameRE.MatchString(name) {
		return nil, fmt.Errorf("redact: extra pattern %q: name must match %s", name, ruleNameRE)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("redact: extra pattern %q: %w", name, err)
	}
	group := 0
	if re.NumSubexp() > 0 {
		group = 1
	}
	rule := tokenRule{name: name, prio: prioExtra, re: re, group: group}
	return func(r *Redactor) { r.extras = append(r.extras, rule) }, nil
}

// New returns a Redactor with the built-in rules and the given options.
func New(opts ...Option) *Redactor {
	r := &Redactor{entropy: DefaultEntropyThreshold}
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	return r
}

var defaultRedactor = sync.OnceValue(func() *Redactor { return New() })

// Default returns a shared Redactor with the built-in rules.
func Default() *Redactor { return defaultRedactor() }

// String returns text with every secret replaced; see Redact.
func (r *Redactor) String(text string) string {
	out, _ := r.Redact(text)
	return out
}

// maxPasses bounds the re-scans in Redact. One re-scan is all that real
// text ever needs; the bound only guards against pathological inputs.
const maxPasses = 4

// propagateMin is the shortest secret whose other occurrences in the text
// are redacted too. Shorter ones (a 3-letter URL password) would knock out
// unrelated words.
const propagateMin = 8

// Redact returns text with every secret replaced by "[REDACTED:<rule>]",
// and the findings, sorted by offset. Text without secrets is returned
// unchanged, as the same string, with a nil slice.
//
// Beyond the rules themselves, Redact guarantees three things, each for a
// reason:
//   - Overlapping findings are merged into one span, so that no part of
//     either secret survives.
//   - A secret found once is also redacted wherever else its text occurs
//     (for secrets of 8+ bytes), e.g. a token assigned in one line and
//     echoed in a log line below, where no rule would recognise it.
//   - The result is a fixed point: redacting it again changes nothing. The
//     output is re-scanned, because a replacement can expose a neighbour
//     (a token that was glued to the secret before), and new findings are
//     folded in until a scan finds nothing. Text that already contains a
//     "[REDACTED:…]" marker is never matched across the marker.
func (r *Redactor) Redact(text string) (string, []Finding) {
	cands := r.detect(text)
	if len(cands) == 0 {
		return text, nil
	}
	var (
		spans []cand
		out   string
	)
	for pass := 0; ; pass++ {
		spans = propagate(text, mergeCands(append(spans, cands...)))
		var marks []mark
		out, marks = apply(text, spans)
		if pass == maxPasses-1 {
			break
		}
		more := r.detect(out)
		if len(more) == 0 {
			break
		}
		// detect drops anything that overlaps a marker, so every new
		// finding lies in text that apply copied verbatim and maps back
		// by a plain shift.
		for i := range more {
			more[i].start = toOrig(marks, more[i].start)
			more[i].end = toOrig(marks, more[i].end)
		}
		cands = more
	}
	findings := make([]Finding, len(spans))
	for i, s := range spans {
		findings[i] = Finding{Rule: s.rule, Start: s.start, End: s.end}
	}
	return out, findings
}

// cand is a finding in the making: prio orders rules from the most
// specific (lowest) to the most generic.
type cand struct {
	start, end, prio int
	rule             string
}

// mark records where apply put one replacement: out offsets and the
// difference between the output and input length up to its end.
type mark struct {
	outStart, outEnd int
	shift            int // len(out) - len(in) after this replacement
}

// mergeCands sorts the candidates and merges overlapping ones into their
// union, labelled with the most specific rule among them.
func mergeCands(c []cand) []cand {
	slices.SortFunc(c, func(a, b cand) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return a.prio - b.prio
	})
	out := c[:0]
	for _, x := range c {
		if n := len(out); n > 0 && x.start < out[n-1].end {
			last := &out[n-1]
			if x.end > last.end {
				last.end = x.end
			}
			if x.prio < last.prio {
				last.prio, last.rule = x.prio, x.rule
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// propagate adds every other occurrence of each found secret and merges
// again until nothing new is covered.
func propagate(text string, spans []cand) []cand {
	searched := map[string]bool{}
	for range maxPasses {
		var secrets []cand
		for _, s := range spans {
			if secret := text[s.start:s.end]; len(secret) >= propagateMin && !searched[secret] {
				searched[secret] = true
				secrets = append(secrets, s)
			}
		}
		more := occurrences(text, secrets, func(start, end int) bool { return covered(spans, start, end) })
		if len(more) == 0 {
			break
		}
		spans = mergeCands(append(spans, more...))
	}
	return spans
}

// manySecrets is where occurrences switches from one strings.Index pass
// per secret to a single pass over the text.
const manySecrets = 8

// occurrences returns the occurrences of the secrets' texts that skip
// does not reject.
func occurrences(text string, secrets []cand, skip func(start, end int) bool) []cand {
	var more []cand
	if len(secrets) <= manySecrets {
		for _, s := range secrets {
			secret := text[s.start:s.end]
			for off := 0; ; {
				k := strings.Index(text[off:], secret)
				if k < 0 {
					break
				}
				k += off
				off = k + 1
				if !skip(k, k+len(secret)) {
					more = append(more, cand{start: k, end: k + len(secret), prio: s.prio, rule: s.rule})
				}
			}
		}
		return more
	}
	// Index the secrets by their first propagateMin bytes and look every
	// position of the text up once: linear in the text, however many
	// secrets a (generated, hostile or just large) input holds.
	byPrefix := make(map[string][]cand, len(secrets))
	for _, s := range secrets {
		p := text[s.start : s.start+propagateMin]
		byPrefix[p] = append(byPrefix[p], s)
	}
	for i := 0; i+propagateMin <= len(text); i++ {
		for _, s := range byPrefix[text[i:i+propagateMin]] {
			n := s.end - s.start
			if i+n <= len(text) && text[i:i+n] == text[s.start:s.end] && !skip(i, i+n) {
				more = append(more, cand{start: i, end: i + n, prio: s.prio, rule: s.rule})
			}
		}
	}
	return more
}

// covered reports whether [start, end) lies inside one of the sorted,
// disjoint spans.
func covered(spans []cand, start, end int) bool {
	i, _ := slices.BinarySearchFunc(spans, start, func(c cand, t int) int {
		if c.end <= t {
			return -1
		}
		return 1
	})
	return i < len(spans) && spans[i].start <= start && end <= spans[i].end
}

// apply replaces each span of text by its marker.
func apply(text string, spans []cand) (string, []mark) {
	var b strings.Builder
	n := len(text)
	for _, s := range spans {
		n += len("[REDACTED:]") + len(s.rule) - (s.end - s.start)
	}
	b.Grow(max(n, 0))
	marks := make([]mark, 0, len(spans))
	prev := 0
	for _, s := range spans {
		b.WriteString(text[prev:s.start])
		os := b.Len()
		b.WriteString("[REDACTED:")
		b.WriteString(s.rule)
		b.WriteByte(']')
		marks = append(marks, mark{outStart: os, outEnd: b.Len(), shift: b.Len() - s.end})
		prev = s.end
	}
	b.WriteString(text[prev:])
	return b.String(), marks
}

// toOrig maps an output offset outside every marker back to the input.
func toOrig(marks []mark, p int) int {
	i := sort.Search(len(marks), func(i int) bool { return marks[i].outEnd > p })
	if i == 0 {
		return p
	}
	return p - marks[i-1].shift
}

// markerRE matches a replacement that is already in the text, from an
// earlier Redact or from a tool that uses the same format.
var markerRE = regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_-]*\]`)

// sink collects candidates from the detectors.
type sink struct {
	text    string
	cands   []cand
	markers [][]int // existing "[REDACTED:…]" markers in text
}

func (s *sink) add(rule string, prio, start, end int) {
	if start >= end {
		return
	}
	if len(s.markers) > 0 {
		// The first marker that ends after start is the only one that
		// can overlap [start, end); markers are sorted and disjoint.
		i := sort.Search(len(s.markers), func(i int) bool { return s.markers[i][1] > start })
		if i < len(s.markers) && s.markers[i][0] < end {
			return
		}
	}
	s.cands = append(s.cands, cand{start: start, end: end, prio: prio, rule: rule})
}

// detect runs every rule over text.
func (r *Redactor) detect(text string) []cand {
	s := sink{text: text}
	if strings.Contains(text, "[REDACTED:") {
		s.markers = markerRE.FindAllStringIndex(text, -1)
	}
	found := keywordScan(text)
	for i := range builtinRules {
		if found&(1<<i) != 0 {
			builtinRules[i].scan(&s)
		}
	}
	for i := range r.extras {
		r.extras[i].scan(&s)
	}
	if found&(1<<detPEM) != 0 {
		scanPEM(&s)
	}
	if found&(1<<detURL) != 0 {
		scanURLPasswords(&s)
	}
	if found&(1<<detConn) != 0 {
		scanConnPasswords(&s)
	}
	if found&(1<<detDSN) != 0 {
		scanDSNUserinfo(&s)
	}
	if found&(1<<detSchemes) != 0 {
		scanSchemes(&s)
	}
	if found&(1<<detAuthHeader) != 0 {
		scanAuthHeaders(&s)
	}
	if found&(1<<detCLI) != 0 {
		scanCLICredentials(&s)
	}
	if found&(1<<detCmdPass) != 0 {
		scanCommandPasswords(&s)
	}
	if found&(1<<detNetrc) != 0 {
		scanNetrc(&s)
	}
	if found&(1<<detDockerEnv) != 0 {
		r.scanDockerEnv(&s)
	}
	r.scanAssignments(&s)
	if found&(1<<detSQL) != 0 {
		r.scanSQLPasswords(&s)
	}
	scanAWSPairs(&s)
	return s.cands
}
