package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// writeInterruptedReport writes the report of a review a signal stopped
// after reviewed of total files, so that it cannot pass for a whole one:
// JSON gets "interrupted": true and a note, SARIF an invocation that did
// not succeed, text a summary that says so.
func writeInterruptedReport(w io.Writer, rep *report.Report, format string, reviewed, total int) error {
	note := fmt.Sprintf("interrupted after %d of the %d changed files (the last perhaps in part): the others are not in this report", reviewed, total)
	if reviewed >= total {
		note = fmt.Sprintf("interrupted: the review of the %d changed files did not finish", total)
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "json":
		rep.Notes = append(rep.Notes, note)
		if err = rep.WriteJSON(&buf); err == nil {
			buf = *bytes.NewBuffer(withField(buf.Bytes(), `"interrupted": true,`))
		}
	case "sarif":
		if err = rep.WriteSARIF(&buf); err == nil {
			b := bytes.Replace(buf.Bytes(), []byte(`"executionSuccessful": true`), []byte(`"executionSuccessful": false`), 1)
			b = bytes.Replace(b, []byte(`"executionSuccessful":true`), []byte(`"executionSuccessful":false`), 1)
			buf = *bytes.NewBuffer(b)
		}
	default:
		if err = rep.WriteText(&buf); err == nil {
			// The summary is the last line.
			b := bytes.TrimRight(buf.Bytes(), "\n")
			buf = *bytes.NewBuffer(fmt.Appendf(b, "; %s\n", note))
		}
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// withField inserts field as the first member of the JSON object doc,
// indented as the next one is.
func withField(doc []byte, field string) []byte {
	i := bytes.IndexByte(doc, '{')
	if i < 0 {
		return doc
	}
	k := i + 1
	for k < len(doc) && (doc[k] == ' ' || doc[k] == '\n' || doc[k] == '\t' || doc[k] == '\r') {
		k++
	}
	out := append([]byte{}, doc[:k]...)
	out = append(out, field...)
	out = append(out, doc[i+1:k]...)
	return append(out, doc[k:]...)
}
