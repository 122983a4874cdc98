package changes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A file that git does not track yet may be one moved with a plain mv (or
// an editor's rename), which git sees as a deletion and a new file until
// both are staged. Such a file is compared with the deleted file whose
// content it mostly has, as git's rename detection would pair them once
// staged. The search is bounded so that it stays cheap: past these limits
// the file counts as new, as it did before.
const (
	// moveMinSimilarity is the share of lines two files have in common
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
	data, err := os.ReadFile(abs)
	if err != nil {
		return origin{}, nil
	}
	old, err := readBlobs(ctx, top, false, rev, deleted)
	if err != nil {
		return origin{}, err
	}
	from, _ := mostSimilar(string(data), deleted, old, nil)
	return origin{from: from}, nil
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
	var old map[string]string
	used := map[string]bool{}
	for _, f := range news {
		st, err := r.Lstat(filepath.FromSlash(f.Path))
		if err != nil || !st.Mode().IsRegular() || st.Size() > moveMaxBytes || st.Size() == 0 {
			continue
		}
		data, err := r.ReadFile(filepath.FromSlash(f.Path))
		if err != nil {
			continue
		}
		if old == nil {
			if old, err = readBlobs(ctx, root, true, base, names); err != nil {
				return
			}
		}
		if from, ok := mostSimilar(string(data), names, old, used); ok {
			used[from] = true
			f.From = strings.TrimPrefix(from, "./")
		}
	}
}

// mostSimilar returns the candidate (a key of texts) whose text has the
// most lines in common with text, at least moveMinSimilarity of the longer
// one's, and not in used.
func mostSimilar(text string, candidates []string, texts map[string]string, used map[string]bool) (string, bool) {
	b := SplitLines(text)
	if len(b) == 0 {
		return "", false
	}
	best, bestScore := "", moveMinSimilarity
	for _, c := range candidates {
		old, ok := texts[c]
		if !ok || used[c] {
			continue
		}
		a := SplitLines(old)
		longer := max(len(a), len(b))
		if float64(min(len(a), len(b))) < bestScore*float64(longer) {
			continue // too few lines to have enough in common
		}
		added := 0
		for _, e := range DiffLines(a, b) {
			added += e.B1 - e.B0
		}
		if score := float64(len(b)-added) / float64(longer); score >= bestScore && (best == "" || score > bestScore) {
			best, bestScore = c, score
		}
	}
	return best, best != ""
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
