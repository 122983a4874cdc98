package graph

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// fullDisk is a checkpointer whose store cannot be written (and, when
// unreadable, not read either), as on a full or damaged disk.
type fullDisk struct {
	unreadable bool
	puts       int
}

func (f *fullDisk) Put(context.Context, Checkpoint) error {
	f.puts++
	return errors.New("database or disk is full")
}

func (f *fullDisk) Get(context.Context, string) (Checkpoint, bool, error) {
	if f.unreadable {
		return Checkpoint{}, false, errors.New("database disk image is malformed")
	}
	return Checkpoint{}, false, nil
}

func (f *fullDisk) Delete(context.Context, string) error { return nil }

// TestRunGoesOnWhenCheckpointsFail: a store that cannot save (or read)
// checkpoints does not fail the run: it finishes with the same state, the
// warning is logged once, and no more saves are tried after the first
// failure.
func TestRunGoesOnWhenCheckpointsFail(t *testing.T) {
	g := New[counter]("chain").Node("a", step("a")).Node("b", step("b")).Node("c", step("c")).
		Edge("a", "b").Edge("b", "c").Edge("c", End).Reduce(appendReducer).MustCompile()
	for _, unreadable := range []bool{false, true} {
		var logs bytes.Buffer
		cp := &fullDisk{unreadable: unreadable}
		res, err := g.Run(context.Background(), counter{}, Options{Thread: "t", Checkpointer: cp, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("unreadable=%v: %v", unreadable, err)
		}
		if strings.Join(res.State.Trail, "") != "abc" || res.Steps != 3 || res.Resumed {
			t.Errorf("unreadable=%v: state %+v steps %d", unreadable, res.State, res.Steps)
		}
		if n := strings.Count(logs.String(), "cannot save the checkpoint; the run goes on without checkpoints"); n != 1 || cp.puts != 1 {
			t.Errorf("unreadable=%v: %d warnings, %d saves tried:\n%s", unreadable, n, cp.puts, logs.String())
		}
		if got := strings.Contains(logs.String(), "cannot read the checkpoint; the run starts over"); got != unreadable {
			t.Errorf("unreadable=%v: read warning logged %v:\n%s", unreadable, got, logs.String())
		}
	}
}
