package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
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

// frameReader is implemented by the jsonrpc2 header stream: it returns the
// raw body of the next frame without decoding it.
type frameReader interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
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
}

func newStream(rwc io.ReadWriteCloser, log *slog.Logger) jsonrpc2.Stream {
	inner := jsonrpc2.NewHeaderStream(rwc)
	fr, ok := inner.(frameReader)
	if !ok {
		return inner
	}
	return &tolerantStream{Stream: inner, frames: fr, log: log}
}

func (s *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, n, err := s.frames.ReadFrame(ctx)
		if err != nil {
			return nil, 0, err
		}
		msg, derr := jsonrpc2.DecodeMessage(body)
		if derr == nil {
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
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 {
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

func prefix(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
