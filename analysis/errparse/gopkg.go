package errparse

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
)

// go test names the file of a t.Error line by its base name only
// ("    x_test.go:6: got 1, want 2"); the package it belongs to comes after
// the test's output, on the summary line ("FAIL\texample.com/m/pkg\t0.01s").
// The log lines of a package are held until that line names the package,
// and then placed in its directory, found from the go.mod (or go.work) of
// the directory the tool ran in.

// goPkgSummaryRE is go test's per-package summary: "ok  \tpkg\t0.1s",
// "FAIL\tpkg\t0.1s", "FAIL\tpkg [build failed]", "ok  \tpkg\t(cached)".
var goPkgSummaryRE = regexp.MustCompile(`^(?:ok|FAIL) *\t(\S+)(?:\t| \[)`)

// maxModules bounds the go.work modules read to place one output.
const maxModules = 256

// goTestLog is a go test log line waiting for its package: its index in
// the scanner's out and the file name as printed.
type goTestLog struct {
	i    int
	name string
}

// goModule is a module root (absolute, slash-separated) and its path.
type goModule struct{ dir, path string }

// parseGoPkgSummary places the pending go test log lines under the package
// the summary line names. The line itself is not an error.
func parseGoPkgSummary(s *scanner) bool {
	m := goPkgSummaryRE.FindStringSubmatch(s.lines[s.i])
	if m == nil {
		return false
	}
	s.placeGoTest(m[1])
	s.i++
	return true
}

// placeGoTest moves the pending go test log lines into the directory of
// the package pkg (an import path), when the module that holds it is found
// and the file is there; the lines stay as printed otherwise.
func (s *scanner) placeGoTest(pkg string) {
	pending := s.goTestPending
	s.goTestPending = nil
	if len(pending) == 0 || pkg == "" {
		return
	}
	dir := s.goPackageDir(pkg)
	if dir == "" {
		return
	}
	for _, p := range pending {
		abs := path.Join(dir, p.name)
		if st, err := os.Stat(filepath.FromSlash(abs)); err != nil || st.IsDir() {
			continue
		}
		s.out[p.i].File = s.o.rel(abs)
	}
}

// goPackageDir is the absolute directory of the package with import path
// pkg, or "" when no module of the tool's directory holds it.
func (s *scanner) goPackageDir(pkg string) string {
	if s.goModules == nil {
		s.goModules = findGoModules(s.toolDir())
	}
	best := goModule{}
	for _, m := range s.goModules {
		if (pkg == m.path || strings.HasPrefix(pkg, m.path+"/")) && len(m.path) > len(best.path) {
			best = m
		}
	}
	if best.path == "" {
		return ""
	}
	return path.Join(best.dir, strings.TrimPrefix(pkg, best.path))
}

// toolDir is the absolute, slash-separated directory the tool ran in: the
// Dir of the options, else the workspace; "" when neither is known.
func (s *scanner) toolDir() string {
	d := s.o.Dir
	if d == "" {
		d = s.o.Workspace
	}
	if d == "" || !isAbs(d) {
		return ""
	}
	return slashClean(d)
}

// findGoModules reads the modules of the build the go command would run in
// dir: those a go.work above it uses, else the nearest go.mod above it.
// It returns an empty, non-nil slice when there are none.
func findGoModules(dir string) []goModule {
	mods := []goModule{}
	if dir == "" {
		return mods
	}
	var nearestMod string
	for d := dir; ; {
		if work, err := os.ReadFile(filepath.FromSlash(path.Join(d, "go.work"))); err == nil {
			if wf, err := modfile.ParseWork("go.work", work, nil); err == nil {
				for _, u := range wf.Use {
					if len(mods) == maxModules {
						break
					}
					root := filepath.ToSlash(u.Path)
					if !isAbs(root) {
						root = path.Join(d, root)
					}
					if m, ok := readGoMod(root); ok {
						mods = append(mods, m)
					}
				}
				return mods
			}
		}
		if nearestMod == "" {
			if _, err := os.Stat(filepath.FromSlash(path.Join(d, "go.mod"))); err == nil {
				nearestMod = d
			}
		}
		parent := path.Dir(d)
		if parent == d || parent == "." {
			break
		}
		d = parent
	}
	if nearestMod != "" {
		if m, ok := readGoMod(nearestMod); ok {
			mods = append(mods, m)
		}
	}
	return mods
}

// readGoMod reads the module path of the go.mod in root.
func readGoMod(root string) (goModule, bool) {
	data, err := os.ReadFile(filepath.FromSlash(path.Join(root, "go.mod")))
	if err != nil {
		return goModule{}, false
	}
	p := modfile.ModulePath(data)
	if p == "" {
		return goModule{}, false
	}
	return goModule{dir: slashClean(root), path: p}, true
}
