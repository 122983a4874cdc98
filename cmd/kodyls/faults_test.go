package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestStoreFaultFullDisk runs kodyls with a file-size limit of 8 KB
// (`ulimit -f`: every write past it fails, as on a full disk; Go ignores
// the SIGXFSZ that comes with it): the store cannot be created, kodyls
// says so, and the explanation is still given.
func TestStoreFaultFullDisk(t *testing.T) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	bin := lsptest.BuildBinary(t)
	cmd := exec.Command("sh", "-c", "ulimit -f 16 && exec "+shQuote(bin)+" explain --offline --json")
	cmd.Env, cmd.Dir = env, repo.Dir
	cmd.Stdin = strings.NewReader(undefinedOutput("someName"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), `"source": "offline"`) {
		t.Fatalf("explain with a full disk: %v\n%s\n%s", err, out.String(), errb.String())
	}
	// Not "the disk holding … is full": the disk has room, and the user
	// would look for space in vain (TestStoreFaultDiskFills requires that
	// wording on a disk that is full). The limit is in sh's units, 512 or
	// 1024 bytes.
	var data string
	for _, kv := range env {
		if d, ok := strings.CutPrefix(kv, "KODYLS_DATA_DIR="); ok {
			data = d
		}
	}
	for _, kb := range []string{"8", "16"} {
		want := "local store: kodyls may not write files larger than " + kb + " KB (ulimit -f), too small for its store in " + data + "; raise the limit, kodyls works without its store until then"
		if strings.Contains(errb.String(), want) {
			return
		}
	}
	t.Errorf("stderr does not say that the file-size limit keeps the store from %s:\n%s", data, errb.String())
}

// An endpoint that floods 50 MB or cuts its answer half-way costs a
// bounded time and memory and ends in a clear note: the explanation falls
// back to what kodyls knows without a model.
//
// Memory is judged against a run of the same command whose endpoint
// answers normally, measured here (peak RSS of the child process). The
// gateway reads at most 8 MB of a body; a client that read the whole
// 50 MB body into memory would sit at least 50 MB above that run (the
// bytes themselves, before any decoding), so the bound, 24 MB above it,
// fails for any client that holds more than half of the flood. Measured
// on linux/amd64 (VmHWM, see peakRSS): 33–37 MB for the normal run,
// 32–36 MB for the flood and for the cut body; with the gateway's limit
// raised to 64 MB, so that the body is read whole, the flood peaked at
// 409 MB and the test failed.
func TestEndpointFloodAndCutBody(t *testing.T) {
	const headroomKB = 24 << 10
	final := llmtest.Tools(llmtest.ToolCall{Name: "final_answer",
		Arguments: `{"rootCause":"unused is assigned but never read in main","fixGuidelines":["Remove the variable."],"confidence":0.9}`})
	baseline, out := explainAgainst(t, final)
	if strings.Contains(out, "the configured model could not answer") {
		t.Fatalf("the normal run failed, so it is no baseline:\n%s", out)
	}
	t.Logf("peak RSS with a normal answer: %d KB", baseline)
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"50 MB", llmtest.Reply{HugeBody: 50 << 20}, "larger than 8 MB"},
		{"half a body", llmtest.Reply{CutBody: true, Content: "a root cause long enough to be cut in half"}, "malformed response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rss, out := explainAgainst(t, tc.reply)
			t.Logf("peak RSS: %d KB", rss)
			if !strings.Contains(out, "the configured model could not answer") || !strings.Contains(out, tc.want) {
				t.Errorf("note lacks %q:\n%s", tc.want, out)
			}
			if rss > baseline+headroomKB {
				t.Errorf("peak RSS %d KB, %d KB above a normal run (bound %d KB): the response was buffered", rss, rss-baseline, headroomKB)
			}
		})
	}
}

// explainAgainst runs `kodyls explain --json` on a build error against a
// fake endpoint that gives reply, under a deadline (a hang fails the
// test), and returns the child's peak RSS in KB and its output. A flood
// is not retried; a cut answer gets the gateway's three retries (a
// dropped connection is often transient), and the router does not hand a
// failing endpoint to a planner: at most 4 requests.
func explainAgainst(t *testing.T, reply llmtest.Reply) (int64, string) {
	t.Helper()
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), reply)
	repo := brokenGoRepo(t)
	env := append(testEnv(t), "KODYLS_LLM_BASE_URL="+fake.URL, "KODYLS_LLM_MODEL=fake-model")
	bin := lsptest.BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "explain", "--json")
	cmd.Env, cmd.Dir = env, repo.Dir
	cmd.Stdin = strings.NewReader(buildOutput(t, repo))
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	rss := peak()
	if ctx.Err() != nil {
		t.Fatalf("explain still running after 60 s: it hangs on the endpoint\n%s\n%s", out.String(), errb.String())
	}
	if err != nil {
		t.Fatalf("explain: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if n := fake.CountChat(); n > 4 {
		t.Errorf("%d requests, want at most 4", n)
	}
	if rss == 0 {
		t.Skip("no /proc/PID/status here to read the peak RSS from")
	}
	return rss, out.String()
}

// peakRSS follows the high-water mark of a process's resident set
// (VmHWM in /proc/PID/status, in KB) until the returned function is
// called, which gives it. The rusage of wait4 cannot serve: Go starts a
// child with vfork, and Linux carries the parent's peak into the child's
// ru_maxrss across exec, so the test process's own size would hide the
// child's. VmHWM belongs to the child's address space alone, and never
// goes down, so polling it loses nothing but the last few milliseconds.
func peakRSS(pid int) func() int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	status := filepath.Join("/proc", strconv.Itoa(pid), "status")
	read := func() {
		data, err := os.ReadFile(status)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if kb > peak.Load() {
					peak.Store(kb)
				}
			}
		}
	}
	go func() {
		defer close(stopped)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// diskFullEnv names the mount point of the small tmpfs that
// TestStoreFaultDiskFills re-runs itself on.
const diskFullEnv = "KODYLS_TEST_TMPFS"

// TestStoreFaultDiskFills: the disk holding the data directory fills up
// after kodyls has stored an error (a real ENOSPC on a 4 MB tmpfs, mounted
// in a private mount namespace). kodyls says the disk is full, explains
// and checks rules without its store, tells the editor once, and once
// space is freed the history written before is all there.
//
// The test re-runs itself inside `unshare --mount` (plus `--user
// --map-root-user` when not root); where mount namespaces are not allowed
// it is skipped, and TestStoreFaultFullDisk's file-size limit stands in.
func TestStoreFaultDiskFills(t *testing.T) {
	if mnt := os.Getenv(diskFullEnv); mnt != "" {
		diskFills(t, mnt)
		return
	}
	onSmallTmpfs(t, "TestStoreFaultDiskFills")
}

// onSmallTmpfs runs the test named name again inside `unshare --mount`
// (plus `--user --map-root-user` when not root), with diskFullEnv naming
// a 4 MB tmpfs mounted there, and fails when that run fails. Where mount
// namespaces are not allowed the test is skipped.
func onSmallTmpfs(t *testing.T, name string) {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare not installed")
	}
	ns := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		ns = append([]string{"--user", "--map-root-user"}, ns...)
	}
	mnt := t.TempDir()
	mount := "mount -t tmpfs -o size=4m kodyls-test " + shQuote(mnt)
	if out, err := exec.Command(unshare, append(ns, "sh", "-c", mount)...).CombinedOutput(); err != nil {
		t.Skipf("no private mount namespace with a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Built here first so that the child's build is a hit in Go's cache.
	lsptest.BuildBinary(t)
	script := mount + " && exec " + shQuote(self) + " -test.run '^" + name + "$' -test.count=1 -test.v"
	cmd := exec.Command(unshare, append(ns, "sh", "-c", script)...)
	cmd.Env = append(os.Environ(), diskFullEnv+"="+mnt)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Fatalf("inside the mount namespace: %v\n%s", err, out)
	}
}

func diskFills(t *testing.T, mnt string) {
	repo := brokenGoRepo(t)
	env := testEnv(t)
	data := filepath.Join(mnt, "data")
	for i, kv := range env {
		if strings.HasPrefix(kv, "KODYLS_DATA_DIR=") {
			env[i] = "KODYLS_DATA_DIR=" + data
		}
	}
	explainOffline(t, env, repo.Dir, "firstName")

	// Fill the file system to the last block.
	fill := filepath.Join(mnt, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	f.Close()

	errOut := explainOffline(t, env, repo.Dir, "secondName")
	if !strings.Contains(errOut, "the disk holding "+data+" is full") {
		t.Errorf("explain on a full disk does not say so:\n%s", errOut)
	}
	rulesStillWork(t, env)
	storeWarningShown(t, env, "is full")

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if !historyHas(t, env, repo.Dir, "firstName") {
		t.Error("the error stored before the disk filled up is gone")
	}
	explainOffline(t, env, repo.Dir, "thirdName")
	if !historyHas(t, env, repo.Dir, "thirdName") {
		t.Error("nothing is stored once space is freed")
	}
	if out, _, _ := runBin(t, env, repo.Dir, "doctor"); strings.Contains(out, "damaged") || !strings.Contains(out, "schema v") {
		t.Errorf("the store after the disk was full:\n%s", out)
	}
}
