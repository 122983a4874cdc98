package lsp

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/editors/contract"
)

// statusState is what kodyls/status last told the editor, and what it is
// computed from.
type statusState struct {
	mu        sync.Mutex
	reviewing int
	degraded  string          // why the last finished review lost stages; "" when none did
	told      map[string]bool // the causes shown to an editor without the status item
	down      string
	sent      *contract.StatusParams
}

// modelWorkStarted and modelWorkEnded bracket every review and every
// explanation that may call the model, for the status.
func (s *Server) modelWorkStarted() {
	s.status.mu.Lock()
	s.status.reviewing++
	s.status.mu.Unlock()
	s.sendStatus()
}

func (s *Server) modelWorkEnded() {
	s.status.mu.Lock()
	s.status.reviewing--
	s.status.mu.Unlock()
	s.sendStatus()
}

// reviewDegraded records whether the last finished review lost stages. A
// review that did not finish (err != nil: cancelled, superseded by an edit)
// changes nothing, since the findings on screen are still those of the last
// review that did.
func (s *Server) reviewDegraded(degraded []string, err error) {
	if err != nil {
		return
	}
	cause, key := "", ""
	for _, d := range degraded {
		// The light-mode fallback of a large file is a choice, not a
		// failure, and the endpoint being down was said already: the
		// status names them, the user is not told again.
		c := degradedCause(d)
		if cause == "" {
			cause = c
		}
		if !strings.HasPrefix(d, review.StageMode+":") && !strings.Contains(d, llm.ErrUnavailable.Error()) {
			cause, key = c, causeKey(c)
			break
		}
	}
	s.status.mu.Lock()
	s.status.degraded = cause
	// An endpoint already told to be down is not told again as a review
	// that lost its stages.
	tell := key != "" && !s.clientCap.commandResults && !s.status.told[key] && s.status.down == ""
	if tell {
		if s.status.told == nil {
			s.status.told = map[string]bool{}
		}
		s.status.told[key] = true
	}
	s.status.mu.Unlock()
	// An editor without the kodyls plugin shows no status item: it is
	// told once per cause.
	if tell && s.conn != nil {
		msg := "kodyls: the last review lost model stages: " + cause
		if nerr := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); nerr != nil {
			s.log.Debug("showMessage failed", "error", nerr)
		}
	}
}

// causeKey is a cause without its numbers (tokens, seconds, sizes), so
// that one cause is told once however its figures change.
func causeKey(cause string) string {
	return digitRuns.ReplaceAllString(cause, "#")
}

var digitRuns = regexp.MustCompile(`[0-9]+`)

// degradedCause is a review's degraded-stage message ("analyze: llm: HTTP
// 500 …; no suggestions") as a short cause: the stage and the error's
// first line, at most 160 bytes.
func degradedCause(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	if i := strings.LastIndex(msg, "; "); i > 0 {
		msg = msg[:i] // the consequence
	}
	if len(msg) > 160 {
		msg = msg[:157] + "..."
	}
	return msg
}

// llmStatusChanged tells the user once when the endpoint goes down or
// comes back, not on every call, and updates the status.
func (s *Server) llmStatusChanged(st llm.Status) {
	if st.State == llm.StateProbing {
		return
	}
	msg := st.Message
	if msg == "" {
		msg = "LLM endpoint is " + st.State
	}
	// Told once per outage: after each cooldown the breaker tries the
	// endpoint again and, still failing, reports it down again.
	s.status.mu.Lock()
	wasDown := s.status.down != ""
	if st.State == llm.StateDown {
		s.status.down = msg
	} else {
		s.status.down = ""
	}
	s.status.mu.Unlock()
	down := st.State == llm.StateDown
	if s.conn == nil {
		return
	}
	if down != wasDown {
		typ := protocol.MessageTypeInfo
		if down {
			typ = protocol.MessageTypeWarning
		}
		if err := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: "kodyls: " + msg}); err != nil {
			s.log.Debug("showMessage failed", "error", err)
		}
	}
	s.sendStatus()
}

// sendStatus sends kodyls/status when the state changed since it was last
// sent.
func (s *Server) sendStatus() {
	if s.conn == nil || s.state.Load() == stateNew {
		return
	}
	configured := s.svc.ModelConfigured()
	s.mu.Lock()
	cfg := s.cfg.Settings
	badURL := contract.RedactURL(s.cfg.RejectedBaseURL())
	s.mu.Unlock()
	s.status.mu.Lock()
	p := contract.StatusParams{State: contract.StateReady, Reviewing: s.status.reviewing}
	switch {
	case !configured && badURL != "":
		// Not "no endpoint configured": the user set one kodyls refused.
		p.State, p.Message = contract.StateOffline, fmt.Sprintf("llm.baseUrl %q is not an http(s) URL: local Kody Rules only until it is fixed (e.g. http://localhost:11434/v1)", badURL)
	case !configured && cfg.LLM.BaseURL != "":
		p.State, p.Message = contract.StateOffline, "no model set: local Kody Rules only; set llm.model or KODYLS_LLM_MODEL"
	case !configured:
		p.State, p.Message = contract.StateOffline, "no LLM endpoint configured: local Kody Rules only; set llm.baseUrl or KODYLS_LLM_BASE_URL"
	case s.status.down != "":
		p.State, p.Message = contract.StateEndpointDown, s.status.down
	case s.status.reviewing > 0:
		p.State = contract.StateReviewing
	case s.status.degraded != "":
		p.State, p.Message = contract.StateDegraded, "the last review lost model stages: "+s.status.degraded
	}
	if s.status.sent != nil && *s.status.sent == p {
		s.status.mu.Unlock()
		return
	}
	s.status.sent = &p
	// Sent under the lock so that two updates cannot reach the editor in
	// the opposite order of their computation.
	defer s.status.mu.Unlock()
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), contract.NotificationStatus, &p); err != nil {
		s.log.Debug("status notification failed", "error", err)
	}
}

// notifyViolationsChanged tells the editor that a document's rule
// violations changed, so a panel refreshes without polling.
func (s *Server) notifyViolationsChanged(ctx context.Context, uris ...uri.URI) {
	if len(uris) == 0 {
		return
	}
	if err := s.conn.Notify(context.WithoutCancel(ctx), contract.NotificationRuleViolationsChanged, &contract.RuleViolationsChangedParams{URIs: uris}); err != nil {
		s.log.Debug("ruleViolationsChanged notification failed", "error", err)
	}
}
