package index

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/fsnotify/fsnotify"
)

// WantDir is the directory beside the index where a process that finds the
// index held by another one leaves a marker asking the holder to let go.
const WantDir = IndexDir + ".want"

const (
	// DefaultHoldIdle is how long a holding Search keeps the index open
	// after its last operation. Other processes do not wait for it: they
	// ask through WantDir and the holder lets go at once.
	DefaultHoldIdle = 2 * time.Minute
	// yieldGrace is how long, at most, a holder that let go for another
	// process stays away while that process has not taken the index yet
	// (its marker is still in WantDir), so that the holder's next lookup
	// does not take the lock back first.
	yieldGrace = 150 * time.Millisecond
)

// Hold makes x keep the index open between operations instead of opening
// it for each one: opening the index of 100,000 errors costs about a
// millisecond (more on a busy machine, BenchmarkOpenIndex) and restarts
// scorch's segment merges, which then never finish. Scorch holds
// an exclusive lock while the index is open, so x lets go of it
//   - when another process asks: a process that finds the index locked
//     creates a marker in WantDir, which x notices through fsnotify;
//   - after idle without an operation;
//   - on Close.
//
// Changes other processes parked in the queue meanwhile are applied before
// each operation, as always. If the marker directory cannot be watched, x
// keeps opening the index per operation, which is slower but shares it
// just as well. Close must be called to stop the watcher.
func (x *Search) Hold(idle time.Duration) error {
	if idle <= 0 {
		idle = DefaultHoldIdle
	}
	dir := filepath.Join(x.dir, WantDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hold search index: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("hold search index: watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return fmt.Errorf("hold search index: watch %s: %w", dir, err)
	}
	x.take()
	defer x.give()
	if x.closed || x.watcher != nil {
		_ = w.Close()
		return nil
	}
	x.watcher = w
	x.holdIdle = idle
	x.stop = make(chan struct{})
	x.watchDone = make(chan struct{})
	go x.watch(w, x.stop, x.watchDone)
	return nil
}

// take waits for this Search's turn, without a deadline; the holder's own
// housekeeping uses it, never callers.
func (x *Search) take() { x.turn <- struct{}{} }
func (x *Search) give() { <-x.turn }

// watch lets go of the index whenever another process leaves a marker.
func (x *Search) watch(w *fsnotify.Watcher, stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
				continue
			}
			if !wantsExclusive(filepath.Base(ev.Name), x.token) {
				// Our own request to another holder, or a reader's:
				// our shared handle does not stand in a reader's way.
				continue
			}
			select {
			case x.turn <- struct{}{}:
			case <-stop:
				return
			}
			if x.held != nil {
				x.closeHeld("another process asked for it")
				x.yieldUntil = time.Now().Add(yieldGrace)
			}
			x.give()
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			slog.Debug("watching search index requests", "err", err)
		}
	}
}

// kept records that an operation used the held index and (re)arms the idle
// release. The caller has the turn.
func (x *Search) kept(idx bleve.Index) {
	if x.held != idx {
		// Which root.bolt it reads, to notice a replaced index.
		x.heldFile, _ = os.Stat(x.rootBolt())
	}
	x.held = idx
	x.lastUse = time.Now()
	if x.idleTimer == nil {
		x.idleTimer = time.AfterFunc(x.holdIdle, x.idleRelease)
		return
	}
	x.idleTimer.Reset(x.holdIdle)
}

// idleRelease closes the held index once it has not been used for the idle
// time.
func (x *Search) idleRelease() {
	select {
	case x.turn <- struct{}{}:
	case <-x.stop:
		return
	}
	defer x.give()
	if x.held == nil || x.closed {
		return
	}
	if left := x.holdIdle - time.Since(x.lastUse); left > 0 {
		x.idleTimer.Reset(left)
		return
	}
	x.closeHeld("idle")
}

// closeHeld closes the held index. The caller has the turn.
func (x *Search) closeHeld(why string) {
	if x.held == nil {
		return
	}
	if err := closeIndex(x.held); err != nil {
		slog.Warn("closing search index", "path", x.path, "err", err)
	}
	x.held, x.heldFile = nil, nil
	slog.Debug("released search index", "path", x.path, "why", why)
}

// Close lets go of the index and stops watching for requests. Operations
// after Close open the index for themselves, as without Hold.
func (x *Search) Close() error {
	x.take()
	if x.closed {
		x.give()
		return nil
	}
	x.closed = true
	stop, done, w := x.stop, x.watchDone, x.watcher
	if x.idleTimer != nil {
		x.idleTimer.Stop()
	}
	x.closeHeld("closed")
	x.give()
	if stop != nil {
		close(stop)
		_ = w.Close()
		<-done
	}
	return nil
}

// readerMark prefixes the marker of a process that wants to read: holders
// of a shared handle leave it alone, only an exclusive holder lets go.
const readerMark = "r-"

// wantsExclusive reports whether the marker name, found in WantDir, asks
// holders of a shared handle to let go too: every marker but this
// Search's own and readers'. Markers without a prefix come from writers
// (and from kodyls versions that held the index exclusively).
func wantsExclusive(name, token string) bool {
	own := strings.TrimPrefix(name, readerMark)
	return own != token && !strings.HasPrefix(name, readerMark)
}

// ask leaves a marker asking whoever holds the index to let go, and
// returns a function that removes it. exclusive says whether this Search
// wants to write (every holder must let go) or to read (only a writer).
func (x *Search) ask(exclusive bool) func() {
	name := x.token
	if !exclusive {
		name = readerMark + x.token
	}
	p := filepath.Join(x.dir, WantDir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return func() {}
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(p) }
}

// newToken names this Search's marker, unique across processes.
func newToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// rootBolt is the file whose flock guards the index (scorch keeps its
// store under "store").
func (x *Search) rootBolt() string { return filepath.Join(x.path, "store", "root.bolt") }
