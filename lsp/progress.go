package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"
)

// progress reports work-done progress for one operation. It is a no-op when
// the client neither gave a token nor supports server-created ones.
type progress struct {
	s     *Server
	ctx   context.Context
	token protocol.ProgressToken
}

// beginProgress starts a progress report. token is the client's
// workDoneToken when the request carried one; otherwise a token is created
// with window/workDoneProgress/create if the client supports it. Callers must
// not be on the read loop (creating a token is a request to the client).
func (s *Server) beginProgress(ctx context.Context, token protocol.ProgressToken, title string) *progress {
	p := &progress{s: s, ctx: ctx, token: token}
	if p.token == nil && s.clientCap.workDoneProgress {
		s.mu.Lock()
		s.progressSeq++
		tok := protocol.String(fmt.Sprintf("kodyls/%d", s.progressSeq))
		s.mu.Unlock()
		// Bounded: an editor that lost the request (eglot 1.9 can) must not
		// hold up the work; it goes on without progress.
		cctx, cancel := context.WithTimeout(ctx, progressCreateWait)
		err := protocol.Call(cctx, s.conn, protocol.MethodWindowWorkDoneProgressCreate, &protocol.WorkDoneProgressCreateParams{Token: tok}, nil)
		cancel()
		if err != nil {
			s.log.Debug("client refused a progress token", "error", err)
		} else {
			p.token = tok
		}
	}
	p.send(&protocol.WorkDoneProgressBegin{Kind: "begin", Title: title})
	return p
}

// progressCreateWait bounds the wait for the editor's answer to
// window/workDoneProgress/create.
const progressCreateWait = 2 * time.Second

// Report sends an intermediate message and percentage.
func (p *progress) Report(msg string, pct uint32) {
	p.send(&protocol.WorkDoneProgressReport{Kind: "report", Message: &msg, Percentage: &pct})
}

// End closes the report.
func (p *progress) End(msg string) {
	p.send(&protocol.WorkDoneProgressEnd{Kind: "end", Message: &msg})
}

func (p *progress) send(v any) {
	if p.token == nil {
		return
	}
	body, err := protocol.Marshal(v)
	if err != nil {
		return
	}
	if err := p.s.conn.Notify(context.WithoutCancel(p.ctx), protocol.MethodProgress, &protocol.ProgressParams{Token: p.token, Value: body}); err != nil {
		p.s.log.Debug("progress notification failed", "error", err)
	}
}
