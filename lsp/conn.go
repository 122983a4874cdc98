package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// codec marshals payloads with the protocol package's union-aware encoder.
// The protocol package has its own codec but does not export it, and we wire
// the connection ourselves (see newConn) to control message ordering.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if raw, ok := v.(jsonrpc2.RawMessage); ok {
		if raw == nil {
			return []byte("null"), nil
		}
		return raw, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// frameReader returns the raw body of the next frame without decoding it.
type frameReader interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
}

// maxFrame bounds the body a Content-Length header may announce (the
// largest file the server keeps is far smaller), and maxHeaderLine a
// header line.
const (
	maxFrame      = 256 << 20
	maxHeaderLine = 4 << 10
)

// indexContentLength is the byte index of "Content-Length:" in line, in
// any letter case, or -1. ASCII only: the index is one of line's own.
func indexContentLength(line string) int {
	const name = "content-length:"
	for i := 0; i+len(name) <= len(line); i++ {
		if strings.EqualFold(line[i:i+len(name)], name) {
			return i
		}
	}
	return -1
}

// isContentLength reports whether a header's name is Content-Length, or
// its end from "Length" on: the previous frame's body, sent with a length
// a few bytes too long, took the first bytes of this header.
func isContentLength(name string) bool {
	const full = "content-length"
	if len(name) < len("length") || len(name) > len(full) {
		return false
	}
	return strings.EqualFold(name, full[len(full)-len(name):])
}

// headerError is a frame whose header could not be read. body is the
// frame's body when the header still gave its length (garbage before a
// valid Content-Length), else nil: the frame is skipped. junk is the
// garbage before a Content-Length, often the body of a frame whose blank
// line or length was wrong, whose id the error reply then carries.
type headerError struct {
	msg  string
	body []byte
	junk []byte
}

func (e *headerError) Error() string { return e.msg }

// headerReader reads frames "Content-Length: N\r\n…\r\n\r\n<N bytes>". A
// header it cannot read is reported and skipped rather than ending the
// session: it reads on to the end of that header, and a line that holds
// "Content-Length:" after other bytes (a body longer than its announced
// length) starts the next frame there.
type headerReader struct {
	r *bufio.Reader
}

// readLine reads a header line up to its '\n'; a longer line than
// maxHeaderLine is cut there (the rest is read as the next lines, and
// reported as malformed).
func (h *headerReader) readLine() (string, error) {
	var b strings.Builder
	for b.Len() < maxHeaderLine {
		c, err := h.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			break
		}
	}
	return b.String(), nil
}

func (h *headerReader) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	var (
		n      int64
		length = -1
		bad    string
		junk   []byte
		seen   bool // a header line was read
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, n, err
		}
		line, err := h.readLine()
		n += int64(len(line))
		if err != nil {
			if err == io.EOF && !seen && strings.TrimSpace(line) == "" {
				return nil, n, io.EOF
			}
			return nil, n, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !seen {
				continue // a blank line between frames
			}
			break
		}
		seen = true
		if i := indexContentLength(line); i > 0 {
			bad = fmt.Sprintf("%d bytes before a header: %q", i, prefix([]byte(line[:i]), 40))
			junk = []byte(line[:i])
			line = line[i:]
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = fmt.Sprintf("malformed header line %q", prefix([]byte(line), 40))
			continue
		}
		if !isContentLength(strings.TrimSpace(name)) {
			continue // Content-Type and others
		}
		v, perr := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if perr != nil || v < 0 || v > maxFrame {
			bad = fmt.Sprintf("bad Content-Length %q", prefix([]byte(strings.TrimSpace(value)), 40))
			length = -1
			continue
		}
		length = int(v)
	}
	if length < 0 {
		if bad == "" {
			bad = "no Content-Length header"
		}
		return nil, n, &headerError{msg: bad, junk: junk}
	}
	// The buffer grows as the body arrives: a header that announces more
	// than is sent costs what was sent, not what was announced.
	var buf bytes.Buffer
	buf.Grow(min(length, 1<<20))
	if _, err := io.CopyN(&buf, h.r, int64(length)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, n, err
	}
	body := buf.Bytes()
	n += int64(length)
	if bad != "" {
		return body, n, &headerError{msg: bad, body: body, junk: junk}
	}
	return body, n, nil
}

// tolerantStream answers a frame that is not a valid JSON-RPC message with an
// error response and goes on reading. The jsonrpc2 connection would otherwise
// treat one bad frame as a broken transport and stop serving the editor.
type tolerantStream struct {
	jsonrpc2.Stream
	frames frameReader
	log    *slog.Logger

	// wmu serializes writes: the error replies written from the read loop
	// must not interleave with the connection's own writes.
	wmu sync.Mutex

	// ended is closed when reading stops for good (the editor closed the
	// pipe, or it broke); readErr is why. The connection itself reports
	// its end only once no request is in flight, and a request waiting
	// on the model would keep the server running, and calling the model,
	// for an editor that is gone.
	ended   chan struct{}
	endOnce sync.Once
	readErr error
}

func newStream(rwc io.ReadWriteCloser, log *slog.Logger) *tolerantStream {
	// The library's stream writes the frames; headerReader reads them.
	return &tolerantStream{Stream: jsonrpc2.NewHeaderStream(rwc), frames: &headerReader{r: bufio.NewReader(rwc)}, log: log, ended: make(chan struct{})}
}

// end records that reading stopped for good, and why.
func (s *tolerantStream) end(err error) {
	s.endOnce.Do(func() {
		s.readErr = err
		close(s.ended)
	})
}

func (s *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, n, err := s.frames.ReadFrame(ctx)
		var herr *headerError
		if errors.As(err, &herr) {
			s.log.Warn("rejected malformed JSON-RPC frame header", "error", herr.msg)
			resp := jsonrpc2.NewResponse(lenientID(herr.junk), nil, jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: malformed frame header: "+herr.msg))
			if _, werr := s.Write(ctx, resp); werr != nil {
				return nil, 0, werr
			}
			if herr.body == nil {
				continue
			}
			err = nil
		}
		if err != nil {
			s.end(err)
			return nil, 0, err
		}
		msg, derr := jsonrpc2.DecodeMessage(body)
		if derr == nil {
			if _, ok := msg.(*jsonrpc2.Notification); ok && nullID(body) {
				// The library reads "id": null as a notification; LSP
				// ids are numbers or strings, and the client waits for
				// an answer.
				s.log.Warn("rejected a request with a null id", "method", msg.(*jsonrpc2.Notification).Method())
				resp := jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "invalid request: the id is null; LSP request ids are numbers or strings"))
				if _, werr := s.Write(ctx, resp); werr != nil {
					return nil, 0, werr
				}
				continue
			}
			return msg, n, nil
		}
		code, text := jsonrpc2.ParseError, "parse error: the message body is not valid JSON"
		if json.Valid(body) {
			code, text = jsonrpc2.InvalidRequest, "invalid request: the message is not a JSON-RPC 2.0 request or response"
		}
		s.log.Warn("rejected malformed JSON-RPC frame", "error", derr, "bytes", len(body), "prefix", prefix(body, 80))
		resp := jsonrpc2.NewResponse(lenientID(body), nil, jsonrpc2.NewError(code, text))
		if _, werr := s.Write(ctx, resp); werr != nil {
			return nil, 0, werr
		}
	}
}

func (s *tolerantStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.Stream.Write(ctx, msg)
}

// lenientID recovers the id of a malformed request when the body is at least
// valid JSON, so the client can match the error to its call.
func lenientID(body []byte) jsonrpc2.ID {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	// The first JSON value is enough: a body read with a wrong length
	// carries the next frame's first bytes after it.
	if json.NewDecoder(bytes.NewReader(body)).Decode(&probe) != nil || len(probe.ID) == 0 {
		return jsonrpc2.ID{}
	}
	var n int64
	if json.Unmarshal(probe.ID, &n) == nil {
		return jsonrpc2.NewNumberID(n)
	}
	var str string
	if json.Unmarshal(probe.ID, &str) == nil {
		return jsonrpc2.NewStringID(str)
	}
	return jsonrpc2.ID{}
}

// nullID reports whether a message the library decoded as a notification
// has an "id" member that is null: a request the client waits on.
func nullID(body []byte) bool {
	if !bytes.Contains(body, []byte(`"id"`)) {
		return false // the common case, without a second parse
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return false
	}
	id, ok := probe["id"]
	return ok && string(bytes.TrimSpace(id)) == "null"
}

func prefix(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
