package changes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// A file that git does not track yet may be one moved with a plain mv (or
// an editor's rename), which git sees as a deletion and a new file until
// both are staged. Such a file is compared with the deleted file whose
// content it mostly has, as git's rename detection would pair them once
// staged. The search is bounded so that it stays cheap: past these limits
// the file counts as new, as it did before.
const (
	// moveMinSimilarity is the share of content two files have in common
	// for one to be taken for the other moved: git's default for -M.
	moveMinSimilarity = 0.5
	// moveMaxCandidates is the most deleted files compared, and
	// moveMaxNew the most new files compared with them.
	moveMaxCandidates = 100
	moveMaxNew        = 100
	// moveMaxBytes is the largest file compared.
	moveMaxBytes = 1 << 20
)

// origin is where a file that is not at the base revision under its own
// path comes from.
type origin struct {
	from    string // its path at the base, relative to the top level
	ignored bool   // untracked and ignored by git
}

// findOrigin looks for the origin of rel (slash, relative to the top level
// top), which is not at rev, for Load: a rename git detects between rev
// and the working tree (staged or not), else, for a file git does not
// track, a deleted file whose content it mostly has, unless git ignores
// the file.
func findOrigin(ctx context.Context, top, rev, rel, abs string) (origin, error) {
	out, stderr, err := git(ctx, top, nil, "diff", "--raw", "-z", "-M", "--ignore-submodules", rev, "--")
	if err != nil {
		return origin{}, gitError("find renames", err, stderr)
	}
	entries, err := parseRaw(out)
	if err != nil {
		return origin{}, err
	}
	var deleted []string
	for _, e := range entries {
		switch {
		case e.path == rel && e.status == 'R':
			return origin{from: e.from}, nil
		case e.path == rel:
			return origin{}, nil // in the index, added: new
		case e.status == 'D':
			deleted = append(deleted, e.path)
		}
	}
	// Not in the index: untracked, when it is on disk.
	st, err := os.Lstat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return origin{}, nil
	}
	if ignored, err := isIgnored(ctx, top, rel); err != nil || ignored {
		return origin{ignored: ignored}, err
	}
	if len(deleted) == 0 || len(deleted) > moveMaxCandidates || st.Size() > moveMaxBytes {
		return origin{}, nil
	}
	// The other untracked files compete for the same deleted files: the
	// pairs are made over all of them, as kodyls review makes them, so
	// that the editor and the CLI pair a file alike.
	others, stderr, err := git(ctx, top, nil, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return origin{}, gitError("list untracked files", err, stderr)
	}
	news := splitNUL(others)
	if len(news) > moveMaxNew {
		return origin{}, nil
	}
	old, err := readBlobs(ctx, top, false, rev, deleted)
	if err != nil {
		return origin{}, err
	}
	texts := map[string]string{}
	for _, n := range news {
		if data, ok := readSmall(filepath.Join(top, filepath.FromSlash(n))); ok {
			texts[n] = data
		}
	}
	if _, ok := texts[rel]; !ok {
		return origin{}, nil
	}
	return origin{from: pairMoves(texts, old)[rel]}, nil
}

// readSmall reads a regular file of at most moveMaxBytes, not empty.
func readSmall(abs string) (string, bool) {
	st, err := os.Lstat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Size() > moveMaxBytes || st.Size() == 0 {
		return "", false
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// isIgnored reports whether git ignores rel, an untracked file (slash,
// relative to the top level top).
func isIgnored(ctx context.Context, top, rel string) (bool, error) {
	out, stderr, err := git(ctx, top, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", ":(literal)"+rel)
	if err != nil {
		return false, gitError("check ignore rules", err, stderr)
	}
	return out != "", nil
}

// guessMoves sets From of the untracked files news (paths relative to
// root) that are deleted files of base moved (paths relative to root too),
// for ListChanges. Nothing it cannot read is an error: the file counts as
// new.
func guessMoves(ctx context.Context, root, base string, news []*ChangedFile, deleted []string) {
	if len(deleted) > moveMaxCandidates || len(news) > moveMaxNew {
		return
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return
	}
	defer r.Close()
	// "./": relative to root, which may be below the top level.
	names := make([]string, len(deleted))
	for i, d := range deleted {
		names[i] = "./" + d
	}
	texts := map[string]string{}
	for _, f := range news {
		st, err := r.Lstat(filepath.FromSlash(f.Path))
		if err != nil || !st.Mode().IsRegular() || st.Size() > moveMaxBytes || st.Size() == 0 {
			continue
		}
		data, err := r.ReadFile(filepath.FromSlash(f.Path))
		if err != nil {
			continue
		}
		texts[f.Path] = string(data)
	}
	if len(texts) == 0 {
		return
	}
	old, err := readBlobs(ctx, root, true, base, names)
	if err != nil {
		return
	}
	pairs := pairMoves(texts, old)
	for _, f := range news {
		if from, ok := pairs[f.Path]; ok {
			f.From = strings.TrimPrefix(from, "./")
		}
	}
}

// lineBag is what the similarity of two files is measured on: each line
// that says something (a letter or a digit in it), trimmed, with the times
// it occurs, and the size of all the trimmed lines. Blank lines and lines
// of punctuation alone ("}", ")") are left out of what two files share, so
// that the skeleton every file of a language has does not make two
// unrelated files look alike; they still count in the size.
type lineBag struct {
	counts map[string]int
	size   int
}

func bagOf(text string) lineBag {
	b := lineBag{counts: map[string]int{}}
	for _, l := range SplitLines(text) {
		l = strings.TrimSpace(l)
		b.size += len(l)
		if strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			b.counts[l]++
		}
	}
	return b
}

// similar reports whether two files of these sizes can be moveMinSimilarity
// alike at all, and the share of the larger one's bytes that common bytes
// make.
func similar(common, sizeA, sizeB int) float64 {
	larger := max(sizeA, sizeB)
	if larger == 0 || float64(min(sizeA, sizeB)) < moveMinSimilarity*float64(larger) {
		return 0 // too small to have enough in common
	}
	return float64(common) / float64(larger)
}

// pairMoves pairs new files with the deleted files they were moved from:
// of all pairs at least moveMinSimilarity alike (the share of the larger
// file's bytes the two have in common, counted by lines wherever they
// stand, as git's rename detection counts shared content), the most alike
// first, each file in one pair at most (git's way), so that an exact move
// is never lost to a partial copy that sorts first. news and deleted map
// paths to texts; the result maps a new path to its deleted one.
func pairMoves(news, deleted map[string]string) map[string]string {
	type pair struct {
		to, from string
		score    float64
	}
	// Each line of the deleted files, with the files it is in: a new
	// file's lines are looked up once each, so unrelated files cost
	// nothing to compare.
	type posting struct{ file, n int }
	var olds []string
	var oldSizes []int
	lines := map[string][]posting{}
	for p, t := range deleted {
		bag := bagOf(t)
		for l, n := range bag.counts {
			lines[l] = append(lines[l], posting{len(olds), n})
		}
		olds = append(olds, p)
		oldSizes = append(oldSizes, bag.size)
	}
	var pairs []pair
	common := make([]int, len(olds))
	for to, t := range news {
		nb := bagOf(t)
		clear(common)
		for l, n := range nb.counts {
			for _, p := range lines[l] {
				common[p.file] += min(n, p.n) * len(l)
			}
		}
		for i, from := range olds {
			if sc := similar(common[i], nb.size, oldSizes[i]); sc >= moveMinSimilarity {
				pairs = append(pairs, pair{to, from, sc})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		a, b := pairs[i], pairs[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if a.to != b.to {
			return a.to < b.to
		}
		return a.from < b.from
	})
	out := map[string]string{}
	taken := map[string]bool{}
	for _, p := range pairs {
		if _, done := out[p.to]; done || taken[p.from] {
			continue
		}
		out[p.to] = p.from
		taken[p.from] = true
	}
	return out
}

// readBlobs reads the stored content of the files names at rev (paths
// relative to the top level, or "./"-relative to dir) in one git process,
// without filters: the content of each one that exists as a file, by name.
func readBlobs(ctx context.Context, dir string, inherit bool, rev string, names []string) (map[string]string, error) {
	var in strings.Builder
	var asked []string
	for _, n := range names {
		if !strings.ContainsAny(n, "\n\r") {
			in.WriteString(rev + ":" + n + "\n")
			asked = append(asked, n)
		}
	}
	out, stderr, err := runGit(ctx, dir, inherit, []byte(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, gitError("read files", err, stderr)
	}
	texts := map[string]string{}
	for _, n := range asked {
		header, rest, ok := strings.Cut(out, "\n")
		if !ok {
			return nil, fmt.Errorf("read files: git cat-file output ends early")
		}
		out = rest
		if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
			continue
		}
		fields := strings.Fields(header)
		size := -1
		if len(fields) == 3 {
			size, _ = strconv.Atoi(fields[2])
		}
		if size < 0 || size+1 > len(out) {
			return nil, fmt.Errorf("read files: unexpected git cat-file header %q", header)
		}
		if fields[1] == "blob" {
			texts[n] = out[:size]
		}
		out = out[size+1:]
	}
	return texts, nil
}
