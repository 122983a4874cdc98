package lsp_test

import (
	"context"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestAwaitIdleWaitsForTheDocumentsOwnWork: kodyls/awaitIdle for a
// document answers only once that document's work is done: while an
// explanation of an error in a.go waits on the model, a.go is not idle,
// b.go is; once the explanation ends, a.go's wait answers.
func TestAwaitIdleWaitsForTheDocumentsOwnWork(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{"a.go": "package main\n", "b.go": "package main\n"})
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.On(llmtest.Any(), llmtest.Reply{Hang: true})
	e := startReviewing(t, repo, fake, t.TempDir(), "manual")
	e.OpenFile("a.go")
	e.OpenFile("b.go")
	e.AwaitIdle("")

	explained := make(chan error, 1)
	go func() {
		explained <- e.ExecuteCommand(contract.CommandExplainError, contract.ExplainArgs{
			URI: e.URI("a.go"), Range: &protocol.Range{}, Message: "undefined: total",
		}, nil)
	}()
	if !fake.WaitRequests(1, lsptest.DefaultTimeout) {
		t.Fatal("the explanation never asked the model")
	}
	e.AwaitIdle("b.go") // nothing pending for b.go: answered at once
	select {
	case <-explained:
		t.Fatal("the explanation ended while the model had not answered")
	default:
	}
	// a.go's wait must not answer while its explanation is pending; asked
	// with a deadline, so a slow machine could only hide a failure, never
	// make one up.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var res contract.AwaitIdleResult
	if _, err := e.Conn().Call(ctx, contract.RequestAwaitIdle, &contract.AwaitIdleParams{URI: e.URI("a.go")}, &res); err == nil {
		t.Fatal("kodyls/awaitIdle for a.go answered while its explanation waited on the model")
	}
	// The endpoint goes away: the explanation ends, and with it a.go's work.
	fake.Close()
	<-explained
	e.AwaitIdle("a.go")
	e.Shutdown()
}
