package lsp

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestRecoverCallAnswersAPanic: a command that panics is answered with an
// InternalError saying what failed, and the stack is logged, instead of
// jsonrpc2 closing the connection (which ends the session).
func TestRecoverCallAnswersAPanic(t *testing.T) {
	var log bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&log, nil))}
	res, err := func() (res any, err error) {
		var prog *progress
		defer s.recoverCall("explain the error", &res, &err, &prog)
		panic("slice bounds out of range")
	}()
	var rpcErr *jsonrpc2.Error
	if res != nil || !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.InternalError ||
		!strings.Contains(rpcErr.Message, "could not explain the error") || !strings.Contains(rpcErr.Message, "slice bounds out of range") {
		t.Fatalf("answer = %v, %v; want an InternalError saying what failed", res, err)
	}
	if !strings.Contains(log.String(), "a request panicked") || !strings.Contains(log.String(), "recover_test.go") {
		t.Errorf("the panic and its stack are not logged:\n%s", log.String())
	}
}
