package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// undefinedOutput is go build output with one error naming name.
func undefinedOutput(name string) string {
	return fmt.Sprintf("# example.com/broken\n./main.go:4:2: undefined: %s\n", name)
}

// dataDir is the KODYLS_DATA_DIR of env.
func dataDir(t testing.TB, env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "KODYLS_DATA_DIR="); ok {
			return v
		}
	}
	t.Fatal("no KODYLS_DATA_DIR in env")
	return ""
}

// explainOffline runs `kodyls explain --offline` on the error naming name
// and fails the test unless it answers.
func explainOffline(t *testing.T, env []string, dir, name string) string {
	t.Helper()
	out, errOut, code := runBinStdin(t, env, dir, undefinedOutput(name), "explain", "--offline", "--json")
	if code != 0 || !strings.Contains(out, `"source": "offline"`) {
		t.Fatalf("explain %s: code %d\n%s\n%s", name, code, out, errOut)
	}
	return errOut
}

// historyHas reports whether `kodyls history search name` lists the error.
func historyHas(t *testing.T, env []string, dir, name string) bool {
	t.Helper()
	out, errOut, code := runBin(t, env, dir, "history", "search", "--json", name)
	if code != 0 {
		t.Fatalf("history search %s: code %d\n%s%s", name, code, out, errOut)
	}
	return strings.Contains(out, name)
}

// rulesStillWork starts the language server and checks that a Kody Rule
// violation is reported, whatever state the store is in.
func rulesStillWork(t *testing.T, env []string) {
	t.Helper()
	repo := fixtureRepo(t)
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.OpenFile("main.go")
	s.Insert("main.go", protocol.Position{Line: 5, Character: 0}, "\tfmt.Println(\"x\")\n")
	s.AwaitDiagnostics("main.go", lsptest.HasCodeOnLine(printlnRule, 5))
	s.Shutdown()
}

// storeWarningShown starts the language server and checks that the editor
// is told, once, that the store is unusable and kodyls works without it.
func storeWarningShown(t *testing.T, env []string, want string) {
	t.Helper()
	repo := fixtureRepo(t)
	s := lsptest.StartBinary(t, lsptest.BuildBinary(t), repo.Dir, env)
	s.Initialize(lsptest.InitOptions{})
	s.AwaitIdle("")
	n := 0
	for _, m := range s.Messages() {
		if strings.Contains(m, "working without the local store") {
			n++
			if !strings.Contains(m, want) {
				t.Errorf("the store warning %q does not name %q", m, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("store warnings shown: %d, want 1 (messages %q)", n, s.Messages())
	}
	s.Shutdown()
}

// TestStoreFaultDamagedDatabase: a kodyls.db that is not a database, or
// was cut short, is reported clearly; explaining and the rules keep
// working without the store.
func TestStoreFaultDamagedDatabase(t *testing.T) {
	damage := map[string]func(t *testing.T, path string){
		"overwritten": func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, breakIt := range damage {
		t.Run(name, func(t *testing.T) {
			repo := brokenGoRepo(t)
			env := testEnv(t)
			explainOffline(t, env, repo.Dir, "firstName")
			db := filepath.Join(dataDir(t, env), index.DBFile)
			breakIt(t, db)

			errOut := explainOffline(t, env, repo.Dir, "secondName")
			if !strings.Contains(errOut, "kodyls database is damaged") || !strings.Contains(errOut, db) {
				t.Errorf("explain does not say the database is damaged:\n%s", errOut)
			}
			_, errOut, code := runBin(t, env, repo.Dir, "history", "stats")
			if code == 0 || !strings.Contains(errOut, "damaged") || !strings.Contains(errOut, "move it aside or delete it") {
				t.Errorf("history stats: code %d, stderr %q; want a clear error saying what to do", code, errOut)
			}
			rulesStillWork(t, env)
			storeWarningShown(t, env, "kodyls database is damaged")
			// The damaged file is left for the user, not replaced.
			if _, err := os.Stat(db); err != nil {
				t.Errorf("the damaged database is gone: %v", err)
			}
		})
	}
}

// TestStoreFaultBrokenIndex: a deleted or damaged search index is rebuilt
// from sqlite, with a message, and every remembered error is found again.
func TestStoreFaultBrokenIndex(t *testing.T) {
	damage := map[string]func(t *testing.T, path string){
		"deleted": func(t *testing.T, path string) {
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
		},
		"corrupted": func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Join(path, "store", "root.bolt"), []byte(strings.Repeat("garbage!", 1024)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, breakIt := range damage {
		t.Run(name, func(t *testing.T) {
			repo := brokenGoRepo(t)
			env := testEnv(t)
			// The same kind of error in three workspaces: three errors.
			names := []string{"alphaThing", "betaThing", "gammaThing"}
			for _, n := range names {
				explainOffline(t, env, brokenGoRepo(t).Dir, n)
			}
			breakIt(t, filepath.Join(dataDir(t, env), index.IndexDir))

			out, errOut, code := runBin(t, env, repo.Dir, "history", "search", "--json", names[0])
			if code != 0 || !strings.Contains(out, names[0]) {
				t.Fatalf("history search after the index was %s: code %d\n%s%s", name, code, out, errOut)
			}
			if !strings.Contains(errOut, "rebuilt from the history database") {
				t.Errorf("no message about the rebuild:\n%s", errOut)
			}
			for _, n := range names[1:] {
				if !historyHas(t, env, repo.Dir, n) {
					t.Errorf("%s is not found after the rebuild", n)
				}
			}
			rulesStillWork(t, env)
		})
	}
}

// TestStoreFaultUnwritableDataDir: a data directory kodyls cannot write
// gets a clear error; explaining and the rules work without the store.
// Without root the directory is made read-only; root ignores permissions,
// so there a file stands where the directory should be created.
func TestStoreFaultUnwritableDataDir(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	dir := dataDir(t, env)
	if os.Geteuid() == 0 {
		blocker := filepath.Join(t.TempDir(), "not-a-dir")
		if err := os.WriteFile(blocker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(blocker, "data")
		env = append(env, "KODYLS_DATA_DIR="+dir)
	} else {
		if err := os.MkdirAll(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	}
	explainOffline(t, env, repo.Dir, "someName")
	_, errOut, code := runBin(t, env, repo.Dir, "history", "stats")
	if code == 0 || !strings.Contains(errOut, dir) || !strings.Contains(errOut, "KODYLS_DATA_DIR") {
		t.Errorf("history stats: code %d, stderr %q; want the directory and how to choose another", code, errOut)
	}
	rulesStillWork(t, env)
	storeWarningShown(t, env, "KODYLS_DATA_DIR")
}

// TestStoreFaultKilledDuringWrites kills kodyls with SIGKILL at varied
// moments while other runs write: `explain --offline` records errors in
// the history, `review` against the fake endpoint writes the LLM cache.
// Afterwards the store opens clean (integrity check), every error whose
// run finished is in the history and found by search, and every review
// that finished is served again from the cache without a request.
func TestStoreFaultKilledDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs many processes")
	}
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{offByOne})
	fake.On(llmtest.SchemaName(review.SchemaCluster), llmtest.JSON(map[string]any{"clusters": []any{}}))
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	bin := lsptest.BuildBinary(t)
	explainOffline(t, env, repo.Dir, "warmUp") // the store and index exist
	var done, reviewed []string
	kills := map[string]int{}
	for i := 0; i < 16; i++ {
		// Runs that finish, alongside the victim, in workspaces of their
		// own so that they record an error and cache a review of their
		// own. The workspaces are made first: making a git repository
		// takes longer than a victim's whole run.
		name := fmt.Sprintf("kept%d", i)
		ws := brokenGoRepo(t).Dir
		rws := distinctChange(t, name)
		victimDir := repo.Dir
		if i%2 == 1 {
			victimDir = distinctChange(t, fmt.Sprintf("victim%d", i))
		}
		// A victim, killed after a delay that moves through its run:
		// every other one writes the history, the others the LLM cache.
		kind := "history"
		victim := exec.Command(bin, "explain", "--offline", "--json")
		victim.Dir = victimDir
		victim.Stdin = strings.NewReader(undefinedOutput(fmt.Sprintf("victim%d", i)))
		// An explanation of an error seen before takes a few
		// milliseconds and a review against the fake endpoint a few
		// tens: the delays run from 0 to 14 ms and from 0 to 56 ms.
		delay := time.Duration(i/2) * 2 * time.Millisecond
		if i%2 == 1 {
			kind = "cache"
			victim = exec.Command(bin, "review")
			victim.Dir = victimDir
			delay = time.Duration(i/2) * 8 * time.Millisecond
		}
		victim.Env = env
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		finished := make(chan bool, 1)
		finishedReview := make(chan bool, 1)
		go func() {
			out, _, code := runBinStdin(t, env, ws, undefinedOutput(name), "explain", "--offline", "--json")
			finished <- code == 0 && strings.Contains(out, `"source": "offline"`)
		}()
		go func() {
			out, _, code := runBin(t, env, rws, "review")
			finishedReview <- code == 0 && strings.Contains(out, "Use range instead")
		}()
		time.Sleep(delay)
		_ = victim.Process.Signal(syscall.SIGKILL)
		_ = victim.Wait()
		// A kill counts only if the process died of it, not if it had
		// already exited.
		if st, ok := victim.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() && st.Signal() == syscall.SIGKILL {
			kills[kind]++
		}
		if <-finished {
			done = append(done, name)
		}
		if <-finishedReview {
			reviewed = append(reviewed, rws)
		}
	}
	t.Logf("killed %d history writers and %d cache writers; %d explanations and %d reviews finished alongside",
		kills["history"], kills["cache"], len(done), len(reviewed))
	if kills["history"] == 0 || kills["cache"] == 0 {
		t.Fatalf("kills %v: some kind of victim always finished first, so nothing was killed mid-write", kills)
	}
	if len(done) == 0 || len(reviewed) == 0 {
		t.Fatalf("%d explanations and %d reviews finished: nothing to check", len(done), len(reviewed))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := index.OpenStore(ctx, dataDir(t, env))
	if err != nil {
		t.Fatalf("the store does not open after the kills: %v", err)
	}
	var check string
	if err := st.Reader().QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	st.Close()
	for _, n := range done {
		if !historyHas(t, env, repo.Dir, n) {
			t.Errorf("%s finished but is not in the history", n)
		}
	}
	out, errOut, code := runBin(t, env, repo.Dir, "history", "stats", "--json")
	var stats struct {
		Errors int `json:"errors"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &stats) != nil || stats.Errors < len(done)+1 {
		t.Errorf("history stats: code %d, %s%s; want at least %d errors", code, out, errOut, len(done)+1)
	}
	// The reviews that finished are served from the cache: the same
	// findings, and not one request.
	before := fake.CountChat()
	for _, ws := range reviewed {
		out, errOut, code := runBin(t, env, ws, "review")
		if code != 0 || !strings.Contains(out, "Use range instead") {
			t.Errorf("review again in %s: code %d\n%s%s", ws, code, out, errOut)
		}
	}
	if n := fake.CountChat() - before; n != 0 {
		t.Errorf("%d requests to review %d workspaces whose reviews finished before: the cache lost them", n, len(reviewed))
	}
}

// distinctChange is changedRepo with one more changed line naming name, so
// that its review is cached under a key of its own.
func distinctChange(t *testing.T, name string) string {
	repo := lsptest.NewRepo(t, map[string]string{"main.go": reviewGo})
	changed := strings.Replace(reviewGo, "i < len(items)", "i <= len(items)", 1)
	changed += "\nvar " + name + " = total\n"
	repo.Write(map[string]string{"main.go": changed})
	return repo.Dir
}

// TestStoreFaultDiskFillsDuringAFix: the disk holding the store fills up
// while "Fix this error" runs (the verifying build fills it, as build
// artifacts do; a real ENOSPC on a small tmpfs, as in
// TestStoreFaultDiskFills), so the fix's checkpoints cannot be saved. The
// fix says so once and still verifies and applies the edit.
func TestStoreFaultDiskFillsDuringAFix(t *testing.T) {
	if mnt := os.Getenv(diskFullEnv); mnt != "" {
		fixOnAFullDisk(t, mnt)
		return
	}
	onSmallTmpfs(t, "TestStoreFaultDiskFillsDuringAFix")
}

func fixOnAFullDisk(t *testing.T, mnt string) {
	repo := typeErrorRepo(t)
	output, _ := goBuild(t, repo.Dir)
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.SchemaName("plan"), llmtest.Text(editPlan("\treturn 42\n", "\treturn \"42\"\n")))
	fake.On(llmtest.SchemaName("reflection"), llmtest.Text(`{"assessment":"failed","reasoning":"unexpected","adjustments":[]}`))
	env := fakeEnv(t, fake)
	for i, kv := range env {
		if strings.HasPrefix(kv, "KODYLS_DATA_DIR=") {
			env[i] = "KODYLS_DATA_DIR=" + filepath.Join(mnt, "data")
		}
	}
	fill := filepath.Join(mnt, "fill")
	build := "go build ./... && { head -c 16777216 /dev/zero > " + shQuote(fill) + " 2>/dev/null; true; }"
	out, errOut, code := runBinStdin(t, env, repo.Dir, output, "fix", "--apply", "--build", build)
	if _, err := os.Stat(fill); err != nil {
		t.Fatalf("the build did not fill the disk: %v", err)
	}
	if code != 0 || !strings.Contains(out, "Verification: passed") || !strings.Contains(out, "Applied to: main.go") {
		t.Fatalf("fix on a disk that filled up: code %d\n%s\n%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "cannot save the checkpoint; the run goes on without checkpoints"); n != 1 {
		t.Errorf("the checkpoint warning was logged %d times, want once:\n%s", n, errOut)
	}
	if out, ok := goBuild(t, repo.Dir); !ok {
		t.Errorf("the build still fails after the fix:\n%s", out)
	}
}
