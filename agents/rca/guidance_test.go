package rca

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/internal/tooltest"
	"github.com/kodustech/kodyls/analysis/errparse"
)

// TestGuidanceOnRealOutputs: the built-in guidance covers the primary error
// of real tool outputs (the parser's fixtures), so offline explanations say
// something useful for the common cases.
func TestGuidanceOnRealOutputs(t *testing.T) {
	cases := map[string]string{
		"go-build":           "declared but never read",
		"go-panic-nilmap":    "written before it was created",
		"go-panic-nilptr":    "nil pointer",
		"go-vet":             "format verbs",
		"tsc":                "declared type does not accept",
		"rustc-moved":        "used after it was moved",
		"rustc-mismatch":     "type differs",
		"gcc-undeclared":     "never declared",
		"gcc-link":           "no definition",
		"python-nameerror":   "used before it is defined",
		"python-syntaxerror": "not valid Python",
		"python-valueerror":  "not a number",
		"javac":              "incompatible type",
		"java-npe":           "null reference",
		"node-notfunction":   "not a function",
		"node-typeerror":     "undefined or null",
		"node-enoent":        "does not exist",
		"eslint-stylish":     "never used",
	}
	for name, want := range cases {
		data, err := os.ReadFile(filepath.Join("..", "..", "analysis", "errparse", "testdata", "outputs", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		errs := errparse.Parse(strings.ReplaceAll(string(data), "$WORKSPACE", "/work/ws"), errparse.Options{Workspace: "/work/ws"})
		p := errparse.Primary(errs)
		if p < 0 {
			t.Errorf("%s: no error parsed", name)
			continue
		}
		g, ok := Lookup(errs[p])
		if !ok || !strings.Contains(g.RootCause, want) || len(g.Steps) == 0 {
			t.Errorf("%s: primary %+v got guidance %q, want one mentioning %q", name, errs[p], g.RootCause, want)
		}
	}
}

func TestNoGuidanceForUnknownErrors(t *testing.T) {
	if _, ok := Lookup(errparse.Error{Language: "go", Message: "something nobody has seen"}); ok {
		t.Fatal("guidance for an unknown error")
	}
}

// TestOfflineAnswerCarriesRustDocs: without a model, a Rust error is
// answered with guidance and rustc's own explanation of the code.
func TestOfflineAnswerCarriesRustDocs(t *testing.T) {
	tooltest.Need(t, "rustc")
	data, err := os.ReadFile(filepath.Join("..", "..", "analysis", "errparse", "testdata", "outputs", "rustc-moved.txt"))
	if err != nil {
		t.Fatal(err)
	}
	x := &Explainer{Workspace: "/work/ws"}
	rep, err := x.Explain(context.Background(), strings.ReplaceAll(string(data), "$WORKSPACE", "/work/ws"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RCA.Source != SourceOffline || !strings.Contains(rep.Docs, "E0382") && !strings.Contains(strings.ToLower(rep.Docs), "moved") {
		t.Fatalf("offline rust answer %+v docs %q", rep.RCA, rep.Docs)
	}
}
