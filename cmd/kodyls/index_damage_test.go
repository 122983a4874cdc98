package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// goOutput is go build output with one error.
func goOutput(msg string) string {
	return "# example.com/broken\n./main.go:4:2: " + msg + "\n"
}

// remembered are the errors damagedIndexEnv remembers: two kinds, so two
// errors, and a third error that shares the name of the second is
// similar to it only through the search index.
var remembered = []string{"undefined: alphaThing", "declared and not used: deltaThing"}

const likeSecond = "undefined: deltaThing"

// damagedIndexEnv remembers the errors in repo (each one is written to
// the index as its own segment), then overwrites 512 bytes in the middle
// of every segment file of the search index with seeded random bytes, as
// a bad disk or a stray write would.
func damagedIndexEnv(t *testing.T, repo string) []string {
	t.Helper()
	env := testEnv(t)
	for _, msg := range remembered {
		out, errOut, code := runBinStdin(t, env, repo, goOutput(msg), "explain", "--offline", "--json")
		if code != 0 {
			t.Fatalf("explain %s: code %d\n%s%s", msg, code, out, errOut)
		}
	}
	segs, err := filepath.Glob(filepath.Join(dataDir(t, env), index.IndexDir, "store", "*.zap"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment files (%v)", err)
	}
	for _, seg := range segs {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := max(len(b)/2-256, 0); i < min(len(b)/2+256, len(b)); i++ {
			b[i] = byte(rng.Uint32())
		}
		if err := os.WriteFile(seg, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// explainSimilar runs `kodyls explain --offline --json` on msg and
// returns the messages of the similar errors it lists.
func explainSimilar(t *testing.T, env []string, repo, msg string) []string {
	t.Helper()
	out, errOut, code := runBinStdin(t, env, repo, goOutput(msg), "explain", "--offline", "--json")
	if code != 0 {
		t.Fatalf("explain %s: code %d\n%s%s", msg, code, out, errOut)
	}
	if strings.Contains(errOut, "cannot search similar errors") {
		t.Errorf("explain %s could not search similar errors:\n%s", msg, errOut)
	}
	var rep struct {
		Similar []struct {
			Message string `json:"message"`
		} `json:"similar"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var msgs []string
	for _, s := range rep.Similar {
		msgs = append(msgs, s.Message)
	}
	return msgs
}

// listsBoth reports whether similar lists both remembered errors: the
// first (an exact match, which takes the newest wording: undefined:
// deltaThing) and the second, which only the search index finds.
func listsBoth(similar []string) bool {
	exact := slices.ContainsFunc(similar, func(m string) bool { return strings.HasPrefix(m, "undefined: ") })
	return exact && slices.Contains(similar, remembered[1])
}

// TestDamagedIndexSegmentCLI: a search index whose segment files were
// damaged is rebuilt from the history database, with a warning, instead of
// kodyls panicking in bleve (exit 2) or listing no similar errors.
func TestDamagedIndexSegmentCLI(t *testing.T) {
	repo := brokenGoRepo(t).Dir
	env := damagedIndexEnv(t, repo)

	out, errOut, code := runBin(t, env, repo, "history", "search", "--json", "undefined declared")
	if code != 0 {
		t.Fatalf("history search on a damaged index: code %d\n%s%s", code, out, errOut)
	}
	for _, msg := range remembered {
		if !strings.Contains(out, msg) {
			t.Errorf("history search does not find %q after the rebuild:\n%s", msg, out)
		}
	}
	if !strings.Contains(errOut, "search index of the error history was damaged") || !strings.Contains(errOut, "rebuilt from the history database") {
		t.Errorf("no warning about the rebuild:\n%s", errOut)
	}
	if got := explainSimilar(t, env, repo, likeSecond); !listsBoth(got) {
		t.Errorf("explain %q after the rebuild lists %q; want both remembered errors", likeSecond, got)
	}
}

// TestDamagedIndexSegmentExplain: `kodyls explain` as the first command
// after the damage lists the same error and the similar one.
func TestDamagedIndexSegmentExplain(t *testing.T) {
	repo := brokenGoRepo(t).Dir
	env := damagedIndexEnv(t, repo)
	if got := explainSimilar(t, env, repo, likeSecond); !listsBoth(got) {
		t.Errorf("explain %q on a damaged index lists %q; want both remembered errors", likeSecond, got)
	}
}

// TestDamagedIndexSegmentDoctor: `kodyls doctor` reads the index with a
// search, so it finds the damage, rebuilds the index and says so.
func TestDamagedIndexSegmentDoctor(t *testing.T) {
	repo := brokenGoRepo(t).Dir
	env := damagedIndexEnv(t, repo)
	out, errOut, code := runBin(t, env, repo, "doctor")
	if code != 0 {
		t.Fatalf("doctor: code %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "it was damaged") || !strings.Contains(out, "has been rebuilt from the history database") || !strings.Contains(out, "(2 documents") {
		t.Errorf("doctor does not say the index was damaged and rebuilt:\n%s%s", out, errOut)
	}
}

// TestDamagedIndexSegmentServer: the language server keeps the session
// when the index is damaged: "Explain this error" answers, with the
// remembered errors, and the server goes on to a clean shutdown.
func TestDamagedIndexSegmentServer(t *testing.T) {
	repo := brokenGoRepo(t).Dir
	env := damagedIndexEnv(t, repo)
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo, env)
	s.Initialize(lsptest.InitOptions{})
	for i := range 2 {
		var res contract.ExplainResult
		err := s.ExecuteCommand(contract.CommandExplainError, contract.ExplainArgs{Text: goOutput(likeSecond), Offline: true}, &res)
		if err != nil {
			t.Fatalf("explain %d: %v", i, err)
		}
		if !strings.Contains(res.Markdown, "- undefined: ") || !strings.Contains(res.Markdown, "- "+remembered[1]) {
			t.Errorf("explain %d does not list both remembered errors:\n%s", i, res.Markdown)
		}
	}
	s.Shutdown()
	if code, err := s.Wait(10 * time.Second); err != nil || code != 0 {
		t.Errorf("server exit: code %d, %v", code, err)
	}
}
