package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/tools"
)

// workspace builds a workspace from path → content, plus a secret file
// outside it that escapes must not reach.
func workspace(t *testing.T, files map[string]string) (tools.Workspace, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "secret.txt")
	if err := os.WriteFile(outside, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tools.Workspace{Root: root}, outside
}

func call(t *testing.T, tool agent.Tool, args any) (string, error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), b)
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFileAroundLine(t *testing.T) {
	w, _ := workspace(t, map[string]string{"src/a.go": numbered(100)})
	out, err := call(t, w.ReadFile(), map[string]any{"path": "src/a.go", "line": 50, "radius": 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "    48\tline 48\n    49\tline 49\n    50\tline 50\n    51\tline 51\n    52\tline 52\n"
	if out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
	// Near the start the window is clipped, not an error.
	out, err = call(t, w.ReadFile(), map[string]any{"path": "./src/../src/a.go", "line": 1, "radius": 1})
	if err != nil || out != "     1\tline 1\n     2\tline 2\n" {
		t.Errorf("clipped window = %q, %v", out, err)
	}
	if _, err := call(t, w.ReadFile(), map[string]any{"path": "src/a.go", "line": 500}); err == nil || !strings.Contains(err.Error(), "has 100 lines") {
		t.Errorf("line past the end: err = %v", err)
	}
}

func TestReadWholeFileCapped(t *testing.T) {
	w, _ := workspace(t, map[string]string{"small.txt": "hello\n", "big.txt": strings.Repeat("x", 20000)})
	out, err := call(t, w.ReadFile(), map[string]any{"path": "small.txt"})
	if err != nil || out != "hello\n" {
		t.Errorf("small file = %q, %v", out, err)
	}
	out, err = call(t, w.ReadFile(), map[string]any{"path": "big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > tools.MaxOutput+200 || !strings.Contains(out, "truncated") {
		t.Errorf("big file: %d bytes, truncation note %v", len(out), strings.Contains(out, "truncated"))
	}
}

func TestPathEscapesRefused(t *testing.T) {
	w, outside := workspace(t, map[string]string{"a.go": "package a\n"})
	if err := os.Symlink(outside, filepath.Join(w.Root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(w.Root, "up")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../../etc/passwd", "../secret.txt", "/etc/passwd", outside, "link.txt", "up/secret.txt"} {
		out, err := call(t, w.ReadFile(), map[string]any{"path": p})
		if err == nil {
			t.Errorf("read %s succeeded: %q", p, out)
			continue
		}
		if strings.Contains(out, "TOP SECRET") {
			t.Errorf("read %s leaked the secret", p)
		}
		if !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("read %s: error %q does not say the path is outside the workspace", p, err)
		}
	}
	_, err := call(t, w.ReadFile(), map[string]any{"path": "/etc/passwd"})
	if !strings.Contains(err.Error(), "absolute") {
		t.Errorf("absolute path error = %v", err)
	}
	// Search and listing do not follow the escaping links either.
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "TOP SECRET"})
	if err != nil || out != "no matches" {
		t.Errorf("search through links = %q, %v", out, err)
	}
	if _, err := call(t, w.ListFiles(), map[string]any{"dir": "../"}); err == nil {
		t.Error("listing ../ succeeded")
	}
	if _, err := call(t, w.ListFiles(), map[string]any{"dir": "up"}); err == nil {
		t.Error("listing a symlink to outside succeeded")
	}
}

func TestIgnoredFileRefused(t *testing.T) {
	w, _ := workspace(t, map[string]string{".env": "KEY=hunter2\n", "secrets/db.txt": "password hunter2\n", "a.go": "x := 1\n"})
	w.Ignore = func(rel string) bool { return rel == ".env" || strings.HasPrefix(rel, "secrets") }
	for _, p := range []string{".env", "secrets/db.txt", "./secrets/../.env"} {
		if _, err := call(t, w.ReadFile(), map[string]any{"path": p}); err == nil || !strings.Contains(err.Error(), "privacy list") {
			t.Errorf("read %s: err = %v, want privacy refusal", p, err)
		}
	}
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "hunter2"})
	if err != nil || out != "no matches" {
		t.Errorf("search found ignored files: %q, %v", out, err)
	}
	out, _ = call(t, w.ListFiles(), map[string]any{})
	if out != "a.go\n" {
		t.Errorf("list = %q, want only a.go", out)
	}
}

// TestIgnoredThroughALink: a symbolic link to a file or directory on the
// privacy list is refused as the file itself is, by read, search and list.
func TestIgnoredThroughALink(t *testing.T) {
	w, _ := workspace(t, map[string]string{".env": "KEY=hunter2\n", "secrets/db.txt": "password hunter2\n", "a.go": "x := 1\n"})
	w.Ignore = func(rel string) bool { return rel == ".env" || rel == "secrets" || strings.HasPrefix(rel, "secrets/") }
	for link, target := range map[string]string{"notes.txt": ".env", "conf": "secrets"} {
		if err := os.Symlink(target, filepath.Join(w.Root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"notes.txt", "conf/db.txt", "conf/new.txt"} {
		if _, err := call(t, w.ReadFile(), map[string]any{"path": p}); err == nil || !strings.Contains(err.Error(), "privacy list") {
			t.Errorf("read %s: err = %v, want privacy refusal", p, err)
		}
	}
	if _, err := call(t, w.ListFiles(), map[string]any{"dir": "conf"}); err == nil || !strings.Contains(err.Error(), "privacy list") {
		t.Errorf("list conf: err = %v, want privacy refusal", err)
	}
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "hunter2"})
	if err != nil || out != "no matches" {
		t.Errorf("search found ignored files through links: %q, %v", out, err)
	}
	if out, _ = call(t, w.ListFiles(), map[string]any{}); out != "a.go\n" {
		t.Errorf("list = %q, want only a.go", out)
	}
	// A directory link to the root lists the root's files under its name:
	// not the private ones.
	if err := os.Symlink(".", filepath.Join(w.Root, "alias")); err != nil {
		t.Fatal(err)
	}
	if out, err = call(t, w.ListFiles(), map[string]any{"dir": "alias"}); err != nil || strings.Contains(out, "env") || strings.Contains(out, "db.txt") {
		t.Errorf("list alias = %q, %v; want no private file", out, err)
	}
}

func TestSearchLiteralAndRegex(t *testing.T) {
	w, _ := workspace(t, map[string]string{
		"main.go":     "package main\n\nfunc main() {\n\tm[k] = v // (x)\n}\n",
		"lib/util.go": "package lib\n\nvar m map[string]int\n",
		"bin.dat":     "m[k]\x00\x01",
	})
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "m[k] = v // (x)"})
	if err != nil || out != "main.go:4: m[k] = v // (x)\n" {
		t.Errorf("literal search = %q, %v", out, err)
	}
	out, err = call(t, w.SearchWorkspace(), map[string]any{"query": `^package \w+$`, "regex": true})
	if err != nil || out != "lib/util.go:1: package lib\nmain.go:1: package main\n" {
		t.Errorf("regex search = %q, %v", out, err)
	}
	if _, err := call(t, w.SearchWorkspace(), map[string]any{"query": "(", "regex": true}); err == nil {
		t.Error("invalid regex accepted")
	}
}

func TestSearchCapsResults(t *testing.T) {
	w, _ := workspace(t, map[string]string{"many.txt": strings.Repeat("needle\n", 500)})
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "many.txt:"); n != tools.MaxResults || !strings.Contains(out, "stopped at") {
		t.Errorf("%d results, want %d and a note", n, tools.MaxResults)
	}
}

func TestGitignoreHonoured(t *testing.T) {
	w, _ := workspace(t, map[string]string{
		".gitignore":             "# build output\n/build/\n*.log\ngen/**/*.pb.go\n!keep.log\n",
		"src/app.go":             "needle\n",
		"build/out.go":           "needle\n",
		"src/build/nested.go":    "needle\n", // /build/ is anchored to the root
		"debug.log":              "needle\n",
		"src/deep/trace.log":     "needle\n",
		"gen/a/b/x.pb.go":        "needle\n",
		"node_modules/dep/i.js":  "needle\n",
		"vendor/mod/v.go":        "needle\n",
		".git/config":            "needle\n",
		"gen/a/b/handwritten.go": "needle\n",
	})
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	want := "gen/a/b/handwritten.go:1: needle\nsrc/app.go:1: needle\nsrc/build/nested.go:1: needle\n"
	if out != want {
		t.Errorf("search =\n%s\nwant\n%s", out, want)
	}
	out, err = call(t, w.ListFiles(), map[string]any{"pattern": "*.go"})
	if err != nil || out != "gen/a/b/handwritten.go\nsrc/app.go\nsrc/build/nested.go\n" {
		t.Errorf("list *.go = %q, %v", out, err)
	}
	out, err = call(t, w.ListFiles(), map[string]any{"dir": "src", "pattern": "src/**/*.go"})
	if err != nil || out != "src/app.go\nsrc/build/nested.go\n" {
		t.Errorf("list src = %q, %v", out, err)
	}
}

func TestFindReferencesWordBoundaries(t *testing.T) {
	w, _ := workspace(t, map[string]string{
		"a.go": "func parseConfig() {}\nparseConfigFile()\nx := parseConfig()\nmyparseConfig()\n// parseConfig.\n",
		"b.js": "const $el = 1; $el2 = 2; f($el)\n",
	})
	out, err := call(t, w.FindReferences(), map[string]any{"identifier": "parseConfig"})
	if err != nil {
		t.Fatal(err)
	}
	want := "a.go:1: func parseConfig() {}\na.go:3: x := parseConfig()\na.go:5: // parseConfig.\n"
	if out != want {
		t.Errorf("references =\n%s\nwant\n%s", out, want)
	}
	out, err = call(t, w.FindReferences(), map[string]any{"identifier": "$el"})
	if err != nil || out != "b.js:1: const $el = 1; $el2 = 2; f($el)\n" {
		t.Errorf("$el references = %q, %v", out, err)
	}
	if _, err := call(t, w.FindReferences(), map[string]any{"identifier": "a b"}); err == nil {
		t.Error("a non-identifier was accepted")
	}
}

func TestReadMissingFile(t *testing.T) {
	w, _ := workspace(t, map[string]string{"a.go": "x"})
	_, err := call(t, w.ReadFile(), map[string]any{"path": "nope.go"})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want not-exist", err)
	}
}

// TestCutOutputsKeepNoStartOfASecret: a search result line and a whole
// file cut at the tools' limits, through a secret, keep none of it: a
// token's first 31 characters give it away, and the gateway cannot
// recognise what is left.
func TestCutOutputsKeepNoStartOfASecret(t *testing.T) {
	const token = "ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6"
	long := "\tclient := sync.New(" + strings.Repeat("options, ", 17) + `"` + token + `") // nightly job`
	big := strings.Repeat("// padding line of the generated table\n", tools.MaxOutput/39-1) + "var key = \"" + token + "\"\n" +
		strings.Repeat("// more of the table\n", 50)
	w, _ := workspace(t, map[string]string{"sync.go": long + "\n", "table.go": big})
	if strings.Index(long, token) >= 200 || strings.Index(long, token)+len(token) <= 200 {
		t.Fatalf("the line does not cross the search cut at 200 bytes")
	}
	if at := strings.Index(big, token); at >= tools.MaxOutput || at+len(token) <= tools.MaxOutput {
		t.Fatalf("the file does not cross read_file's cut (%d)", at)
	}
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "sync.New("})
	if err != nil || !strings.HasPrefix(out, "sync.go:1:") {
		t.Fatalf("search = %q, %v", out, err)
	}
	if strings.Contains(out, token[:10]) {
		t.Errorf("the search result keeps the start of the token:\n%s", out)
	}
	out, err = call(t, w.ReadFile(), map[string]any{"path": "table.go"})
	if err != nil || !strings.Contains(out, "output truncated") {
		t.Fatalf("read_file = %.80q…, %v", out, err)
	}
	if strings.Contains(out, token[:10]) {
		t.Errorf("read_file's cut keeps the start of the token: …%s", out[len(out)-200:])
	}
}

// TestReadFileThatFitsOnceRedacted: a file over the limit only because of
// a private key fits once the key is redacted: it comes back whole, with
// no note sending the model to read "the rest".
func TestReadFileThatFitsOnceRedacted(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAx3nH5Ydq0pRk1zQeJ8wFh2s9L0rT6uVb7nYcXe4W1oZa\n", 30) + "-----END RSA PRIVATE KEY-----\n"
	text := strings.Repeat("// padding\n", (tools.MaxOutput-len(key)/2)/11) + "const k = `" + key + "`\n\nfunc main() {}\n"
	if len(text) <= tools.MaxOutput {
		t.Fatalf("the file (%d bytes) must be over the limit", len(text))
	}
	w, _ := workspace(t, map[string]string{"k.go": text})
	out, err := call(t, w.ReadFile(), map[string]any{"path": "k.go"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "truncated") || !strings.HasSuffix(out, "func main() {}\n") || strings.Contains(out, "MIIEow") {
		t.Errorf("read_file = …%q", out[max(0, len(out)-300):])
	}
}

// TestLinkWithAnAbsoluteTargetInside: a link whose absolute target lies
// in the workspace is read, searched and listed like its target; one
// leading to a file on the privacy list stays refused.
func TestLinkWithAnAbsoluteTargetInside(t *testing.T) {
	w, _ := workspace(t, map[string]string{"src/util.c": "int f;\n/* UTIL-MARK */\n", ".env": "KEY=hunter2\n"})
	w.Ignore = func(rel string) bool { return rel == ".env" }
	for link, target := range map[string]string{"util.c": "src/util.c", "notes.txt": ".env"} {
		if err := os.Symlink(filepath.Join(w.Root, target), filepath.Join(w.Root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := w.Contents("util.c"); err != nil || !strings.Contains(string(data), "UTIL-MARK") {
		t.Errorf("Contents(util.c) = %q, %v", data, err)
	}
	if out, err := call(t, w.ReadFile(), map[string]any{"path": "util.c", "line": 2}); err != nil || !strings.Contains(out, "UTIL-MARK") {
		t.Errorf("read util.c = %q, %v", out, err)
	}
	if out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "UTIL-MARK"}); err != nil || !strings.Contains("\n"+out, "\nutil.c:2:") || !strings.Contains(out, "src/util.c:2:") {
		t.Errorf("search = %q, %v; want util.c and src/util.c", out, err)
	}
	if out, err := call(t, w.ListFiles(), map[string]any{}); err != nil || !slices.Contains(strings.Split(out, "\n"), "util.c") {
		t.Errorf("list = %q, %v; want util.c", out, err)
	}
	if _, err := w.Contents("notes.txt"); err == nil || !strings.Contains(err.Error(), "privacy list") {
		t.Errorf("Contents(notes.txt) err = %v, want privacy refusal", err)
	}
	if out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "hunter2"}); err != nil || out != "no matches" {
		t.Errorf("search found the private file through the link: %q, %v", out, err)
	}
}

// TestContentsRefusesBinaryFiles: Contents refuses what read_file
// refuses, a binary file too, even when its first lines are text.
func TestContentsRefusesBinaryFiles(t *testing.T) {
	w, _ := workspace(t, map[string]string{"bin.go": "package main\n\nfunc main() {}\n\x7fELF\x02\x01\x01\x00\x00\x00"})
	if data, err := w.Contents("bin.go"); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("Contents(bin.go) = %q, %v; want a binary refusal", data, err)
	}
}

// TestSearchLineThatFitsOnceRedacted: a search result line over the cut
// only because of a token comes back redacted, within the cut.
func TestSearchLineThatFitsOnceRedacted(t *testing.T) {
	const token = "ghp_SYMLVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6"
	line := "\tclient := sync.New(\"" + token + "\") // " + strings.Repeat("x", 190-len(token))
	if len(line) <= 200 {
		t.Fatalf("the line (%d bytes) must be over the cut", len(line))
	}
	w, _ := workspace(t, map[string]string{"sync.go": line + "\n"})
	out, err := call(t, w.SearchWorkspace(), map[string]any{"query": "sync.New("})
	if err != nil || strings.Contains(out, "ghp_") {
		t.Errorf("search = %q, %v; want the token redacted", out, err)
	}
}
