package index

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"go.uber.org/goleak"
)

// helperEnv selects a helper mode when the test binary is re-executed as a
// second kodyls process; see helperMain.
const helperEnv = "KODYLS_INDEX_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	// bleve starts its analysis workers in init and never stops them; they
	// are not ours to leak.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
	)
}

// helperMain is the body of the child process. It reports failures on stderr
// and through its exit code, which the parent test checks.
func helperMain(mode string) int {
	dir := os.Getenv("KODYLS_INDEX_HELPER_DIR")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	switch mode {
	case "writer":
		n, _ := strconv.Atoi(os.Getenv("KODYLS_INDEX_HELPER_N"))
		wait, _ := time.ParseDuration(os.Getenv("KODYLS_INDEX_HELPER_WAIT"))
		err = runWriter(ctx, dir, os.Getenv("KODYLS_INDEX_HELPER_PREFIX"), n, wait)
		fmt.Printf("queued=%d\n", queuedByWriter.Load())
	case "hold":
		err = runHold(dir)
	case "recorder":
		// It lives as long as the parent's benchmark, which ends it.
		err = runRecorder(context.Background(), dir)
	case "checkpoints":
		n, _ := strconv.Atoi(os.Getenv("KODYLS_INDEX_HELPER_N"))
		err = runCheckpointWriter(ctx, dir, os.Getenv("KODYLS_INDEX_HELPER_PREFIX"), n)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// runWriter plays a second kodyls process: it writes to the database and
// indexes documents into the shared index, n batches of batchSize. A
// non-zero wait replaces the bleve lock wait, to force queueing.
func runWriter(ctx context.Context, dir, prefix string, n int, wait time.Duration) error {
	st, err := OpenStore(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	x, err := OpenSearch(st, dir)
	if err != nil {
		return err
	}
	if wait > 0 {
		x.lockWait = wait
	}
	for i := 0; i < n; i++ {
		if err := st.TouchWorkspace(ctx, "/ws/"+prefix); err != nil {
			return err
		}
		if err := writeMeta(ctx, st, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
			return err
		}
		if err := x.Index(ctx, batchDocs(prefix, i)); err != nil {
			return err
		}
	}
	queuedByWriter.Add(x.queued.Load())
	return nil
}

// queuedByWriter sums what runWriter calls in this process had to queue.
var queuedByWriter atomic.Int64

// runHold opens the index directly and keeps it open (holding the bolt
// flock) until the parent closes our stdin.
func runHold(dir string) error {
	idx, err := bleve.Open(dir + "/" + IndexDir)
	if err != nil {
		return err
	}
	fmt.Println("READY")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // returns at EOF
	return idx.Close()
}

const batchSize = 5

// batchDocs returns the documents of batch i for prefix. Each carries a
// unique token in its message so the test can find it again.
func batchDocs(prefix string, i int) []Doc {
	docs := make([]Doc, batchSize)
	for j := range docs {
		id := docID(prefix, i, j)
		docs[j] = Doc{ID: id, Fields: map[string]string{
			"message":  fmt.Sprintf("cannot use x (variable of type int) as string value: %s", token(id)),
			"code":     "IncompatibleAssign",
			"language": "go",
		}}
	}
	return docs
}

func docID(prefix string, i, j int) string { return fmt.Sprintf("%s-%d-%d", prefix, i, j) }

// token is a word that occurs only in document id.
func token(id string) string { return "tok" + strings.ReplaceAll(id, "-", "x") }

// startHelper re-executes the test binary in mode. The child inherits a
// deadline through ctx so a hang fails the test instead of blocking it.
func startHelper(ctx context.Context, t testing.TB, mode, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "KODYLS_INDEX_HELPER_DIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// piped is a helper process started with pipes to its stdin and stdout
// and its stderr kept for failure messages.
type piped struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *strings.Builder
}

// startPiped starts a helper (see startHelper) with pipes.
func startPiped(ctx context.Context, t testing.TB, mode, dir string) *piped {
	t.Helper()
	p := &piped{cmd: startHelper(ctx, t, mode, dir), stderr: &strings.Builder{}}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}
