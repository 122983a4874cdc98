package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/kodustech/kodyls/analysis/report"
)

// interruption is the cause of a context cancelled by a signal.
type interruption struct{ sig os.Signal }

func (i interruption) Error() string { return "interrupted by " + i.sig.String() }

// notifyInterrupt returns a context cancelled by the first SIGINT or
// SIGTERM. That signal hands its default back at once: a second one ends
// the process, whatever the command is waiting on. stop releases the
// signals.
func notifyInterrupt() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(interruption{sig})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(nil)
		})
	}
}

// interruptedBy is the signal that cancelled ctx, or nil.
func interruptedBy(ctx context.Context) os.Signal {
	var in interruption
	if errors.As(context.Cause(ctx), &in) {
		return in.sig
	}
	return nil
}

// signalStatus is the exit status of a command a signal interrupted, as
// a shell reports a process the signal killed: 128 + its number (130 for
// SIGINT, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// markInterrupted marks the report of a review a signal stopped after
// reviewed of total files, so that it cannot pass for a whole one: JSON
// gets "interrupted": true and a note, SARIF an invocation that did not
// succeed, text a summary that says so.
func markInterrupted(rep *report.Report, reviewed, total int) {
	note := fmt.Sprintf("interrupted after %d of the %d changed files (the last perhaps in part): the others are not in this report", reviewed, total)
	if reviewed >= total {
		note = fmt.Sprintf("interrupted: the review of the %d changed files did not finish", total)
	}
	rep.Interrupted = true
	rep.Notes = append(rep.Notes, note)
}
