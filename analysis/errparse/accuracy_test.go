package errparse

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// toolchain groups fixtures for the accuracy report by the toolchain whose
// output they hold.
func toolchain(fixture string) string {
	for _, p := range []struct{ prefix, name string }{
		{"go-", "Go"}, {"rust", "Rust"}, {"cargo", "Rust"},
		{"gcc-", "C/C++"}, {"gxx-", "C/C++"}, {"clang-", "C/C++"}, {"make-", "C/C++"}, {"cmake", "C/C++"},
		{"python-", "Python"}, {"pytest-", "Python"},
		{"java", "Java"},
		{"node-", "JavaScript"}, {"jest", "JavaScript"}, {"vitest", "JavaScript"}, {"eslint", "JavaScript"},
		{"tsc", "TypeScript"},
		{"bash-", "Shell"}, {"dash-", "Shell"}, {"shellcheck-", "Shell"},
		{"mvn-", "Java"}, {"clangxx-", "C/C++"}, {"staticcheck", "Go"},
		{"py-", "Python"}, {"unittest-", "Python"}, {"doctest", "Python"}, {"flake8", "Python"}, {"mypy-", "Python"},
		{"c-", "C/C++"}, {"ninja-", "C/C++"}, {"ubsan-", "C/C++"},
	} {
		if strings.HasPrefix(fixture, p.prefix) {
			return p.name
		}
	}
	return "other"
}

// TestLocationAccuracy runs every fixture and counts those whose primary
// error is located right: the file, line and column (0 when the tool
// prints none) of the user's code that the table expects. It reports the
// figures per toolchain (go test -v -run TestLocationAccuracy) and fails
// below 95% overall. The README's parse-accuracy table comes from here.
func TestLocationAccuracy(t *testing.T) {
	type tally struct{ right, total int }
	by := map[string]*tally{}
	var all tally
	var misses []string
	for _, c := range fixtureCases {
		tc := toolchain(c.fixture)
		if by[tc] == nil {
			by[tc] = &tally{}
		}
		by[tc].total++
		all.total++
		errs := parseFixture(t, c.fixture)
		p := Primary(errs)
		got := "no error found"
		if p >= 0 {
			got = fmt.Sprintf("%s:%d:%d", errs[p].File, errs[p].Line, errs[p].Column)
		}
		wantLoc := fmt.Sprintf("%s:%d:%d", c.want.File, c.want.Line, c.want.Column)
		if got == wantLoc {
			by[tc].right++
			all.right++
		} else {
			misses = append(misses, fmt.Sprintf("%s: got %s, want %s", c.fixture, got, wantLoc))
		}
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-10s %2d/%-2d located right", n, by[n].right, by[n].total)
	}
	t.Logf("%-10s %2d/%-2d located right (%.0f%%)", "all", all.right, all.total, 100*float64(all.right)/float64(all.total))
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	if all.right*100 < all.total*95 {
		t.Errorf("%d/%d fixtures located right, below 95%%", all.right, all.total)
	}
}
