package rules

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

// listSource is a test source that reads one rule per line of a single
// file, "uuid title"; a line without a title is an error on that line.
type listSource struct{ name, file string }

func (s listSource) Name() string         { return s.name }
func (s listSource) Owns(rel string) bool { return rel == s.file }
func (s listSource) WatchPaths() []string { return []string{s.file} }

func (s listSource) Load(ctx context.Context, ws Workspace) (rules []*Rule, errs []*LoadError) {
	data, err := fs.ReadFile(ws.FS, s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []*LoadError{{File: s.file, Msg: err.Error()}}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		uuid, title, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			errs = append(errs, &LoadError{File: s.file, Line: line, Column: 1, Msg: "want \"uuid title\""})
			continue
		}
		rules = append(rules, &Rule{UUID: uuid, Title: title, File: s.file, Enabled: true, Scope: ScopeFile, uuidLine: line, uuidColumn: 1})
	}
	return rules, errs
}

func TestKodyMarkdownOwns(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{".kody/rules", true},
		{".kody/rules/a.md", true},
		{"./.kody/rules/a.md", true},
		{".kody/rules/sub/B.MD", true},
		{".kody/rules/sub", true}, // a directory the loader walks
		{".kody/rules/notes.txt", false},
		{".kody/rules/.hidden.md", false},
		{".kody/rules/.git/x.md", false},
		{".kody", false},
		{".kody/prompts/x.tmpl", false},
		{".kody/rulesx/a.md", false},
		{"docs/.kody/rules/a.md", false},
		{"docs/x.md", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := (KodyMarkdown{}).Owns(tt.rel); got != tt.want {
			t.Errorf("Owns(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func TestRegistryOwns(t *testing.T) {
	reg := NewRegistry(KodyMarkdown{}, listSource{"one", "ONE.txt"}, listSource{"two", "dir/two.txt"})
	tests := []struct {
		rel  string
		want string // the source's name, "" for none
	}{
		{".kody/rules/x.md", "kody-md"},
		{".kody/rules", "kody-md"},
		{"ONE.txt", "one"},
		{"./ONE.txt", "one"},
		{"dir/two.txt", "two"},
		{"dir", ""},
		{"dir/ONE.txt", ""},
		{"../ONE.txt", ""},
		{".", ""},
		{"docs/x.md", ""},
	}
	for _, tt := range tests {
		src, ok := reg.SourceOf(tt.rel)
		got := ""
		if ok {
			got = src.Name()
		}
		if got != tt.want || reg.Owns(tt.rel) != (tt.want != "") {
			t.Errorf("SourceOf(%q) = %q, Owns = %v; want %q", tt.rel, got, reg.Owns(tt.rel), tt.want)
		}
	}
}

func TestRegistryWatchPaths(t *testing.T) {
	tests := []struct {
		name string
		reg  *Registry
		want []string
	}{
		{"default", DefaultRegistry(), []string{
			".kody/rules", ".kody-rules/review", ".kody-rules/memories",
			".cursorrules", ".cursor/rules", ".github/copilot-instructions.md", ".github/instructions",
			"CLAUDE.md", "AGENTS.md", ".windsurfrules",
		}},
		{"empty", NewRegistry(), nil},
		{"directory and files, repeats once", NewRegistry(KodyMarkdown{}, listSource{"one", "ONE.txt"}, listSource{"again", "ONE.txt"}, listSource{"two", "dir/two.txt"}),
			[]string{".kody/rules", "ONE.txt", "dir/two.txt"}},
	}
	for _, tt := range tests {
		if got := tt.reg.WatchPaths(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: WatchPaths() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRegistryLoad(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".kody/rules/a.md", "---\ntitle: A\nuuid: u-md\n---\n")
	writeFile(t, root, ".kody/rules/broken.md", "---\ntitle: Bad\nseverity: urgent\n---\n")
	writeFile(t, root, "ONE.txt", "u1 First\nu2 Second\n")
	writeFile(t, root, "dir/two.txt", "u2 Same uuid as Second\nu3 Third\nno-title\n")
	one, two := listSource{"one", "ONE.txt"}, listSource{"two", "dir/two.txt"}

	tests := []struct {
		name      string
		sources   []Source
		wantRules []string // "file uuid source"
		wantErrs  []string // prefixes of Error()
	}{
		{
			name:    "merged and sorted by file, the earlier source keeps a shared uuid",
			sources: []Source{KodyMarkdown{}, one, two},
			wantRules: []string{
				".kody/rules/a.md u-md kody-md",
				"ONE.txt u1 one",
				"ONE.txt u2 one",
				"dir/two.txt u3 two",
			},
			wantErrs: []string{
				".kody/rules/broken.md:3:",
				`dir/two.txt:1:1: duplicate uuid "u2": ONE.txt already uses it`,
				`dir/two.txt:3:1: want "uuid title"`,
			},
		},
		{
			name:    "source order decides which duplicate stays",
			sources: []Source{two, one},
			wantRules: []string{
				"ONE.txt u1 one",
				"dir/two.txt u2 two",
				"dir/two.txt u3 two",
			},
			wantErrs: []string{
				`ONE.txt:2:1: duplicate uuid "u2": dir/two.txt already uses it`,
				`dir/two.txt:3:1: want "uuid title"`,
			},
		},
		{
			name:      "no sources",
			sources:   nil,
			wantRules: nil,
			wantErrs:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, errs := NewRegistry(tt.sources...).Load(context.Background(), root)
			var got []string
			for _, r := range rules {
				got = append(got, fmt.Sprintf("%s %s %s", r.File, r.UUID, r.Source))
			}
			if !reflect.DeepEqual(got, tt.wantRules) {
				t.Errorf("rules = %q\nwant    %q", got, tt.wantRules)
			}
			if len(errs) != len(tt.wantErrs) {
				t.Fatalf("errors = %v, want %d", errs, len(tt.wantErrs))
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.wantErrs[i]) {
					t.Errorf("error %d = %q, want it to start with %q", i, e.Error(), tt.wantErrs[i])
				}
			}
		})
	}
}
