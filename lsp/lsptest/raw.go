package lsptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"testing"
	"time"
)

// Raw speaks framed JSON-RPC with no client library in between, for tests
// of malformed input, exact error codes and cancellation.
type Raw struct {
	t   testing.TB
	w   io.Writer
	r   *bufio.Reader
	in  chan RawMessage
	err chan error
}

// RawMessage is one decoded frame from the server.
type RawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// NewRaw starts reading frames from r.
func NewRaw(t testing.TB, w io.Writer, r io.Reader) *Raw {
	c := &Raw{t: t, w: w, r: bufio.NewReader(r), in: make(chan RawMessage, 1024), err: make(chan error, 1)}
	go c.read()
	return c
}

func (c *Raw) read() {
	tp := textproto.NewReader(c.r)
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			c.err <- err
			close(c.in)
			return
		}
		n, err := strconv.Atoi(h.Get("Content-Length"))
		if err != nil {
			c.err <- fmt.Errorf("bad Content-Length %q", h.Get("Content-Length"))
			close(c.in)
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.r, body); err != nil {
			c.err <- err
			close(c.in)
			return
		}
		var m RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			c.err <- fmt.Errorf("server sent invalid JSON %q: %w", body, err)
			close(c.in)
			return
		}
		c.in <- m
	}
}

// Send writes body as one frame.
func (c *Raw) Send(body string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// Write writes bytes as they are, framed or not: a client that breaks
// the framing.
func (c *Raw) Write(b string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Request sends a call with a numeric id.
func (c *Raw) Request(id int, method string, params any) {
	c.t.Helper()
	p, _ := json.Marshal(params)
	c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
}

// Notify sends a notification.
func (c *Raw) Notify(method string, params any) {
	c.t.Helper()
	p, _ := json.Marshal(params)
	c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, p))
}

// Next returns the next message for which keep is true (nil keeps all),
// answering the server requests it passes over with a null result; a
// server request it returns is the caller's to answer.
func (c *Raw) Next(keep func(RawMessage) bool) RawMessage {
	c.t.Helper()
	deadline := time.After(DefaultTimeout)
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				c.t.Fatalf("connection closed: %v", <-c.err)
			}
			if keep == nil || keep(m) {
				return m
			}
			if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
				c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID))
			}
		case <-deadline:
			c.t.Fatalf("timed out waiting for a message")
		}
	}
}

// Response waits for the response with the given id (a JSON literal such as
// `7` or `null`).
func (c *Raw) Response(id string) RawMessage {
	c.t.Helper()
	return c.Next(func(m RawMessage) bool { return m.Method == "" && string(m.ID) == id })
}

// Closed reports whether the server closed the stream within d.
func (c *Raw) Closed(d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-c.in:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}
