package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScratchFP(t *testing.T) {
	root := os.Getenv("FPROOT")
	lines, n := 0, 0
	byRule := map[string]int{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !hasExt(p) {
			return nil
		}
		b, _ := os.ReadFile(p)
		s := string(b)
		lines += strings.Count(s, "\n")
		_, f := Default().Redact(s)
		for _, x := range f {
			n++
			byRule[x.Rule]++
			if os.Getenv("SHOW") != "" {
				ls := strings.LastIndexByte(s[:x.Start], '\n') + 1
				le := strings.IndexByte(s[x.End:], '\n')
				if le < 0 { le = len(s) - x.End }
				line := s[ls : x.End+le]
				if len(line) > 200 { line = line[:200] }
				t.Logf("%s %s: %s", p, x.Rule, line)
			}
		}
		return nil
	})
	t.Logf("lines=%d findings=%d per1000=%.4f %v", lines, n, float64(n)*1000/float64(lines), byRule)
}

func hasExt(p string) bool {
	for _, e := range strings.Split(os.Getenv("EXTS"), ",") {
		if strings.HasSuffix(p, e) {
			return true
		}
	}
	return false
}
